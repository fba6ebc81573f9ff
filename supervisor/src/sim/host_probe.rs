//! What the syscall handlers must ask the host about a tracee because the
//! simulation does not know it: the kind and readiness of descriptors the
//! kernel owns (pipes, eventfds, epoll instances), and the signals pending
//! for a thread. The engine answers through its borrowed descriptors and
//! /proc; handler tests answer from a fake, so the handlers need no process.

use std::os::fd::OwnedFd;

use crate::sim::fdkind::FdKind;

/// faultline holds no pidfd for the process (it is gone, or pidfd_open
/// failed), so none of its descriptors can be probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unprobed;

/// The host's answers about a tracee's descriptors and signals.
pub trait HostProbe {
    /// The kind of descriptor `fd` of process `pid` by its file type
    /// (`None`: the process has no such descriptor).
    fn classify(&self, pid: i32, fd: i32) -> Option<FdKind>;

    /// poll(2) revents of descriptor `fd` of process `pid` for `events`,
    /// without blocking (0: not ready; `Ok(None)`: no such descriptor). A
    /// descriptor found not ready may be answered from memory until
    /// [`HostProbe::changed`].
    fn revents(&self, pid: i32, fd: i32, events: i16) -> Result<Option<i16>, Unprobed>;

    /// Whether a blocking call waiting for `events` on descriptor `fd` of
    /// process `pid` would return at once: the descriptor is ready or was
    /// opened O_NONBLOCK (`Ok(None)`: no such descriptor).
    fn would_not_block(&self, pid: i32, fd: i32, events: i16) -> Result<Option<bool>, Unprobed>;

    /// The kernel may have made a descriptor of some process ready (a call
    /// passed to it, a signal, an exec, a process's end, a timerfd
    /// written): what was found not ready must be probed again.
    fn changed(&self);

    /// Whether descriptors `a` and `b` of process `pid` are the same open
    /// file (a dup'd epoll descriptor is the same instance).
    fn same_file(&self, pid: i32, a: i32, b: i32) -> bool;

    /// Descriptors `lo..=hi` of process `pid` were closed or replaced:
    /// copies kept for probing them are stale.
    fn forget(&self, pid: i32, lo: i32, hi: i32);

    /// A copy of descriptor `fd` of process `pid`, sharing its open file
    /// (`None`: no such descriptor).
    fn borrow(&self, pid: i32, fd: i32) -> Option<OwnedFd>;

    /// The file offset of descriptor `fd` of process `pid`.
    fn position(&self, pid: i32, fd: i32) -> Option<u64>;

    /// Whether descriptor `fd` of process `pid` is open for writing.
    fn writable(&self, pid: i32, fd: i32) -> Option<bool>;

    /// The signal words of thread `tid` of process `pid` (`None`: gone).
    fn signals(&self, pid: i32, tid: i32) -> Option<SigStatus>;

    /// Whether descriptor `fd` of process `pid` was found not ready for
    /// `events` since the last [`HostProbe::changed`], as remembered: no
    /// system call.
    fn known_not_ready(&self, _pid: i32, _fd: i32, _events: i16) -> bool {
        false
    }

    /// Whether an answer so far was made up because the real one needed a
    /// system call ([`MemoryOnly`]): the caller must not act on it.
    fn guessed(&self) -> bool {
        false
    }

    /// How many times the remembered "not ready" answers
    /// ([`HostProbe::known_not_ready`]) may have lost one (a change, a
    /// descriptor forgotten, a process started, exec'd or gone): while it
    /// stays the same, what was found not ready still is. `None` for a
    /// host that remembers nothing.
    fn memo_epoch(&self) -> Option<u64> {
        None
    }
}

/// A host probe that answers only from what the host remembers (the
/// descriptors found not ready since the last change) and notes when a
/// question needed a system call, answering it with a guess. The wakes
/// the engine makes while a thread it let run ahead runs use it, so that
/// nothing the thread does meanwhile (an `exec` closing descriptors, a
/// `chmod` an inotify watcher sees: calls no filter stops) can change
/// their answers; they stop at the first guess and the rest waits until
/// the thread is stopped again (`Supervisor::answer_ahead`).
pub struct MemoryOnly<'h, H> {
    host: &'h H,
    guessed: std::cell::Cell<bool>,
}

impl<'h, H: HostProbe> MemoryOnly<'h, H> {
    /// Answers from `host`'s memory.
    pub fn new(host: &'h H) -> MemoryOnly<'h, H> {
        MemoryOnly {
            host,
            guessed: std::cell::Cell::new(false),
        }
    }

    fn guess<T>(&self, guess: T) -> T {
        self.guessed.set(true);
        guess
    }
}

impl<H: HostProbe> HostProbe for MemoryOnly<'_, H> {
    fn classify(&self, _pid: i32, _fd: i32) -> Option<FdKind> {
        self.guess(None)
    }

    fn revents(&self, pid: i32, fd: i32, events: i16) -> Result<Option<i16>, Unprobed> {
        if self.host.known_not_ready(pid, fd, events) {
            return Ok(Some(0));
        }
        self.guess(Ok(Some(0)))
    }

    fn would_not_block(&self, _pid: i32, _fd: i32, _events: i16) -> Result<Option<bool>, Unprobed> {
        self.guess(Ok(Some(false)))
    }

    fn changed(&self) {
        self.host.changed();
    }

    fn same_file(&self, _pid: i32, _a: i32, _b: i32) -> bool {
        self.guess(false)
    }

    fn forget(&self, pid: i32, lo: i32, hi: i32) {
        self.host.forget(pid, lo, hi);
    }

    fn borrow(&self, _pid: i32, _fd: i32) -> Option<OwnedFd> {
        self.guess(None)
    }

    fn position(&self, _pid: i32, _fd: i32) -> Option<u64> {
        self.guess(None)
    }

    fn writable(&self, _pid: i32, _fd: i32) -> Option<bool> {
        self.guess(None)
    }

    fn signals(&self, _pid: i32, _tid: i32) -> Option<SigStatus> {
        self.guess(None)
    }

    fn known_not_ready(&self, pid: i32, fd: i32, events: i16) -> bool {
        self.host.known_not_ready(pid, fd, events)
    }

    fn guessed(&self) -> bool {
        self.guessed.get()
    }

    fn memo_epoch(&self) -> Option<u64> {
        self.host.memo_epoch()
    }
}

/// The signal state of one thread, as /proc/PID/task/TID/status shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SigStatus {
    /// Pending for the thread (SigPnd).
    pub thread_pending: u64,
    /// Pending for the process (ShdPnd).
    pub shared_pending: u64,
    /// Blocked (SigBlk).
    pub blocked: u64,
    /// Ignored (SigIgn).
    pub ignored: u64,
    /// Caught by a handler (SigCgt).
    pub caught: u64,
}
