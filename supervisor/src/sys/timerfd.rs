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

use std::collections::BTreeSet;
use std::os::fd::{AsRawFd, OwnedFd};

use super::{err, pass, ret, Action, Call};
use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::timers::{FdTimer, Schedule};
use crate::sim::world::{ExitHook, Resume};

const TFD_TIMER_ABSTIME: i32 = 1;
const TFD_TIMER_CANCEL_ON_SET: i32 = 2;

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

impl Sim {
    /// timerfd_create, timerfd_settime, timerfd_gettime.
    pub(super) fn sys_timerfd(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        match c.nr {
            libc::SYS_timerfd_create => self.timerfd_create(c, targs),
            libc::SYS_timerfd_settime => self.timerfd_settime(c, host, targs),
            _ => {
                targs.push(c.a[0] as i32 as i64);
                let id = match self.timerfd_id(host, c.pid, c.a[0] as i32) {
                    Ok(id) => id,
                    Err(e) => return err(e),
                };
                let cur = Schedule::itimerspec(self.timer_fds.timers[&id].armed, self.clock.now());
                match c.mem().write_val(c.a[1], &cur) {
                    Ok(()) => ret(0),
                    Err(_) => err(libc::EFAULT),
                }
            }
        }
    }

    fn timerfd_create(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
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

    fn timerfd_settime(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        let (fd, flags) = (c.a[0] as i32, c.a[1] as i32);
        targs.push(fd as i64);
        let id = match self.timerfd_id(host, c.pid, fd) {
            Ok(id) => id,
            Err(e) => return err(e),
        };
        if flags & !(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET) != 0 {
            return err(libc::EINVAL);
        }
        let clock = self.timer_fds.timers[&id].clock;
        let new = match self.new_timer_value(c, clock, flags & TFD_TIMER_ABSTIME != 0, c.a[2]) {
            Ok(new) => new,
            Err(e) => return err(e),
        };
        let now = self.clock.now();
        let timer = self.timer_fds.timers.get_mut(&id).expect("timer");
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
    fn timerfd_id(&mut self, host: &impl HostProbe, pid: i32, fd: i32) -> Result<u32, i32> {
        match self.fd_kind(host, pid, fd) {
            Some(FdKind::Timer(id)) if self.timer_fds.timers.contains_key(&id) => Ok(id),
            Some(_) => Err(libc::EINVAL),
            None => Err(libc::EBADF),
        }
    }

    /// Adds the expirations of every timerfd whose deadline has come to its
    /// counter, in id order, at this scheduling point; the readiness scans
    /// that follow wake its readers.
    pub(crate) fn fire_timerfds(&mut self) {
        let now = self.clock.now();
        let mut fired = false;
        for (&id, timer) in &mut self.timer_fds.timers {
            let Some(schedule) = timer.armed.filter(|s| s.at <= now) else {
                continue;
            };
            let (count, next) = schedule.expire(now);
            timer.armed = next;
            // SAFETY: an 8-byte value written to an eventfd we hold.
            unsafe {
                libc::write(timer.counter.as_raw_fd(), (&count as *const u64).cast(), 8);
            }
            self.trace
                .record(now, 0, "timerfd", &[id as i64, count as i64], "expired");
            fired = true;
        }
        if fired {
            self.descriptors_changed();
        }
    }

    /// Forgets the timers no process holds a descriptor of any more (after
    /// a close, an exec or a process's end).
    pub(crate) fn drop_unheld_timerfds(&mut self) {
        let held: BTreeSet<u32> = self
            .procs
            .values()
            .flat_map(|p| p.fds.values())
            .filter_map(|k| match k {
                FdKind::Timer(id) => Some(*id),
                _ => None,
            })
            .collect();
        self.timer_fds.timers.retain(|id, _| held.contains(id));
    }

    /// A call other than close on a timerfd's descriptor: reads wait for
    /// an expiry, writes fail as on a timerfd, dup keeps it a timerfd, and
    /// everything else is the eventfd's (fcntl, ioctl).
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_on_timerfd(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        id: u32,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        let fd = c.a[0] as i32;
        targs.push(fd as i64);
        match c.nr {
            SYS_read | SYS_readv => self.park_unless_ready(host, c.pid, vec![(fd, POLLIN)]),
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

    /// timerfd_create's eventfd2 returned `fd` (the call's answer): make
    /// it a timer, on a borrowed copy.
    pub(crate) fn timerfd_opened(&mut self, host: &impl HostProbe, pid: i32, fd: i64, clock: i32) {
        let counter = (fd >= 0).then(|| host.borrow(pid, fd as i32)).flatten();
        // Without a copy (the kernel's error, or a descriptor that cannot
        // be borrowed) the program gets no timer.
        if let Some(counter) = counter {
            let id = self.timer_fds.next;
            self.timer_fds.next += 1;
            self.timer_fds.timers.insert(
                id,
                FdTimer {
                    clock,
                    counter,
                    armed: None,
                },
            );
            self.fd_opened(pid, fd, FdKind::Timer(id), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use super::super::testing::{call, parked, returned, world, zeroed, FakeHost, PID};
    use super::super::Action;
    use crate::sim::fdkind::FdKind;
    use crate::sim::memory::Memory;
    use crate::sim::state::Sim;
    use crate::sim::timers::FdTimer;
    use crate::sim::vclock::{Timespec, NS};
    use crate::sim::world::{ExitHook, Resume, WaitKind};

    const FD: i32 = 5;
    const SPEC: u64 = 0x1000;
    const OLD: u64 = 0x1100;

    /// A world whose process holds timerfd 0 as descriptor `FD`, counting
    /// on a real (non-blocking) eventfd.
    fn with_timer() -> Sim {
        let mut sim = world();
        // SAFETY: eventfd returns a new descriptor we own (checked below).
        let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
        assert!(raw >= 0);
        // SAFETY: as above.
        let counter = unsafe { OwnedFd::from_raw_fd(raw) };
        let clock = libc::CLOCK_MONOTONIC;
        sim.timer_fds.timers.insert(
            0,
            FdTimer {
                clock,
                counter,
                armed: None,
            },
        );
        sim.timer_fds.next = 1;
        sim.fd_opened(PID, FD as i64, FdKind::Timer(0), false);
        sim
    }

    /// timerfd_settime(FD, flags, {interval, value}, OLD).
    fn settime(sim: &mut Sim, flags: i32, interval: u64, value: u64) -> i64 {
        let mem = zeroed(SPEC, 0x200);
        let spec = [interval, value].map(|ns| Timespec::from_ns(ns as i128));
        mem.write_val(SPEC, &spec).unwrap();
        let c = call(
            libc::SYS_timerfd_settime,
            [FD as u64, flags as u64, SPEC, OLD, 0, 0],
            mem,
        );
        returned(sim.sys_timerfd(&c, &FakeHost::default(), &mut vec![]))
    }

    /// What the eventfd's counter holds (read, so reset).
    fn expirations(sim: &Sim) -> u64 {
        let mut n = 0u64;
        let fd = sim.timer_fds.timers[&0].counter.as_raw_fd();
        // SAFETY: an 8-byte read from an eventfd we hold.
        unsafe { libc::read(fd, (&mut n as *mut u64).cast(), 8) };
        n
    }

    #[test]
    fn timerfd_create_becomes_an_eventfd_with_the_same_flags() {
        let mut sim = world();
        let flags = libc::TFD_NONBLOCK as u64;
        let c = call(
            libc::SYS_timerfd_create,
            [libc::CLOCK_BOOTTIME_ALARM as u64, flags, 0, 0, 0, 0],
            zeroed(SPEC, 8),
        );
        let Action::Now(Resume::PassThenExit(Some(regs), ExitHook::NewTimerFd { clock, .. })) =
            sim.sys_timerfd(&c, &FakeHost::default(), &mut vec![])
        else {
            panic!("not rewritten to eventfd2");
        };
        assert_eq!(
            (regs.orig_rax, regs.rdi, regs.rsi),
            (libc::SYS_eventfd2 as u64, 0, flags)
        );
        assert_eq!(
            clock,
            libc::CLOCK_BOOTTIME,
            "an alarm clock counts as its plain clock"
        );
        for (clock, flags) in [
            (libc::CLOCK_PROCESS_CPUTIME_ID, 0),
            (libc::CLOCK_MONOTONIC, 1),
        ] {
            let c = call(
                libc::SYS_timerfd_create,
                [clock as u64, flags, 0, 0, 0, 0],
                zeroed(SPEC, 8),
            );
            assert_eq!(
                returned(sim.sys_timerfd(&c, &FakeHost::default(), &mut vec![])),
                -(libc::EINVAL as i64)
            );
        }
    }

    #[test]
    fn an_armed_timerfd_counts_every_expiry_at_its_deadline() {
        let mut sim = with_timer();
        sim.clock.advance_to(NS);
        assert_eq!(settime(&mut sim, 0, NS / 2, 2 * NS), 0);
        assert_eq!(sim.timer_fds.next_deadline(), Some(3 * NS));
        sim.clock.advance_to(4 * NS + 1);
        sim.fire_timerfds();
        assert_eq!(expirations(&sim), 3, "at 3, 3.5 and 4 s");
        assert_eq!(sim.timer_fds.next_deadline(), Some(4 * NS + NS / 2));
        assert_eq!(sim.trace.count(), 1, "one trace event per firing");
        let c = call(
            libc::SYS_timerfd_gettime,
            [FD as u64, OLD, 0, 0, 0, 0],
            zeroed(OLD, 32),
        );
        assert_eq!(
            returned(sim.sys_timerfd(&c, &FakeHost::default(), &mut vec![])),
            0
        );
        let [interval, left] = c.mem().read_val::<[Timespec; 2]>(OLD).unwrap();
        assert_eq!(
            (interval.to_ns(), left.to_ns()),
            (Some(NS / 2), Some(NS / 2 - 1))
        );
    }

    #[test]
    fn setting_a_timerfd_forgets_unread_expiries() {
        let mut sim = with_timer();
        settime(&mut sim, 0, 0, NS);
        sim.clock.advance_to(NS);
        sim.fire_timerfds();
        assert_eq!(sim.timer_fds.next_deadline(), None, "one-shot, spent");
        settime(&mut sim, 0, 0, 0);
        assert_eq!(expirations(&sim), 0);
    }

    #[test]
    fn settime_checks_the_descriptor_and_its_flags() {
        let mut sim = with_timer();
        assert_eq!(
            settime(&mut sim, 4, 0, NS),
            -(libc::EINVAL as i64),
            "unknown flag"
        );
        sim.fd_opened(PID, FD as i64, FdKind::Random, false);
        assert_eq!(
            settime(&mut sim, 0, 0, NS),
            -(libc::EINVAL as i64),
            "not a timerfd"
        );
        sim.procs.get_mut(&PID).unwrap().fds.clear();
        assert_eq!(
            settime(&mut sim, 0, 0, NS),
            -(libc::EBADF as i64),
            "no descriptor"
        );
        sim.drop_unheld_timerfds();
        assert!(sim.timer_fds.timers.is_empty(), "no process holds it");
    }

    #[test]
    fn the_eventfd_standing_in_for_a_timerfd_becomes_a_timer_on_a_borrowed_copy() {
        let mut sim = world();
        let host = FakeHost::default().pollable(6, 0);
        sim.timerfd_opened(&host, PID, -(libc::EMFILE as i64), libc::CLOCK_MONOTONIC);
        assert!(
            sim.timer_fds.timers.is_empty(),
            "the kernel's error: no timer"
        );
        sim.timerfd_opened(&host, PID, 6, libc::CLOCK_MONOTONIC);
        assert_eq!(sim.procs[&PID].fds.get(&6), Some(&FdKind::Timer(0)));
        assert_eq!(sim.timer_fds.timers[&0].clock, libc::CLOCK_MONOTONIC);
        // A read waits for an expiry like a read of any eventfd.
        let c = call(libc::SYS_read, [6, SPEC, 8, 0, 0, 0], zeroed(SPEC, 8));
        let w = parked(sim.sys_on_timerfd(&c, &host, 0, &mut vec![]));
        assert!(matches!(&w.kind, WaitKind::Fds { fds, .. } if fds == &[(6, libc::POLLIN)]));
    }
}
