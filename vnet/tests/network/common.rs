//! Helpers shared by the network tests.

use std::net::SocketAddr;

use vnet::{Domain, HostId, Kind, NetConfig, Network, SocketId};

/// One virtual millisecond.
pub const MS: u64 = 1_000_000;
/// One virtual second.
pub const SEC: u64 = 1_000 * MS;

/// A network with hosts `a` (127.77.0.1) and `b` (127.77.0.2).
pub fn two_hosts(seed: u64, config: NetConfig) -> (Network, HostId, HostId) {
    let mut net = Network::new(seed, config);
    let a = net.add_host("a").unwrap();
    let b = net.add_host("b").unwrap();
    (net, a, b)
}

/// Parses a socket address.
pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A stream socket on `host` listening on `0.0.0.0:port`.
pub fn listener(net: &mut Network, host: HostId, port: u16) -> SocketId {
    let l = net.socket(host, Domain::Inet, Kind::Stream);
    net.bind(l, addr(&format!("0.0.0.0:{port}"))).unwrap();
    net.listen(l, 16).unwrap();
    l
}

/// Delivers everything in flight; returns the time of the last delivery
/// (or `now` if nothing was in flight).
pub fn settle(net: &mut Network, now: u64) -> u64 {
    let mut last = now;
    while let Some(t) = net.next_event_time() {
        net.advance(t);
        last = t;
    }
    last
}

/// Connects a new socket on `from` to `to_addr` and accepts it at `l`:
/// returns (client, server side, time when both are established).
pub fn connected(
    net: &mut Network,
    from: HostId,
    to_addr: &str,
    l: SocketId,
    now: u64,
) -> (SocketId, SocketId, u64) {
    let c = net.socket(from, Domain::Inet, Kind::Stream);
    net.connect(c, addr(to_addr), now).unwrap();
    let now = settle(net, now);
    assert_eq!(net.pending_error(c).unwrap(), None);
    let (s, _) = net.accept(l).unwrap();
    (c, s, now)
}

/// Reads everything buffered on a stream socket.
pub fn read_all(net: &mut Network, sock: SocketId) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(r) = net.recv(sock, 4096, false) {
        if r.data.is_empty() {
            break;
        }
        out.extend(r.data);
    }
    out
}
