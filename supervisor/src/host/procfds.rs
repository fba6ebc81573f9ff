//! The host handles faultline keeps per traced process to look at it
//! without stopping it: a pidfd (to borrow its descriptors) and the copies
//! kept for readiness probes. They answer the handlers' `HostProbe`
//! questions; the simulation never holds a host descriptor.

use crate::hashing::HashMap;
use std::cell::Cell;
use std::os::fd::OwnedFd;

use super::fdprobe;
use super::heldfds::HeldFds;
use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::{HostProbe, SigStatus, Unprobed};

/// One process's handles.
#[derive(Debug)]
struct Handles {
    pidfd: OwnedFd,
    held: HeldFds,
}

/// The handles of every traced process, by host pid, and how many times
/// what they remember may have lost an answer (`HostProbe::memo_epoch`).
#[derive(Debug, Default)]
pub struct ProcFds {
    procs: HashMap<i32, Handles>,
    memo_epoch: Cell<u64>,
}

impl ProcFds {
    /// A new process `pid` is traced: open its pidfd (a process whose
    /// pidfd cannot be opened is not probed).
    pub fn open(&mut self, pid: i32) {
        if let Ok(pidfd) = fdprobe::pidfd_open(pid) {
            let held = HeldFds::default();
            self.procs.insert(pid, Handles { pidfd, held });
            self.memo_lost();
        }
    }

    /// Process `pid` is gone.
    pub fn close(&mut self, pid: i32) {
        self.procs.remove(&pid);
        self.memo_lost();
    }

    /// Process `pid` exec'd: which descriptors closed is not known here.
    pub fn exec(&self, pid: i32) {
        if let Some(h) = self.procs.get(&pid) {
            h.held.clear();
        }
        self.memo_lost();
    }

    /// What some process's copies remember may have lost an answer.
    fn memo_lost(&self) {
        self.memo_epoch.set(self.memo_epoch.get() + 1);
    }

    /// Process `pid`'s pidfd, through which its descriptors are borrowed.
    pub fn pidfd(&self, pid: i32) -> Option<&OwnedFd> {
        self.procs.get(&pid).map(|h| &h.pidfd)
    }
}

impl HostProbe for ProcFds {
    fn classify(&self, pid: i32, fd: i32) -> Option<FdKind> {
        fdprobe::classify(self.pidfd(pid)?, fd)
    }

    fn revents(&self, pid: i32, fd: i32, events: i16) -> Result<Option<i16>, Unprobed> {
        let h = self.procs.get(&pid).ok_or(Unprobed)?;
        Ok(fdprobe::revents(&h.pidfd, &h.held, fd, events))
    }

    fn would_not_block(&self, pid: i32, fd: i32, events: i16) -> Result<Option<bool>, Unprobed> {
        let h = self.procs.get(&pid).ok_or(Unprobed)?;
        Ok(fdprobe::would_not_block(&h.pidfd, &h.held, fd, events))
    }

    fn changed(&self) {
        for h in self.procs.values() {
            h.held.changed();
        }
        self.memo_lost();
    }

    fn known_not_ready(&self, pid: i32, fd: i32, events: i16) -> bool {
        self.procs
            .get(&pid)
            .is_some_and(|h| h.held.known_not_ready(fd, events))
    }

    fn same_file(&self, pid: i32, a: i32, b: i32) -> bool {
        fdprobe::same_file(pid, a, b)
    }

    fn forget(&self, pid: i32, lo: i32, hi: i32) {
        if let Some(h) = self.procs.get(&pid) {
            h.held.forget(lo, hi);
        }
        self.memo_lost();
    }

    fn borrow(&self, pid: i32, fd: i32) -> Option<OwnedFd> {
        fdprobe::borrow(self.pidfd(pid)?, fd).ok()
    }

    fn position(&self, pid: i32, fd: i32) -> Option<u64> {
        fdprobe::position(self.pidfd(pid)?, fd)
    }

    fn writable(&self, pid: i32, fd: i32) -> Option<bool> {
        fdprobe::writable(self.pidfd(pid)?, fd)
    }

    fn memo_epoch(&self) -> Option<u64> {
        Some(self.memo_epoch.get())
    }

    fn signals(&self, pid: i32, tid: i32) -> Option<SigStatus> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
        Some(parse_sig_status(&text))
    }
}

/// The signal words of a /proc status text.
fn parse_sig_status(text: &str) -> SigStatus {
    let mut s = SigStatus::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = u64::from_str_radix(v.trim(), 16).unwrap_or(0);
        match k {
            "SigPnd" => s.thread_pending = v,
            "ShdPnd" => s.shared_pending = v,
            "SigBlk" => s.blocked = v,
            "SigIgn" => s.ignored = v,
            "SigCgt" => s.caught = v,
            _ => {}
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signal_words_are_read_from_a_status_text() {
        let text = "Name:\tx\nSigPnd:\t0000000000000100\nShdPnd:\t0000000000004000\n\
                    SigBlk:\t0000000000000002\nSigIgn:\t0000000000001000\nSigCgt:\t0000000000000400\n";
        let s = parse_sig_status(text);
        assert_eq!(
            s,
            SigStatus {
                thread_pending: 0x100,
                shared_pending: 0x4000,
                blocked: 2,
                ignored: 0x1000,
                caught: 0x400,
            }
        );
    }

    #[test]
    fn a_process_without_a_pidfd_is_unprobed() {
        let fds = ProcFds::default();
        assert!(matches!(fds.revents(1, 0, libc::POLLIN), Err(Unprobed)));
        let me = std::process::id() as i32;
        let mut fds = ProcFds::default();
        fds.open(me);
        let mut pipe = [0; 2];
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        assert_eq!(fds.revents(me, pipe[0], libc::POLLIN), Ok(Some(0)));
        assert_eq!(fds.classify(me, pipe[0]), Some(FdKind::Pollable));
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
    }
}
