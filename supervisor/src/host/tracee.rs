//! Thin, allocation-free wrappers over the ptrace and process-memory calls the
//! supervisor makes on every stop. Kept in one place so the hot path (one
//! register read per stop) is easy to audit.

use std::io;

/// A saved register file of a stopped tracee thread.
pub type Regs = libc::user_regs_struct;

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

/// Copies `buf.len()` bytes from address `addr` of process `pid` into `buf`.
pub fn read_mem(pid: i32, addr: u64, buf: &mut [u8]) -> io::Result<()> {
    if buf.is_empty() {
        return Ok(());
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n as usize != buf.len() {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(())
}

/// Copies `data` to address `addr` of process `pid`.
pub fn write_mem(pid: i32, addr: u64, data: &[u8]) -> io::Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let local = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: data.len(),
    };
    let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
    if n < 0 {
        // Read-only pages (e.g. text) need /proc/pid/mem, which honours ptrace access.
        return write_mem_proc(pid, addr, data);
    }
    if n as usize != data.len() {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    Ok(())
}

fn write_mem_proc(pid: i32, addr: u64, data: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/proc/{pid}/mem"))?;
    f.write_all_at(data, addr)
}

/// Reads a plain-old-data value of type `T` from the tracee.
pub fn read_val<T: Copy + Default>(pid: i32, addr: u64) -> io::Result<T> {
    let mut val = T::default();
    // SAFETY: T is Copy (POD by contract of callers); we view it as bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(&mut val as *mut T as *mut u8, std::mem::size_of::<T>())
    };
    read_mem(pid, addr, bytes)?;
    Ok(val)
}

/// Writes a plain-old-data value of type `T` into the tracee.
pub fn write_val<T: Copy>(pid: i32, addr: u64, val: &T) -> io::Result<()> {
    // SAFETY: T is Copy (POD by contract of callers); we view it as bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(val as *const T as *const u8, std::mem::size_of::<T>())
    };
    write_mem(pid, addr, bytes)
}

/// Reads a NUL-terminated string (at most `max` bytes) from the tracee.
pub fn read_cstr(pid: i32, addr: u64, max: usize) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 256];
    let mut at = addr;
    while out.len() < max {
        // Stay within one page per read so we never cross into an unmapped page.
        let page_left = 4096 - (at as usize & 4095);
        let n = page_left.min(chunk.len());
        read_mem(pid, at, &mut chunk[..n])?;
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
    Ok(out)
}
