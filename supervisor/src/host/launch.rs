//! Starting the root tracee: fork, confine (no ASLR, trapping rdtsc, no new
//! privileges, the seccomp filter), wait until the supervisor has seized us,
//! then exec. Everything the child needs is prepared before `fork`, because
//! the child may not allocate.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a program could not be started; reported before any tracee runs.
#[derive(Debug, Error)]
pub enum LaunchError {
    /// The program is not on disk (or not on PATH).
    #[error("cannot run {0:?}: no such file (searched PATH for bare names)")]
    NotFound(String),
    /// The file exists but may not be executed.
    #[error("cannot run {0}: not an executable file")]
    NotExecutable(PathBuf),
    /// An argument or variable contains a NUL byte.
    #[error("argument contains a NUL byte: {0:?}")]
    Nul(String),
    /// The node's host is not part of the simulated network.
    #[error("no simulated host named {0:?}")]
    NoHost(String),
    /// A data_dir's mount point could not be (re)created on the host.
    #[error("cannot create the mount point {path} of a node's data_dir: {source}")]
    MountPoint {
        /// The data_dir.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The namespace init could not bind-mount a node's disk.
    #[error("cannot bind-mount a node's disk at its data_dir {path}: {source}")]
    Mount {
        /// The data_dir.
        path: PathBuf,
        /// The errno of mount(2).
        source: io::Error,
    },
    /// fork/pipe/ptrace failed.
    #[error("could not start the tracee: {0}")]
    Os(#[from] io::Error),
}

/// What to run and how.
#[derive(Clone)]
pub struct LaunchSpec {
    /// The program; a bare name is looked up on PATH.
    pub program: String,
    /// argv[1..].
    pub args: Vec<String>,
    /// The full environment of the program.
    pub env: Vec<(String, String)>,
    /// The seccomp filter to install.
    pub filter: Vec<libc::sock_filter>,
    /// Where the program's stdout/stderr go (None: inherit the supervisor's).
    pub output: Option<(i32, i32)>,
    /// (source, target) bind mounts made in a private mount namespace
    /// before the program starts (a node's disk at its data_dir).
    pub mounts: Vec<(PathBuf, PathBuf)>,
    /// The fast path's channel memfd, put on `faultline_channel::FD`.
    pub channel_fd: Option<i32>,
    /// A filter with notified calls (`host::notify`), installed with a
    /// listener before `filter`; where the kernel cannot give it one, only
    /// `filter` is installed and every call stops in ptrace.
    pub notify_filter: Option<Vec<libc::sock_filter>>,
    /// The working directory the program starts in (None: faultline's); a
    /// relative `program` is relative to it.
    pub cwd: Option<PathBuf>,
}

/// Finds `program` the way execvp would, so a missing binary is an error
/// before anything starts.
pub fn resolve_program(program: &str) -> Result<PathBuf, LaunchError> {
    let candidates: Vec<PathBuf> = if program.contains('/') {
        vec![PathBuf::from(program)]
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(program)).collect())
            .unwrap_or_default()
    };
    let found = candidates
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| LaunchError::NotFound(program.to_string()))?;
    if !is_executable(&found) {
        return Err(LaunchError::NotExecutable(found));
    }
    Ok(found)
}

fn is_executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

fn cstring(s: &str) -> Result<CString, LaunchError> {
    CString::new(s).map_err(|_| LaunchError::Nul(s.to_string()))
}

/// The ptrace options every tracee gets.
pub const PTRACE_OPTIONS: libc::c_int = libc::PTRACE_O_TRACESYSGOOD
    | libc::PTRACE_O_TRACESECCOMP
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACEEXIT
    | libc::PTRACE_O_EXITKILL;

/// fork(2) as a raw clone, so no atfork handler runs in the child of our
/// multi-threaded supervisor; `flags` adds namespace flags.
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

/// A launched program.
#[derive(Debug)]
pub struct Spawned {
    /// Its host pid.
    pub pid: i32,
    /// Its filter's listener, if it has notified calls.
    pub listener: Option<OwnedFd>,
}

