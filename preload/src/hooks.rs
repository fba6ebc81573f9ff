//! The libc functions the library replaces. Each makes the same syscall
//! glibc's own wrapper makes (`recv` is `recvfrom`, `nanosleep` is
//! `clock_nanosleep` on CLOCK_REALTIME), so the supervisor records the same
//! trace event on either path.

use libc::{c_int, c_long, c_void, size_t, sockaddr, socklen_t, timespec};

use crate::channel::{ask, forget_fd, may_be_served, raw_syscall, Answer, IN_VFORK};

/// The real call (it traps as usual), with libc's convention for the
/// result (-1 and errno).
fn real(nr: i64, a: [u64; 6]) -> c_long {
    with_errno(raw_syscall(nr, a))
}

/// A raw result (`-errno` on failure) in libc's convention.
fn with_errno(r: i64) -> c_long {
    if (-4095..0).contains(&r) {
        // SAFETY: errno is this thread's.
        unsafe { *libc::__errno_location() = -r as c_int };
        -1
    } else {
        r as c_long
    }
}

/// A call on a descriptor the channel may serve, with libc's convention
/// for the result (-1 and errno).
pub(crate) fn fd_call(nr: i64, a: [u64; 6]) -> c_long {
    if !may_be_served(a[0] as i32) {
        return real(nr, a);
    }
    asked(nr, a)
}

/// The call over the channel, or made for real if sent back.
pub(crate) fn asked(nr: i64, a: [u64; 6]) -> c_long {
    match ask(nr, a) {
        Answer::Done(r) => with_errno(r),
        Answer::Trap => real(nr, a),
    }
}

/// libc's `syscall`, through which Rust's standard library makes its futex
/// calls (its mutexes, condition variables and thread parking, so tokio's
/// too): those go over the channel, the rest are made as they were. Not
/// variadic in Rust, but on x86-64 a variadic caller passes the six
/// arguments in the same registers.
#[no_mangle]
pub extern "C" fn syscall(
    nr: c_long,
    a0: c_long,
    a1: c_long,
    a2: c_long,
    a3: c_long,
    a4: c_long,
    a5: c_long,
) -> c_long {
    let a = [a0, a1, a2, a3, a4, a5].map(|v| v as u64);
    if nr == libc::SYS_futex {
        asked(nr, a)
    } else {
        real(nr, a)
    }
}

/// clock_nanosleep's convention: the error number is the result.
fn sleep_call(a: [u64; 6]) -> c_int {
    match ask(libc::SYS_clock_nanosleep, a) {
        Answer::Done(r) => (-r) as c_int,
        Answer::Trap => {
            if real(libc::SYS_clock_nanosleep, a) == 0 {
                0
            } else {
                // SAFETY: errno is this thread's.
                unsafe { *libc::__errno_location() }
            }
        }
    }
}

