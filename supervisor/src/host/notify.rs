//! The seccomp user-notification path: the hottest modelled calls (futex
//! waits and wakes, sleeps, `sched_yield`) reach the supervisor as
//! notifications on a listener descriptor instead of ptrace stops. The
//! thread waits in the kernel until it is answered, as it would at a
//! ptrace stop, but the round trip is two `ioctl`s instead of `wait4`,
//! `PTRACE_GETREGS`, `PTRACE_SETREGS` and `PTRACE_CONT`, and the kernel's
//! wake-up is cheaper. Nothing runs in the program: it works for static and
//! Go binaries alike.
//!
//! Each launched program installs its filter with a new listener and hands
//! it over before exec; its children inherit the filter, so every process
//! of one launch shares one listener. Waiting for "the running thread
//! stopped in ptrace *or* was notified" polls the listener and a signalfd
//! for SIGCHLD (the kernel sends one to the tracer for every ptrace stop).

use crate::hashing::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::rc::Rc;

/// `SECCOMP_IOCTL_NOTIF_RECV`: `_IOWR('!', 0, struct seccomp_notif)`.
const NOTIF_RECV: libc::c_ulong = 0xc050_2100;
/// `SECCOMP_IOCTL_NOTIF_SEND`: `_IOWR('!', 1, struct seccomp_notif_resp)`.
const NOTIF_SEND: libc::c_ulong = 0xc018_2101;
/// `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: let the kernel run the call.
const FLAG_CONTINUE: u32 = 1;
/// How long a wait goes without looking for stops whose SIGCHLD it missed.
const STRAY_CHECK_MS: i32 = 10;
/// The kernel's `ERESTARTNOINTR`: the call is made again when the thread
/// returns to user space (after any signal handler it runs first).
const ERESTARTNOINTR: i64 = 513;

/// `struct seccomp_data`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct SeccompData {
    nr: i32,
    arch: u32,
    instruction_pointer: u64,
    args: [u64; 6],
}

/// `struct seccomp_notif`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct RawNotif {
    id: u64,
    pid: u32,
    flags: u32,
    data: SeccompData,
}

/// `struct seccomp_notif_resp`.
#[repr(C)]
struct RawResp {
    id: u64,
    val: i64,
    error: i32,
    flags: u32,
}

/// One notified call: the thread waits in the kernel until it is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification {
    /// The kernel's cookie for the answer.
    pub id: u64,
    /// Host tid of the caller.
    pub tid: i32,
    /// The syscall number.
    pub nr: i64,
    /// Its arguments.
    pub args: [u64; 6],
}

/// How a notified call is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The call returns this raw value (`-errno` on failure).
    Return(i64),
    /// The kernel makes the call as the program asked.
    Continue,
    /// The call is made again on the way back to user space, after a
    /// signal handler if one is due (SA_RESTART, or a re-decided wait).
    Restart,
}

/// The listener of one launch's filter.
#[derive(Debug)]
pub struct Listener(OwnedFd);

impl Listener {
    /// Wraps a listener descriptor handed over by a launched program.
    pub fn new(fd: OwnedFd) -> Listener {
        Listener(fd)
    }

    /// The pending notification, if there is one (the listener polled
    /// readable); None if it went away meanwhile (its caller was killed).
    fn recv(&self) -> io::Result<Option<Notification>> {
        let mut raw = RawNotif::default();
        // SAFETY: the kernel fills `raw`, which has the layout it expects.
        let r = unsafe { libc::ioctl(self.0.as_raw_fd(), NOTIF_RECV, &mut raw) };
        if r != 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::EINTR) => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(Notification {
            id: raw.id,
            tid: raw.pid as i32,
            nr: i64::from(raw.data.nr),
            args: raw.data.args,
        }))
    }

    /// Answers notification `id`. A caller killed meanwhile is no error.
    pub fn answer(&self, id: u64, answer: Answer) {
        let (val, error, flags) = match answer {
            Answer::Return(v) if (-4095..0).contains(&v) => (0, v as i32, 0),
            Answer::Return(v) => (v, 0, 0),
            Answer::Continue => (0, 0, FLAG_CONTINUE),
            Answer::Restart => (0, -(ERESTARTNOINTR as i32), 0),
        };
        let mut resp = RawResp {
            id,
            val,
            error,
            flags,
        };
        // SAFETY: `resp` has the layout the kernel expects.
        unsafe { libc::ioctl(self.0.as_raw_fd(), NOTIF_SEND, &mut resp) };
    }
}

