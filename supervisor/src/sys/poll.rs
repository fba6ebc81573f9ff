//! poll, ppoll, select, pselect6, epoll_wait, epoll_pwait, epoll_pwait2.
//! The supervisor probes readiness itself; the kernel only ever runs these
//! calls with a zero timeout, so they never block while others are stopped.

use super::{Action, Call};
use crate::supervisor::Supervisor;
use crate::tracee::{self, Regs};
use crate::vclock::Timespec;
use crate::world::{ExitHook, Resume, Wait, WaitKind};

/// Where a call keeps its timeout.
enum Timeout {
    /// An int of milliseconds in this argument register (poll, epoll_wait).
    Millis(usize),
    /// A pointer to a timespec in this argument register.
    Timespec(usize),
    /// A pointer to a timeval in this argument register (select).
    Timeval(usize),
}

/// Bytes below the stack pointer that leaf code may use (System V ABI).
const RED_ZONE: u64 = 128;

impl Supervisor {
    pub(super) fn sys_poll(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        use libc::*;
        #[allow(non_upper_case_globals)]
        let (timeout, fds) = match c.nr {
            SYS_poll => (Timeout::Millis(2), self.pollfds(c)),
            SYS_ppoll => (Timeout::Timespec(2), self.pollfds(c)),
            SYS_select => (Timeout::Timeval(4), self.select_fds(c)),
            SYS_pselect6 => (Timeout::Timespec(4), self.select_fds(c)),
            SYS_epoll_pwait2 => (Timeout::Timespec(3), vec![(c.a[0] as i32, POLLIN)]),
            _ => (Timeout::Millis(3), vec![(c.a[0] as i32, POLLIN)]),
        };
        targs.extend(fds.iter().map(|&(fd, _)| fd as i64));
        let wait = match self.timeout_ns(c, &timeout) {
            Ok(w) => w,
            Err(e) => return super::err(e),
        };
        let Some(zero) = self.zero_timeout(c, &timeout) else {
            return super::err(libc::EFAULT);
        };
        if wait == Some(0) || self.fds_ready(c.pid, &fds, false) {
            return Action::Now(zero);
        }
        Action::Park(Wait {
            kind: WaitKind::Fds {
                fds,
                on_ready: zero.clone(),
            },
            deadline: wait.map(|ns| self.clock.now().saturating_add(ns)),
            on_timeout: zero,
            restartable: false,
        })
    }

    /// The (fd, events) pairs of a poll/ppoll array.
    fn pollfds(&self, c: &Call) -> Vec<(i32, i16)> {
        let n = (c.a[1] as usize).min(4096);
        let mut raw = vec![[0i32; 2]; n];
        for (i, slot) in raw.iter_mut().enumerate() {
            *slot = tracee::read_val(c.pid, c.a[0] + 8 * i as u64).unwrap_or([-1, 0]);
        }
        raw.iter()
            .filter(|p| p[0] >= 0)
            .map(|p| (p[0], (p[1] & 0xffff) as i16))
            .collect()
    }

    /// The (fd, events) pairs of select's three fd_sets.
    fn select_fds(&self, c: &Call) -> Vec<(i32, i16)> {
        let nfds = (c.a[0] as usize).min(libc::FD_SETSIZE);
        let words = nfds.div_ceil(64);
        let mut out = Vec::new();
        for (set, ev) in [
            (c.a[1], libc::POLLIN),
            (c.a[2], libc::POLLOUT),
            (c.a[3], libc::POLLPRI),
        ] {
            if set == 0 {
                continue;
            }
            for w in 0..words {
                let bits: u64 = tracee::read_val(c.pid, set + 8 * w as u64).unwrap_or(0);
                for b in 0..64 {
                    let fd = w * 64 + b;
                    if fd < nfds && bits & (1 << b) != 0 {
                        out.push((fd as i32, ev));
                    }
                }
            }
        }
        out
    }

    /// The call's timeout in ns; `None` waits forever.
    fn timeout_ns(&self, c: &Call, t: &Timeout) -> Result<Option<u64>, i32> {
        match *t {
            Timeout::Millis(i) => {
                let ms = c.a[i] as i32;
                Ok((ms >= 0).then(|| ms as u64 * 1_000_000))
            }
            Timeout::Timespec(i) | Timeout::Timeval(i) => {
                if c.a[i] == 0 {
                    return Ok(None);
                }
                let ts: Timespec = tracee::read_val(c.pid, c.a[i]).map_err(|_| libc::EFAULT)?;
                let ts = if matches!(t, Timeout::Timeval(_)) {
                    Timespec {
                        sec: ts.sec,
                        nsec: ts.nsec.saturating_mul(1000),
                    }
                } else {
                    ts
                };
                Ok(Some(ts.to_ns().ok_or(libc::EINVAL)?))
            }
        }
    }

    /// How to run the call in the kernel with a zero timeout: the timeout
    /// argument is replaced (a zeroed timespec is placed below the red zone
    /// of the caller's stack) and restored at the call's exit.
    fn zero_timeout(&self, c: &Call, t: &Timeout) -> Option<Resume> {
        let mut regs = c.regs;
        match *t {
            Timeout::Millis(i) => set_arg(&mut regs, i, 0),
            Timeout::Timespec(i) | Timeout::Timeval(i) => {
                let scratch = (c.regs.rsp - RED_ZONE - 16) & !15;
                tracee::write_val(c.pid, scratch, &Timespec::default()).ok()?;
                set_arg(&mut regs, i, scratch);
            }
        }
        Some(Resume::PassThenExit(
            Some(Box::new(regs)),
            ExitHook::RestoreArgs(Box::new(c.regs)),
        ))
    }
}

/// Sets syscall argument register `i` (0-based: rdi, rsi, rdx, r10, r8, r9).
pub(super) fn set_arg(regs: &mut Regs, i: usize, v: u64) {
    match i {
        0 => regs.rdi = v,
        1 => regs.rsi = v,
        2 => regs.rdx = v,
        3 => regs.r10 = v,
        4 => regs.r8 = v,
        _ => regs.r9 = v,
    }
}
