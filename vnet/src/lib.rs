//! vnet: the simulated network of faultline (see DESIGN.md, issue 3).
//!
//! Pure logic: no syscalls, real sockets, threads or clocks. The supervisor
//! maps a tracee's socket syscalls onto a [`Network`], passes the virtual
//! time `now` (ns, never decreasing) to calls that send, and drives delivery
//! with [`Network::next_event_time`] and [`Network::advance`]. Every random choice
//! comes from one ChaCha8 RNG seeded at creation, so the same seed and the
//! same call sequence give the same behaviour.
//!
//! Conventions for the supervisor:
//! * every error is a [`NetError`] with an errno; `WouldBlock` (EAGAIN) is
//!   what a blocking caller parks on until a [`Change`] names its socket;
//! * a stream connect returns [`ConnectProgress::InProgress`]; it completes
//!   when the socket becomes writable, and [`Network::pending_error`]
//!   (SO_ERROR) then tells success from failure;
//! * hosts can reach only simulated hosts (127.77.0.0/16, their own
//!   127.0.0.1): anything else fails with ENETUNREACH (fail closed).

#![warn(missing_docs)]

mod addr;
mod agenda;
mod config;
mod conn;
mod datagram;
mod error;
mod event;
mod host;
mod link;
mod socket;
mod stream;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

pub use addr::Domain;
pub use config::{ConfigError, LinkParams, NetConfig};
pub use error::{errno, NetError, Result};
pub use event::{DropReason, MessageKind, NetEvent};
pub use host::{HostError, HostId};
pub use socket::{
    Change, ConnectProgress, Kind, Readiness, Received, Shutdown, SocketId, SOL_SOCKET,
    SO_REUSEADDR,
};

use agenda::Agenda;
use conn::{ConnId, Connection};
use datagram::{DgramState, InFlight};
use event::EventLog;
use host::Host;
use link::Links;
use socket::{Proto, Socket};
use stream::StreamState;

/// Work waiting for its virtual time.
pub(crate) enum Event {
    /// A connection lane has a segment due (or a retransmission to try).
    Lane(ConnId, usize),
    /// A connect gives up if still pending.
    ConnectTimeout(ConnId),
    /// A datagram arrives.
    Datagram(Box<InFlight>),
}

/// Where a message from a socket goes, and from which local address.
pub(crate) struct Route {
    pub(crate) to: HostId,
    pub(crate) dst: SocketAddrV4,
    pub(crate) src: SocketAddrV4,
}

/// The simulated network: hosts, their sockets, messages in flight, faults.
pub struct Network {
    config: NetConfig,
    hosts: Vec<Host>,
    sockets: BTreeMap<SocketId, Socket>,
    conns: BTreeMap<ConnId, Connection>,
    agenda: Agenda<Event>,
    links: Links,
    log: EventLog,
    /// Sockets that may have become ready since the last `advance`.
    touched: BTreeSet<SocketId>,
    next_socket: u64,
    next_conn: u64,
}

impl Network {
    /// A network with no hosts whose random choices all derive from `seed`.
    ///
    /// # Panics
    /// If `config` is invalid; check it first with [`NetConfig::validate`].
    pub fn new(seed: u64, config: NetConfig) -> Network {
        if let Err(e) = config.validate() {
            panic!("invalid NetConfig: {e}");
        }
        Network {
            links: Links::new(seed, config.link),
            log: EventLog::new(config.log_events),
            config,
            hosts: Vec::new(),
            sockets: BTreeMap::new(),
            conns: BTreeMap::new(),
            agenda: Agenda::new(),
            touched: BTreeSet::new(),
            next_socket: 1,
            next_conn: 0,
        }
    }

    /// Adds a host; the n-th host added gets address 127.77.0.n.
    pub fn add_host(&mut self, name: &str) -> std::result::Result<HostId, HostError> {
        host::check_name(name)?;
        if self.hosts.iter().any(|h| h.name.eq_ignore_ascii_case(name)) {
            return Err(HostError::DuplicateName(name.to_string()));
        }
        if self.hosts.len() >= addr::MAX_HOSTS {
            return Err(HostError::TooMany);
        }
        let id = HostId::new(self.hosts.len());
        self.hosts
            .push(Host::new(name.to_string(), addr::host_ip(id.index())));
        Ok(id)
    }

