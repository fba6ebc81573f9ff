//! Writes into a caller's memory that wait for the caller to make them
//! itself (`faultline_channel::Slot::poke`): a patched Go thread's stub
//! copies them out of its slot as soon as it sees its answer, so the
//! handlers of its calls (an epoll wait's events, a read's data, a clock's
//! time) need no system call into the process. Each such write costs
//! about a microsecond and a half on the supervisor's side, as much as the
//! rest of the decision; the copy in the stub costs nanoseconds.
//!
//! One write waits at a time: an earlier one of the same call is made at
//! once when another comes, and before a read of memory it covers, so the
//! process sees them in order and the handler reads what it wrote.
//!
//! The other way, a `write` of a small buffer brings its bytes with it
//! (`faultline_channel::Slot::send`): reads they cover come from the slot
//! until the handler writes over them.

use std::io;

use super::memory::{overlaps, Memory};

/// Where a call's writes can wait, and where the bytes it sends came:
/// its slot.
pub trait PokeArea {
    /// The write waiting there: where it goes, and its length.
    fn waiting(&self) -> Option<(u64, usize)>;
    /// Leaves `data` for `addr` to the caller in place of nothing waiting;
    /// false (nothing changed) if it does not fit.
    fn hold(&self, addr: u64, data: &[u8]) -> bool;
    /// Takes the write waiting there, to be made now.
    fn take(&self) -> Option<(u64, Vec<u8>)>;
    /// Fills `buf` with the bytes at `addr` if the copy the caller sent
    /// with the call holds them all.
    fn sent(&self, addr: u64, buf: &mut [u8]) -> bool;
    /// The caller's memory at `addr..addr + len` changed: its copy no
    /// longer counts.
    fn forget_sent(&self, addr: u64, len: usize);
}

/// A process's memory whose writes wait in `area`, if there is one.
pub struct Poked<M, A> {
    inner: M,
    area: Option<A>,
}

impl<M: Memory, A: PokeArea> Poked<M, A> {
    /// `inner`, with its writes left in `area` while they fit.
    pub fn new(inner: M, area: Option<A>) -> Poked<M, A> {
        Poked { inner, area }
    }

    /// Makes the waiting write now.
    fn make_waiting(&self, area: &A) -> io::Result<()> {
        match area.take() {
            Some((at, bytes)) => self.inner.write_mem(at, &bytes),
            None => Ok(()),
        }
    }
}

impl<M: Memory, A: PokeArea> Memory for Poked<M, A> {
    fn read_mem(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        if let Some(area) = &self.area {
            if area.sent(addr, buf) {
                return Ok(());
            }
            if area
                .waiting()
                .is_some_and(|(at, len)| overlaps(at, len, addr, buf.len()))
            {
                self.make_waiting(area)?;
            }
        }
        self.inner.read_mem(addr, buf)
    }

    fn write_mem(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        if let Some(area) = &self.area {
            area.forget_sent(addr, data.len());
            self.make_waiting(area)?;
            if area.hold(addr, data) {
                return Ok(());
            }
        }
        self.inner.write_mem(addr, data)
    }

    fn flush(&self) -> io::Result<()> {
        match &self.area {
            Some(area) => self.make_waiting(area),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::memory::{offset_within, FakeMemory};
    use std::cell::RefCell;

    /// A poke area of `cap` bytes, and what the caller sent.
    struct Area {
        cap: usize,
        waiting: RefCell<Option<(u64, Vec<u8>)>>,
        sent: RefCell<Option<(u64, Vec<u8>)>>,
    }

    impl PokeArea for Area {
        fn waiting(&self) -> Option<(u64, usize)> {
            self.waiting.borrow().as_ref().map(|(at, b)| (*at, b.len()))
        }
        fn hold(&self, addr: u64, data: &[u8]) -> bool {
            if data.len() > self.cap {
                return false;
            }
            *self.waiting.borrow_mut() = Some((addr, data.to_vec()));
            true
        }
        fn take(&self) -> Option<(u64, Vec<u8>)> {
            self.waiting.borrow_mut().take()
        }
        fn sent(&self, addr: u64, buf: &mut [u8]) -> bool {
            let sent = self.sent.borrow();
            let Some((at, bytes)) = sent.as_ref() else {
                return false;
            };
            let Some(from) = offset_within(*at, bytes.len(), addr, buf.len()) else {
                return false;
            };
            buf.copy_from_slice(&bytes[from..from + buf.len()]);
            true
        }
        fn forget_sent(&self, _addr: u64, _len: usize) {
            *self.sent.borrow_mut() = None;
        }
    }

    fn poked(len: usize, cap: usize) -> Poked<FakeMemory, Area> {
        let mem = FakeMemory::default();
        mem.map(0x1000, &vec![0; len]);
        let area = Area {
            cap,
            waiting: RefCell::new(None),
            sent: RefCell::new(None),
        };
        Poked::new(mem, Some(area))
    }

    fn waiting(m: &Poked<FakeMemory, Area>) -> Option<(u64, usize)> {
        m.area.as_ref().and_then(|a| a.waiting())
    }

    #[test]
    fn a_write_waits_in_the_area_and_an_earlier_one_is_made_first() {
        let m = poked(16, 8);
        m.write_val(0x1000, &7u32).unwrap();
        assert_eq!(m.inner.read_val::<u32>(0x1000).unwrap(), 0, "waits");
        assert_eq!(waiting(&m), Some((0x1000, 4)));
        m.write_val(0x1008, &9u32).unwrap();
        assert_eq!(m.inner.read_val::<u32>(0x1000).unwrap(), 7, "made");
        assert_eq!(waiting(&m), Some((0x1008, 4)));
        // Too big to wait: made at once, after the waiting one.
        m.write_mem(0x1000, &[1; 12]).unwrap();
        assert_eq!(waiting(&m), None);
        assert_eq!(m.inner.read_val::<u32>(0x1008).unwrap(), 0x0101_0101);
    }

    #[test]
    fn a_read_of_waiting_bytes_sees_them() {
        let m = poked(16, 8);
        m.write_val(0x1004, &5u32).unwrap();
        // Elsewhere: the write still waits.
        assert_eq!(m.read_val::<u32>(0x1000).unwrap(), 0);
        assert!(waiting(&m).is_some());
        assert_eq!(m.read_val::<u64>(0x1000).unwrap() >> 32, 5);
        assert_eq!(waiting(&m), None);
    }

    #[test]
    fn what_the_caller_sent_is_read_from_the_slot_until_written_over() {
        let m = poked(16, 8);
        m.inner.write_mem(0x1000, &[1; 16]).unwrap();
        *m.area.as_ref().unwrap().sent.borrow_mut() = Some((0x1000, vec![7; 8]));
        assert_eq!(m.read_val::<u32>(0x1004).unwrap(), 0x0707_0707);
        // Not all of it in the copy: from the process.
        assert_eq!(m.read_val::<u32>(0x1008).unwrap(), 0x0101_0101);
        m.write_val(0x1000, &0u8).unwrap();
        assert_eq!(m.read_val::<u32>(0x1004).unwrap(), 0x0101_0101);
    }

    #[test]
    fn without_an_area_writes_are_made_at_once() {
        let mem = FakeMemory::default();
        mem.map(0x1000, &[0; 4]);
        let m = Poked::<_, Area>::new(mem, None);
        m.write_val(0x1000, &3u32).unwrap();
        assert_eq!(m.inner.read_val::<u32>(0x1000).unwrap(), 3);
    }
}
