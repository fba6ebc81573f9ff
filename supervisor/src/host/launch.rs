//! Starting a root tracee: the program is resolved and its spec sent to the
//! spawner (`host::spawner`), which forks it under a namespace init and
//! confines it; the supervisor seizes it there and lets it exec.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::host::fdpass;
use crate::host::spawner::{Reply, Request, Spawner};

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

/// The ptrace options every tracee gets.
pub const PTRACE_OPTIONS: libc::c_int = libc::PTRACE_O_TRACESYSGOOD
    | libc::PTRACE_O_TRACESECCOMP
    | libc::PTRACE_O_TRACECLONE
    | libc::PTRACE_O_TRACEFORK
    | libc::PTRACE_O_TRACEVFORK
    | libc::PTRACE_O_TRACEEXEC
    | libc::PTRACE_O_TRACEEXIT
    | libc::PTRACE_O_EXITKILL;

/// A launched program.
#[derive(Debug)]
pub struct Spawned {
    /// Its host pid.
    pub pid: i32,
    /// Its filter's listener, if it has notified calls.
    pub listener: Option<OwnedFd>,
}

/// Starts the root tracee through `spawner` and seizes it. The tracee
/// next stops at its exec event.
pub fn spawn(spec: &LaunchSpec, spawner: &mut Spawner) -> Result<Spawned, LaunchError> {
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
    // A mount point that vanished since the last launch (a node's restart)
    // is made again.
    for (_, target) in &spec.mounts {
        std::fs::create_dir_all(target).map_err(|source| LaunchError::MountPoint {
            path: target.clone(),
            source,
        })?;
    }
    // The program hands its filter's listener over on this pair (ours,
    // its end).
    let pair = match spec.notify_filter {
        Some(_) => Some(fdpass::socket_pair()?),
        None => None,
    };
    let request = request_for(spec, &path)?;
    let mut fds = Vec::new();
    if let Some((out, err)) = spec.output {
        fds.extend([out, err]);
    }
    fds.extend(spec.channel_fd);
    fds.extend(pair.as_ref().map(|(_, theirs)| theirs.as_raw_fd()));
    let (reply, go) = spawner.start(&request, &fds)?;
    let (pid, go) = match (reply, go) {
        (Reply::Started { pid }, Some(go)) => (pid, go),
        (Reply::MountFailed { index, errno }, _) => {
            let path = usize::try_from(index)
                .ok()
                .and_then(|i| spec.mounts.get(i))
                .map_or_else(|| PathBuf::from("/"), |m| m.1.clone());
            return Err(LaunchError::Mount {
                path,
                source: io::Error::from_raw_os_error(errno),
            });
        }
        (Reply::Failed { errno, doing }, _) => {
            let err = io::Error::from_raw_os_error(errno);
            return Err(io::Error::new(err.kind(), format!("{doing}: {err}")).into());
        }
        (Reply::Started { .. }, None) => {
            return Err(io::Error::other("faultline's spawner sent no go pipe").into())
        }
    };
    // SAFETY: PTRACE_SEIZE takes no pointers but its options.
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
        // Its init reaps it.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return Err(err.into());
    }
    // SAFETY: one byte from a local.
    unsafe { libc::write(go.as_raw_fd(), b"g".as_ptr() as *const libc::c_void, 1) };
    drop(go);
    let listener = pair.and_then(|(ours, theirs)| {
        drop(theirs);
        fdpass::receive_fd(&ours)
    });
    Ok(Spawned { pid, listener })
}

/// What the spawner needs to start `spec`, whose program is at `path`.
fn request_for(spec: &LaunchSpec, path: &Path) -> Result<Request, LaunchError> {
    // Its bytes, which a C string cannot carry if they hold a NUL.
    let bytes = |s: &OsStr| -> Result<Vec<u8>, LaunchError> {
        let b = s.as_bytes();
        if b.contains(&0) {
            return Err(LaunchError::Nul(s.to_string_lossy().into_owned()));
        }
        Ok(b.to_vec())
    };
    let insns = |f: &[libc::sock_filter]| f.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect();
    // Where the program starts: its own directory, else faultline's now
    // (the spawner's is faultline's when it was forked).
    let cwd = match &spec.cwd {
        Some(dir) => bytes(dir.as_os_str())?,
        None => std::env::current_dir()
            .ok()
            .map(|d| bytes(d.as_os_str()))
            .transpose()?
            .unwrap_or_default(),
    };
    Ok(Request {
        path: bytes(path.as_os_str())?,
        argv: std::iter::once(&spec.program)
            .chain(&spec.args)
            .map(|a| bytes(OsStr::new(a)))
            .collect::<Result<_, _>>()?,
        envp: spec
            .env
            .iter()
            .map(|(k, v)| bytes(OsStr::new(&format!("{k}={v}"))))
            .collect::<Result<_, _>>()?,
        cwd,
        mounts: spec
            .mounts
            .iter()
            .map(|(s, t)| Ok((bytes(s.as_os_str())?, bytes(t.as_os_str())?)))
            .collect::<Result<_, LaunchError>>()?,
        filter: insns(&spec.filter),
        notify_filter: spec.notify_filter.as_deref().map(insns),
        output: spec.output.is_some(),
        channel: spec.channel_fd.is_some(),
        handover: spec.notify_filter.is_some(),
    })
}
