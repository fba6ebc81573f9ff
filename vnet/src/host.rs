//! Hosts: names, addresses, and each host's table of bound ports.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddrV4};

use serde::Serialize;

use crate::error::{NetError, Result};
use crate::socket::{Kind, SocketId};

/// First port handed out for port 0 (bind, or an implicit bind).
const EPHEMERAL_FIRST: u16 = 40000;
/// Last ephemeral port; allocation wraps around to [`EPHEMERAL_FIRST`].
const EPHEMERAL_LAST: u16 = 60999;

/// Names one simulated host; its index is its position in add order, so the
/// host with index `i` has address 127.77.0.(i+1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct HostId(usize);

impl HostId {
    /// Wraps a 0-based host index.
    pub(crate) fn new(index: usize) -> HostId {
        HostId(index)
    }

    /// The 0-based position of the host in add order.
    pub fn index(self) -> usize {
        self.0
    }
}

/// Why a host could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Another host already has this name (names compare case-insensitively).
    #[error("host name {0:?} is already taken")]
    DuplicateName(String),
    /// The name is empty, contains whitespace, or is `localhost`.
    #[error("host name {0:?} cannot appear in /etc/hosts")]
    InvalidName(String),
    /// The 127.77.0.0/16 subnet has no address left.
    #[error("too many hosts")]
    TooMany,
}

/// One socket's claim on a port.
struct Binding {
    socket: SocketId,
    ip: Ipv4Addr,
    reuse: bool,
    listening: bool,
}

impl Binding {
    /// Whether this binding's address overlaps `ip` (either may be "any").
    fn overlaps(&self, ip: Ipv4Addr) -> bool {
        self.ip.is_unspecified() || ip.is_unspecified() || self.ip == ip
    }
}

/// A simulated machine: its name, its address and which of its ports are
/// taken (stream and datagram ports are separate namespaces).
pub(crate) struct Host {
    pub(crate) name: String,
    pub(crate) ip: Ipv4Addr,
    next_ephemeral: u16,
    bindings: BTreeMap<(Kind, u16), Vec<Binding>>,
}

impl Host {
    /// A host with no bound ports.
    pub(crate) fn new(name: String, ip: Ipv4Addr) -> Host {
        Host {
            name,
            ip,
            next_ephemeral: EPHEMERAL_FIRST,
            bindings: BTreeMap::new(),
        }
    }

    /// Whether a socket on this host may bind `ip`: any, loopback, or its own.
    pub(crate) fn owns(&self, ip: Ipv4Addr) -> bool {
        ip.is_unspecified() || ip == Ipv4Addr::LOCALHOST || ip == self.ip
    }

    /// Claims `addr` for `socket` and returns the port (port 0 picks the next
    /// free ephemeral port). Fails with EADDRINUSE on an overlapping binding
    /// unless both set SO_REUSEADDR and the other is not listening.
    pub(crate) fn bind(
        &mut self,
        kind: Kind,
        addr: SocketAddrV4,
        socket: SocketId,
        reuse: bool,
    ) -> Result<u16> {
        let port = match addr.port() {
            0 => self.ephemeral(kind)?,
            port => port,
        };
        let ip = *addr.ip();
        let taken = self.bindings.entry((kind, port)).or_default();
        if taken
            .iter()
            .any(|b| b.overlaps(ip) && !(reuse && b.reuse && !b.listening))
        {
            return Err(NetError::AddrInUse);
        }
        taken.push(Binding {
            socket,
            ip,
            reuse,
            listening: false,
        });
        Ok(port)
    }

    fn ephemeral(&mut self, kind: Kind) -> Result<u16> {
        for _ in EPHEMERAL_FIRST..=EPHEMERAL_LAST {
            let port = self.next_ephemeral;
            self.next_ephemeral = if port == EPHEMERAL_LAST {
                EPHEMERAL_FIRST
            } else {
                port + 1
            };
            if !self.bindings.contains_key(&(kind, port)) {
                return Ok(port);
            }
        }
        Err(NetError::AddrInUse)
    }

    /// Marks `socket`'s stream binding on `port` as listening; fails with
    /// EADDRINUSE if another socket already listens on an overlapping address.
    pub(crate) fn listen(&mut self, port: u16, socket: SocketId) -> Result<()> {
        let taken = self
            .bindings
            .get_mut(&(Kind::Stream, port))
            .ok_or(NetError::Invalid)?;
        let mine = taken
            .iter()
            .position(|b| b.socket == socket)
            .ok_or(NetError::Invalid)?;
        let ip = taken[mine].ip;
        if taken
            .iter()
            .any(|b| b.socket != socket && b.listening && b.overlaps(ip))
        {
            return Err(NetError::AddrInUse);
        }
        taken[mine].listening = true;
        Ok(())
    }

