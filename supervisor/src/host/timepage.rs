//! Where an address space's time page lives and how the supervisor reaches
//! it. Normally the page is a memfd the process maps shared and the
//! supervisor maps too, so writing its clocks before a resume and counting
//! reads are plain memory accesses. If that cannot be set up, it is an
//! anonymous page of the process, written with process_vm_writev.

use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use crate::host::fdprobe;
use crate::host::inject::{self, CallError};
use crate::host::tracee;
use crate::sim::memory::Memory;

/// Bytes of the page.
pub const PAGE_LEN: u64 = 4096;

/// Why the page could not be shared with the supervisor.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// An injected call could not be run, or failed in the process.
    #[error(transparent)]
    Inject(#[from] CallError),
    /// The supervisor could not take or map the process's memfd.
    #[error("the time page's memfd: {0}")]
    Host(#[from] io::Error),
}

/// Where the supervisor reads and writes one address space's page.
#[derive(Debug)]
pub enum Store {
    /// Its own mapping of the page the process maps shared.
    Shared(SharedMap),
    /// The process's own anonymous page, reached through its memory.
    Private,
}

/// Where and how to map the page in a stopped process.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The address of `fl_inject` in the process.
    pub stub: u64,
    /// The page's fixed address.
    pub addr: u64,
    /// The memfd's name (a NUL-terminated string in the process).
    pub name: u64,
    /// Whether a mapping already there is replaced (a forked child's copy
    /// of its parent's page) or refused (a fresh address space).
    pub replace: bool,
}

impl Store {
    /// Has `pid` map its page as `target` says: shared if it can be, else
    /// private (with the reason it is not shared).
    pub fn map(pid: i32, target: Target) -> Result<(Store, Option<ShareError>), ShareError> {
        match map_shared(pid, target) {
            Ok(shared) => Ok((Store::Shared(shared), None)),
            Err(why) => {
                map_private(pid, target)?;
                Ok((Store::Private, Some(why)))
            }
        }
    }

    /// Writes `data` at `off` in the page of `pid`.
    pub fn write(&self, pid: i32, addr: u64, off: u64, data: &[u8]) -> io::Result<()> {
        match self {
            Store::Shared(map) => {
                map.write(off, data);
                Ok(())
            }
            Store::Private => tracee::Process(pid).write_mem(addr + off, data),
        }
    }

    /// Reads `buf.len()` bytes at `off` in the page of `pid`.
    pub fn read(&self, pid: i32, addr: u64, off: u64, buf: &mut [u8]) -> io::Result<()> {
        match self {
            Store::Shared(map) => {
                map.read(off, buf);
                Ok(())
            }
            Store::Private => tracee::Process(pid).read_mem(addr + off, buf),
        }
    }
}

/// The supervisor's mapping of a process's shared page, unmapped on drop.
#[derive(Debug)]
pub struct SharedMap(NonNull<u8>);

impl SharedMap {
    /// Where `len` bytes at `off` are. Only the supervisor's thread touches
    /// the page, while every thread of the process is stopped, so a plain
    /// copy through this pointer races with nothing.
    fn at(&self, off: u64, len: usize) -> *mut u8 {
        assert!(off as usize + len <= PAGE_LEN as usize, "inside the page");
        // SAFETY: in bounds of the PAGE_LEN-byte mapping (checked above).
        unsafe { self.0.as_ptr().add(off as usize) }
    }

    fn write(&self, off: u64, data: &[u8]) {
        // SAFETY: `at` checked the range; the mapping outlives this call.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.at(off, data.len()), data.len())
        }
    }

    fn read(&self, off: u64, buf: &mut [u8]) {
        // SAFETY: as in `write`.
        unsafe {
            std::ptr::copy_nonoverlapping(self.at(off, buf.len()), buf.as_mut_ptr(), buf.len())
        }
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: mapped by map_shared with this length, not used after.
        unsafe { libc::munmap(self.0.as_ptr().cast(), PAGE_LEN as usize) };
    }
}

/// `mmap`'s flags for the page at `target`.
fn fixed(target: Target) -> u64 {
    let fixed = if target.replace {
        libc::MAP_FIXED
    } else {
        libc::MAP_FIXED_NOREPLACE
    };
    fixed as u64
}

/// Creates a memfd in `pid`, maps it there and in the supervisor, and
/// closes the process's descriptor again (its numbering is as before).
fn map_shared(pid: i32, target: Target) -> Result<SharedMap, ShareError> {
    let fd = inject::checked(
        pid,
        target.stub,
        "memfd_create",
        libc::SYS_memfd_create,
        [target.name, libc::MFD_CLOEXEC as u64, 0, 0, 0, 0],
    )?;
    let mapped = map_both(pid, target, fd);
    let closed = inject::checked(
        pid,
        target.stub,
        "close",
        libc::SYS_close,
        [fd, 0, 0, 0, 0, 0],
    );
    let shared = mapped?;
    closed?;
    Ok(shared)
}

/// Sizes descriptor `fd` of `pid` (a fresh memfd) to a page and maps it in
/// the supervisor and at the page's address in the process.
fn map_both(pid: i32, target: Target, fd: u64) -> Result<SharedMap, ShareError> {
    let file = fdprobe::borrow(&fdprobe::pidfd_open(pid)?, fd as i32)?;
    if unsafe { libc::ftruncate(file.as_raw_fd(), PAGE_LEN as i64) } != 0 {
        return Err(io::Error::last_os_error().into());
    }
    // SAFETY: a fresh shared mapping of our own descriptor, nothing aliased.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PAGE_LEN as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error().into());
    }
    let shared = SharedMap(NonNull::new(ptr.cast()).expect("mmap gives no null mapping"));
    let prot = (libc::PROT_READ | libc::PROT_WRITE) as u64;
    let flags = libc::MAP_SHARED as u64 | fixed(target);
    let args = [target.addr, PAGE_LEN, prot, flags, fd, 0];
    inject::mmap_at(pid, target.stub, "mmap", args)?;
    Ok(shared)
}

/// Maps an anonymous private page at the page's address in `pid`.
fn map_private(pid: i32, target: Target) -> Result<(), ShareError> {
    let prot = (libc::PROT_READ | libc::PROT_WRITE) as u64;
    let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64 | fixed(target);
    let args = [target.addr, PAGE_LEN, prot, flags, u64::MAX, 0];
    Ok(inject::mmap_at(pid, target.stub, "mmap", args)?)
}
