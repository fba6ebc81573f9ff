//! The scatter/gather buffers of vectored calls (readv, writev, recvmsg,
//! sendmsg): iovec arrays and the `struct msghdr` fields faultline uses,
//! read and written through the caller's `Memory`.

use crate::sim::memory::Memory;

/// The most bytes one read or write of a simulated socket or pipe moves.
pub(super) const MAX_IO: usize = 1 << 20;

/// A (base, length) pair of an iovec array.
pub(super) type IoVec = (u64, usize);

/// Reads `count` iovecs at `addr`.
pub(super) fn read_iovecs(mem: &impl Memory, addr: u64, count: u64) -> Option<Vec<IoVec>> {
    (0..count.min(1024))
        .map(|i| {
            mem.read_val::<[u64; 2]>(addr + 16 * i)
                .ok()
                .map(|[b, l]| (b, l as usize))
        })
        .collect()
}

/// Gathers up to `limit` bytes from the iovecs.
pub(super) fn gather(mem: &impl Memory, iovs: &[IoVec], limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for &(base, len) in iovs {
        let take = len.min(limit - out.len());
        let mut buf = vec![0u8; take];
        mem.read_mem(base, &mut buf).ok()?;
        out.extend_from_slice(&buf);
        if out.len() == limit {
            break;
        }
    }
    Some(out)
}

/// Scatters `data` over the iovecs; false if one is not writable.
pub(super) fn scatter(mem: &impl Memory, iovs: &[IoVec], data: &[u8]) -> bool {
    let mut rest = data;
    for &(base, len) in iovs {
        if rest.is_empty() {
            break;
        }
        let n = len.min(rest.len());
        if mem.write_mem(base, &rest[..n]).is_err() {
            return false;
        }
        rest = &rest[n..];
    }
    true
}

/// The fields of a `struct msghdr` faultline uses.
pub(super) struct MsgHdr {
    /// msg_name: where the peer's address goes.
    pub name: u64,
    /// msg_namelen: room there.
    pub namelen: u32,
    /// msg_iov.
    pub iov: u64,
    /// msg_iovlen.
    pub iovlen: u64,
}

/// Reads the `struct msghdr` at `addr`.
pub(super) fn read_msghdr(mem: &impl Memory, addr: u64) -> Option<MsgHdr> {
    let raw: [u64; 7] = mem.read_val(addr).ok()?;
    Some(MsgHdr {
        name: raw[0],
        namelen: raw[1] as u32,
        iov: raw[2],
        iovlen: raw[3],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::memory::FakeMemory;

    #[test]
    fn gather_and_scatter_follow_the_iovecs_up_to_the_limit() {
        let mem = FakeMemory::default();
        mem.map(0x1000, b"hello world.....");
        mem.map(0x2000, &[0; 32]);
        mem.write_val(0x2000, &[0x1000u64, 5, 0x1006, 5]).unwrap();
        let iovs = read_iovecs(&mem, 0x2000, 2).unwrap();
        assert_eq!(iovs, [(0x1000, 5), (0x1006, 5)]);
        assert_eq!(gather(&mem, &iovs, 8).unwrap(), b"hellowor");
        assert!(scatter(&mem, &iovs, b"HELLOWORLD!"));
        assert_eq!(
            gather(&mem, &[(0x1000, 16)], 16).unwrap(),
            b"HELLO WORLD....."
        );
        assert!(!scatter(&mem, &[(0x9000, 4)], b"x"), "unmapped");
        assert!(
            read_iovecs(&mem, 0x2008, 2).is_none(),
            "runs off the mapping"
        );
    }
}