    /// The address a host name (or `localhost`) resolves to, as the
    /// simulated /etc/hosts says.
    pub fn resolve(&self, name: &str) -> Option<Ipv4Addr> {
        let name = name.strip_suffix('.').unwrap_or(name);
        if name.eq_ignore_ascii_case("localhost") {
            return Some(Ipv4Addr::LOCALHOST);
        }
        let host = self
            .hosts
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))?;
        Some(host.ip)
    }

    /// The /etc/hosts text every simulated process sees.
    pub fn hosts_file(&self) -> String {
        host::hosts_file(&self.hosts)
    }

    /// A host's name.
    pub fn host_name(&self, host: HostId) -> &str {
        &self.hosts[host.index()].name
    }

    /// A host's address (for interface listings).
    pub fn host_addr(&self, host: HostId) -> Ipv4Addr {
        self.hosts[host.index()].ip
    }

    /// Creates an unbound socket on `host`.
    pub fn socket(&mut self, host: HostId, domain: Domain, kind: Kind) -> SocketId {
        let proto = match kind {
            Kind::Stream => Proto::Stream(StreamState::Fresh),
            Kind::Dgram => Proto::Dgram(DgramState::default()),
        };
        self.add_socket(Socket::new(host, domain, proto))
    }

    /// Registers a socket under the next id.
    pub(crate) fn add_socket(&mut self, socket: Socket) -> SocketId {
        let id = SocketId::new(self.next_socket);
        self.next_socket += 1;
        self.sockets.insert(id, socket);
        id
    }

    /// The socket `sock`; EBADF if unknown.
    pub(crate) fn sock(&self, sock: SocketId) -> Result<&Socket> {
        self.sockets.get(&sock).ok_or(NetError::BadSocket)
    }

    /// The socket `sock`, mutably; EBADF if unknown.
    pub(crate) fn sock_mut(&mut self, sock: SocketId) -> Result<&mut Socket> {
        self.sockets.get_mut(&sock).ok_or(NetError::BadSocket)
    }

    /// The host a socket belongs to.
    pub fn socket_host(&self, sock: SocketId) -> Result<HostId> {
        Ok(self.sock(sock)?.host)
    }

    /// A socket's type (SO_TYPE).
    pub fn kind(&self, sock: SocketId) -> Result<Kind> {
        Ok(self.sock(sock)?.kind())
    }

    /// A socket's family (SO_DOMAIN).
    pub fn domain(&self, sock: SocketId) -> Result<Domain> {
        Ok(self.sock(sock)?.domain)
    }

    /// Binds a socket. Port 0 picks the host's next ephemeral port (from
    /// 40000); `0.0.0.0`/`::` binds all of the host's addresses; `127.0.0.1`
    /// is the host's own loopback. Errors: EINVAL if already bound,
    /// EADDRNOTAVAIL for an address not of this host, EADDRINUSE if taken
    /// (both sockets need SO_REUSEADDR to share, and neither may listen).
    pub fn bind(&mut self, sock: SocketId, addr: SocketAddr) -> Result<()> {
        let s = self.sock(sock)?;
        if s.local.is_some() {
            return Err(NetError::Invalid);
        }
        let want = addr::to_v4(addr, s.domain).map_err(|e| match e {
            NetError::NetUnreachable => NetError::AddrNotAvailable,
            e => e,
        })?;
        if !self.hosts[s.host.index()].owns(*want.ip()) {
            return Err(NetError::AddrNotAvailable);
        }
        self.bind_local(sock, want).map(drop)
    }

    /// Claims `addr` on the socket's host and records it as the local address.
    pub(crate) fn bind_local(
        &mut self,
        sock: SocketId,
        addr: SocketAddrV4,
    ) -> Result<SocketAddrV4> {
        let s = self.sockets.get_mut(&sock).ok_or(NetError::BadSocket)?;
        let port = self.hosts[s.host.index()].bind(s.kind(), addr, sock, s.reuse_addr())?;
        let local = SocketAddrV4::new(*addr.ip(), port);
        s.local = Some(local);
        Ok(local)
    }

    /// Finds where a message from `sock` to `dst` goes and which local
    /// address it leaves from, binding an ephemeral port if needed. Only
    /// simulated hosts are reachable (ENETUNREACH otherwise).
    pub(crate) fn route(&mut self, sock: SocketId, dst: SocketAddrV4) -> Result<Route> {
        let s = self.sock(sock)?;
        let (from, local) = (s.host, s.local);
        let (to, dst_ip) = if dst.ip().is_unspecified() || *dst.ip() == Ipv4Addr::LOCALHOST {
            (from, Ipv4Addr::LOCALHOST)
        } else {
            let index = addr::host_index(*dst.ip())
                .filter(|&i| i < self.hosts.len())
                .ok_or(NetError::NetUnreachable)?;
            (HostId::new(index), *dst.ip())
        };
        let bound_ip = local.map_or(Ipv4Addr::UNSPECIFIED, |l| *l.ip());
        let src_ip = if !bound_ip.is_unspecified() {
            if bound_ip == Ipv4Addr::LOCALHOST && to != from {
                return Err(NetError::NetUnreachable);
            }
            bound_ip
        } else if dst_ip == Ipv4Addr::LOCALHOST {
            Ipv4Addr::LOCALHOST
        } else {
            self.hosts[from.index()].ip
        };
        let port = match local {
            Some(l) => l.port(),
            None => self
                .bind_local(sock, SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))?
                .port(),
        };
        Ok(Route {
            to,
            dst: SocketAddrV4::new(dst_ip, dst.port()),
            src: SocketAddrV4::new(src_ip, port),
        })
    }

    /// Connects a socket. Streams return `InProgress` at once (the SYN is in
    /// flight; completion or failure shows in readiness and SO_ERROR);
    /// datagram sockets just set their peer. An address that is not a
    /// simulated host fails with ENETUNREACH immediately.
    pub fn connect(
        &mut self,
        sock: SocketId,
        addr: SocketAddr,
        now: u64,
    ) -> Result<ConnectProgress> {
        match &self.sock(sock)?.proto {
            Proto::Stream(state) => {
                let state = *state;
                self.stream_connect(sock, state, addr, now)
            }
            Proto::Listener(_) => Err(NetError::IsConnected),
            Proto::Dgram(_) => self.dgram_connect(sock, addr),
        }
    }

    /// Sends on a connected socket: [`Network::send_to`] without an address.
    pub fn send(&mut self, sock: SocketId, data: &[u8], now: u64) -> Result<usize> {
        self.send_to(sock, data, None, now)
    }

    /// Sends bytes. Streams take what fits in the send buffer (a partial
    /// count, or EAGAIN when full) and ignore `to`; datagram sockets send
    /// one datagram to `to` or their peer. EPIPE once the stream's sending
    /// side is shut down or the connection reset.
    pub fn send_to(
        &mut self,
        sock: SocketId,
        data: &[u8],
        to: Option<SocketAddr>,
        now: u64,
    ) -> Result<usize> {
        match &self.sock(sock)?.proto {
            Proto::Stream(state) => {
                let state = *state;
                self.stream_send(sock, state, data, now)
            }
            Proto::Listener(_) => Err(NetError::BrokenPipe),
            Proto::Dgram(_) => self.dgram_send(sock, data, to, now),
        }
    }

    /// Receives up to `max` bytes (`peek` leaves them queued: MSG_PEEK).
    /// Streams return buffered bytes, then empty data at end of stream, or
    /// EAGAIN; datagram sockets return the next datagram, truncated.
    pub fn recv(&mut self, sock: SocketId, max: usize, peek: bool) -> Result<Received> {
        match &self.sock(sock)?.proto {
            Proto::Stream(state) => {
                let state = *state;
                self.stream_recv(sock, state, max, peek)
            }
            Proto::Listener(_) => Err(NetError::NotConnected),
            Proto::Dgram(_) => self.dgram_recv(sock, max, peek),
        }
    }

    /// Whether a [`Network::recv`] of `sock` would fail with `WouldBlock`
    /// now (a stream's; false for other sockets), without receiving: a
    /// supervisor can then answer a non-blocking read without making it.
    pub fn recv_would_block(&self, sock: SocketId) -> bool {
        let Ok(s) = self.sock(sock) else {
            return false;
        };
        match &s.proto {
            Proto::Stream(state) => self.stream_recv_would_block(*state, s.error.is_some()),
            Proto::Listener(_) | Proto::Dgram(_) => false,
        }
    }

    /// Shuts down one or both directions (`shutdown(2)`).
    pub fn shutdown(&mut self, sock: SocketId, how: Shutdown, now: u64) -> Result<()> {
        match &self.sock(sock)?.proto {
            Proto::Stream(state) => {
                let state = *state;
                self.stream_shutdown(sock, state, how, now)
            }
            Proto::Listener(_) => Err(NetError::NotConnected),
            Proto::Dgram(_) => self.dgram_shutdown(sock, how),
        }
    }

    /// Closes a socket: a stream sends FIN after its queued data (RST if
    /// unread data is left); a listener resets the connections it has not
    /// handed out. The id is invalid afterwards.
    pub fn close(&mut self, sock: SocketId, now: u64) -> Result<()> {
        self.release(sock, true, now)
    }

    /// Removes a socket, gracefully or (as in a crash) with resets.
    pub(crate) fn release(&mut self, sock: SocketId, graceful: bool, now: u64) -> Result<()> {
        let s = self.sockets.remove(&sock).ok_or(NetError::BadSocket)?;
        if let Some(local) = s.local {
            self.hosts[s.host.index()].unbind(s.kind(), local.port(), sock);
        }
        match s.proto {
            Proto::Stream(state) => self.release_stream(state, graceful, now),
            Proto::Listener(listener) => self.release_listener(listener, now),
            Proto::Dgram(_) => {}
        }
        Ok(())
    }

    /// Kills every socket of `host` (its processes died): peers of its
    /// connections get a reset after the link delay (ECONNRESET), its
    /// listeners vanish (new connects are refused). The host stays, so
    /// restarted processes can open sockets again.
    pub fn crash_host(&mut self, host: HostId, now: u64) {
        let doomed: Vec<SocketId> = self
            .sockets
            .iter()
            .filter(|(_, s)| s.host == host)
            .map(|(&id, _)| id)
            .collect();
        for sock in doomed {
            // Connections queued at a listener go with it, so may be gone.
            let _ = self.release(sock, false, now);
        }
    }

    /// The local address (`getsockname`); `0.0.0.0:0` while unbound.
    pub fn local_addr(&self, sock: SocketId) -> Result<SocketAddr> {
        let s = self.sock(sock)?;
        let local = s
            .local
            .unwrap_or(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
        Ok(addr::present(local, s.domain))
    }

    /// The peer address (`getpeername`); ENOTCONN unless connected.
    pub fn peer_addr(&self, sock: SocketId) -> Result<SocketAddr> {
        let s = self.sock(sock)?;
        let peer = match &s.proto {
            Proto::Stream(state) => self.stream_peer(*state)?,
            Proto::Listener(_) => return Err(NetError::NotConnected),
            Proto::Dgram(d) => d.peer()?,
        };
        Ok(addr::present(peer, s.domain))
    }

    /// Stores a socket option (`setsockopt`). Only SO_REUSEADDR changes
    /// behaviour; the rest are kept so `getsockopt` returns them.
    pub fn set_option(
        &mut self,
        sock: SocketId,
        level: i32,
        name: i32,
        value: &[u8],
    ) -> Result<()> {
        self.sock_mut(sock)?
            .options
            .insert((level, name), value.to_vec());
        Ok(())
    }

    /// A stored socket option, or `None` if never set.
    pub fn get_option(&self, sock: SocketId, level: i32, name: i32) -> Result<Option<Vec<u8>>> {
        Ok(self.sock(sock)?.options.get(&(level, name)).cloned())
    }

    /// Takes the pending error (SO_ERROR): `None` after a successful connect.
    pub fn pending_error(&mut self, sock: SocketId) -> Result<Option<NetError>> {
        Ok(self.sock_mut(sock)?.error.take())
    }

    /// What poll/epoll would report for the socket now.
    pub fn readiness(&self, sock: SocketId) -> Result<Readiness> {
        let s = self.sock(sock)?;
        let err = s.error.is_some();
        Ok(match &s.proto {
            Proto::Stream(state) => self.stream_readiness(*state, err),
            Proto::Listener(listener) => listener.readiness(err),
            Proto::Dgram(d) => d.readiness(err),
        })
    }

    /// Bytes a read would return now (FIONREAD): buffered stream bytes, or
    /// the size of the next datagram. EINVAL on a listener.
    pub fn pending_bytes(&self, sock: SocketId) -> Result<usize> {
        match &self.sock(sock)?.proto {
            Proto::Stream(state) => Ok(self.stream_pending(*state)),
            Proto::Listener(_) => Err(NetError::Invalid),
            Proto::Dgram(d) => Ok(d.pending()),
        }
    }

    /// Cuts the links from every host of `a` to every host of `b`, and back
    /// unless `one_way`. Streams hold their segments (ETIMEDOUT after the
    /// retransmit timeout), SYNs wait for the connect timeout, datagrams
    /// and resets are lost.
    pub fn partition(&mut self, a: &[HostId], b: &[HostId], one_way: bool) {
        for &x in a {
            for &y in b {
                self.links.cut(x, y);
                if !one_way {
                    self.links.cut(y, x);
                }
            }
        }
    }

    /// Restores every cut link; held stream segments move at their next
    /// retransmission.
    pub fn heal(&mut self) {
        self.links.heal();
    }

    /// Gives the directed link `from → to` its own delay and loss.
    pub fn set_link(
        &mut self,
        from: HostId,
        to: HostId,
        params: LinkParams,
    ) -> std::result::Result<(), ConfigError> {
        params.validate()?;
        self.links.set(from, to, params);
        Ok(())
    }

    /// The directed link `from → to` goes back to the network's default.
    pub fn clear_link(&mut self, from: HostId, to: HostId) {
        self.links.unset(from, to);
    }

    /// When the next delivery or timer is due, if anything is in flight;
    /// the supervisor jumps virtual time there when every thread is parked.
    pub fn next_event_time(&self) -> Option<u64> {
        self.agenda.next_time()
    }

    /// Delivers everything due at or before `now`, in (time, send order),
    /// and returns the sockets that may have become ready since the last
    /// call, from deliveries or from calls (a read freeing a peer's send
    /// buffer, a shutdown). Sockets not accepted yet may appear too.
    pub fn advance(&mut self, now: u64) -> Vec<Change> {
        while let Some((at, event)) = self.agenda.pop_due(now) {
            match event {
                Event::Lane(c, dir) => {
                    self.run_lane(c, dir, at);
                    self.reap(c);
                }
                Event::ConnectTimeout(c) => self.connect_timed_out(c, at),
                Event::Datagram(datagram) => self.arrive_datagram(*datagram, at),
            }
        }
        std::mem::take(&mut self.touched)
            .into_iter()
            .filter_map(|socket| {
                let readiness = self.readiness(socket).ok()?;
                Some(Change { socket, readiness })
            })
            .collect()
    }

    /// Takes the messages delivered or dropped since the last call (empty if
    /// [`NetConfig::log_events`] is off).
    pub fn drain_events(&mut self) -> Vec<NetEvent> {
        self.log.drain()
    }
}
