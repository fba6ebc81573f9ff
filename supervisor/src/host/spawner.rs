//! The spawner: a small process, forked from faultline when it first starts
//! a program, that forks every program after that (the namespace init, the
//! program, its confinement up to exec).
//!
//! A fork copies the forking process's page tables and makes each of its
//! pages copy-on-write. Forked from a supervisor that has grown to tens of
//! MiB, each start cost about 2 ms (the init's fork, the program's, and the
//! exec that drops the copy), and every page the supervisor wrote
//! afterwards took a fault: on the 60 s etcd seed, with 123 starts
//! (restarts and invariant probes), most of the supervisor's 47,000 page
//! faults (README, Performance, step 26). The spawner stays small, so its
//! forks are cheap and the supervisor's pages stay its own. The supervisor
//! still seizes each program itself before it may exec.
//!
//! It serves start requests on a unix socket until the supervisor's end
//! closes: at the end of the run, or when faultline exits, even by `kill
//! -9`; its inits die with it (`PR_SET_PDEATHSIG`), and their namespaces'
//! programs with them.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use serde::{Deserialize, Serialize};

use crate::host::fdpass;

/// One seccomp filter instruction: code, jt, jf, k.
pub type Insn = (u16, u8, u8, u32);

/// What the spawner is asked to start: a launch resolved into the bytes
/// the namespace init and the program need. The descriptors the program
/// gets travel with it, in this order: stdout and stderr (`output`), the
/// fast path's channel (`channel`), the listener's hand-over end
/// (`handover`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Request {
    /// The file to execute (relative to `cwd` if relative).
    pub path: Vec<u8>,
    /// argv.
    pub argv: Vec<Vec<u8>>,
    /// The whole environment, as `KEY=VALUE`.
    pub envp: Vec<Vec<u8>>,
    /// The directory the program starts in (empty: the spawner's).
    pub cwd: Vec<u8>,
    /// (source, target) bind mounts in a private mount namespace.
    pub mounts: Vec<(Vec<u8>, Vec<u8>)>,
    /// The seccomp filter.
    pub filter: Vec<Insn>,
    /// The notifying filter, installed first with a listener.
    pub notify_filter: Option<Vec<Insn>>,
    /// Two output descriptors come with the request.
    pub output: bool,
    /// The channel's descriptor comes with it.
    pub channel: bool,
    /// The listener's hand-over end comes with it.
    pub handover: bool,
}

/// The spawner's answer to a [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The program is forked and waits for one byte on the pipe whose
    /// write end comes with this reply, to be sent once it is seized.
    Started {
        /// Its host pid.
        pid: i32,
    },
    /// The namespace init could not make mount `index` (-1: making the
    /// mounts private).
    MountFailed {
        /// Which mount.
        index: i32,
        /// mount(2)'s errno.
        errno: i32,
    },
    /// A step of the start failed.
    Failed {
        /// Its errno.
        errno: i32,
        /// What was being done.
        doing: String,
    },
}

/// A run's spawner, as the supervisor holds it: started at the run's
/// first program start, ended with the run ([`Spawner::stop`]).
#[derive(Debug, Default)]
pub struct Spawner {
    /// Its socket; None until the first start, and again after a stop.
    sock: Option<OwnedFd>,
}

impl Spawner {
    /// Asks the spawner (started on first use) to start `request` with
    /// `fds`; its reply and, if started, the go pipe's write end.
    pub fn start(
        &mut self,
        request: &Request,
        fds: &[RawFd],
    ) -> io::Result<(Reply, Option<OwnedFd>)> {
        let bytes = serde_json::to_vec(request).map_err(io::Error::other)?;
        let mut sock = match self.sock.take() {
            Some(sock) => sock,
            None => fork_spawner()?,
        };
        if fdpass::send(sock.as_raw_fd(), &bytes, fds).is_err() {
            // A spawner that died (killed from outside) is replaced once.
            sock = fork_spawner()?;
            fdpass::send(sock.as_raw_fd(), &bytes, fds)
                .map_err(|e| spawner_failed("sending it a start request", e))?;
        }
        let (bytes, fds) = fdpass::receive(&sock)
            .map_err(|e| spawner_failed("reading its answer", e))?
            .ok_or_else(|| spawner_failed("reading its answer", io::Error::other("it exited")))?;
        self.sock = Some(sock);
        let reply = serde_json::from_slice(&bytes)
            .map_err(|e| spawner_failed("reading its answer", io::Error::other(e)))?;
        Ok((reply, fds.into_iter().next()))
    }

