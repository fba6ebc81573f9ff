//! Clock reads and sleeps, answered from virtual time.

use super::{err, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::vclock::{Timespec, NS};
use crate::sim::world::{Resume, SignalTimer, TimerOwner, Wait, WaitKind};

impl Sim {
    /// clock_gettime, gettimeofday, time.
    pub(super) fn sys_clock_read(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let pid = c.pid;
        let host = self.clock_host(pid);
        match c.nr {
            libc::SYS_clock_gettime => {
                let clock = c.a[0] as i32;
                targs.push(clock as i64);
                let ts = Timespec::from_ns(self.clock.read_on(host, clock));
                if c.mem().write_val(c.a[1], &ts).is_err() {
                    return err(libc::EFAULT);
                }
                ret(0)
            }
            libc::SYS_gettimeofday => {
                let now = self.clock.read_on(host, libc::CLOCK_REALTIME);
                let ts = Timespec::from_ns(now);
                let tv = [ts.sec, ts.nsec / 1000];
                if c.a[0] != 0 && c.mem().write_val(c.a[0], &tv).is_err() {
                    return err(libc::EFAULT);
                }
                if c.a[1] != 0 && c.mem().write_val(c.a[1], &[0i32; 2]).is_err() {
                    return err(libc::EFAULT);
                }
                ret(0)
            }
            _ => {
                let secs = (self.clock.read_on(host, libc::CLOCK_REALTIME) / NS as i128) as i64;
                if c.a[0] != 0 && c.mem().write_val(c.a[0], &secs).is_err() {
                    return err(libc::EFAULT);
                }
                ret(secs)
            }
        }
    }

    /// nanosleep and clock_nanosleep (relative and TIMER_ABSTIME).
    pub(super) fn sys_sleep(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let (clock, flags, req, rem) = if c.nr == libc::SYS_nanosleep {
            (libc::CLOCK_MONOTONIC, 0, c.a[0], c.a[1])
        } else {
            (c.a[0] as i32, c.a[1] as i32, c.a[2], c.a[3])
        };
        let Ok(ts) = c.mem().read_val::<Timespec>(req) else {
            return err(libc::EFAULT);
        };
        let host = self.clock_host(c.pid);
        let deadline = if flags & libc::TIMER_ABSTIME != 0 {
            let abs = ts.sec as i128 * NS as i128 + ts.nsec as i128;
            self.clock.deadline_on(host, clock, abs)
        } else {
            let Some(ns) = ts.to_ns() else {
                return err(libc::EINVAL);
            };
            self.clock
                .now()
                .saturating_add(self.clock.span_on(host, ns as i128))
        };
        targs.push((deadline - self.clock.now().min(deadline)) as i64);
        if deadline <= self.clock.now() {
            return ret(0);
        }
        // An absolute sleep reports no time left (as in Linux).
        let rem = if flags & libc::TIMER_ABSTIME != 0 {
            0
        } else {
            rem
        };
        Action::Park(Wait {
            kind: WaitKind::Sleep { rem },
            deadline: Some(self.timer_end(c.vtid, deadline)),
            on_timeout: Resume::Return(0),
            restartable: false,
        })
    }

    /// alarm and setitimer(ITIMER_REAL): one SIGALRM timer per process, on
    /// virtual time (the two calls share it, as in Linux).
    pub(super) fn sys_real_timer(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let now = self.clock.now();
        let old = self
            .signal_timers
            .iter()
            .position(|t| t.pid == c.pid && t.owner == TimerOwner::RealTimer)
            .map(|i| self.signal_timers.remove(i));
        let (remaining, old_interval) =
            old.map_or((0, 0), |t| (t.at.saturating_sub(now), t.interval));
        let (value, interval, result) = if c.nr == libc::SYS_alarm {
            targs.push(c.a[0] as i64);
            (c.a[0] * NS, 0, remaining.div_ceil(NS) as i64)
        } else {
            if c.a[0] != libc::ITIMER_REAL as u64 {
                return self.unsupported(c, "only ITIMER_REAL timers are simulated", libc::ENOSYS);
            }
            let Ok([isec, iusec, vsec, vusec]) = c.mem().read_val::<[i64; 4]>(c.a[1]) else {
                return err(libc::EFAULT);
            };
            let micros = |s: i64, us: i64| (s.max(0) as u64) * NS + (us.max(0) as u64) * 1000;
            if c.a[2] != 0 {
                let as_tv = |ns: u64| [(ns / NS) as i64, ((ns % NS) / 1000) as i64];
                let [a, b] = as_tv(old_interval);
                let [d, e] = as_tv(remaining);
                if c.mem().write_val(c.a[2], &[a, b, d, e]).is_err() {
                    return err(libc::EFAULT);
                }
            }
            (micros(vsec, vusec), micros(isec, iusec), 0)
        };
        targs.push(value as i64);
        if value > 0 {
            self.signal_timers.push(SignalTimer {
                pid: c.pid,
                sig: libc::SIGALRM,
                at: now + value,
                interval,
                owner: TimerOwner::RealTimer,
            });
        }
        ret(result)
    }

    /// sched_getaffinity: the configured number of CPUs, on every machine.
    pub(super) fn sys_getaffinity(&mut self, c: &Call<impl Memory>) -> Action {
        let len = c.a[1] as usize;
        if len < 8 {
            return err(libc::EINVAL);
        }
        let cpus = self.cpus.clamp(1, 64);
        let mask: u64 = if cpus == 64 {
            u64::MAX
        } else {
            (1u64 << cpus) - 1
        };
        if c.mem().write_val(c.a[2], &mask).is_err() {
            return err(libc::EFAULT);
        }
        ret(8)
    }

    /// getcpu: always CPU 0, node 0 (the real CPU would leak host scheduling).
    pub(super) fn sys_getcpu(&mut self, c: &Call<impl Memory>) -> Action {
        for addr in [c.a[0], c.a[1]] {
            if addr != 0 && c.mem().write_val(addr, &0u32).is_err() {
                return err(libc::EFAULT);
            }
        }
        ret(0)
    }

    /// getrandom: bytes from the seed.
    pub(super) fn sys_getrandom(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let len = (c.a[1] as usize).min(1 << 20);
        targs.push(len as i64);
        match self.fill_random(c.mem(), c.a[0], len) {
            Ok(()) => ret(len as i64),
            Err(_) => err(libc::EFAULT),
        }
    }

    /// Writes `len` seeded random bytes at `addr` of `mem`.
    pub(super) fn fill_random(
        &mut self,
        mem: &impl Memory,
        addr: u64,
        len: usize,
    ) -> std::io::Result<()> {
        use rand::RngCore;
        let mut buf = vec![0u8; len];
        self.data_rng.fill_bytes(&mut buf);
        mem.write_mem(addr, &buf)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, parked, returned, world, zeroed, EPOCH_SECS, PID};
    use crate::sim::memory::Memory;
    use crate::sim::vclock::{Timespec, MONOTONIC_BASE_NS, NS};
    use crate::sim::world::{TimerOwner, WaitKind};

    const BUF: u64 = 0x1000;

    #[test]
    fn clock_gettime_writes_the_virtual_time_of_the_callers_host() {
        let mut sim = world();
        sim.clock.advance_to(1_500);
        let c = call(
            libc::SYS_clock_gettime,
            [libc::CLOCK_MONOTONIC as u64, BUF, 0, 0, 0, 0],
            zeroed(BUF, 16),
        );
        assert_eq!(returned(sim.sys_clock_read(&c, &mut vec![])), 0);
        let ts: Timespec = c.mem().read_val(BUF).unwrap();
        assert_eq!((ts.sec, ts.nsec), ((MONOTONIC_BASE_NS / NS) as i64, 1_500));
        // A clock jump on the caller's host moves its wall clock only.
        let host = sim.clock_host(PID);
        sim.clock.jump(host, -(NS as i64));
        let c = call(
            libc::SYS_clock_gettime,
            [libc::CLOCK_REALTIME as u64, BUF, 0, 0, 0, 0],
            zeroed(BUF, 16),
        );
        let mut targs = vec![];
        assert_eq!(returned(sim.sys_clock_read(&c, &mut targs)), 0);
        let ts: Timespec = c.mem().read_val(BUF).unwrap();
        assert_eq!((ts.sec, ts.nsec), (EPOCH_SECS - 1, 1_500));
        assert_eq!(targs, [libc::CLOCK_REALTIME as i64]);
    }

    #[test]
    fn a_clock_read_into_unmapped_memory_fails_with_efault() {
        let mut sim = world();
        for (nr, a) in [
            (
                libc::SYS_clock_gettime,
                [libc::CLOCK_REALTIME as u64, 0x9000, 0, 0, 0, 0],
            ),
            (libc::SYS_gettimeofday, [0x9000, 0, 0, 0, 0, 0]),
            (libc::SYS_time, [0x9000, 0, 0, 0, 0, 0]),
        ] {
            let c = call(nr, a, zeroed(BUF, 16));
            assert_eq!(
                returned(sim.sys_clock_read(&c, &mut vec![])),
                -(libc::EFAULT as i64)
            );
        }
    }

    #[test]
    fn gettimeofday_and_time_read_the_wall_clock_in_their_units() {
        let mut sim = world();
        sim.clock.advance_to(2 * NS + 345_678);
        let c = call(
            libc::SYS_gettimeofday,
            [BUF, BUF + 16, 0, 0, 0, 0],
            zeroed(BUF, 24),
        );
        c.mem().write_val(BUF + 16, &[7i32, 7]).unwrap();
        assert_eq!(returned(sim.sys_clock_read(&c, &mut vec![])), 0);
        assert_eq!(
            c.mem().read_val::<[i64; 2]>(BUF).unwrap(),
            [EPOCH_SECS + 2, 345]
        );
        assert_eq!(
            c.mem().read_val::<[i32; 2]>(BUF + 16).unwrap(),
            [0, 0],
            "no time zone"
        );
        let c = call(libc::SYS_time, [0; 6], zeroed(BUF, 8));
        assert_eq!(
            returned(sim.sys_clock_read(&c, &mut vec![])),
            EPOCH_SECS + 2
        );
    }

    #[test]
    fn nanosleep_parks_until_now_plus_the_request() {
        let mut sim = world();
        sim.clock.advance_to(500);
        let mem = zeroed(BUF, 32);
        mem.write_val(BUF, &Timespec { sec: 3, nsec: 20 }).unwrap();
        let c = call(libc::SYS_nanosleep, [BUF, BUF + 16, 0, 0, 0, 0], mem);
        let mut targs = vec![];
        let w = parked(sim.sys_sleep(&c, &mut targs));
        assert_eq!(w.deadline, Some(500 + 3 * NS + 20));
        assert!(matches!(w.kind, WaitKind::Sleep { rem } if rem == BUF + 16));
        assert_eq!(targs, [(3 * NS + 20) as i64]);
    }

    #[test]
    fn a_sleep_fails_on_a_bad_request_and_returns_at_once_when_due() {
        let mut sim = world();
        let mem = zeroed(BUF, 16);
        mem.write_val(
            BUF,
            &Timespec {
                sec: 0,
                nsec: NS as i64,
            },
        )
        .unwrap();
        let c = call(libc::SYS_nanosleep, [BUF, 0, 0, 0, 0, 0], mem);
        assert_eq!(
            returned(sim.sys_sleep(&c, &mut vec![])),
            -(libc::EINVAL as i64)
        );
        let c = call(
            libc::SYS_nanosleep,
            [0x9000, 0, 0, 0, 0, 0],
            zeroed(BUF, 16),
        );
        assert_eq!(
            returned(sim.sys_sleep(&c, &mut vec![])),
            -(libc::EFAULT as i64)
        );
        let c = call(libc::SYS_nanosleep, [BUF, 0, 0, 0, 0, 0], zeroed(BUF, 16));
        assert_eq!(returned(sim.sys_sleep(&c, &mut vec![])), 0, "a zero sleep");
    }

    #[test]
    fn an_absolute_sleep_ends_at_that_time_of_its_clock_and_leaves_no_remainder() {
        let mut sim = world();
        let mem = zeroed(BUF, 16);
        mem.write_val(
            BUF,
            &Timespec {
                sec: EPOCH_SECS + 5,
                nsec: 0,
            },
        )
        .unwrap();
        let a = [
            libc::CLOCK_REALTIME as u64,
            libc::TIMER_ABSTIME as u64,
            BUF,
            BUF,
            0,
            0,
        ];
        let c = call(libc::SYS_clock_nanosleep, a, mem);
        let w = parked(sim.sys_sleep(&c, &mut vec![]));
        assert_eq!(w.deadline, Some(5 * NS));
        assert!(matches!(w.kind, WaitKind::Sleep { rem: 0 }));
        sim.clock.advance_to(6 * NS);
        assert_eq!(returned(sim.sys_sleep(&c, &mut vec![])), 0, "already past");
    }

    #[test]
    fn alarm_arms_one_sigalrm_per_process_and_returns_the_seconds_left() {
        let mut sim = world();
        let c = call(libc::SYS_alarm, [10, 0, 0, 0, 0, 0], zeroed(BUF, 8));
        assert_eq!(returned(sim.sys_real_timer(&c, &mut vec![])), 0);
        sim.clock.advance_to(NS / 2);
        let c = call(libc::SYS_alarm, [3, 0, 0, 0, 0, 0], zeroed(BUF, 8));
        assert_eq!(
            returned(sim.sys_real_timer(&c, &mut vec![])),
            10,
            "9.5 s, rounded up"
        );
        let [t] = sim.signal_timers.as_slice() else {
            panic!("one timer: {:?}", sim.signal_timers);
        };
        assert_eq!(
            (t.pid, t.sig, t.at, t.owner),
            (PID, libc::SIGALRM, NS / 2 + 3 * NS, TimerOwner::RealTimer)
        );
        // setitimer shares it: the old value comes back as a timeval pair.
        let mem = zeroed(BUF, 64);
        mem.write_val(BUF, &[0i64, 0, 0, 0]).unwrap();
        let c = call(
            libc::SYS_setitimer,
            [libc::ITIMER_REAL as u64, BUF, BUF + 32, 0, 0, 0],
            mem,
        );
        assert_eq!(returned(sim.sys_real_timer(&c, &mut vec![])), 0);
        assert_eq!(
            c.mem().read_val::<[i64; 4]>(BUF + 32).unwrap(),
            [0, 0, 3, 0]
        );
        assert!(sim.signal_timers.is_empty(), "a zero value disarms");
    }

    #[test]
    fn the_cpu_time_itimers_are_refused_and_reported() {
        let mut sim = world();
        let c = call(
            libc::SYS_setitimer,
            [libc::ITIMER_PROF as u64, BUF, 0, 0, 0, 0],
            zeroed(BUF, 32),
        );
        assert_eq!(
            returned(sim.sys_real_timer(&c, &mut vec![])),
            -(libc::ENOSYS as i64)
        );
        let diags = std::mem::take(&mut sim.diagnostics).into_list();
        assert!(
            diags[0].message.contains("ITIMER_REAL"),
            "{:?}",
            diags[0].message
        );
    }

    #[test]
    fn every_machine_has_the_configured_cpus_and_runs_on_cpu_zero() {
        let mut sim = world();
        let c = call(
            libc::SYS_sched_getaffinity,
            [0, 128, BUF, 0, 0, 0],
            zeroed(BUF, 8),
        );
        assert_eq!(returned(sim.sys_getaffinity(&c)), 8);
        assert_eq!(c.mem().read_val::<u64>(BUF).unwrap(), 0b11);
        let c = call(
            libc::SYS_sched_getaffinity,
            [0, 4, BUF, 0, 0, 0],
            zeroed(BUF, 8),
        );
        assert_eq!(returned(sim.sys_getaffinity(&c)), -(libc::EINVAL as i64));
        let mem = zeroed(BUF, 8);
        mem.write_val(BUF, &[5u32, 5]).unwrap();
        let c = call(libc::SYS_getcpu, [BUF, BUF + 4, 0, 0, 0, 0], mem);
        assert_eq!(returned(sim.sys_getcpu(&c)), 0);
        assert_eq!(c.mem().read_val::<[u32; 2]>(BUF).unwrap(), [0, 0]);
    }

    #[test]
    fn getrandom_bytes_come_from_the_seed() {
        let draw = || {
            let mut sim = world();
            let c = call(libc::SYS_getrandom, [BUF, 16, 0, 0, 0, 0], zeroed(BUF, 16));
            assert_eq!(returned(sim.sys_getrandom(&c, &mut vec![])), 16);
            c.mem().read_val::<[u64; 2]>(BUF).unwrap()
        };
        let first = draw();
        assert_ne!(first, [0, 0]);
        assert_eq!(first, draw(), "same seed, same bytes");
        let mut sim = world();
        let c = call(
            libc::SYS_getrandom,
            [0x9000, 16, 0, 0, 0, 0],
            zeroed(BUF, 16),
        );
        assert_eq!(
            returned(sim.sys_getrandom(&c, &mut vec![])),
            -(libc::EFAULT as i64)
        );
    }
}
