//! A tracee's address space and registers as the simulation sees them:
//! the `Memory` trait the syscall handlers read and write through (the
//! host implements it for a real process; `FakeMemory` stands in for one
//! in handler tests), the `Pod` types it may copy, and the register file.

use std::io;

/// A saved register file of a stopped tracee thread.
pub type Regs = libc::user_regs_struct;

/// The six arguments of the system call `regs` were stopped at, in the
/// call's order (rdi, rsi, rdx, r10, r8, r9).
pub fn syscall_args(regs: &Regs) -> [u64; 6] {
    [regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9]
}

/// Whether `a..a + a_len` and `b..b + b_len` share a byte: a write over
/// memory a copy was taken of, or a read of bytes still to be written.
pub fn overlaps(a: u64, a_len: usize, b: u64, b_len: usize) -> bool {
    a < b.saturating_add(b_len as u64) && b < a.saturating_add(a_len as u64)
}

/// Where `addr..addr + len` starts within a copy of `have` bytes taken at
/// `at`, if the copy holds all of it.
pub fn offset_within(at: u64, have: usize, addr: u64, len: usize) -> Option<usize> {
    let from = usize::try_from(addr.checked_sub(at)?).ok()?;
    (from.checked_add(len)? <= have).then_some(from)
}

/// Types that may be copied out of and into a tracee's memory as raw bytes.
///
/// # Safety
/// Implement only for types with no padding bytes and for which every bit
/// pattern is a valid value: integers, arrays of them, and `#[repr(C)]`
/// structs of them without padding. (A `bool` read from a program could hold
/// 2; a padded struct written out would leak uninitialized bytes.)
pub unsafe trait Pod: Copy + 'static {}

// SAFETY: integers have no padding and no invalid bit patterns.
unsafe impl Pod for u8 {}
// SAFETY: as above.
unsafe impl Pod for u16 {}
// SAFETY: as above.
unsafe impl Pod for u32 {}
// SAFETY: as above.
unsafe impl Pod for u64 {}
// SAFETY: as above.
unsafe impl Pod for i16 {}
// SAFETY: as above.
unsafe impl Pod for i32 {}
// SAFETY: as above.
unsafe impl Pod for i64 {}
// SAFETY: an array of Pod has no padding between its elements.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// A tracee's address space as the syscall handlers see it: bytes in, bytes
/// out. Handlers reach memory only through this, so a handler can be tested
/// against a fake address space, without a process.
pub trait Memory {
    /// Copies `buf.len()` bytes from `addr` into `buf`.
    fn read_mem(&self, addr: u64, buf: &mut [u8]) -> io::Result<()>;

    /// Copies `data` to `addr`.
    fn write_mem(&self, addr: u64, data: &[u8]) -> io::Result<()>;

    /// Makes the writes so far that wait for the caller to make them
    /// itself (`sim::poke`) now, so that a bad address fails here: for a
    /// call that must not go on when its result cannot be written (accept,
    /// whose connection is dropped then). Memory that writes at once has
    /// nothing to do.
    fn flush(&self) -> io::Result<()> {
        Ok(())
    }

    /// Reads a value of a plain-old-data type.
    fn read_val<T: Pod>(&self, addr: u64) -> io::Result<T>
    where
        Self: Sized,
    {
        let mut val = std::mem::MaybeUninit::<T>::zeroed();
        // SAFETY: T is Pod, so the zeroed value is a valid T and any bytes
        // written over it make a valid T too.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(val.as_mut_ptr() as *mut u8, std::mem::size_of::<T>())
        };
        self.read_mem(addr, bytes)?;
        // SAFETY: initialized (zeroed, then overwritten by valid bytes).
        Ok(unsafe { val.assume_init() })
    }

    /// Writes a value of a plain-old-data type.
    fn write_val<T: Pod>(&self, addr: u64, val: &T) -> io::Result<()>
    where
        Self: Sized,
    {
        // SAFETY: T is Pod: no padding, so every byte is initialized.
        let bytes = unsafe {
            std::slice::from_raw_parts(val as *const T as *const u8, std::mem::size_of::<T>())
        };
        self.write_mem(addr, bytes)
    }

    /// Reads a NUL-terminated string (at most `max` bytes).
    fn read_cstr(&self, addr: u64, max: usize) -> io::Result<Vec<u8>>
    where
        Self: Sized,
    {
        let mut out = Vec::new();
        let mut chunk = [0u8; 256];
        let mut at = addr;
        while out.len() < max {
            // Stay within one page per read so we never cross into an unmapped page.
            let page_left = 4096 - (at as usize & 4095);
            let n = page_left.min(chunk.len());
            self.read_mem(at, &mut chunk[..n])?;
            if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
            at += n as u64;
        }
        Ok(out)
    }
}

