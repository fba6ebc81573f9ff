//! Descriptors borrowed from a tracee once and kept, so that probing their
//! readiness on every wake scan costs a `poll` instead of a `pidfd_getfd`,
//! the probe and a `close`. Only anonymous-inode files are
//! kept (epoll, eventfd, timerfd, signalfd: what Go's netpoller and most
//! event loops wait on): none has a peer that could notice the extra
//! reference, unlike a pipe or a socket, whose EOF or EPIPE it would hold
//! off. A kept copy is dropped where the descriptor table changes under
//! it, the same calls that keep the kind table exact: close, close_range,
//! dup2/dup3 over it, exec. (Checking with `kcmp` before each use instead
//! cost almost as much as the borrow it saved.)
//!
//! Beside them, the descriptors last found not ready: a host descriptor's
//! readiness changes only when the kernel does something for a tracee (a
//! call passed to it, a signal, a process's exec or end) or faultline
//! writes to it (a timerfd's counter), and the engine says so
//! (`changed`). Until then a wake scan answers "not ready" without a
//! poll. Calls that run untrapped cannot make a descriptor ready: the
//! ones that write, close or signal all stop in the supervisor.

use crate::hashing::{HashMap, HashSet};
use std::cell::RefCell;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::fdprobe;

/// The kept descriptors of one process, by its descriptor number, and the
/// (descriptor, poll events) pairs found not ready since the last change.
#[derive(Debug, Default)]
pub struct HeldFds {
    kept: RefCell<HashMap<i32, OwnedFd>>,
    not_ready: RefCell<HashSet<(i32, i16)>>,
}

impl HeldFds {
    /// Runs `f` on a copy of descriptor `fd` of the process behind `pidfd`:
    /// the kept one, else a fresh borrow, kept if it is an anonymous-inode
    /// file and dropped after `f` otherwise. `None` if the process has no
    /// such descriptor.
    pub fn with<R>(&self, pidfd: &OwnedFd, fd: i32, f: impl FnOnce(RawFd) -> R) -> Option<R> {
        let mut kept = self.kept.borrow_mut();
        if let Some(file) = kept.get(&fd) {
            return Some(f(file.as_raw_fd()));
        }
        let file = fdprobe::borrow(pidfd, fd).ok()?;
        let r = f(file.as_raw_fd());
        if is_anonymous(&file) {
            kept.insert(fd, file);
        }
        Some(r)
    }

    /// The process's descriptors in `lo..=hi` were closed (or replaced).
    pub fn forget(&self, lo: i32, hi: i32) {
        self.kept
            .borrow_mut()
            .retain(|fd, _| !(lo..=hi).contains(fd));
        self.changed();
    }

    /// The process exec'd: descriptors closed on exec are gone, and which
    /// those were is not known here.
    pub fn clear(&self) {
        self.kept.borrow_mut().clear();
        self.changed();
    }

    /// Whether `fd` was found not ready for `events` since the last change.
    pub fn known_not_ready(&self, fd: i32, events: i16) -> bool {
        self.not_ready.borrow().contains(&(fd, events))
    }

    /// `fd` was just found not ready for `events`.
    pub fn note_not_ready(&self, fd: i32, events: i16) {
        self.not_ready.borrow_mut().insert((fd, events));
    }

    /// Something may have made a descriptor ready: probe again.
    pub fn changed(&self) {
        let mut not_ready = self.not_ready.borrow_mut();
        if !not_ready.is_empty() {
            not_ready.clear();
        }
    }
}

/// True for an anonymous-inode file (its mode has no file type bits).
fn is_anonymous(file: &OwnedFd) -> bool {
    // SAFETY: stat is plain old data.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    unsafe { libc::fstat(file.as_raw_fd(), &mut st) == 0 && st.st_mode & libc::S_IFMT == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;

    #[test]
    fn an_eventfd_is_kept_and_a_pipe_is_not() {
        let pid = std::process::id() as i32;
        let pidfd = fdprobe::pidfd_open(pid).expect("pidfd of self");
        let efd = unsafe { OwnedFd::from_raw_fd(libc::eventfd(0, 0)) };
        let mut pipe = [0; 2];
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        let held = HeldFds::default();
        assert!(held.with(&pidfd, efd.as_raw_fd(), |_| ()).is_some());
        assert!(held.with(&pidfd, pipe[0], |_| ()).is_some());
        let kept: Vec<i32> = held.kept.borrow().keys().copied().collect();
        assert_eq!(kept, vec![efd.as_raw_fd()]);
        held.forget(efd.as_raw_fd(), efd.as_raw_fd());
        assert!(held.kept.borrow().is_empty());
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
    }

    #[test]
    fn a_descriptor_found_not_ready_is_polled_again_only_after_a_change() {
        let pidfd = fdprobe::pidfd_open(std::process::id() as i32).expect("pidfd of self");
        let mut pipe = [0; 2];
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        let held = HeldFds::default();
        let readable = || fdprobe::revents(&pidfd, &held, pipe[0], libc::POLLIN);
        assert_eq!(readable(), Some(0));
        assert_eq!(unsafe { libc::write(pipe[1], b"x".as_ptr().cast(), 1) }, 1);
        // Not polled again: nothing said the descriptor may have changed.
        assert_eq!(readable(), Some(0));
        held.changed();
        assert_eq!(readable(), Some(libc::POLLIN));
        // A ready answer is never remembered.
        assert_eq!(readable(), Some(libc::POLLIN));
        // A closed descriptor's memo goes with it.
        held.note_not_ready(pipe[1], libc::POLLOUT);
        held.forget(pipe[1], pipe[1]);
        assert!(!held.known_not_ready(pipe[1], libc::POLLOUT));
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
    }
}
