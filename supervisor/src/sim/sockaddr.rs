//! Converting between the tracee's `struct sockaddr_in`/`sockaddr_in6` bytes
//! and `std::net::SocketAddr`, the currency of vnet.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::sim::memory::Memory;

/// Why a sockaddr could not be used; each maps to the errno Linux gives.
#[derive(Debug, Clone, Copy)]
pub enum AddrError {
    /// Unreadable memory (EFAULT).
    Fault,
    /// Too short for its family (EINVAL).
    Invalid,
    /// A family other than AF_INET/AF_INET6 (EAFNOSUPPORT).
    Family,
}

impl AddrError {
    /// The errno the tracee gets.
    pub fn errno(self) -> i32 {
        match self {
            AddrError::Fault => libc::EFAULT,
            AddrError::Invalid => libc::EINVAL,
            AddrError::Family => libc::EAFNOSUPPORT,
        }
    }
}

/// Reads a sockaddr of `len` bytes at `addr` of `mem`.
pub fn read(mem: &impl Memory, addr: u64, len: u64) -> Result<SocketAddr, AddrError> {
    let len = (len as usize).min(128);
    if len < 2 {
        return Err(AddrError::Invalid);
    }
    let mut buf = vec![0u8; len];
    mem.read_mem(addr, &mut buf).map_err(|_| AddrError::Fault)?;
    decode(&buf)
}

/// Decodes sockaddr bytes.
pub fn decode(buf: &[u8]) -> Result<SocketAddr, AddrError> {
    let family = u16::from_ne_bytes([buf[0], buf[1]]) as i32;
    match family {
        libc::AF_INET if buf.len() >= 8 => {
            let port = u16::from_be_bytes([buf[2], buf[3]]);
            let ip = Ipv4Addr::new(buf[4], buf[5], buf[6], buf[7]);
            Ok(SocketAddr::V4(SocketAddrV4::new(ip, port)))
        }
        libc::AF_INET6 if buf.len() >= 24 => {
            let port = u16::from_be_bytes([buf[2], buf[3]]);
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&buf[8..24]);
            let scope = if buf.len() >= 28 {
                u32::from_ne_bytes([buf[24], buf[25], buf[26], buf[27]])
            } else {
                0
            };
            Ok(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(octets),
                port,
                0,
                scope,
            )))
        }
        libc::AF_INET | libc::AF_INET6 => Err(AddrError::Invalid),
        _ => Err(AddrError::Family),
    }
}

/// Encodes `sa` in the layout of a socket of family `inet6` (IPv4 peers of
/// an IPv6 socket appear v4-mapped, as Linux shows them).
pub fn encode(sa: SocketAddr, inet6: bool) -> Vec<u8> {
    let sa = match (sa, inet6) {
        (SocketAddr::V4(v4), true) => {
            SocketAddr::V6(SocketAddrV6::new(v4.ip().to_ipv6_mapped(), v4.port(), 0, 0))
        }
        (SocketAddr::V6(v6), false) => match v6.ip().to_ipv4_mapped() {
            Some(ip) => SocketAddr::V4(SocketAddrV4::new(ip, v6.port())),
            None => SocketAddr::V6(v6),
        },
        (sa, _) => sa,
    };
    match sa {
        SocketAddr::V4(v4) => {
            let mut b = vec![0u8; 16];
            b[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
            b[2..4].copy_from_slice(&v4.port().to_be_bytes());
            b[4..8].copy_from_slice(&v4.ip().octets());
            b
        }
        SocketAddr::V6(v6) => {
            let mut b = vec![0u8; 28];
            b[0..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
            b[2..4].copy_from_slice(&v6.port().to_be_bytes());
            b[8..24].copy_from_slice(&v6.ip().octets());
            b[24..28].copy_from_slice(&v6.scope_id().to_ne_bytes());
            b
        }
    }
}

/// Writes `sa` to a (buffer, socklen_t *length) pair as accept/getsockname
/// do: truncated to the buffer, the length set to the full size.
pub fn write_out(
    mem: &impl Memory,
    addr: u64,
    len_ptr: u64,
    sa: SocketAddr,
    inet6: bool,
) -> Result<(), AddrError> {
    if addr == 0 || len_ptr == 0 {
        return Ok(());
    }
    let bytes = encode(sa, inet6);
    let room: u32 = mem.read_val(len_ptr).map_err(|_| AddrError::Fault)?;
    let n = bytes.len().min(room as usize);
    mem.write_mem(addr, &bytes[..n])
        .map_err(|_| AddrError::Fault)?;
    mem.write_val(len_ptr, &(bytes.len() as u32))
        .map_err(|_| AddrError::Fault)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_maps_v4_into_v6() {
        let v4: SocketAddr = "127.77.0.2:8080".parse().unwrap();
        assert_eq!(decode(&encode(v4, false)).unwrap(), v4);
        let mapped = decode(&encode(v4, true)).unwrap();
        assert_eq!(mapped.to_string(), "[::ffff:127.77.0.2]:8080");
        assert_eq!(decode(&encode(mapped, false)).unwrap(), v4);
        assert!(matches!(decode(&[1, 0, 0, 0]), Err(AddrError::Family)));
    }

    #[test]
    fn write_out_truncates_to_the_buffer_and_reports_the_full_length() {
        use crate::sim::memory::FakeMemory;
        let peer: SocketAddr = "127.77.0.3:40001".parse().unwrap();
        let mem = FakeMemory::default();
        mem.map(0x100, &[0xaa; 16]);
        mem.map(0x200, &8u32.to_ne_bytes());
        write_out(&mem, 0x100, 0x200, peer, false).unwrap();
        assert_eq!(mem.read_val::<u32>(0x200).unwrap(), 16, "the full size");
        let mut got = [0u8; 16];
        mem.read_mem(0x100, &mut got).unwrap();
        assert_eq!(
            &got[..8],
            &encode(peer, false)[..8],
            "truncated to the room"
        );
        assert_eq!(&got[8..], &[0xaa; 8], "nothing past the room");
        mem.write_val(0x200, &16u32).unwrap();
        write_out(&mem, 0x100, 0x200, peer, false).unwrap();
        assert_eq!(read(&mem, 0x100, 16).unwrap(), peer);
        assert!(matches!(
            write_out(&mem, 0x100, 0x900, peer, false),
            Err(AddrError::Fault)
        ));
        assert!(matches!(read(&mem, 0x100, 1), Err(AddrError::Invalid)));
    }
}