/// Forks and seizes the root tracee. The tracee next stops at its exec
/// event.
pub fn spawn(spec: &LaunchSpec) -> Result<Spawned, LaunchError> {
    // A relative path names a file in `cwd`, where the program starts:
    // checked there, and executed as written, so what the program sees
    // (argv[0], AT_EXECFN) does not depend on where faultline runs.
    let path = match &spec.cwd {
        Some(dir) if spec.program.contains('/') && !spec.program.starts_with('/') => {
            resolve_program(&dir.join(&spec.program).display().to_string())?;
            PathBuf::from(&spec.program)
        }
        _ => resolve_program(&spec.program)?,
    };
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| LaunchError::Nul(path.display().to_string()))?;
    let mut c_args = vec![cstring(&spec.program)?];
    for a in &spec.args {
        c_args.push(cstring(a)?);
    }
    let c_env: Vec<CString> = spec
        .env
        .iter()
        .map(|(k, v)| cstring(&format!("{k}={v}")))
        .collect::<Result<_, _>>()?;
    let mut argv: Vec<*const libc::c_char> = c_args.iter().map(|c| c.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = c_env.iter().map(|c| c.as_ptr()).collect();
    envp.push(std::ptr::null());

    let c_cwd = match &spec.cwd {
        Some(d) => Some(
            CString::new(d.as_os_str().as_bytes())
                .map_err(|_| LaunchError::Nul(d.display().to_string()))?,
        ),
        None => None,
    };
    // A mount point that vanished since the last launch (a node's restart)
    // is made again.
    for (_, target) in &spec.mounts {
        std::fs::create_dir_all(target).map_err(|source| LaunchError::MountPoint {
            path: target.clone(),
            source,
        })?;
    }
    let mut go = [0i32; 2];
    if unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error().into());
    }
    // The namespace init reports here: a failed mount as (mount index,
    // errno), or one byte once it has started the program (which the
    // supervisor then finds among its children without polling).
    let mut report = [0i32; 2];
    if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error().into());
    }
    // The program hands its filter's listener over on this pair (our end,
    // its end; -1 without one).
    let pair = match spec.notify_filter {
        Some(_) => Some(socket_pair()?),
        None => None,
    };
    let handover = pair
        .as_ref()
        .map_or([-1, -1], |(a, b)| [a.as_raw_fd(), b.as_raw_fd()]);
    let confine = || -> ! {
        // The program's side: only async-signal-safe calls from here on.
        unsafe {
            libc::close(go[1]);
            if handover[0] >= 0 {
                libc::close(handover[0]);
            }
            die_with_parent(None);
            let mut b = 0u8;
            libc::read(go[0], &mut b as *mut u8 as *mut libc::c_void, 1);
            libc::close(go[0]);
            if let Some(dir) = &c_cwd {
                if libc::chdir(dir.as_ptr()) != 0 {
                    libc::_exit(125);
                }
            }
            if let Some((out, err)) = spec.output {
                libc::dup2(out, 1);
                libc::dup2(err, 2);
            }
            if let Some(chan) = spec.channel_fd {
                libc::dup2(chan, faultline_channel::FD);
            }
            default_signal_state();
            // Descriptors faultline inherited (a shell's, `time -o`'s) must
            // not reach the program: they would shift the numbers its own
            // opens get, and so its trace, from one invocation to another.
            let keep = spec
                .channel_fd
                .map(|_| faultline_channel::FD as libc::c_uint);
            close_on_exec_from(3, keep);
            libc::setpgid(0, 0);
            libc::personality(libc::ADDR_NO_RANDOMIZE as libc::c_ulong);
            libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0);
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            install_filter(spec, handover[1]);
            libc::execve(c_path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(127)
        }
    };
    // A new PID namespace makes the pids and tids programs see follow
    // creation order, which the scheduler makes deterministic. Its pid 1 is a
    // tiny untraced init (pid 1 ignores default-action signals, which would
    // change how a program dies); the program is pid 2. Where namespaces are
    // not permitted, the program runs with host pids.
    let mounts: Vec<(CString, CString)> = spec
        .mounts
        .iter()
        .map(|(s, t)| {
            let c = |p: &Path| {
                CString::new(p.as_os_str().as_bytes())
                    .map_err(|_| LaunchError::Nul(p.display().to_string()))
            };
            Ok((c(s)?, c(t)?))
        })
        .collect::<Result<_, LaunchError>>()?;
    let ns_flags = libc::CLONE_NEWPID as u64
        | if mounts.is_empty() {
            0
        } else {
            libc::CLONE_NEWNS as u64
        };
    let init = raw_fork(ns_flags);
    if init == 0 {
        // In its new namespace the init's parent pid reads as 0: no check.
        die_with_parent(None);
        unsafe { libc::close(report[0]) };
        if let Err(failed) = private_mounts(&mounts) {
            unsafe {
                libc::write(
                    report[1],
                    failed_bytes(failed).as_ptr() as *const libc::c_void,
                    8,
                );
                libc::_exit(125);
            }
        }
        let program = raw_fork(0);
        if program == 0 {
            unsafe { libc::close(report[1]) };
            confine();
        }
        unsafe {
            if program > 0 {
                libc::write(report[1], b"f".as_ptr() as *const libc::c_void, 1);
            }
            libc::close(report[1]);
        }
        if handover[1] >= 0 {
            // Only the program may hold the sending end: the supervisor's
            // receive ends when it has sent, or died before it could.
            unsafe { libc::close(handover[1]) };
        }
        unsafe {
            libc::close(go[0]);
            libc::close(go[1]);
            loop {
                let r = libc::waitpid(-1, std::ptr::null_mut(), 0);
                if r == program || (r < 0 && *libc::__errno_location() != libc::EINTR) {
                    libc::_exit(0);
                }
            }
        }
    }
    unsafe { libc::close(report[1]) };
    if init > 0 {
        // One byte: the mounts are in place and the program started; 8
        // bytes: which mount failed and why; EOF: the init died first
        // (then the program is not found below).
        let mut got = [0u8; 8];
        let n = unsafe { libc::read(report[0], got.as_mut_ptr() as *mut libc::c_void, 8) };
        unsafe { libc::close(report[0]) };
        if n == 8 {
            let index = i32::from_ne_bytes([got[0], got[1], got[2], got[3]]);
            let errno = i32::from_ne_bytes([got[4], got[5], got[6], got[7]]);
            unsafe {
                libc::waitpid(init, std::ptr::null_mut(), 0);
                libc::close(go[0]);
                libc::close(go[1]);
            }
            let path = usize::try_from(index)
                .ok()
                .and_then(|i| spec.mounts.get(i))
                .map_or_else(|| PathBuf::from("/"), |m| m.1.clone());
            return Err(LaunchError::Mount {
                path,
                source: io::Error::from_raw_os_error(errno),
            });
        }
    } else {
        unsafe { libc::close(report[0]) };
    }
    let pid = if init > 0 {
        first_child_of(init)?
    } else {
        match raw_fork(0) {
            0 => confine(),
            p if p < 0 => return Err(io::Error::last_os_error().into()),
            p => p,
        }
    };
    unsafe { libc::close(go[0]) };
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_SEIZE,
            pid,
            std::ptr::null_mut::<libc::c_void>(),
            PTRACE_OPTIONS as libc::c_long as *mut libc::c_void,
        )
    };
    if rc != 0 {
        let err = io::Error::last_os_error();
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        return Err(err.into());
    }
    unsafe {
        libc::write(go[1], b"g".as_ptr() as *const libc::c_void, 1);
        libc::close(go[1]);
    }
    let listener = pair.and_then(|(ours, theirs)| {
        drop(theirs);
        receive_fd(&ours)
    });
    Ok(Spawned { pid, listener })
}

