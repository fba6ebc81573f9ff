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

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::fdprobe;

/// The kept descriptors of one process, by its descriptor number.
#[derive(Debug, Default)]
pub struct HeldFds(RefCell<HashMap<i32, OwnedFd>>);

impl HeldFds {
    /// Runs `f` on a copy of descriptor `fd` of the process behind `pidfd`:
    /// the kept one, else a fresh borrow, kept if it is an anonymous-inode
    /// file and dropped after `f` otherwise. `None` if the process has no
    /// such descriptor.
    pub fn with<R>(&self, pidfd: &OwnedFd, fd: i32, f: impl FnOnce(RawFd) -> R) -> Option<R> {
        let mut kept = self.0.borrow_mut();
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
        self.0.borrow_mut().retain(|fd, _| !(lo..=hi).contains(fd));
    }

    /// The process exec'd: descriptors closed on exec are gone, and which
    /// those were is not known here.
    pub fn clear(&self) {
        self.0.borrow_mut().clear();
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
        let kept: Vec<i32> = held.0.borrow().keys().copied().collect();
        assert_eq!(kept, vec![efd.as_raw_fd()]);
        held.forget(efd.as_raw_fd(), efd.as_raw_fd());
        assert!(held.0.borrow().is_empty());
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
    }
}
