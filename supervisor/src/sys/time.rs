//! Clock reads and sleeps, answered from virtual time.

use super::{err, ret, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::sim::vclock::{Timespec, NS};
use crate::sim::world::{Resume, SignalTimer, TimerOwner, Wait, WaitKind};

impl Supervisor {
    /// clock_gettime, gettimeofday, time.
    pub(super) fn sys_clock_read(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let pid = c.pid;
        let host = self.sim.clock_host(pid);
        match c.nr {
            libc::SYS_clock_gettime => {
                let clock = c.a[0] as i32;
                targs.push(clock as i64);
                let ts = Timespec::from_ns(self.sim.clock.read_on(host, clock));
                if tracee::Process(pid).write_val(c.a[1], &ts).is_err() {
                    return err(libc::EFAULT);
                }
                ret(0)
            }
            libc::SYS_gettimeofday => {
                let now = self.sim.clock.read_on(host, libc::CLOCK_REALTIME);
                let ts = Timespec::from_ns(now);
                let tv = [ts.sec, ts.nsec / 1000];
                if c.a[0] != 0 && tracee::Process(pid).write_val(c.a[0], &tv).is_err() {
                    return err(libc::EFAULT);
                }
                if c.a[1] != 0 && tracee::Process(pid).write_val(c.a[1], &[0i32; 2]).is_err() {
                    return err(libc::EFAULT);
                }
                ret(0)
            }
            _ => {
                let secs = (self.sim.clock.read_on(host, libc::CLOCK_REALTIME) / NS as i128) as i64;
                if c.a[0] != 0 && tracee::Process(pid).write_val(c.a[0], &secs).is_err() {
                    return err(libc::EFAULT);
                }
                ret(secs)
            }
        }
    }

    /// nanosleep and clock_nanosleep (relative and TIMER_ABSTIME).
    pub(super) fn sys_sleep(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let (clock, flags, req, rem) = if c.nr == libc::SYS_nanosleep {
            (libc::CLOCK_MONOTONIC, 0, c.a[0], c.a[1])
        } else {
            (c.a[0] as i32, c.a[1] as i32, c.a[2], c.a[3])
        };
        let Ok(ts) = c.mem().read_val::<Timespec>(req) else {
            return err(libc::EFAULT);
        };
        let host = self.sim.clock_host(c.pid);
        let deadline = if flags & libc::TIMER_ABSTIME != 0 {
            let abs = ts.sec as i128 * NS as i128 + ts.nsec as i128;
            self.sim.clock.deadline_on(host, clock, abs)
        } else {
            let Some(ns) = ts.to_ns() else {
                return err(libc::EINVAL);
            };
            self.sim
                .clock
                .now()
                .saturating_add(self.sim.clock.span_on(host, ns as i128))
        };
        targs.push((deadline - self.sim.clock.now().min(deadline)) as i64);
        if deadline <= self.sim.clock.now() {
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
            deadline: Some(deadline),
            on_timeout: Resume::Return(0),
            restartable: false,
        })
    }

    /// alarm and setitimer(ITIMER_REAL): one SIGALRM timer per process, on
    /// virtual time (the two calls share it, as in Linux).
    pub(super) fn sys_real_timer(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let now = self.sim.clock.now();
        let old = self
            .sim
            .signal_timers
            .iter()
            .position(|t| t.pid == c.pid && t.owner == TimerOwner::RealTimer)
            .map(|i| self.sim.signal_timers.remove(i));
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
            self.sim.signal_timers.push(SignalTimer {
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
    pub(super) fn sys_getaffinity(&mut self, c: &Call) -> Action {
        let len = c.a[1] as usize;
        if len < 8 {
            return err(libc::EINVAL);
        }
        let cpus = self.sim.cpus.clamp(1, 64);
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
    pub(super) fn sys_getcpu(&mut self, c: &Call) -> Action {
        for addr in [c.a[0], c.a[1]] {
            if addr != 0 && c.mem().write_val(addr, &0u32).is_err() {
                return err(libc::EFAULT);
            }
        }
        ret(0)
    }

    /// getrandom: bytes from the seed.
    pub(super) fn sys_getrandom(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let len = (c.a[1] as usize).min(1 << 20);
        targs.push(len as i64);
        match self.fill_random(c.pid, c.a[0], len) {
            Ok(()) => ret(len as i64),
            Err(_) => err(libc::EFAULT),
        }
    }

    /// Writes `len` seeded random bytes at `addr` in process `pid`.
    pub(super) fn fill_random(&mut self, pid: i32, addr: u64, len: usize) -> std::io::Result<()> {
        use rand::RngCore;
        let mut buf = vec![0u8; len];
        self.sim.data_rng.fill_bytes(&mut buf);
        tracee::Process(pid).write_mem(addr, &buf)
    }
}