/// A unix socket pair, both ends close-on-exec.
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1i32; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

/// Installs the launch's filters in the program, right before its exec:
/// first the notifying one, if any and if the kernel gives it a listener
/// (sent over `handover` while the calls that takes still run freely), then
/// the ptrace one.
fn install_filter(spec: &LaunchSpec, handover: i32) {
    if let Some(notify) = &spec.notify_filter {
        if let Ok(fd) = crate::host::seccomp::install_with_listener(notify) {
            send_fd(handover, fd);
            unsafe { libc::close(fd) };
        }
    }
    if handover >= 0 {
        unsafe { libc::close(handover) };
    }
    if crate::host::seccomp::install(&spec.filter).is_err() {
        unsafe { libc::_exit(126) };
    }
}

/// Calls `f` with a one-byte message header that has room for one
/// descriptor (`SCM_RIGHTS`), its buffers on this stack frame: the message
/// `send_fd` and `receive_fd` exchange. Allocates nothing, so the program's
/// side may use it between fork and exec.
fn with_fd_message<R>(f: impl FnOnce(&mut libc::msghdr) -> R) -> R {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: &mut byte as *mut u8 as *mut libc::c_void,
        iov_len: 1,
    };
    let mut control = [0u8; 64];
    // SAFETY: a zeroed msghdr is valid; it points only into the locals
    // above, which outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = unsafe { libc::CMSG_SPACE(4) } as usize;
    f(&mut msg)
}

/// Sends descriptor `fd` over the unix socket `sock` (async-signal-safe).
fn send_fd(sock: i32, fd: i32) {
    with_fd_message(|msg| {
        // SAFETY: the control buffer has room for one cmsghdr and an int.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(4) as usize;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut i32, fd);
            libc::sendmsg(sock, msg, 0);
        }
    })
}

/// The descriptor the program sent on `sock`; None if it exec'd or died
/// without sending one.
fn receive_fd(sock: &OwnedFd) -> Option<OwnedFd> {
    with_fd_message(|msg| {
        // SAFETY: recvmsg fills the message's own buffers; the descriptor
        // it carries is ours from then on.
        unsafe {
            loop {
                let n = libc::recvmsg(sock.as_raw_fd(), msg, libc::MSG_CMSG_CLOEXEC);
                if n > 0 {
                    break;
                }
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                return None;
            }
            let cmsg = libc::CMSG_FIRSTHDR(msg);
            if cmsg.is_null()
                || (*cmsg).cmsg_level != libc::SOL_SOCKET
                || (*cmsg).cmsg_type != libc::SCM_RIGHTS
            {
                return None;
            }
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const i32);
            Some(OwnedFd::from_raw_fd(fd))
        }
    })
}

/// Marks every descriptor from `first` on close-on-exec, except `keep`
/// (async-signal-safe: two `close_range` calls).
fn close_on_exec_from(first: libc::c_uint, keep: Option<libc::c_uint>) {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    let range = |lo: libc::c_uint, hi: libc::c_uint| {
        if lo <= hi {
            // SAFETY: close_range only changes descriptor flags.
            unsafe { libc::syscall(libc::SYS_close_range, lo, hi, CLOSE_RANGE_CLOEXEC) };
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