    /// Ends the spawner: it reaps its inits as their programs end, then
    /// exits, and the supervisor reaps it with its other children. So
    /// every program's CPU time reaches faultline's own (`time faultline
    /// ...` counts it), through its init and the spawner.
    pub fn stop(&mut self) {
        self.sock = None;
    }
}

fn spawner_failed(doing: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("faultline's spawner: {doing}: {e}"))
}

/// Forks the spawner; the supervisor's end of its socket. It inherits the
/// CPU the supervisor was pinned to (`host::placement`), and the programs
/// it forks inherit it from it.
fn fork_spawner() -> io::Result<OwnedFd> {
    let (ours, theirs) = fdpass::socket_pair()?;
    // glibc's fork, not a raw clone: it leaves malloc usable in the child
    // of a multi-threaded process, and the spawner allocates.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            let sock = theirs.as_raw_fd();
            // Only stdio and its socket: a descriptor of the supervisor's
            // (a pipe's write end, the other end of this socket) held here
            // would keep its reader from ever seeing end of file.
            close_from(3, Some(sock as libc::c_uint), 0);
            spawner_signal_state();
            std::mem::forget(ours);
            // A panic must not unwind into the supervisor's frames, which
            // this process copied with its memory.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| serve(theirs)));
            reap(0);
            unsafe { libc::_exit(0) }
        }
        _ => Ok(ours),
    }
}

/// The spawner's signals: defaults, but SIGINT and SIGTERM ignored, as they
/// were by the namespace inits when the supervisor forked them (its
/// handler only notes them): a Ctrl-C reaches the whole process group, and
/// the supervisor, not the inits, decides what ends. Programs reset all of
/// them before exec.
fn spawner_signal_state() {
    default_signal_state();
    // SAFETY: plain signal calls.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    }
}

/// The spawner's loop: a request, its start, the reply, until end of file.
/// Reaps the inits (and, without namespaces, the programs) that have ended
/// before each request.
fn serve(sock: OwnedFd) {
    loop {
        reap(libc::WNOHANG);
        let Ok(Some((bytes, fds))) = fdpass::receive(&sock) else {
            return;
        };
        let (reply, go) = match serde_json::from_slice::<Request>(&bytes) {
            Ok(request) => start_program(&request, &fds, sock.as_raw_fd()),
            Err(e) => refused(libc::EINVAL, format!("reading a start request: {e}")),
        };
        drop(fds);
        let bytes = serde_json::to_vec(&reply).unwrap_or_else(|_| b"{}".to_vec());
        let go_fds: Vec<RawFd> = go.iter().map(|g| g.as_raw_fd()).collect();
        if fdpass::send(sock.as_raw_fd(), &bytes, &go_fds).is_err() {
            return;
        }
    }
}

/// Reaps the spawner's children that have ended: with `flags` 0, waits
/// until it has none.
fn reap(flags: libc::c_int) {
    loop {
        // SAFETY: plain waitpid without a status.
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), flags) };
        if r == 0 || (r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)) {
            return;
        }
    }
}

/// A start that failed with `errno` while `doing` something.
fn refused(errno: i32, doing: impl Into<String>) -> (Reply, Option<OwnedFd>) {
    let doing = doing.into();
    (Reply::Failed { errno, doing }, None)
}

/// A step that failed, with the errno it just set.
fn failed(doing: &str) -> (Reply, Option<OwnedFd>) {
    let errno = io::Error::last_os_error().raw_os_error();
    refused(errno.unwrap_or(libc::EIO), doing)
}

