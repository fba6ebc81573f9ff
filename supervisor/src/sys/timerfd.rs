//! timerfd (timerfd_create, timerfd_settime, timerfd_gettime) on virtual
//! time. timerfd_create is made an eventfd2 with the same flags
//! (TFD_NONBLOCK and TFD_CLOEXEC are EFD_NONBLOCK's and EFD_CLOEXEC's
//! values); the supervisor keeps a borrowed copy of it and, at the
//! scheduling point where the timer's virtual deadline has come, adds the
//! number of expirations to its counter. The eventfd then does what a
//! timerfd does: read gives the 8-byte count and resets it, blocks while it
//! is 0 (or fails EAGAIN), and poll, select and epoll see it readable, all
//! answered by the readiness code that already handles real descriptors.
//! A timer lives while some process holds a descriptor of it.

use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::{AsRawFd, OwnedFd};

use super::itimer::Schedule;
use super::{err, pass, ret, Action, Call};
use crate::engine::Supervisor;
use crate::host::fdprobe::{self, FdKind};
use crate::host::tracee::{self, Memory, Regs};
use crate::sim::world::{ExitHook, Resume};

const TFD_TIMER_ABSTIME: i32 = 1;
const TFD_TIMER_CANCEL_ON_SET: i32 = 2;

/// One timerfd.
#[derive(Debug)]
pub struct FdTimer {
    /// The clock it counts on (for TFD_TIMER_ABSTIME).
    clock: i32,
    /// The supervisor's copy of the eventfd, whose counter is the count
    /// of expirations the program has not read.
    counter: OwnedFd,
    /// The schedule while armed.
    armed: Option<Schedule>,
}

/// Every timerfd of the run, by id (ids are handed out in creation order,
/// so they are the same on every run of a seed).
#[derive(Debug, Default)]
pub struct TimerFds {
    timers: BTreeMap<u32, FdTimer>,
    next: u32,
}

impl TimerFds {
    /// The earliest deadline of an armed timerfd: virtual time may jump there.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.timers
            .values()
            .filter_map(|t| t.armed.map(|s| s.at))
            .min()
    }
}

/// The clock a timerfd counts on, or None if timerfd_create refuses it.
/// The alarm clocks (which would wake a suspended machine) count as their
/// plain clocks: a simulated machine never sleeps.
fn timer_clock(clock: i32) -> Option<i32> {
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_MONOTONIC | libc::CLOCK_BOOTTIME => Some(clock),
        libc::CLOCK_REALTIME_ALARM => Some(libc::CLOCK_REALTIME),
        libc::CLOCK_BOOTTIME_ALARM => Some(libc::CLOCK_BOOTTIME),
        _ => None,
    }
}

