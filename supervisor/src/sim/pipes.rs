//! Simulated pipes: the buffer and the two ends of a pipe a program made
//! non-blocking (an event loop's wake-up pipe, such as the Go runtime's
//! netpoll break pipe), kept in the supervisor so that writing, draining
//! and waiting on it are answered in place instead of passed to the
//! kernel, and its capacity is the same on every host. Each end is named
//! by an [`EndId`] that `NetState` hands out from its numbering of the
//! virtual sockets, so that poll and epoll treat both alike.

use std::collections::{BTreeMap, VecDeque};

use vnet::Readiness;

/// The id of a pipe end: a `NetState` socket id (`VsId`) that no socket has.
pub type EndId = u32;

/// Linux's default pipe capacity (16 pages).
pub const DEFAULT_CAPACITY: usize = 16 * 4096;
/// Writes of at most this many bytes are atomic (POSIX `PIPE_BUF`).
pub const PIPE_BUF: usize = 4096;
/// The largest capacity an unprivileged F_SETPIPE_SZ may ask for
/// (Linux's default `/proc/sys/fs/pipe-max-size`).
pub const MAX_CAPACITY: usize = 1 << 20;

/// Why a pipe call did not move data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipeError {
    /// Nothing to read yet, or no room to write: wait or EAGAIN.
    WouldBlock,
    /// A write with no read end open: EPIPE and SIGPIPE.
    BrokenPipe,
    /// The descriptor's end does not allow the call (EBADF).
    WrongEnd,
}

/// One end of a pipe, shared by every descriptor that refers to it.
#[derive(Debug)]
struct End {
    pipe: u32,
    /// The write end (else the read end).
    writes: bool,
    /// O_NONBLOCK of the end's open file (shared by its dups, as in Linux).
    nonblocking: bool,
    /// Descriptors referring to it, across processes.
    refs: u32,
}

/// The buffer between the two ends.
#[derive(Debug)]
struct Pipe {
    data: VecDeque<u8>,
    capacity: usize,
    /// (read end, write end); an end closed for good is no longer in
    /// [`Pipes::ends`].
    ends: [EndId; 2],
}

/// Every simulated pipe of a run.
#[derive(Debug, Default)]
pub struct Pipes {
    ends: BTreeMap<EndId, End>,
    pipes: BTreeMap<u32, Pipe>,
    next: u32,
}

impl Pipes {
    /// A new pipe with ends `read` and `write` (ids the caller allocated),
    /// each with one descriptor, both non-blocking (as pipe2 with
    /// O_NONBLOCK makes them).
    pub fn open(&mut self, read: EndId, write: EndId) {
        let pipe = self.next;
        self.next += 1;
        self.pipes.insert(
            pipe,
            Pipe {
                data: VecDeque::new(),
                capacity: DEFAULT_CAPACITY,
                ends: [read, write],
            },
        );
        for (vs, writes) in [(read, false), (write, true)] {
            self.ends.insert(
                vs,
                End {
                    pipe,
                    writes,
                    nonblocking: true,
                    refs: 1,
                },
            );
        }
    }

    /// Whether `vs` is an end of a simulated pipe.
    pub fn has(&self, vs: EndId) -> bool {
        self.ends.contains_key(&vs)
    }

    /// One more descriptor refers to end `vs` (dup, fork).
    pub fn add_ref(&mut self, vs: EndId) {
        if let Some(e) = self.ends.get_mut(&vs) {
            e.refs += 1;
        }
    }

    /// A descriptor of end `vs` closed. Returns both ends of its pipe
    /// (whose readiness may have changed) if this was the end's last one.
    pub fn drop_ref(&mut self, vs: EndId) -> Option<[EndId; 2]> {
        let e = self.ends.get_mut(&vs)?;
        e.refs = e.refs.saturating_sub(1);
        if e.refs > 0 {
            return None;
        }
        let pipe = e.pipe;
        self.ends.remove(&vs);
        let ends = self.pipes.get(&pipe)?.ends;
        if !ends.iter().any(|end| self.ends.contains_key(end)) {
            self.pipes.remove(&pipe);
        }
        Some(ends)
    }

    /// The other end of `vs`'s pipe, as long as that pipe exists.
    pub fn peer(&self, vs: EndId) -> Option<EndId> {
        let e = self.ends.get(&vs)?;
        let [read, write] = self.pipes.get(&e.pipe)?.ends;
        Some(if e.writes { read } else { write })
    }

    /// Whether end `vs` is non-blocking.
    pub fn nonblocking(&self, vs: EndId) -> bool {
        self.ends.get(&vs).is_some_and(|e| e.nonblocking)
    }

    /// Sets O_NONBLOCK of end `vs`.
    pub fn set_nonblocking(&mut self, vs: EndId, on: bool) {
        if let Some(e) = self.ends.get_mut(&vs) {
            e.nonblocking = on;
        }
    }

