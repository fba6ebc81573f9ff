//! Looking at a tracee's descriptors from the supervisor, without running the
//! tracee: borrow the file with pidfd_getfd, ask the kernel (fstat, fcntl,
//! poll with timeout 0), drop it. This is how a blocking read or poll on a
//! pipe or eventfd is answered without ever blocking in the kernel.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::heldfds::HeldFds;
use crate::sim::fdkind::FdKind;

/// Opens a pidfd for process `pid`.
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// The host pid behind pidfd `fd` of process `pid` (the `Pid:` line of its
/// fdinfo), so a SIGKILL sent through it is known to doom that process.
pub fn pidfd_target(pid: i32, fd: i32) -> Option<i32> {
    std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&p: &i32| p > 0)
}

/// Borrows descriptor `fd` of the process behind `pidfd`.
pub fn borrow(pidfd: &OwnedFd, fd: i32) -> io::Result<OwnedFd> {
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(got as i32) })
}

/// Classifies `fd` by its file type. `None` if the process has no such fd.
pub fn classify(pidfd: &OwnedFd, fd: i32) -> Option<FdKind> {
    let file = borrow(pidfd, fd).ok()?;
    // SAFETY: stat is plain old data.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    let kind = st.st_mode & libc::S_IFMT;
    if kind == libc::S_IFREG || kind == libc::S_IFDIR || kind == libc::S_IFBLK {
        Some(FdKind::File)
    } else {
        Some(FdKind::Pollable)
    }
}

/// poll(2) revents of descriptor `fd` of the process behind `pidfd` for
/// `events`, without blocking (0: not ready), through the process's kept
/// copies. A descriptor found not ready is not polled again until
/// something may have changed it (`HeldFds::changed`): the wake scans ask
/// after every step, and most steps touch no host descriptor. `None` if the
/// fd is invalid (the kernel will then fail the tracee's call with EBADF
/// itself).
pub fn revents(pidfd: &OwnedFd, held: &HeldFds, fd: i32, events: i16) -> Option<i16> {
    if held.known_not_ready(fd, events) {
        return Some(0);
    }
    let revents = held.with(pidfd, fd, |file| poll_now(file, events))?;
    if revents == 0 {
        held.note_not_ready(fd, events);
    }
    Some(revents)
}

/// Whether a blocking call waiting for `events` on `fd` would return at
/// once: the descriptor is ready or was opened O_NONBLOCK (one borrow for
/// both questions). `None` if the fd is invalid.
pub fn would_not_block(pidfd: &OwnedFd, held: &HeldFds, fd: i32, events: i16) -> Option<bool> {
    held.with(pidfd, fd, |file| {
        let flags = unsafe { libc::fcntl(file, libc::F_GETFL) };
        (flags >= 0 && flags & libc::O_NONBLOCK != 0) || poll_now(file, events) != 0
    })
}

/// poll(2) with timeout 0 on one descriptor: its revents, 0 if not ready.
fn poll_now(file: std::os::fd::RawFd, events: i16) -> i16 {
    let mut pfd = libc::pollfd {
        fd: file,
        events,
        revents: 0,
    };
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    if n > 0 {
        pfd.revents
    } else {
        0
    }
}

/// The current file offset of `fd` (the borrowed copy shares it).
pub fn position(pidfd: &OwnedFd, fd: i32) -> Option<u64> {
    let file = borrow(pidfd, fd).ok()?;
    let pos = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) };
    (pos >= 0).then_some(pos as u64)
}

/// Whether `fd` was opened for writing (the borrowed copy shares the open
/// file description, so its access mode). Lets a call faultline rewrites
/// keep the kernel's errno for a read-only descriptor.
pub fn writable(pidfd: &OwnedFd, fd: i32) -> Option<bool> {
    let file = borrow(pidfd, fd).ok()?;
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    (flags >= 0).then_some(flags & libc::O_ACCMODE != libc::O_RDONLY)
}

/// Blocks (in wall time) until one of the given descriptors of the given
/// processes is ready or `timeout_ms` passes. Used only when every simulated
/// thread waits on something outside the simulation, such as stdin.
pub fn wait_any(targets: &[(&OwnedFd, i32, i16)], timeout_ms: i32) -> bool {
    let files: Vec<(OwnedFd, i16)> = targets
        .iter()
        .filter_map(|&(p, fd, ev)| borrow(p, fd).ok().map(|f| (f, ev)))
        .collect();
    let mut pfds: Vec<libc::pollfd> = files
        .iter()
        .map(|(f, ev)| libc::pollfd {
            fd: f.as_raw_fd(),
            events: *ev,
            revents: 0,
        })
        .collect();
    let n = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, timeout_ms) };
    n > 0
}

/// Whether descriptors `a` and `b` of process `pid` refer to the same open
/// file (kcmp KCMP_FILE): a dup'd epoll descriptor (tokio's mio dups its
/// epoll fd for its registry) is the same instance as the original.
pub fn same_file(pid: i32, a: i32, b: i32) -> bool {
    const KCMP_FILE: libc::c_long = 0;
    // SAFETY: kcmp only compares kernel objects; no memory is passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_kcmp,
            pid as libc::c_long,
            pid as libc::c_long,
            KCMP_FILE,
            a as libc::c_long,
            b as libc::c_long,
        )
    };
    r == 0
}
