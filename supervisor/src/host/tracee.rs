//! Thin, allocation-free wrappers over the ptrace and process-memory calls the
//! supervisor makes on every stop. Kept in one place so the hot path (one
//! register read per stop) is easy to audit.

use std::io;

use crate::sim::memory::Memory;
use crate::sim::memory::Regs;

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Reads the general-purpose registers of stopped thread `tid`.
pub fn get_regs(tid: i32) -> io::Result<Regs> {
    // SAFETY: Regs is plain old data; the kernel fills it completely.
    let mut regs: Regs = unsafe { std::mem::zeroed() };
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_GETREGS,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut regs as *mut Regs as *mut libc::c_void,
        )
    })?;
    Ok(regs)
}

/// Whether stopped thread `tid` has a signal queued, to it or to its
/// process (blocked ones count too: the careful answer). Two ptrace calls,
/// where reading its /proc status would cost an open, a read and a parse.
pub fn signal_queued(tid: i32) -> io::Result<bool> {
    /// `struct ptrace_peeksiginfo_args`.
    #[repr(C)]
    struct PeekArgs {
        off: u64,
        flags: u32,
        nr: i32,
    }
    for flags in [0, libc::PTRACE_PEEKSIGINFO_SHARED] {
        let args = PeekArgs {
            off: 0,
            flags,
            nr: 1,
        };
        // SAFETY: the kernel writes at most `nr` (one) siginfo into `info`.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let n = check(unsafe {
            libc::ptrace(
                libc::PTRACE_PEEKSIGINFO,
                tid,
                &args as *const PeekArgs as *mut libc::c_void,
                &mut info as *mut libc::siginfo_t as *mut libc::c_void,
            )
        })?;
        if n > 0 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The wait status of `who` (a tid, or -1 for any tracee) if it has one to
/// report, without blocking: (tid, status).
pub fn try_wait(who: i32) -> io::Result<Option<(i32, i32)>> {
    loop {
        let mut status = 0;
        // SAFETY: plain waitpid on a status local.
        let r = unsafe { libc::waitpid(who, &mut status, libc::__WALL | libc::WNOHANG) };
        if r > 0 {
            return Ok(Some((r, status)));
        }
        if r == 0 {
            return Ok(None);
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Makes running thread `tid` stop (`PTRACE_EVENT_STOP`) before it next
/// returns to user space.
pub fn interrupt(tid: i32) -> io::Result<()> {
    // SAFETY: PTRACE_INTERRUPT takes no pointers.
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_INTERRUPT,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    })
    .map(|_| ())
}

/// Writes back the general-purpose registers of stopped thread `tid`.
pub fn set_regs(tid: i32, regs: &Regs) -> io::Result<()> {
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_SETREGS,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            regs as *const Regs as *mut libc::c_void,
        )
    })?;
    Ok(())
}

/// At the exit of a call faultline rewrote, puts back the caller's
/// registers `saved` with `rax` as the call's return value, so the program
/// sees its own arguments and the answer to the call it made.
pub fn put_back_regs(tid: i32, saved: &Regs, rax: u64) -> io::Result<()> {
    set_regs(tid, &Regs { rax, ..*saved })
}

/// Resumes `tid` until its next stop that the seccomp filter or an event causes.
pub fn cont(tid: i32, sig: i32) -> io::Result<()> {
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_CONT,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            sig as libc::c_long as *mut libc::c_void,
        )
    })?;
    Ok(())
}

/// Lets the stopped thread `tid` run one instruction (it stops again with
/// SIGTRAP once it has).
pub fn single_step(tid: i32) -> io::Result<()> {
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_SINGLESTEP,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    })?;
    Ok(())
}

/// Resumes `tid` so that it also stops at the exit of the current system call.
pub fn cont_to_syscall_exit(tid: i32) -> io::Result<()> {
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_SYSCALL,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            std::ptr::null_mut::<libc::c_void>(),
        )
    })?;
    Ok(())
}