    fn pipe_of(&self, vs: EndId) -> Option<(&End, &Pipe)> {
        let e = self.ends.get(&vs)?;
        Some((e, self.pipes.get(&e.pipe)?))
    }

    /// Whether the other end of `pipe` (seen from an end that `writes` or
    /// not) still has a descriptor.
    fn other_open(&self, pipe: &Pipe, writes: bool) -> bool {
        self.ends.contains_key(&pipe.ends[usize::from(!writes)])
    }

    /// How many bytes a read of up to `max` bytes from read end `vs` takes
    /// now: 0 at end of file (no write end left) or for `max` 0. Nothing
    /// is taken ([`Pipes::take`] does).
    pub fn read_len(&self, vs: EndId, max: usize) -> Result<usize, PipeError> {
        let (e, pipe) = self.pipe_of(vs).ok_or(PipeError::WrongEnd)?;
        if e.writes {
            return Err(PipeError::WrongEnd);
        }
        if pipe.data.is_empty() && max > 0 && self.other_open(pipe, false) {
            return Err(PipeError::WouldBlock);
        }
        Ok(max.min(pipe.data.len()))
    }

    /// Takes the first `n` bytes of `vs`'s pipe (as [`Pipes::read_len`]
    /// allowed).
    pub fn take(&mut self, vs: EndId, n: usize) -> Vec<u8> {
        let Some(pipe) = self.ends.get(&vs).and_then(|e| self.pipes.get_mut(&e.pipe)) else {
            return Vec::new();
        };
        let n = n.min(pipe.data.len());
        pipe.data.drain(..n).collect()
    }

    /// Whether a read of end `vs` would fail with [`PipeError::WouldBlock`]
    /// now.
    pub fn read_would_block(&self, vs: EndId) -> bool {
        self.read_len(vs, 1) == Err(PipeError::WouldBlock)
    }

    /// How many bytes of a `len`-byte write to write end `vs` go in now:
    /// all of them, or for a write longer than [`PIPE_BUF`] as many as
    /// there is room for; none fit if the write would not fit atomically
    /// (up to `PIPE_BUF` bytes) or the pipe is full. Nothing is written
    /// ([`Pipes::put`] does).
    pub fn write_len(&self, vs: EndId, len: usize) -> Result<usize, PipeError> {
        let (e, pipe) = self.pipe_of(vs).ok_or(PipeError::WrongEnd)?;
        if !e.writes {
            return Err(PipeError::WrongEnd);
        }
        if !self.other_open(pipe, true) {
            return Err(PipeError::BrokenPipe);
        }
        let n = len.min(pipe.capacity.saturating_sub(pipe.data.len()));
        if len > 0 && (n == 0 || len <= PIPE_BUF && n < len) {
            return Err(PipeError::WouldBlock);
        }
        Ok(n)
    }

    /// Appends `data` to `vs`'s pipe (as [`Pipes::write_len`] allowed).
    pub fn put(&mut self, vs: EndId, data: &[u8]) {
        if let Some(pipe) = self.ends.get(&vs).and_then(|e| self.pipes.get_mut(&e.pipe)) {
            pipe.data.extend(data);
        }
    }

    /// The readiness of end `vs` as poll and epoll see it: the read end is
    /// readable with data, hung up with no write end left; the write end
    /// is writable with room for an atomic write, in error with no read
    /// end left. A closed end is everything, so a stale question wakes.
    pub fn readiness(&self, vs: EndId) -> Readiness {
        let Some((e, pipe)) = self.pipe_of(vs) else {
            return Readiness {
                readable: true,
                writable: true,
                hup: true,
                rdhup: true,
                err: true,
            };
        };
        let other = self.other_open(pipe, e.writes);
        let room = pipe.capacity.saturating_sub(pipe.data.len());
        Readiness {
            readable: !e.writes && !pipe.data.is_empty(),
            writable: e.writes && room >= PIPE_BUF.min(pipe.capacity),
            hup: !e.writes && !other,
            rdhup: false,
            err: e.writes && !other,
        }
    }

    /// Bytes waiting in `vs`'s pipe (FIONREAD).
    pub fn pending(&self, vs: EndId) -> usize {
        self.pipe_of(vs).map_or(0, |(_, p)| p.data.len())
    }

    /// The capacity of `vs`'s pipe (F_GETPIPE_SZ).
    pub fn capacity(&self, vs: EndId) -> usize {
        self.pipe_of(vs).map_or(0, |(_, p)| p.capacity)
    }

