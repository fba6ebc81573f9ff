//! POSIX timers (timer_create, timer_settime, timer_gettime,
//! timer_getoverrun, timer_delete) on virtual time. An armed timer is a
//! signal timer of the run loop (`SignalTimer` with a `Posix` owner), so it
//! fires at a scheduling point at its virtual deadline, with the siginfo the
//! kernel would give (SI_TIMER, the timer id, sigev_value), to the process
//! (SIGEV_SIGNAL) or one thread (SIGEV_THREAD_ID, which glibc's
//! SIGEV_THREAD uses). SIGEV_NONE timers only count down.

use std::collections::BTreeMap;

use super::itimer::Schedule;
use super::{err, ret, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::sim::vclock::Timespec;
use crate::sim::world::{SignalTimer, TimerOwner};

/// sigev_notify values.
const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD_ID: i32 = 4;
/// si_code of a timer's signal.
const SI_TIMER: i32 = -2;

/// One timer of a process, as timer_create made it.
#[derive(Debug, Clone, Copy)]
pub struct PosixTimer {
    /// The clock it counts on (for TIMER_ABSTIME).
    clock: i32,
    /// The signal (0 for SIGEV_NONE).
    sig: i32,
    /// SIGEV_THREAD_ID's host tid, or 0.
    tid: i32,
    /// sigev_value.
    value: u64,
    /// The schedule while armed without a signal (SIGEV_NONE).
    silent: Option<Schedule>,
}

/// The timers of every process: (host pid, timer id).
pub type PosixTimers = BTreeMap<(i32, i32), PosixTimer>;

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
unsafe impl crate::host::tracee::Pod for SigEvent {}

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

impl Supervisor {
    /// The POSIX timer calls.
    pub(super) fn sys_posix_timer(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        match c.nr {
            libc::SYS_timer_create => self.timer_create(c, targs),
            libc::SYS_timer_settime => self.timer_settime(c, targs),
            libc::SYS_timer_gettime => self.timer_gettime(c, targs),
            libc::SYS_timer_getoverrun => {
                targs.push(c.a[0] as i64);
                match self.sim.posix_timers.contains_key(&(c.pid, c.a[0] as i32)) {
                    true => ret(0),
                    false => err(libc::EINVAL),
                }
            }
            _ => {
                let id = c.a[0] as i32;
                targs.push(id as i64);
                if self.sim.posix_timers.remove(&(c.pid, id)).is_none() {
                    return err(libc::EINVAL);
                }
                self.disarm(c.pid, id);
                ret(0)
            }
        }
    }

    fn timer_create(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let clock = c.a[0] as i32;
        let id = (0..)
            .find(|i| !self.sim.posix_timers.contains_key(&(c.pid, *i)))
            .expect("a free id");
        let (value, sig, notify, ns_tid) = if c.a[1] == 0 {
            (id as u64, libc::SIGALRM, SIGEV_SIGNAL, 0)
        } else {
            match tracee::Process(c.pid).read_val::<SigEvent>(c.a[1]) {
                Ok(ev) => (ev.value, ev.signo, ev.notify, ev.tid),
                Err(_) => return err(libc::EFAULT),
            }
        };
        targs.extend([clock as i64, notify as i64, sig as i64]);
        let tid = match notify {
            SIGEV_SIGNAL | SIGEV_NONE => 0,
            SIGEV_THREAD_ID => match self
                .sim
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
        if tracee::Process(c.pid).write_val(c.a[2], &id).is_err() {
            return err(libc::EFAULT);
        }
        self.sim.posix_timers.insert(
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

    fn timer_settime(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let id = c.a[0] as i32;
        let Some(timer) = self.sim.posix_timers.get(&(c.pid, id)).copied() else {
            return err(libc::EINVAL);
        };
        let abstime = c.a[1] as i32 & libc::TIMER_ABSTIME != 0;
        let new = match self.new_timer_value(c, timer.clock, abstime, c.a[2]) {
            Ok(new) => new,
            Err(e) => return err(e),
        };
        if c.a[3] != 0 {
            let old = self.remaining(c.pid, id);
            if tracee::Process(c.pid).write_val(c.a[3], &old).is_err() {
                return err(libc::EFAULT);
            }
        }
        self.disarm(c.pid, id);
        targs.extend([id as i64, new.value as i64, new.interval as i64]);
        let Some(Schedule { at, interval }) = new.schedule else {
            return ret(0);
        };
        if timer.sig == 0 {
            if let Some(t) = self.sim.posix_timers.get_mut(&(c.pid, id)) {
                t.silent = new.schedule;
            }
            return ret(0);
        }
        self.sim.signal_timers.push(SignalTimer {
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

    fn timer_gettime(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let id = c.a[0] as i32;
        targs.push(id as i64);
        if !self.sim.posix_timers.contains_key(&(c.pid, id)) {
            return err(libc::EINVAL);
        }
        let cur = self.remaining(c.pid, id);
        if tracee::Process(c.pid).write_val(c.a[1], &cur).is_err() {
            return err(libc::EFAULT);
        }
        ret(0)
    }

    /// A timer's (interval, time left) as an itimerspec.
    fn remaining(&self, pid: i32, id: i32) -> [Timespec; 2] {
        let armed = self
            .sim
            .signal_timers
            .iter()
            .find(|t| t.pid == pid && matches!(t.owner, TimerOwner::Posix { id: i, .. } if i == id))
            .map(|t| Schedule {
                at: t.at,
                interval: t.interval,
            })
            .or_else(|| self.sim.posix_timers.get(&(pid, id)).and_then(|t| t.silent));
        Schedule::itimerspec(armed, self.sim.clock.now())
    }

    /// Stops timer `id` of `pid` (its pending deadline, if any).
    fn disarm(&mut self, pid: i32, id: i32) {
        self.sim.signal_timers.retain(|t| {
            !(t.pid == pid && matches!(t.owner, TimerOwner::Posix { id: i, .. } if i == id))
        });
        if let Some(t) = self.sim.posix_timers.get_mut(&(pid, id)) {
            t.silent = None;
        }
    }
}