const PTRACE_GETSIGMASK: libc::c_uint = 0x420a;
const PTRACE_SETSIGMASK: libc::c_uint = 0x420b;

/// The signal mask of the stopped thread `tid`.
pub fn sigmask(tid: i32) -> io::Result<u64> {
    let mut mask: u64 = 0;
    check(unsafe {
        libc::ptrace(
            PTRACE_GETSIGMASK,
            tid,
            8usize as *mut libc::c_void,
            &mut mask as *mut u64 as *mut libc::c_void,
        )
    })?;
    Ok(mask)
}

/// Sets the signal mask of the stopped thread `tid`.
pub fn set_sigmask(tid: i32, mask: u64) -> io::Result<()> {
    check(unsafe {
        libc::ptrace(
            PTRACE_SETSIGMASK,
            tid,
            8usize as *mut libc::c_void,
            &mask as *const u64 as *mut libc::c_void,
        )
    })?;
    Ok(())
}

/// The message of the last ptrace event stop (new thread id, exit status, ...).
pub fn event_msg(tid: i32) -> io::Result<u64> {
    let mut msg: libc::c_ulong = 0;
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut msg as *mut libc::c_ulong as *mut libc::c_void,
        )
    })?;
    Ok(msg)
}

/// The siginfo of a signal-delivery-stop (fault address, sender).
pub fn siginfo(tid: i32) -> io::Result<libc::siginfo_t> {
    // SAFETY: siginfo_t is plain old data.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    check(unsafe {
        libc::ptrace(
            libc::PTRACE_GETSIGINFO,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut info as *mut libc::siginfo_t as *mut libc::c_void,
        )
    })?;
    Ok(info)
}

/// The memory of traced process `pid` (process_vm_readv/writev).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Process(pub i32);

impl Memory for Process {
    fn read_mem(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        let n = vm_copy(self.0, addr, buf.as_mut_ptr(), buf.len(), false)?;
        whole(n, buf.len())
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        match vm_copy(self.0, addr, data.as_ptr() as *mut u8, data.len(), true) {
            // Read-only pages (e.g. text) need /proc/pid/mem, which honours ptrace access.
            Err(_) => write_mem_proc(self.0, addr, data),
            Ok(n) => whole(n, data.len()),
        }
    }
}

/// The memory of traced process `pid` as its own system calls reach it:
/// a write to a page the process cannot write fails with EFAULT, as the
/// kernel's copy of a call's result into user memory fails, where
/// [`Process`] forces it through /proc/pid/mem (faultline's own code
/// patches need that). The syscall handlers write through this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallerMemory(pub i32);

impl Memory for CallerMemory {
    fn read_mem(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        Process(self.0).read_mem(addr, buf)
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        let n = vm_copy(self.0, addr, data.as_ptr() as *mut u8, data.len(), true)?;
        whole(n, data.len())
    }
}

/// Copies `len` bytes between `local` (faultline's) and `addr` of `pid`:
/// into the process with process_vm_writev if `into`, out of it with
/// process_vm_readv otherwise. How many bytes it copied (fewer where a
/// page cannot be read or written), or its error.
fn vm_copy(pid: i32, addr: u64, local: *mut u8, len: usize, into: bool) -> io::Result<usize> {
    if len == 0 {
        return Ok(0);
    }
    let local = libc::iovec {
        iov_base: local as *mut libc::c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: `local` is `len` bytes of faultline's own memory, which the
    // kernel only reads when `into` (the copy goes the other way).
    let n = unsafe {
        if into {
            libc::process_vm_writev(pid, &local, 1, &remote, 1, 0)
        } else {
            libc::process_vm_readv(pid, &local, 1, &remote, 1, 0)
        }
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// A copy of `want` bytes that copied `n`: EFAULT unless it was whole.
fn whole(n: usize, want: usize) -> io::Result<()> {
    if n == want {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(libc::EFAULT))
    }
}

fn write_mem_proc(pid: i32, addr: u64, data: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/proc/{pid}/mem"))?;
    f.write_all_at(data, addr)
}
