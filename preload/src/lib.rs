//! faultline's LD_PRELOAD library: the fast path for dynamically linked
//! programs. It replaces libc's `read`, `write`, `readv`, `writev`, `recv`,
//! `send`, `recvfrom`, `sendto`, `epoll_wait`, `nanosleep`,
//! `clock_nanosleep`, `sched_yield` and `syscall` (for its futex calls),
//! and the functions that make, name, tune, look at and end descriptors,
//! files and directories (`socket` to `shutdown`, `open` and the `stat`s,
//! the syncs, `poll`, `dup`s, renames and removals; see `fd_hooks`):
//! each call is put to the supervisor over the shared-memory channel (see
//! `faultline-channel`) instead of stopping in ptrace. The supervisor
//! answers it with the same handler and the same trace event as the
//! trapped call, passes it to the kernel (the library makes it at the pass
//! gate), or tells the library to make the real call, which then traps as
//! usual. Without a usable channel
//! (no descriptor, a region that is not faultline's, no free slot) every call
//! is simply made for real, so the program runs as on the ptrace path.
//!
//! `no_std` with only libc: a Rust `std` library would bring libgcc_s, and the
//! dynamic loader's trapped `openat` of it would change the program's trace.
#![no_std]

mod channel;
mod fd_hooks;
mod hooks;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe { libc::abort() }
}

/// Runs when the dynamic loader loads the library, before `main`.
#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;

extern "C" fn init() {
    // SAFETY: runs once, single-threaded, before the program's own code.
    unsafe { channel::open() };
}