/// What the running thread did next.
#[derive(Debug)]
pub enum Next {
    /// A ptrace stop (or exit) of `tid`: (tid, wait status).
    Stop(i32, i32),
    /// A notified call.
    Call(Notification),
}

/// The listeners of every process, and the SIGCHLD descriptor that makes a
/// ptrace stop something `poll` can wait for beside them.
pub struct Notifier {
    sigchld: OwnedFd,
    by_pid: HashMap<i32, Rc<Listener>>,
    /// Notifications of threads other than the one waited for, kept until
    /// that thread is waited for.
    early: HashMap<i32, Notification>,
    /// A launch came without a listener (a kernel without the flags).
    listenerless: std::cell::Cell<bool>,
}

impl Notifier {
    /// Blocks SIGCHLD in the calling thread (threads started later inherit
    /// the block, so none of them takes it) and opens its signalfd.
    pub fn new() -> io::Result<Notifier> {
        // SAFETY: plain signal-set calls on a local set.
        let fd = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK)
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Notifier {
            // SAFETY: a fresh descriptor we own.
            sigchld: unsafe { OwnedFd::from_raw_fd(fd) },
            by_pid: HashMap::default(),
            early: HashMap::default(),
            listenerless: std::cell::Cell::new(false),
        })
    }

    /// `pid`, a launched program, answers to `listener`.
    pub fn adopt(&mut self, pid: i32, listener: Listener) {
        self.by_pid.insert(pid, Rc::new(listener));
    }

    /// Notes a launch the kernel gave no listener; true the first time,
    /// so that is said once.
    pub fn first_without_listener(&self) -> bool {
        !self.listenerless.replace(true)
    }

    /// `child` inherited `parent`'s filter, and so its listener.
    pub fn inherit(&mut self, parent: i32, child: i32) {
        if let Some(l) = self.by_pid.get(&parent).cloned() {
            self.by_pid.insert(child, l);
        }
    }

    /// `pid` is gone.
    pub fn forget(&mut self, pid: i32) {
        self.by_pid.remove(&pid);
    }

    /// The listener `pid`'s calls are notified on, if any.
    pub fn listener(&self, pid: i32) -> Option<Rc<Listener>> {
        self.by_pid.get(&pid).cloned()
    }

    /// Waits until `who` (a tid, or -1 for any tracee) changes state or the
    /// thread `tid` makes a notified call on `listener`. Stops come first,
    /// as without notifications.
    pub fn wait(&mut self, who: i32, tid: i32, listener: &Listener) -> io::Result<Next> {
        if let Some(n) = self.early.remove(&tid) {
            return Ok(Next::Call(n));
        }
        let mut listening = true;
        // Only a SIGCHLD sends us to waitpid, which saves a call per event.
        // SIGCHLDs coalesce, though: several tracees that stop at once (the
        // threads of an exiting process) leave one, and after its first
        // stop is collected the others are found only by asking. A wait for
        // any tracee asks first; a stop the SIGCHLDs hid otherwise is caught
        // by the poll's timeout, at the cost of that much wall time, never
        // a different run.
        let mut check_stops = who == -1;
        loop {
            if check_stops {
                if let Some((r, status)) = crate::host::tracee::try_wait(who)? {
                    return Ok(Next::Stop(r, status));
                }
            }
            // A listener no process uses any more only hangs up: from then
            // on only a stop can end the wait.
            let mut fds = [
                poll_in(self.sigchld.as_raw_fd()),
                poll_in(listener.0.as_raw_fd()),
            ];
            let count = if listening { 2 } else { 1 };
            // SAFETY: valid pollfds.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), count, STRAY_CHECK_MS) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    return Err(e);
                }
                continue;
            }
            check_stops = n == 0 || fds[0].revents != 0;
            if check_stops {
                self.drain_sigchld();
                continue;
            }
            if fds[1].revents & libc::POLLIN != 0 {
                match listener.recv()? {
                    Some(n) if n.tid == tid => return Ok(Next::Call(n)),
                    Some(n) => {
                        self.early.insert(n.tid, n);
                    }
                    None => {}
                }
            } else if fds[1].revents != 0 {
                listening = false;
            }
        }
    }

    fn drain_sigchld(&self) {
        let mut buf = [0u8; 128 * 4];
        // SAFETY: reads into a local buffer; non-blocking.
        while unsafe {
            libc::read(
                self.sigchld.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
            )
        } > 0
        {}
    }
}

fn poll_in(fd: RawFd) -> libc::pollfd {
    libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    }
}
