//! The libc functions that make, name, tune, look at and end descriptors,
//! files and directories (sockets, opens and stats, syncs, polls, dups,
//! renames and removals): each makes the system call glibc 2.36's own makes
//! (`open` is `openat` on the current directory, `stat` and `fstat` are
//! `newfstatat`), so the supervisor records the same trace event on either
//! path, and puts it to the supervisor over the channel instead of a
//! ptrace stop. Calls glibc makes inside its own code (the name lookups of
//! `getaddrinfo`) do not come through here and stop as before.

use core::ffi::c_char;

use libc::{c_int, c_long, c_uint, c_void, mode_t, size_t, sockaddr, socklen_t};

use crate::hooks::channel_calls;

/// The mode argument of an open: only an open that creates has one (a
/// variadic caller leaves the register as it was otherwise), and glibc
/// passes 0 then.
fn open_mode(flags: c_int, mode: mode_t) -> u64 {
    if flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE {
        mode as u64
    } else {
        0
    }
}

/// `""`, the path of a stat of a descriptor (with `AT_EMPTY_PATH`).
const EMPTY: &core::ffi::CStr = c"";

channel_calls! {
    /// libc's socket.
    asked socket(domain: c_int, kind: c_int, protocol: c_int) = SYS_socket(domain, kind, protocol);
    /// libc's connect.
    fd_call connect(fd: c_int, addr: *const sockaddr, len: socklen_t) = SYS_connect(fd, addr, len);
    /// libc's bind.
    fd_call bind(fd: c_int, addr: *const sockaddr, len: socklen_t) = SYS_bind(fd, addr, len);
    /// libc's listen.
    fd_call listen(fd: c_int, backlog: c_int) = SYS_listen(fd, backlog);
    /// libc's accept.
    fd_call accept(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t) = SYS_accept(fd, addr, len);
    /// libc's accept4.
    fd_call accept4(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t, flags: c_int)
        = SYS_accept4(fd, addr, len, flags);
    /// libc's shutdown.
    fd_call shutdown(fd: c_int, how: c_int) = SYS_shutdown(fd, how);
    /// libc's getsockopt.
    fd_call getsockopt(fd: c_int, level: c_int, name: c_int, value: *mut c_void, len: *mut socklen_t)
        = SYS_getsockopt(fd, level, name, value, len);
    /// libc's setsockopt.
    fd_call setsockopt(fd: c_int, level: c_int, name: c_int, value: *const c_void, len: socklen_t)
        = SYS_setsockopt(fd, level, name, value, len);
    /// libc's getsockname.
    fd_call getsockname(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t)
        = SYS_getsockname(fd, addr, len);
    /// libc's getpeername.
    fd_call getpeername(fd: c_int, addr: *mut sockaddr, len: *mut socklen_t)
        = SYS_getpeername(fd, addr, len);
    /// libc's epoll_ctl (mio's and tokio's registrations).
    fd_call epoll_ctl(epfd: c_int, op: c_int, fd: c_int, event: *mut libc::epoll_event)
        = SYS_epoll_ctl(epfd, op, fd, event);
    /// libc's poll.
    asked poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: c_int) = SYS_poll(fds, n, timeout);
    /// libc's open and open64.
    asked open(path: *const c_char, flags: c_int, mode: mode_t) + open64
        = SYS_openat(libc::AT_FDCWD, path, flags, open_mode(flags, mode));
    /// libc's openat and openat64.
    asked openat(dir: c_int, path: *const c_char, flags: c_int, mode: mode_t) + openat64
        = SYS_openat(dir, path, flags, open_mode(flags, mode));
    /// libc's stat and stat64.
    asked stat(path: *const c_char, buf: *mut c_void) + stat64 = SYS_newfstatat(libc::AT_FDCWD, path, buf, 0);
    /// libc's lstat and lstat64.
    asked lstat(path: *const c_char, buf: *mut c_void) + lstat64
        = SYS_newfstatat(libc::AT_FDCWD, path, buf, libc::AT_SYMLINK_NOFOLLOW);
    /// libc's fstat and fstat64.
    fd_call fstat(fd: c_int, buf: *mut c_void) + fstat64
        = SYS_newfstatat(fd, EMPTY.as_ptr(), buf, libc::AT_EMPTY_PATH);
    /// libc's fstatat and fstatat64.
    asked fstatat(dir: c_int, path: *const c_char, buf: *mut c_void, flags: c_int) + fstatat64
        = SYS_newfstatat(dir, path, buf, flags);
    /// libc's statx (Rust's metadata calls).
    asked statx(dir: c_int, path: *const c_char, flags: c_int, mask: c_uint, buf: *mut c_void)
        = SYS_statx(dir, path, flags, mask, buf);
    /// libc's readlink.
    asked readlink(path: *const c_char, buf: *mut c_char, n: size_t) = SYS_readlink(path, buf, n);
    /// libc's fsync.
    fd_call fsync(fd: c_int) = SYS_fsync(fd);
    /// libc's fdatasync.
    fd_call fdatasync(fd: c_int) = SYS_fdatasync(fd);
    /// libc's ftruncate and ftruncate64.
    fd_call ftruncate(fd: c_int, len: libc::off_t) + ftruncate64 = SYS_ftruncate(fd, len);
    /// libc's pwrite and pwrite64.
    fd_call pwrite(fd: c_int, buf: *const c_void, n: size_t, at: libc::off_t) + pwrite64
        = SYS_pwrite64(fd, buf, n, at);
    /// libc's dup.
    fd_call dup(fd: c_int) = SYS_dup(fd);
    /// libc's dup2.
    fd_call dup2(fd: c_int, to: c_int) = SYS_dup2(fd, to);
    /// libc's unlink.
    asked unlink(path: *const c_char) = SYS_unlink(path);
    /// libc's mkdir.
    asked mkdir(path: *const c_char, mode: mode_t) = SYS_mkdir(path, mode);
    /// libc's rmdir.
    asked rmdir(path: *const c_char) = SYS_rmdir(path);
    /// libc's rename.
    asked rename(from: *const c_char, to: *const c_char) = SYS_rename(from, to);
    /// libc's getrandom.
    asked getrandom(buf: *mut c_void, n: size_t, flags: c_uint) = SYS_getrandom(buf, n, flags);
}