/// A pipe, both ends close-on-exec: (read, write).
fn pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return None;
        }
        Some((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// Starts `request` in the spawner (whose socket is `sock`): the namespace
/// init and, under it, the program, confined and waiting for the
/// supervisor's go.
fn start_program(request: &Request, fds: &[OwnedFd], sock: RawFd) -> (Reply, Option<OwnedFd>) {
    let wanted = 2 * usize::from(request.output)
        + usize::from(request.channel)
        + usize::from(request.handover);
    if fds.len() != wanted {
        let doing = format!(
            "a start request came with {} descriptors, not {wanted}",
            fds.len()
        );
        return refused(libc::EINVAL, doing);
    }
    let mut next = fds.iter().map(|f| f.as_raw_fd());
    let output = request
        .output
        .then(|| (next.next().unwrap_or(-1), next.next().unwrap_or(-1)));
    let channel = request.channel.then(|| next.next().unwrap_or(-1));
    let handover = request.handover.then(|| next.next().unwrap_or(-1));
    let Some(program) = Program::new(request, output, channel, handover, sock) else {
        let doing = "a start request has a NUL byte in a path, argument or variable";
        return refused(libc::EINVAL, doing);
    };
    let Some((go_read, go_write)) = pipe() else {
        return failed("making the go pipe");
    };
    // Reported here: by the namespace init, a failed mount as (mount
    // index, errno); by the program, one byte once it may be seized (the
    // spawner then finds it among the init's children without polling).
    let Some((report_read, report_write)) = pipe() else {
        return failed("making the report pipe");
    };
    let (go, report) = (go_read.as_raw_fd(), report_write.as_raw_fd());
    // A new PID namespace makes the pids and tids programs see follow
    // creation order, which the scheduler makes deterministic. Its pid 1 is a
    // tiny untraced init (pid 1 ignores default-action signals, which would
    // change how a program dies); the program is pid 2. Where namespaces are
    // not permitted, the program runs with host pids.
    let ns_flags = libc::CLONE_NEWPID as u64
        | if program.mounts.is_empty() {
            0
        } else {
            libc::CLONE_NEWNS as u64
        };
    let forked = match raw_fork(ns_flags) {
        0 => run_init(&program, go, report),
        p if p > 0 => Forked::Init(p),
        _ => match raw_fork(0) {
            0 => program.confine(go, report),
            p if p < 0 => return failed("forking the program"),
            p => Forked::Program(p),
        },
    };
    drop(report_write);
    // One byte: the program may be seized; 8 bytes: the init could not
    // make a mount (which, and why); end of file: the init or the program
    // died first.
    let mut got = [0u8; 8];
    let n = unsafe {
        libc::read(
            report_read.as_raw_fd(),
            got.as_mut_ptr() as *mut libc::c_void,
            8,
        )
    };
    if n == 8 {
        let index = i32::from_ne_bytes([got[0], got[1], got[2], got[3]]);
        let errno = i32::from_ne_bytes([got[4], got[5], got[6], got[7]]);
        return (Reply::MountFailed { index, errno }, None);
    }
    if n != 1 {
        return refused(libc::ECHILD, "the program died before it could be seized");
    }
    let pid = match forked {
        Forked::Init(init) => match first_child_of(init) {
            Ok(pid) => pid,
            Err(e) => return refused(e.raw_os_error().unwrap_or(libc::EIO), e.to_string()),
        },
        Forked::Program(pid) => pid,
    };
    (Reply::Started { pid }, Some(go_write))
}

/// What the spawner forked: the namespace init (the program is its
/// child), or, where namespaces are not permitted, the program itself.
enum Forked {
    Init(i32),
    Program(i32),
}

/// The namespace init: makes the mounts, starts the program, reports, and
/// lives until the program ends. Only async-signal-safe calls.
fn run_init(program: &Program, go: RawFd, report: RawFd) -> ! {
    // In its new namespace the init's parent pid reads as 0: no check.
    die_with_parent(None);
    program.close_spawner_socket();
    if let Err(failed) = private_mounts(&program.mounts) {
        unsafe {
            libc::write(
                report,
                failed_bytes(failed).as_ptr() as *const libc::c_void,
                8,
            );
            libc::_exit(125);
        }
    }
    let child = raw_fork(0);
    if child == 0 {
        program.confine(go, report);
    }
    unsafe {
        // The program reports on its own once it may be seized.
        libc::close(report);
        // Only the program may hold the hand-over's sending end: the
        // supervisor's receive ends when it has sent, or died before it could.
        if let Some(h) = program.handover {
            libc::close(h);
        }
        libc::close(go);
        loop {
            let r = libc::waitpid(-1, std::ptr::null_mut(), 0);
            if r == child || (r < 0 && *libc::__errno_location() != libc::EINTR) {
                libc::_exit(0);
            }
        }
    }
}

/// A request made ready for the forked children, which may not allocate.
struct Program {
    path: CString,
    /// Owns what `argv` and `envp` point into.
    _strings: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    cwd: Option<CString>,
    mounts: Vec<(CString, CString)>,
    filter: Vec<libc::sock_filter>,
    notify_filter: Option<Vec<libc::sock_filter>>,
    output: Option<(RawFd, RawFd)>,
    channel: Option<RawFd>,
    handover: Option<RawFd>,
    /// The spawner's end of its socket, which its children close: held by
    /// an init, it would keep a dead spawner's socket open, and a start
    /// request sent then would be lost.
    spawner_socket: RawFd,
}

impl Program {
    /// None if a string has a NUL byte.
    fn new(
        request: &Request,
        output: Option<(RawFd, RawFd)>,
        channel: Option<RawFd>,
        handover: Option<RawFd>,
        spawner_socket: RawFd,
    ) -> Option<Program> {
        let c = |b: &Vec<u8>| CString::new(b.clone()).ok();
        let argv_strings: Vec<CString> = request.argv.iter().map(c).collect::<Option<_>>()?;
        let env_strings: Vec<CString> = request.envp.iter().map(c).collect::<Option<_>>()?;
        let pointers = |s: &[CString]| {
            let mut p: Vec<*const libc::c_char> = s.iter().map(|c| c.as_ptr()).collect();
            p.push(std::ptr::null());
            p
        };
        let (argv, envp) = (pointers(&argv_strings), pointers(&env_strings));
        let filter = |f: &[Insn]| {
            f.iter()
                .map(|&(code, jt, jf, k)| libc::sock_filter { code, jt, jf, k })
                .collect::<Vec<_>>()
        };
        Some(Program {
            path: c(&request.path)?,
            _strings: argv_strings.into_iter().chain(env_strings).collect(),
            argv,
            envp,
            cwd: if request.cwd.is_empty() {
                None
            } else {
                Some(c(&request.cwd)?)
            },
            mounts: request
                .mounts
                .iter()
                .map(|(s, t)| Some((c(s)?, c(t)?)))
                .collect::<Option<_>>()?,
            filter: filter(&request.filter),
            notify_filter: request.notify_filter.as_deref().map(filter),
            output,
            channel,
            handover,
            spawner_socket,
        })
    }

    /// Closes the spawner's socket in a child of the spawner.
    fn close_spawner_socket(&self) {
        // SAFETY: closes a descriptor number this child inherited.
        unsafe { libc::close(self.spawner_socket) };
    }

    /// The program's side after its fork: says on `report` that it may be
    /// seized, waits for the supervisor to have seized it (one byte on
    /// `go`), confines itself (no ASLR, trapping rdtsc, no new privileges,
    /// the seccomp filters) and execs. Only async-signal-safe calls.
    fn confine(&self, go: RawFd, report: RawFd) -> ! {
        unsafe {
            die_with_parent(None);
            self.close_spawner_socket();
            libc::write(report, b"f".as_ptr() as *const libc::c_void, 1);
            libc::close(report);
            let mut b = 0u8;
            libc::read(go, &mut b as *mut u8 as *mut libc::c_void, 1);
            libc::close(go);
            if let Some(dir) = &self.cwd {
                if libc::chdir(dir.as_ptr()) != 0 {
                    libc::_exit(125);
                }
            }
            if let Some((out, err)) = self.output {
                libc::dup2(out, 1);
                libc::dup2(err, 2);
            }
            if let Some(chan) = self.channel {
                libc::dup2(chan, faultline_channel::FD);
            }
            default_signal_state();
            // Descriptors faultline inherited (a shell's, `time -o`'s) must
            // not reach the program: they would shift the numbers its own
            // opens get, and so its trace, from one invocation to another.
            let keep = self.channel.map(|_| faultline_channel::FD as libc::c_uint);
            close_from(3, keep, CLOSE_RANGE_CLOEXEC);
            libc::setpgid(0, 0);
            libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0);
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            self.install_filters();
            libc::execve(self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr());
            libc::_exit(127)
        }
    }

    /// Installs the filters right before exec: first the notifying one, if
    /// any and if the kernel gives it a listener (sent over the hand-over
    /// socket while the calls that takes still run freely), then the ptrace
    /// one.
    fn install_filters(&self) {
        if let (Some(notify), Some(handover)) = (&self.notify_filter, self.handover) {
            if let Ok(fd) = crate::host::seccomp::install_with_listener(notify) {
                fdpass::send_fd(handover, fd);
                unsafe { libc::close(fd) };
            }
        }
        if let Some(handover) = self.handover {
            unsafe { libc::close(handover) };
        }
        if crate::host::seccomp::install(&self.filter).is_err() {
            unsafe { libc::_exit(126) };
        }
    }
}

/// Makes the caller die with SIGKILL when its parent does (a `kill -9` of
/// faultline must not leave programs running); with `parent` given, exits at
/// once if that parent is already gone. Async-signal-safe.
pub fn die_with_parent(parent: Option<libc::pid_t>) {
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if parent.is_some_and(|p| libc::getppid() != p) {
            libc::_exit(137);
        }
    }
}

