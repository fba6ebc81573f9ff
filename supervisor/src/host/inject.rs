//! Running one system call inside a stopped tracee, through the faultline
//! vDSO's `fl_inject` stub (`mov r12, rax; syscall; int3`): how the
//! supervisor makes a process map its time page, which only the process
//! itself can do.

use crate::host::tracee;

/// Why an injected call did not come back with a result.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    /// ptrace or waitpid failed (the process may have died).
    #[error("injecting a system call: {0}")]
    Ptrace(#[from] std::io::Error),
    /// The process stopped otherwise than at the stub's int3.
    #[error("an injected system call stopped the process unexpectedly (status {0:#x})")]
    Stopped(i32),
}

/// Why an injected call did not do its work.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// It could not be run.
    #[error(transparent)]
    Inject(#[from] InjectError),
    /// It failed in the process.
    #[error("{call} failed in the process: {}", std::io::Error::from_raw_os_error(*.errno))]
    Failed {
        /// Which call (as reported).
        call: &'static str,
        /// Its errno.
        errno: i32,
    },
}

/// Runs `nr(args)` in `pid` as [`syscall`] does; its result, or the errno
/// it failed with, reported as `call`.
pub fn checked(
    pid: i32,
    stub: u64,
    call: &'static str,
    nr: i64,
    args: [u64; 6],
) -> Result<u64, CallError> {
    match syscall(pid, stub, nr, args)? {
        r if (-4095..0).contains(&r) => Err(CallError::Failed {
            call,
            errno: -r as i32,
        }),
        r => Ok(r as u64),
    }
}

/// Runs `mmap(args)` in `pid` for a mapping at the fixed address `args[0]`;
/// an error unless it is there (a kernel that ignores MAP_FIXED_NOREPLACE
/// may put it elsewhere: that address is taken).
pub fn mmap_at(pid: i32, stub: u64, call: &'static str, args: [u64; 6]) -> Result<(), CallError> {
    match checked(pid, stub, call, libc::SYS_mmap, args)? {
        got if got == args[0] => Ok(()),
        _ => Err(CallError::Failed {
            call,
            errno: libc::EEXIST,
        }),
    }
}

/// Runs system call `nr` with `args` in `pid` (stopped in a ptrace stop
/// from which it may be resumed at another address: an exec event or its
/// first stop) at `stub`, the address of `fl_inject` in its vDSO. Returns
/// the call's raw result (negative errno on failure) and puts the
/// registers back.
pub fn syscall(pid: i32, stub: u64, nr: i64, args: [u64; 6]) -> Result<i64, InjectError> {
    let saved = tracee::get_regs(pid)?;
    let mut regs = saved;
    regs.rip = stub;
    regs.r12 = nr as u64;
    regs.orig_rax = u64::MAX; // no restart of whatever call the stop was in
    [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9] = args;
    tracee::set_regs(pid, &regs)?;
    tracee::cont(pid, 0)?;
    let status = wait_for_trap(pid)?;
    let result = if status >> 8 == libc::SIGTRAP {
        tracee::get_regs(pid)
            .map(|r| r.rax as i64)
            .map_err(Into::into)
    } else {
        Err(InjectError::Stopped(status))
    };
    if libc::WIFSTOPPED(status) {
        tracee::set_regs(pid, &saved)?;
    }
    result
}

/// Waits for the stub's stop, letting through the stops that may come
/// first: a watchdog preemption (SIGSTOP) of the step that is being made,
/// and the seccomp stop of a call the filter traps (such as `close`).
fn wait_for_trap(pid: i32) -> std::io::Result<i32> {
    let seccomp_stop = libc::SIGTRAP | (libc::PTRACE_EVENT_SECCOMP << 8);
    loop {
        let mut status = 0;
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if r != pid {
            return Err(std::io::Error::last_os_error());
        }
        let passing = libc::WIFSTOPPED(status)
            && (libc::WSTOPSIG(status) == libc::SIGSTOP || status >> 8 == seccomp_stop);
        if !passing {
            return Ok(status);
        }
        tracee::cont(pid, 0)?;
    }
}