/// Defines each `name(args) + other_name = NR(arguments)` as libc
/// functions (glibc exports some under a second, 64-bit name) making that
/// call over the channel: through [`fd_call`] when the first argument is a
/// descriptor the channel may have said it does not serve, else [`asked`].
/// Each returns the call's result in libc's convention as a `long`, which
/// a caller of an `int` or `ssize_t` function reads as such.
macro_rules! channel_calls {
    ($($(#[$doc:meta])* $via:ident $name:ident $args:tt $(+ $alias:ident)* = $nr:ident $vals:tt;)*) => {
        $(channel_calls!(@names [$(#[$doc])*] $via [$name $($alias)*] $args $nr $vals);)*
    };
    (@names $attrs:tt $via:ident [$($name:ident)+] $args:tt $nr:ident $vals:tt) => {
        $(channel_calls!(@one $attrs $via $name $args $nr $vals);)+
    };
    (@one [$($attr:tt)*] $via:ident $name:ident ($($arg:ident: $ty:ty),*) $nr:ident ($($a:expr),*)) => {
        $($attr)*
        #[no_mangle]
        pub extern "C" fn $name($($arg: $ty),*) -> c_long {
            let mut a = [0u64; 6];
            for (slot, v) in a.iter_mut().zip([$($a as u64),*]) {
                *slot = v;
            }
            $crate::hooks::$via(libc::$nr, a)
        }
    };
}
pub(crate) use channel_calls;

channel_calls! {
    /// libc's read.
    fd_call read(fd: c_int, buf: *mut c_void, n: size_t) = SYS_read(fd, buf, n);
    /// libc's write.
    fd_call write(fd: c_int, buf: *const c_void, n: size_t) = SYS_write(fd, buf, n);
    /// libc's recv: `recvfrom` underneath, as glibc's.
    fd_call recv(fd: c_int, buf: *mut c_void, n: size_t, flags: c_int)
        = SYS_recvfrom(fd, buf, n, flags, 0, 0);
    /// libc's send: `sendto` underneath, as glibc's.
    fd_call send(fd: c_int, buf: *const c_void, n: size_t, flags: c_int)
        = SYS_sendto(fd, buf, n, flags, 0, 0);
    /// libc's recvfrom.
    fd_call recvfrom(
        fd: c_int,
        buf: *mut c_void,
        n: size_t,
        flags: c_int,
        addr: *mut sockaddr,
        len: *mut socklen_t
    ) = SYS_recvfrom(fd, buf, n, flags, addr, len);
    /// libc's sendto.
    fd_call sendto(
        fd: c_int,
        buf: *const c_void,
        n: size_t,
        flags: c_int,
        addr: *const sockaddr,
        len: socklen_t
    ) = SYS_sendto(fd, buf, n, flags, addr, len);
    /// libc's readv.
    fd_call readv(fd: c_int, iov: *const libc::iovec, n: c_int) = SYS_readv(fd, iov, n);
    /// libc's writev.
    fd_call writev(fd: c_int, iov: *const libc::iovec, n: c_int) = SYS_writev(fd, iov, n);
    /// libc's epoll_wait (tokio's and mio's wait): over the channel; one
    /// the kernel must answer (a real descriptor in its set is ready) is
    /// passed, made at the pass gate with its result reported back.
    asked epoll_wait(epfd: c_int, events: *mut libc::epoll_event, max: c_int, timeout: c_int)
        = SYS_epoll_wait(epfd, events, max, timeout);
}

/// libc's close, over the channel: the descriptor may be served once it
/// is reused.
#[no_mangle]
pub extern "C" fn close(fd: c_int) -> c_int {
    forget_fd(fd);
    asked(libc::SYS_close, [fd as u64, 0, 0, 0, 0, 0]) as c_int
}

/// libc's sched_yield (Rust's `thread::yield_now`).
#[no_mangle]
pub extern "C" fn sched_yield() -> c_int {
    asked(libc::SYS_sched_yield, [0; 6]) as c_int
}

/// libc's nanosleep.
#[no_mangle]
pub extern "C" fn nanosleep(req: *const timespec, rem: *mut timespec) -> c_int {
    let a = [libc::CLOCK_REALTIME as u64, 0, req as u64, rem as u64, 0, 0];
    match sleep_call(a) {
        0 => 0,
        e => {
            // SAFETY: errno is this thread's.
            unsafe { *libc::__errno_location() = e };
            -1
        }
    }
}

/// libc's clock_nanosleep.
#[no_mangle]
pub extern "C" fn clock_nanosleep(
    clock: libc::clockid_t,
    flags: c_int,
    req: *const timespec,
    rem: *mut timespec,
) -> c_int {
    sleep_call([clock as u64, flags as u64, req as u64, rem as u64, 0, 0])
}

/// libc's vfork. The child runs in the parent's memory until it execs or
/// exits, so it would post in the parent's slot, where the supervisor does
/// not look for another process's calls: the call marks
/// [`IN_VFORK`] first, and the child's calls are made for real; the
/// parent, resumed, clears the mark. As glibc's, it keeps its return
/// address in a register across the call (the child may reuse the stack).
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn vfork() -> libc::pid_t {
    core::arch::naked_asm!(
        "mov byte ptr [rip + {in_vfork}], 1",
        "pop rdi",
        "mov eax, {nr}",
        "syscall",
        "push rdi",
        "test rax, rax",
        "jz 2f",
        "mov byte ptr [rip + {in_vfork}], 0",
        "2:",
        "cmp rax, -4095",
        "jae 3f",
        "ret",
        "3:",
        "mov rdi, rax",
        "jmp {failed}",
        in_vfork = sym IN_VFORK,
        nr = const libc::SYS_vfork,
        failed = sym vfork_failed,
    )
}

/// vfork's failure: -1 and errno.
extern "C" fn vfork_failed(r: i64) -> libc::pid_t {
    with_errno(r) as libc::pid_t
}