    /// Releases `socket`'s claim on `port` (no effect if it has none).
    pub(crate) fn unbind(&mut self, kind: Kind, port: u16, socket: SocketId) {
        if let Some(taken) = self.bindings.get_mut(&(kind, port)) {
            taken.retain(|b| b.socket != socket);
            if taken.is_empty() {
                self.bindings.remove(&(kind, port));
            }
        }
    }

    /// The listening stream socket that takes connections to `ip:port`.
    pub(crate) fn find_listener(&self, addr: SocketAddrV4) -> Option<SocketId> {
        self.find(Kind::Stream, addr, |b| b.listening)
    }

    /// The datagram socket that receives datagrams sent to `ip:port`.
    pub(crate) fn find_dgram(&self, addr: SocketAddrV4) -> Option<SocketId> {
        self.find(Kind::Dgram, addr, |_| true)
    }

    /// A binding of `kind` on `addr`'s port accepting `pred`, preferring one
    /// on exactly `addr`'s IP over one on "any".
    fn find(&self, kind: Kind, addr: SocketAddrV4, pred: fn(&Binding) -> bool) -> Option<SocketId> {
        let taken = self.bindings.get(&(kind, addr.port()))?;
        let usable = || taken.iter().filter(|b| pred(b));
        usable()
            .find(|b| b.ip == *addr.ip())
            .or_else(|| usable().find(|b| b.ip.is_unspecified()))
            .map(|b| b.socket)
    }
}

/// Checks that `name` can be a host name in an /etc/hosts file.
pub(crate) fn check_name(name: &str) -> std::result::Result<(), HostError> {
    if name.is_empty()
        || name.chars().any(|c| c.is_whitespace() || c == '#')
        || name.eq_ignore_ascii_case("localhost")
    {
        return Err(HostError::InvalidName(name.to_string()));
    }
    Ok(())
}

/// The /etc/hosts text that names every host (and localhost).
pub(crate) fn hosts_file(hosts: &[Host]) -> String {
    let mut text =
        String::from("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n");
    for host in hosts {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "{}\t{}", host.ip, host.name);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddrV4 {
        s.parse().unwrap()
    }

    #[test]
    fn ephemeral_ports_count_up_and_skip_taken_ones() {
        let mut h = Host::new("a".into(), Ipv4Addr::new(127, 77, 0, 1));
        let s = SocketId::new;
        h.bind(Kind::Stream, addr("0.0.0.0:40001"), s(1), false)
            .unwrap();
        assert_eq!(
            h.bind(Kind::Stream, addr("0.0.0.0:0"), s(2), false),
            Ok(40000)
        );
        assert_eq!(
            h.bind(Kind::Stream, addr("0.0.0.0:0"), s(3), false),
            Ok(40002)
        );
        assert_eq!(
            h.bind(Kind::Dgram, addr("0.0.0.0:0"), s(4), false),
            Ok(40003)
        );
    }

    #[test]
    fn overlapping_binds_conflict_unless_reused() {
        let mut h = Host::new("a".into(), Ipv4Addr::new(127, 77, 0, 1));
        let s = SocketId::new;
        h.bind(Kind::Stream, addr("127.0.0.1:80"), s(1), true)
            .unwrap();
        assert_eq!(
            h.bind(Kind::Stream, addr("0.0.0.0:80"), s(2), false),
            Err(NetError::AddrInUse)
        );
        h.bind(Kind::Stream, addr("127.77.0.1:80"), s(3), false)
            .unwrap();
        h.bind(Kind::Stream, addr("0.0.0.0:80"), s(4), true)
            .unwrap_err();
        h.bind(Kind::Dgram, addr("0.0.0.0:80"), s(5), false)
            .unwrap();
        h.listen(80, s(1)).unwrap();
        assert_eq!(h.find_listener(addr("127.0.0.1:80")), Some(s(1)));
        assert_eq!(h.find_listener(addr("127.77.0.1:80")), None);
        h.unbind(Kind::Stream, 80, s(1));
        h.bind(Kind::Stream, addr("0.0.0.0:80"), s(6), false)
            .unwrap_err();
    }
}