    /// F_SETPIPE_SZ: the capacity becomes `want` rounded up to a power of
    /// two of at least a page. Errors as Linux's: EINVAL past `i32`,
    /// EPERM past [`MAX_CAPACITY`], EBUSY below what the pipe holds.
    pub fn set_capacity(&mut self, vs: EndId, want: u64) -> Result<usize, i32> {
        let pipe = self
            .ends
            .get(&vs)
            .and_then(|e| self.pipes.get_mut(&e.pipe))
            .ok_or(libc::EBADF)?;
        if want > i32::MAX as u64 {
            return Err(libc::EINVAL);
        }
        let size = (want as usize).max(4096).next_power_of_two();
        if size > MAX_CAPACITY {
            return Err(libc::EPERM);
        }
        if size < pipe.data.len() {
            return Err(libc::EBUSY);
        }
        pipe.capacity = size;
        Ok(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> Pipes {
        let mut p = Pipes::default();
        p.open(1, 2);
        p
    }

    /// A read as the handler makes it.
    fn read(p: &mut Pipes, vs: EndId, max: usize) -> Result<Vec<u8>, PipeError> {
        let n = p.read_len(vs, max)?;
        Ok(p.take(vs, n))
    }

    /// A write as the handler makes it.
    fn write(p: &mut Pipes, vs: EndId, data: &[u8]) -> Result<usize, PipeError> {
        let n = p.write_len(vs, data.len())?;
        p.put(vs, &data[..n]);
        Ok(n)
    }

    #[test]
    fn bytes_written_are_read_in_order_and_an_empty_pipe_would_block() {
        let mut p = pipe();
        assert_eq!(read(&mut p, 1, 16), Err(PipeError::WouldBlock));
        assert!(p.read_would_block(1));
        assert!(!p.readiness(1).readable);
        assert_eq!(write(&mut p, 2, b"abc"), Ok(3));
        assert!(p.readiness(1).readable);
        assert_eq!(p.pending(1), 3);
        assert_eq!(read(&mut p, 1, 2), Ok(b"ab".to_vec()));
        assert_eq!(read(&mut p, 1, 16), Ok(b"c".to_vec()));
        assert_eq!(read(&mut p, 1, 0), Ok(Vec::new()), "a read of 0 bytes");
        assert_eq!(read(&mut p, 2, 1), Err(PipeError::WrongEnd));
        assert_eq!(write(&mut p, 1, b"x"), Err(PipeError::WrongEnd));
    }

    #[test]
    fn a_closed_write_end_is_end_of_file_and_a_closed_read_end_a_broken_pipe() {
        let mut p = pipe();
        write(&mut p, 2, b"z").expect("room");
        p.add_ref(2);
        assert_eq!(p.drop_ref(2), None, "a dup is still open");
        assert_eq!(p.drop_ref(2), Some([1, 2]));
        assert!(p.readiness(1).hup);
        assert_eq!(
            read(&mut p, 1, 8),
            Ok(b"z".to_vec()),
            "what was written first"
        );
        assert_eq!(read(&mut p, 1, 8), Ok(Vec::new()), "then end of file");
        assert!(!p.read_would_block(1));

        let mut p = pipe();
        p.drop_ref(1);
        assert!(p.readiness(2).err);
        assert_eq!(write(&mut p, 2, b"x"), Err(PipeError::BrokenPipe));
        assert_eq!(p.drop_ref(2), Some([1, 2]));
        assert!(p.pipes.is_empty(), "both ends gone: the pipe goes");
    }

    #[test]
    fn small_writes_are_atomic_and_large_ones_take_what_fits() {
        let mut p = pipe();
        let full = vec![7u8; DEFAULT_CAPACITY - 100];
        assert_eq!(write(&mut p, 2, &full), Ok(full.len()));
        assert!(!p.readiness(2).writable, "less than PIPE_BUF of room");
        assert_eq!(write(&mut p, 2, &[1; 200]), Err(PipeError::WouldBlock));
        assert_eq!(write(&mut p, 2, &[1; 100]), Ok(100));
        assert_eq!(write(&mut p, 2, &[1; 1]), Err(PipeError::WouldBlock));
        read(&mut p, 1, 10_000).expect("data");
        assert_eq!(
            write(&mut p, 2, &[2; 20_000]),
            Ok(10_000),
            "a long write, in part"
        );
    }

    #[test]
    fn the_capacity_changes_as_f_setpipe_sz_does_on_linux() {
        let mut p = pipe();
        assert_eq!(p.capacity(1), DEFAULT_CAPACITY);
        assert_eq!(p.set_capacity(2, 5000), Ok(8192));
        assert_eq!(p.set_capacity(2, 1), Ok(4096));
        assert_eq!(p.set_capacity(2, 2 << 20), Err(libc::EPERM));
        write(&mut p, 2, &[0; 4096]).expect("room");
        p.set_capacity(2, 8192).expect("grow");
        write(&mut p, 2, &[0; 4096]).expect("room");
        assert_eq!(p.set_capacity(2, 4096), Err(libc::EBUSY));
        assert_eq!(p.peer(1), Some(2));
        assert!(p.nonblocking(1));
        p.set_nonblocking(1, false);
        assert!(
            !p.nonblocking(1) && p.nonblocking(2),
            "each end has its own"
        );
    }
}