/// fork(2) as a raw clone, so no atfork handler runs in the child;
/// `flags` adds namespace flags.
fn raw_fork(flags: u64) -> i32 {
    unsafe {
        libc::syscall(
            libc::SYS_clone,
            flags | libc::SIGCHLD as u64,
            0usize,
            0usize,
            0usize,
            0usize,
        ) as i32
    }
}

/// In the namespace init: makes every mount private (nothing propagates back
/// to the host) and bind-mounts each (source, target). On failure, the
/// index of the mount that failed (-1: the remount) and the errno.
/// Async-signal-safe.
fn private_mounts(mounts: &[(CString, CString)]) -> Result<(), (i32, i32)> {
    if mounts.is_empty() {
        return Ok(());
    }
    unsafe {
        let root = c"/".as_ptr();
        if libc::mount(
            std::ptr::null(),
            root,
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err((-1, *libc::__errno_location()));
        }
        for (i, (src, dst)) in mounts.iter().enumerate() {
            if libc::mount(
                src.as_ptr(),
                dst.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ) != 0
            {
                return Err((i as i32, *libc::__errno_location()));
            }
        }
    }
    Ok(())
}

/// (mount index, errno) as the 8 bytes the namespace init reports.
fn failed_bytes((index, errno): (i32, i32)) -> [u8; 8] {
    let (a, b) = (index.to_ne_bytes(), errno.to_ne_bytes());
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
}