/// Empties an eventfd's counter without blocking (the program's copy may
/// be a blocking one).
fn drain(counter: &OwnedFd) {
    let mut pfd = libc::pollfd {
        fd: counter.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; an 8-byte buffer for the eventfd's read.
    unsafe {
        if libc::poll(&mut pfd, 1, 0) == 1 {
            let mut n = 0u64;
            libc::read(counter.as_raw_fd(), (&mut n as *mut u64).cast(), 8);
        }
    }
}

impl Supervisor {
    /// timerfd_create, timerfd_settime, timerfd_gettime.
    pub(super) fn sys_timerfd(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        match c.nr {
            libc::SYS_timerfd_create => self.timerfd_create(c, targs),
            libc::SYS_timerfd_settime => self.timerfd_settime(c, targs),
            _ => {
                targs.push(c.a[0] as i32 as i64);
                let id = match self.timerfd_id(c.pid, c.a[0] as i32) {
                    Ok(id) => id,
                    Err(e) => return err(e),
                };
                let cur = Schedule::itimerspec(
                    self.sim.timer_fds.timers[&id].armed,
                    self.sim.clock.now(),
                );
                match c.mem().write_val(c.a[1], &cur) {
                    Ok(()) => ret(0),
                    Err(_) => err(libc::EFAULT),
                }
            }
        }
    }

    /// A call other than close on a timerfd's descriptor: reads wait for
    /// an expiry, writes fail as on a timerfd, dup keeps it a timerfd, and
    /// everything else is the eventfd's (fcntl, ioctl).
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_on_timerfd(&mut self, c: &Call, id: u32, targs: &mut Vec<i64>) -> Action {
        use libc::*;
        let fd = c.a[0] as i32;
        targs.push(fd as i64);
        match c.nr {
            SYS_read | SYS_readv => self.park_unless_ready(c.pid, vec![(fd, POLLIN)]),
            SYS_write | SYS_writev => err(EINVAL),
            SYS_dup | SYS_fcntl
                if c.nr == SYS_dup || matches!(c.a[1] as i32, F_DUPFD | F_DUPFD_CLOEXEC) =>
            {
                Action::Now(Resume::PassThenExit(
                    None,
                    ExitHook::DupFd(FdKind::Timer(id)),
                ))
            }
            _ => pass(),
        }
    }

    fn timerfd_create(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let (clock, flags) = (c.a[0] as i32, c.a[1] as i32);
        targs.extend([clock as i64, flags as i64]);
        let Some(clock) = timer_clock(clock) else {
            return err(libc::EINVAL);
        };
        if flags & !(libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) != 0 {
            return err(libc::EINVAL);
        }
        let mut regs = c.regs;
        regs.orig_rax = libc::SYS_eventfd2 as u64;
        regs.rdi = 0;
        regs.rsi = flags as u64;
        Action::Now(Resume::PassThenExit(
            Some(Box::new(regs)),
            ExitHook::NewTimerFd {
                clock,
                restore: Box::new(c.regs),
            },
        ))
    }

    /// timerfd_create's eventfd2 returned `fd`: make it a timer (on a
    /// borrowed copy) and put back the caller's registers.
    pub(crate) fn timerfd_opened(
        &mut self,
        tid: i32,
        pid: i32,
        fd: i64,
        clock: i32,
        restore: &Regs,
    ) {
        let counter = self
            .pidfd(pid)
            .filter(|_| fd >= 0)
            .and_then(|pidfd| fdprobe::borrow(pidfd, fd as i32).ok());
        // Without a copy (the kernel's error, or a descriptor that cannot
        // be borrowed) the program gets no timer.
        if let Some(counter) = counter {
            let id = self.sim.timer_fds.next;
            self.sim.timer_fds.next += 1;
            self.sim.timer_fds.timers.insert(
                id,
                FdTimer {
                    clock,
                    counter,
                    armed: None,
                },
            );
            self.fd_opened(pid, fd, FdKind::Timer(id), false);
        }
        let _ = tracee::put_back_regs(tid, restore, fd as u64);
    }

    fn timerfd_settime(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let (fd, flags) = (c.a[0] as i32, c.a[1] as i32);
        targs.push(fd as i64);
        let id = match self.timerfd_id(c.pid, fd) {
            Ok(id) => id,
            Err(e) => return err(e),
        };
        if flags & !(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET) != 0 {
            return err(libc::EINVAL);
        }
        let clock = self.sim.timer_fds.timers[&id].clock;
        let new = match self.new_timer_value(c, clock, flags & TFD_TIMER_ABSTIME != 0, c.a[2]) {
            Ok(new) => new,
            Err(e) => return err(e),
        };
        let now = self.sim.clock.now();
        let timer = self.sim.timer_fds.timers.get_mut(&id).expect("timer");
        if c.a[3] != 0 {
            let old = Schedule::itimerspec(timer.armed, now);
            if c.mem().write_val(c.a[3], &old).is_err() {
                return err(libc::EFAULT);
            }
        }
        // Setting a timerfd forgets the expirations not read yet.
        drain(&timer.counter);
        timer.armed = new.schedule;
        targs.extend([new.value as i64, new.interval as i64]);
        ret(0)
    }

    /// The timer behind descriptor `fd` of `pid`: EBADF if there is no such
    /// descriptor, EINVAL if it is no timerfd (the kernel's errors).
    fn timerfd_id(&mut self, pid: i32, fd: i32) -> Result<u32, i32> {
        match self.fd_kind(pid, fd) {
            Some(FdKind::Timer(id)) if self.sim.timer_fds.timers.contains_key(&id) => Ok(id),
            Some(_) => Err(libc::EINVAL),
            None => Err(libc::EBADF),
        }
    }

    /// Adds the expirations of every timerfd whose deadline has come to its
    /// counter, in id order, at this scheduling point; the readiness scans
    /// that follow wake its readers.
    pub(crate) fn fire_timerfds(&mut self) {
        let now = self.sim.clock.now();
        for (&id, timer) in &mut self.sim.timer_fds.timers {
            let Some(schedule) = timer.armed.filter(|s| s.at <= now) else {
                continue;
            };
            let (count, next) = schedule.expire(now);
            timer.armed = next;
            // SAFETY: an 8-byte value written to an eventfd we hold.
            unsafe {
                libc::write(timer.counter.as_raw_fd(), (&count as *const u64).cast(), 8);
            }
            self.sim
                .trace
                .record(now, 0, "timerfd", &[id as i64, count as i64], "expired");
        }
    }

    /// Forgets the timers no process holds a descriptor of any more (after
    /// a close, an exec or a process's end).
    pub(crate) fn drop_unheld_timerfds(&mut self) {
        let held: BTreeSet<u32> = self
            .sim
            .procs
            .values()
            .flat_map(|p| p.fds.values())
            .filter_map(|k| match k {
                FdKind::Timer(id) => Some(*id),
                _ => None,
            })
            .collect();
        self.sim.timer_fds.timers.retain(|id, _| held.contains(id));
    }
}
