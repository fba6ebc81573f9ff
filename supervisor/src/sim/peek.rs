//! Memory a channel request's caller copied into its slot before posting
//! (`faultline_channel::Slot::peek`): a patched Go runtime's sleep and
//! futex wait hand over the timespec and the futex word with the call, so
//! their handlers read them without a system call into the process (each
//! such read costs about a microsecond and a half, as much as the rest of
//! the decision).

use std::cell::Cell;
use std::io;

use faultline_channel::PEEK_BYTES;

use super::memory::{offset_within, overlaps, Memory};

/// Up to two copies of the caller's memory, each of up to
/// [`PEEK_BYTES`] bytes; empty for a request without them (and for every
/// ptrace stop).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Peek {
    /// Where each copy came from; 0: no copy.
    pub at: [u64; 2],
    /// Each copy's length.
    pub len: [u32; 2],
    /// The copies.
    pub bytes: [[u8; PEEK_BYTES]; 2],
}

impl Peek {
    /// The copied bytes at `addr..addr + len`, if one copy holds them all.
    fn find(&self, addr: u64, len: usize) -> Option<&[u8]> {
        (0..2).find_map(|i| {
            let (at, have) = (self.at[i], (self.len[i] as usize).min(PEEK_BYTES));
            let from = offset_within(at, have, addr, len).filter(|_| at != 0)?;
            Some(&self.bytes[i][from..from + len])
        })
    }

    /// Drops the copies a write to `addr..addr + len` overlaps.
    fn forget_overlapping(&mut self, addr: u64, len: usize) {
        for i in 0..2 {
            let at = self.at[i];
            if at != 0 && overlaps(at, self.len[i] as usize, addr, len) {
                self.at[i] = 0;
            }
        }
    }
}

/// A process's memory with the copies its request came with: reads they
/// cover come from them, everything else from the process.
pub struct Peeked<M> {
    inner: M,
    peek: Cell<Peek>,
}

impl<M> Peeked<M> {
    /// `inner`, with `peek` in front.
    pub fn new(inner: M, peek: Peek) -> Peeked<M> {
        Peeked {
            inner,
            peek: Cell::new(peek),
        }
    }
}

impl<M: Memory> Memory for Peeked<M> {
    fn read_mem(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        if let Some(copy) = self.peek.get().find(addr, buf.len()) {
            buf.copy_from_slice(copy);
            return Ok(());
        }
        self.inner.read_mem(addr, buf)
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        let mut peek = self.peek.get();
        peek.forget_overlapping(addr, data.len());
        self.peek.set(peek);
        self.inner.write_mem(addr, data)
    }

    fn flush(&self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::memory::FakeMemory;

    fn peek_of(at: u64, bytes: &[u8]) -> Peek {
        let mut p = Peek::default();
        p.at[0] = at;
        p.len[0] = bytes.len() as u32;
        p.bytes[0][..bytes.len()].copy_from_slice(bytes);
        p
    }

    #[test]
    fn a_read_the_copy_covers_comes_from_it_and_others_from_the_process() {
        let mem = FakeMemory::default();
        mem.map(0x1000, &[0; 8]);
        mem.map(0x2000, &[0; 4]);
        mem.write_val(0x1000, &7u32).unwrap();
        mem.write_val(0x2000, &9u32).unwrap();
        // The copy says 5 where the process now says 7: the copy wins.
        let m = Peeked::new(mem, peek_of(0x1000, &5u32.to_le_bytes()));
        assert_eq!(m.read_val::<u32>(0x1000).unwrap(), 5);
        assert_eq!(m.read_val::<u32>(0x2000).unwrap(), 9);
        // Partly outside the copy: from the process.
        assert_eq!(m.read_val::<u64>(0x1000).unwrap() as u32, 7);
    }

    #[test]
    fn a_write_over_a_copy_drops_it() {
        let mem = FakeMemory::default();
        mem.map(0x1000, &[0; 4]);
        let m = Peeked::new(mem, peek_of(0x1000, &5u32.to_le_bytes()));
        m.write_val(0x1002, &0xffffu16).unwrap();
        assert_eq!(m.read_val::<u32>(0x1000).unwrap(), 0xffff_0000);
    }
}