/// The host pid of the first child of `pid` (the namespace init's program).
fn first_child_of(pid: i32) -> io::Result<i32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    for _ in 0..5000 {
        let text = std::fs::read_to_string(&path)?;
        if let Some(child) = text.split_whitespace().next().and_then(|c| c.parse().ok()) {
            return Ok(child);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Err(io::Error::other(
        "the namespace init did not start the program",
    ))
}

/// `close_range`'s flag that marks descriptors close-on-exec instead of
/// closing them.
const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;

/// Closes (`flags` 0) or marks close-on-exec ([`CLOSE_RANGE_CLOEXEC`])
/// every descriptor from `first` on, except `keep` (async-signal-safe: two
/// `close_range` calls).
fn close_from(first: libc::c_uint, keep: Option<libc::c_uint>, flags: libc::c_uint) {
    let range = |lo: libc::c_uint, hi: libc::c_uint| {
        if lo <= hi {
            // SAFETY: close_range takes no pointers.
            unsafe { libc::syscall(libc::SYS_close_range, lo, hi, flags) };
        }
    };
    match keep {
        Some(fd) if fd >= first => {
            range(first, fd - 1);
            range(fd + 1, libc::c_uint::MAX);
        }
        _ => range(first, libc::c_uint::MAX),
    }
}

/// Puts every signal back to its default action and unblocks them all.
/// The signal state faultline inherited must not reach the program, whose
/// start would depend on how faultline was started: a background shell
/// ignores SIGINT and SIGQUIT, nohup ignores SIGHUP (and Go installs no
/// handler for an ignored SIGINT or SIGHUP, a different trace), and the
/// supervisor blocks SIGCHLD for the fast path's channel. Only
/// async-signal-safe calls: for a forked child before exec.
fn default_signal_state() {
    // SAFETY: plain signal calls on a local set; numbers the kernel or libc
    // refuses (SIGKILL, SIGSTOP, libc's own) fail harmlessly.
    unsafe {
        for sig in 1..=64 {
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// `/bin/true` under a filter that allows every call.
    fn true_request() -> Request {
        const RET_ALLOW: Insn = (0x06, 0, 0, 0x7fff_0000);
        Request {
            path: b"/bin/true".to_vec(),
            argv: vec![b"true".to_vec()],
            filter: vec![RET_ALLOW],
            ..Request::default()
        }
    }

    /// The children of the calling thread (a spawner forked by it).
    fn my_children() -> Vec<i32> {
        // SAFETY: gettid takes nothing.
        let tid = unsafe { libc::gettid() };
        std::fs::read_to_string(format!("/proc/self/task/{tid}/children"))
            .expect("children")
            .split_whitespace()
            .map(|p| p.parse().expect("a pid"))
            .collect()
    }

    /// Starts `/bin/true`, checks that it waits for its go (it is still this
    /// test's binary), gives it and waits until it has exec'd or ended.
    fn start_and_finish(spawner: &mut Spawner) {
        let (reply, go) = spawner.start(&true_request(), &[]).expect("started");
        let Reply::Started { pid } = reply else {
            panic!("{reply:?}");
        };
        let go = go.expect("the go pipe");
        let exe = |pid: i32| std::fs::read_link(format!("/proc/{pid}/exe"));
        let me = std::env::current_exe().expect("this test's binary");
        assert_eq!(exe(pid).ok(), Some(me.clone()), "it waits for its go");
        assert_eq!(
            unsafe { libc::write(go.as_raw_fd(), b"g".as_ptr() as *const libc::c_void, 1) },
            1
        );
        let end = Instant::now() + Duration::from_secs(10);
        while exe(pid).is_ok_and(|e| e == me) {
            assert!(Instant::now() < end, "it never exec'd");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_dead_spawner_is_replaced_and_a_stopped_one_exits() {
        let mut spawner = Spawner::default();
        start_and_finish(&mut spawner);
        let [first] = my_children()[..] else {
            panic!("one spawner: {:?}", my_children());
        };
        // SAFETY: our own child, by pid.
        unsafe {
            libc::kill(first, libc::SIGKILL);
            libc::waitpid(first, std::ptr::null_mut(), 0);
        }
        start_and_finish(&mut spawner);
        let [second] = my_children()[..] else {
            panic!("one spawner: {:?}", my_children());
        };
        assert_ne!(first, second, "a new spawner");
        spawner.stop();
        // SAFETY: our own child, by pid; it exits once its socket closes.
        assert_eq!(
            unsafe { libc::waitpid(second, std::ptr::null_mut(), 0) },
            second
        );
    }

    #[test]
    fn a_mount_that_fails_is_named() {
        let mut spawner = Spawner::default();
        let request = Request {
            mounts: vec![(b"/no/such/source".to_vec(), b"/no/such/target".to_vec())],
            ..true_request()
        };
        let (reply, go) = spawner.start(&request, &[]).expect("an answer");
        assert!(go.is_none());
        match reply {
            // Without CAP_SYS_ADMIN the namespace is refused and the program
            // starts with host pids and no mounts.
            Reply::Started { .. } => {}
            Reply::MountFailed { index, errno } => {
                assert_eq!((index, errno), (0, libc::ENOENT));
            }
            other => panic!("{other:?}"),
        }
        spawner.stop();
    }
}
