//! Addressing: which IPs simulated hosts have, and how socket addresses of
//! both families map onto the IPv4 addresses vnet works with internally.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use crate::error::{NetError, Result};

/// First two octets of the simulated hosts' subnet (127.77.0.0/16).
const SUBNET: [u8; 2] = [127, 77];

/// Most hosts a network can hold: the n-th host gets 127.77.(n/256).(n%256).
pub(crate) const MAX_HOSTS: usize = u16::MAX as usize;

/// Which address family a socket was created with; decides how addresses
/// are presented back to it (IPv6 sockets see v4-mapped addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Domain {
    /// AF_INET.
    Inet,
    /// AF_INET6 (dual-stack: IPv4 peers appear as `::ffff:a.b.c.d`).
    Inet6,
}

/// The address of the host at `index` (0-based): index 0 is 127.77.0.1.
pub(crate) fn host_ip(index: usize) -> Ipv4Addr {
    let [hi, lo] = u16::try_from(index + 1)
        .expect("host index within MAX_HOSTS")
        .to_be_bytes();
    Ipv4Addr::new(SUBNET[0], SUBNET[1], hi, lo)
}

/// The 0-based host index an address in 127.77.0.0/16 stands for, whether or
/// not such a host exists; `None` outside the subnet.
pub(crate) fn host_index(ip: Ipv4Addr) -> Option<usize> {
    let [a, b, hi, lo] = ip.octets();
    let n = usize::from(u16::from_be_bytes([hi, lo]));
    ([a, b] == SUBNET && n > 0).then(|| n - 1)
}

/// Converts an address given by a tracee into the IPv4 form vnet uses.
///
/// IPv6 sockets accept IPv4 addresses, v4-mapped addresses, `::1` (the
/// host's loopback) and `::` (any). Any other IPv6 address is not simulated
/// and yields `NetUnreachable`; an IPv6 address on an IPv4 socket yields
/// `FamilyNotSupported`.
pub(crate) fn to_v4(addr: SocketAddr, domain: Domain) -> Result<SocketAddrV4> {
    match (addr, domain) {
        (SocketAddr::V4(v4), _) => Ok(v4),
        (SocketAddr::V6(_), Domain::Inet) => Err(NetError::FamilyNotSupported),
        (SocketAddr::V6(v6), Domain::Inet6) => {
            let ip = v6.ip();
            let v4 = if ip.is_loopback() {
                Ipv4Addr::LOCALHOST
            } else if ip.is_unspecified() {
                Ipv4Addr::UNSPECIFIED
            } else {
                ip.to_ipv4_mapped().ok_or(NetError::NetUnreachable)?
            };
            Ok(SocketAddrV4::new(v4, v6.port()))
        }
    }
}

/// Presents an internal address to a socket of `domain`: as is for IPv4,
/// v4-mapped for IPv6 (with `0.0.0.0` shown as `::`).
pub(crate) fn present(addr: SocketAddrV4, domain: Domain) -> SocketAddr {
    match domain {
        Domain::Inet => SocketAddr::V4(addr),
        Domain::Inet6 => {
            let ip = if addr.ip().is_unspecified() {
                Ipv6Addr::UNSPECIFIED
            } else {
                addr.ip().to_ipv6_mapped()
            };
            SocketAddr::V6(SocketAddrV6::new(ip, addr.port(), 0, 0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_addresses_round_trip() {
        assert_eq!(host_ip(0), Ipv4Addr::new(127, 77, 0, 1));
        assert_eq!(host_ip(299), Ipv4Addr::new(127, 77, 1, 44));
        assert_eq!(host_index(host_ip(299)), Some(299));
        assert_eq!(host_index(Ipv4Addr::new(127, 77, 0, 0)), None);
        assert_eq!(host_index(Ipv4Addr::new(10, 0, 0, 1)), None);
    }

    #[test]
    fn ipv6_forms_map_to_ipv4() {
        let mapped: SocketAddr = "[::ffff:127.77.0.2]:80".parse().unwrap();
        let v4 = to_v4(mapped, Domain::Inet6).unwrap();
        assert_eq!(v4, "127.77.0.2:80".parse().unwrap());
        assert_eq!(present(v4, Domain::Inet6), mapped);
        let lo: SocketAddr = "[::1]:5".parse().unwrap();
        assert_eq!(to_v4(lo, Domain::Inet6).unwrap().ip(), &Ipv4Addr::LOCALHOST);
        let real: SocketAddr = "[2001:db8::1]:5".parse().unwrap();
        assert_eq!(to_v4(real, Domain::Inet6), Err(NetError::NetUnreachable));
        assert_eq!(to_v4(real, Domain::Inet), Err(NetError::FamilyNotSupported));
        let any = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 7);
        assert_eq!(present(any, Domain::Inet6), "[::]:7".parse().unwrap());
    }
}
