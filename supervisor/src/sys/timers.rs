//! POSIX timers (timer_create, timer_settime, timer_gettime,
//! timer_getoverrun, timer_delete) on virtual time. An armed timer is a
//! signal timer of the run loop (`SignalTimer` with a `Posix` owner), so it
//! fires at a scheduling point at its virtual deadline, with the siginfo the
//! kernel would give (SI_TIMER, the timer id, sigev_value), to the process
//! (SIGEV_SIGNAL) or one thread (SIGEV_THREAD_ID, which glibc's
//! SIGEV_THREAD uses). SIGEV_NONE timers only count down.

use super::{err, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::timers::{PosixTimer, Schedule};
use crate::sim::vclock::Timespec;
use crate::sim::world::{SignalTimer, TimerOwner};

/// sigev_notify values.
const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD_ID: i32 = 4;
/// si_code of a timer's signal.
const SI_TIMER: i32 = -2;

/// The head of `struct sigevent`: sigev_value, sigev_signo, sigev_notify,
/// then the thread id of SIGEV_THREAD_ID.
#[repr(C)]
#[derive(Clone, Copy)]
struct SigEvent {
    value: u64,
    signo: i32,
    notify: i32,
    tid: i32,
}

// SAFETY: a plain C struct of integers; any bytes are a valid value.
unsafe impl crate::sim::memory::Pod for SigEvent {}

/// Sends timer `id`'s signal with the siginfo the kernel gives it.
pub(crate) fn queue_timer_signal(pid: i32, tid: i32, sig: i32, id: i32, value: u64) {
    // siginfo_t: si_signo, si_errno, si_code, padding, then si_tid (the
    // timer id), si_overrun and si_value.
    let mut info = [0u8; 128];
    info[0..4].copy_from_slice(&sig.to_ne_bytes());
    info[8..12].copy_from_slice(&SI_TIMER.to_ne_bytes());
    info[16..20].copy_from_slice(&id.to_ne_bytes());
    info[24..32].copy_from_slice(&value.to_ne_bytes());
    // SAFETY: the buffer is a complete siginfo_t.
    unsafe {
        if tid != 0 {
            libc::syscall(libc::SYS_rt_tgsigqueueinfo, pid, tid, sig, info.as_ptr());
        } else {
            libc::syscall(libc::SYS_rt_sigqueueinfo, pid, sig, info.as_ptr());
        }
    }
}

impl Sim {
    /// The POSIX timer calls.
    pub(super) fn sys_posix_timer(
        &mut self,
        c: &Call<impl Memory>,
        targs: &mut Vec<i64>,
    ) -> Action {
        match c.nr {
            libc::SYS_timer_create => self.timer_create(c, targs),
            libc::SYS_timer_settime => self.timer_settime(c, targs),
            libc::SYS_timer_gettime => self.timer_gettime(c, targs),
            libc::SYS_timer_getoverrun => {
                targs.push(c.a[0] as i64);
                match self.posix_timers.contains_key(&(c.pid, c.a[0] as i32)) {
                    true => ret(0),
                    false => err(libc::EINVAL),
                }
            }
            _ => {
                let id = c.a[0] as i32;
                targs.push(id as i64);
                if self.posix_timers.remove(&(c.pid, id)).is_none() {
                    return err(libc::EINVAL);
                }
                self.disarm(c.pid, id);
                ret(0)
            }
        }
    }

    fn timer_create(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let clock = c.a[0] as i32;
        let id = (0..)
            .find(|i| !self.posix_timers.contains_key(&(c.pid, *i)))
            .expect("a free id");
        let (value, sig, notify, ns_tid) = if c.a[1] == 0 {
            (id as u64, libc::SIGALRM, SIGEV_SIGNAL, 0)
        } else {
            match c.mem().read_val::<SigEvent>(c.a[1]) {
                Ok(ev) => (ev.value, ev.signo, ev.notify, ev.tid),
                Err(_) => return err(libc::EFAULT),
            }
        };
        targs.extend([clock as i64, notify as i64, sig as i64]);
        let tid = match notify {
            SIGEV_SIGNAL | SIGEV_NONE => 0,
            SIGEV_THREAD_ID => match self
                .threads
                .values()
                .find(|t| t.pid == c.pid && t.ns_tid == ns_tid)
            {
                Some(t) => t.tid,
                None => return err(libc::EINVAL),
            },
            _ => return err(libc::EINVAL),
        };
        if notify != SIGEV_NONE && !(1..=64).contains(&sig) {
            return err(libc::EINVAL);
        }
        if c.mem().write_val(c.a[2], &id).is_err() {
            return err(libc::EFAULT);
        }
        self.posix_timers.insert(
            (c.pid, id),
            PosixTimer {
                clock,
                sig: if notify == SIGEV_NONE { 0 } else { sig },
                tid,
                value,
                silent: None,
            },
        );
        ret(0)
    }

    fn timer_settime(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let id = c.a[0] as i32;
        let Some(timer) = self.posix_timers.get(&(c.pid, id)).copied() else {
            return err(libc::EINVAL);
        };
        let abstime = c.a[1] as i32 & libc::TIMER_ABSTIME != 0;
        let new = match self.new_timer_value(c, timer.clock, abstime, c.a[2]) {
            Ok(new) => new,
            Err(e) => return err(e),
        };
        if c.a[3] != 0 {
            let old = self.remaining(c.pid, id);
            if c.mem().write_val(c.a[3], &old).is_err() {
                return err(libc::EFAULT);
            }
        }
        self.disarm(c.pid, id);
        targs.extend([id as i64, new.value as i64, new.interval as i64]);
        let Some(Schedule { at, interval }) = new.schedule else {
            return ret(0);
        };
        if timer.sig == 0 {
            if let Some(t) = self.posix_timers.get_mut(&(c.pid, id)) {
                t.silent = new.schedule;
            }
            return ret(0);
        }
        self.signal_timers.push(SignalTimer {
            pid: c.pid,
            sig: timer.sig,
            at,
            interval,
            owner: TimerOwner::Posix {
                id,
                tid: timer.tid,
                value: timer.value,
            },
        });
        ret(0)
    }

    fn timer_gettime(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let id = c.a[0] as i32;
        targs.push(id as i64);
        if !self.posix_timers.contains_key(&(c.pid, id)) {
            return err(libc::EINVAL);
        }
        let cur = self.remaining(c.pid, id);
        if c.mem().write_val(c.a[1], &cur).is_err() {
            return err(libc::EFAULT);
        }
        ret(0)
    }

    /// A timer's (interval, time left) as an itimerspec.
    fn remaining(&self, pid: i32, id: i32) -> [Timespec; 2] {
        let armed = self
            .signal_timers
            .iter()
            .find(|t| t.pid == pid && matches!(t.owner, TimerOwner::Posix { id: i, .. } if i == id))
            .map(|t| Schedule {
                at: t.at,
                interval: t.interval,
            })
            .or_else(|| self.posix_timers.get(&(pid, id)).and_then(|t| t.silent));
        Schedule::itimerspec(armed, self.clock.now())
    }

    /// Stops timer `id` of `pid` (its pending deadline, if any).
    fn disarm(&mut self, pid: i32, id: i32) {
        self.signal_timers.retain(|t| {
            !(t.pid == pid && matches!(t.owner, TimerOwner::Posix { id: i, .. } if i == id))
        });
        if let Some(t) = self.posix_timers.get_mut(&(pid, id)) {
            t.silent = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, PID};
    use crate::sim::memory::{FakeMemory, Memory};
    use crate::sim::state::Sim;
    use crate::sim::vclock::{Timespec, NS};
    use crate::sim::world::{SignalTimer, Thread, TimerOwner};

    const ID: u64 = 0x1000;
    const EVENT: u64 = 0x1100;
    const SPEC: u64 = 0x1200;
    const OLD: u64 = 0x1300;

    /// Memory for the timer calls: the id, a sigevent, a new and an old
    /// itimerspec.
    fn memory() -> FakeMemory {
        zeroed(ID, 0x400)
    }

    fn create(sim: &mut Sim, event: Option<(i32, i32, i32)>) -> Result<i32, i64> {
        let mem = memory();
        let ev = event.map_or(0, |(signo, notify, tid)| {
            mem.write_val(
                EVENT,
                &[7u64, signo as u64 | (notify as u64) << 32, tid as u64],
            )
            .unwrap();
            EVENT
        });
        let a = [libc::CLOCK_MONOTONIC as u64, ev, ID, 0, 0, 0];
        let c = call(libc::SYS_timer_create, a, mem);
        match returned(sim.sys_posix_timer(&c, &mut vec![])) {
            0 => Ok(c.mem().read_val(ID).unwrap()),
            e => Err(e),
        }
    }

    /// timer_settime(id, flags, {interval, value}, OLD): the old value.
    fn settime(sim: &mut Sim, id: i32, flags: i32, interval: u64, value: u64) -> [Timespec; 2] {
        let mem = memory();
        let spec = [interval, value].map(|ns| Timespec::from_ns(ns as i128));
        mem.write_val(SPEC, &spec).unwrap();
        let c = call(
            libc::SYS_timer_settime,
            [id as u64, flags as u64, SPEC, OLD, 0, 0],
            mem,
        );
        assert_eq!(returned(sim.sys_posix_timer(&c, &mut vec![])), 0);
        c.mem().read_val(OLD).unwrap()
    }

    fn ns(spec: [Timespec; 2]) -> [u64; 2] {
        spec.map(|t| t.to_ns().unwrap())
    }

    #[test]
    fn a_timer_arms_a_signal_timer_with_its_siginfo_and_reports_time_left() {
        let mut sim = world();
        assert_eq!(create(&mut sim, None), Ok(0));
        assert_eq!(create(&mut sim, Some((libc::SIGUSR1, 0, 0))), Ok(1));
        sim.clock.advance_to(NS);
        let old = settime(&mut sim, 1, 0, NS / 10, 2 * NS);
        assert_eq!(ns(old), [0, 0], "was disarmed");
        let [t] = sim.signal_timers.as_slice() else {
            panic!("{:?}", sim.signal_timers);
        };
        let SignalTimer {
            pid,
            sig,
            at,
            interval,
            owner,
        } = t.clone();
        assert_eq!(
            (pid, sig, at, interval),
            (PID, libc::SIGUSR1, 3 * NS, NS / 10)
        );
        assert_eq!(
            owner,
            TimerOwner::Posix {
                id: 1,
                tid: 0,
                value: 7
            }
        );
        sim.clock.advance_to(2 * NS);
        // Re-setting gives the old value back and replaces the schedule.
        assert_eq!(ns(settime(&mut sim, 1, 0, 0, 0)), [NS / 10, NS]);
        assert!(sim.signal_timers.is_empty(), "a zero value disarms");
    }

    #[test]
    fn a_sigev_none_timer_counts_down_without_a_signal() {
        let mut sim = world();
        let id = create(&mut sim, Some((0, 1, 0))).unwrap();
        settime(&mut sim, id, 0, 0, 5 * NS);
        assert!(sim.signal_timers.is_empty());
        sim.clock.advance_to(NS);
        let c = call(
            libc::SYS_timer_gettime,
            [id as u64, OLD, 0, 0, 0, 0],
            memory(),
        );
        assert_eq!(returned(sim.sys_posix_timer(&c, &mut vec![])), 0);
        assert_eq!(ns(c.mem().read_val(OLD).unwrap()), [0, 4 * NS]);
    }

    #[test]
    fn an_absolute_time_in_the_past_fires_at_the_next_instant() {
        let mut sim = world();
        let id = create(&mut sim, None).unwrap();
        sim.clock.advance_to(10 * NS);
        settime(&mut sim, id, libc::TIMER_ABSTIME, 0, NS);
        assert_eq!(sim.signal_timers[0].at, 10 * NS + 1);
    }

    #[test]
    fn a_thread_timer_goes_to_a_thread_of_the_process() {
        let mut sim = world();
        sim.threads.insert(2, Thread::new(2, PID, PID + 1, 2));
        let einval = Err(-(libc::EINVAL as i64));
        assert_eq!(create(&mut sim, Some((libc::SIGUSR2, 4, 99))), einval);
        assert_eq!(create(&mut sim, Some((0, 4, 2))), einval, "needs a signal");
        let id = create(&mut sim, Some((libc::SIGUSR2, 4, 2))).unwrap();
        settime(&mut sim, id, 0, 0, NS);
        assert!(
            matches!(sim.signal_timers[0].owner, TimerOwner::Posix { tid, .. } if tid == PID + 1)
        );
    }

    #[test]
    fn a_deleted_timer_is_disarmed_and_its_id_unknown() {
        let mut sim = world();
        let id = create(&mut sim, None).unwrap() as u64;
        settime(&mut sim, id as i32, 0, 0, NS);
        for (nr, expect) in [
            (libc::SYS_timer_getoverrun, 0),
            (libc::SYS_timer_delete, 0),
            (libc::SYS_timer_delete, -libc::EINVAL),
            (libc::SYS_timer_getoverrun, -libc::EINVAL),
            (libc::SYS_timer_gettime, -libc::EINVAL),
        ] {
            let c = call(nr, [id, OLD, 0, 0, 0, 0], memory());
            assert_eq!(
                returned(sim.sys_posix_timer(&c, &mut vec![])),
                expect as i64
            );
        }
        assert!(sim.signal_timers.is_empty());
        let c = call(libc::SYS_timer_create, [0, 0, 0x9000, 0, 0, 0], memory());
        let efault = -(libc::EFAULT as i64);
        assert_eq!(returned(sim.sys_posix_timer(&c, &mut vec![])), efault);
    }
}