/// An address space made of byte ranges, for handler tests: reads outside
/// every range fail with EFAULT, as in a process.
#[cfg(test)]
#[derive(Default)]
pub struct FakeMemory {
    ranges: std::cell::RefCell<Vec<(u64, Vec<u8>)>>,
}

#[cfg(test)]
impl FakeMemory {
    /// Maps `bytes` at `addr`.
    pub fn map(&self, addr: u64, bytes: &[u8]) {
        self.ranges.borrow_mut().push((addr, bytes.to_vec()));
    }

    fn range_of(&self, addr: u64, len: usize) -> Option<(usize, usize)> {
        self.ranges
            .borrow()
            .iter()
            .position(|(at, b)| addr >= *at && addr + len as u64 <= at + b.len() as u64)
            .map(|i| (i, (addr - self.ranges.borrow()[i].0) as usize))
    }
}

#[cfg(test)]
impl Memory for FakeMemory {
    fn read_mem(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        let (i, off) = self
            .range_of(addr, buf.len())
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EFAULT))?;
        buf.copy_from_slice(&self.ranges.borrow()[i].1[off..off + buf.len()]);
        Ok(())
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        let (i, off) = self
            .range_of(addr, data.len())
            .ok_or_else(|| io::Error::from_raw_os_error(libc::EFAULT))?;
        self.ranges.borrow_mut()[i].1[off..off + data.len()].copy_from_slice(data);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_overlap_when_they_share_a_byte_and_a_copy_holds_what_it_covers() {
        assert!(overlaps(0x10, 4, 0x13, 1));
        assert!(!overlaps(0x10, 4, 0x14, 4), "adjacent");
        assert!(!overlaps(0x10, 0, 0x10, 4), "empty");
        assert_eq!(offset_within(0x10, 8, 0x12, 4), Some(2));
        assert_eq!(offset_within(0x10, 8, 0x12, 7), None, "past its end");
        assert_eq!(offset_within(0x10, 8, 0x0f, 2), None, "before it");
    }

    #[test]
    fn typed_reads_and_writes_round_trip_and_fault_outside_the_mapping() {
        let mem = FakeMemory::default();
        mem.map(0x1000, &[0; 32]);
        mem.write_val(0x1008, &[7u64, 9]).unwrap();
        assert_eq!(mem.read_val::<[u64; 2]>(0x1008).unwrap(), [7, 9]);
        assert_eq!(mem.read_val::<u32>(0x1008).unwrap(), 7);
        let fault = mem.read_val::<u64>(0x1020).unwrap_err();
        assert_eq!(fault.raw_os_error(), Some(libc::EFAULT));
        assert!(mem.write_val(0x0ff8, &1u64).is_err());
    }

    #[test]
    fn a_string_ends_at_its_nul_or_at_the_bound() {
        let mem = FakeMemory::default();
        let mut page = [0u8; 4096];
        page[..12].copy_from_slice(b"hello\0world\0");
        mem.map(0x2000, &page);
        assert_eq!(mem.read_cstr(0x2000, 64).unwrap(), b"hello");
        assert_eq!(mem.read_cstr(0x2006, 64).unwrap(), b"world");
        // Reads stay within a page: a string at a page's end is found
        // without touching the unmapped page after it.
        page[4090..].copy_from_slice(b"tail\0\0");
        mem.map(0x5000, &page);
        assert_eq!(mem.read_cstr(0x5000 + 4090, 64).unwrap(), b"tail");
        // An unterminated string that runs into unmapped memory faults.
        let bare = FakeMemory::default();
        bare.map(0x3000, &[b'a'; 4096]);
        assert!(bare.read_cstr(0x3000, 8192).is_err());
        assert_eq!(bare.read_cstr(0x3000, 100).unwrap().len(), 256, "bounded");
    }
}
