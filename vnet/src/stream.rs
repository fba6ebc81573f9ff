//! Stream (TCP) sockets: listen/accept/connect, send/recv/shutdown/close
//! with Linux's errors and poll semantics, and what arriving segments do to
//! the ends of a connection.

use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use crate::addr::{present, to_v4};
use crate::conn::{ConnId, Connection, Segment, SegmentKind, Side, CLIENT, SERVER};
use crate::error::{NetError, Result};
use crate::event::DropReason;
use crate::socket::{ConnectProgress, Proto, Readiness, Received, Shutdown, Socket, SocketId};
use crate::{Event, HostId, Network};

/// Linux's default cap on a listen backlog.
const SOMAXCONN: usize = 4096;

/// Where a connectable stream socket stands.
#[derive(Debug, Clone, Copy)]
pub(crate) enum StreamState {
    /// Never connected (or bound only).
    Fresh,
    /// Waiting for the SYN-ACK; always the client end of its connection.
    Connecting(ConnId),
    /// An end of an established connection (which may since have broken).
    Connected(ConnId, usize),
    /// The connect failed; the error is pending until read.
    Failed,
}

/// A listening socket's accept queue.
pub(crate) struct Listener {
    backlog: usize,
    /// Accepted-by-the-kernel connections: their socket and the client address.
    queue: VecDeque<(SocketId, SocketAddrV4)>,
}

impl Listener {
    /// Readable exactly when a connection waits to be accepted.
    pub(crate) fn readiness(&self, err: bool) -> Readiness {
        Readiness {
            readable: !self.queue.is_empty(),
            err,
            ..Readiness::default()
        }
    }
}

impl Network {
    /// Makes a stream socket accept connections (binding it to an ephemeral
    /// port first if unbound); calling it again only changes the backlog.
    /// Errors: EOPNOTSUPP for datagram sockets, EINVAL once connected,
    /// EADDRINUSE if another socket listens on the same address.
    pub fn listen(&mut self, sock: SocketId, backlog: usize) -> Result<()> {
        let s = self.sock(sock)?;
        match s.proto {
            Proto::Dgram(_) => return Err(NetError::NotSupported),
            Proto::Stream(StreamState::Connecting(_) | StreamState::Connected(..)) => {
                return Err(NetError::Invalid)
            }
            Proto::Stream(StreamState::Fresh | StreamState::Failed) | Proto::Listener(_) => {}
        }
        let host = s.host;
        let local = match s.local {
            Some(local) => local,
            None => self.bind_local(sock, SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))?,
        };
        self.hosts[host.index()].listen(local.port(), sock)?;
        let backlog = backlog.min(SOMAXCONN);
        match &mut self.sock_mut(sock)?.proto {
            Proto::Listener(l) => l.backlog = backlog,
            proto => {
                *proto = Proto::Listener(Listener {
                    backlog,
                    queue: VecDeque::new(),
                })
            }
        }
        Ok(())
    }

    /// Takes the oldest established connection of a listener: the new
    /// socket and the client's address. EAGAIN (`WouldBlock`) when none
    /// waits, EINVAL if the socket does not listen.
    pub fn accept(&mut self, listener: SocketId) -> Result<(SocketId, SocketAddr)> {
        let s = self.sock_mut(listener)?;
        let domain = s.domain;
        let queue = match &mut s.proto {
            Proto::Listener(l) => &mut l.queue,
            Proto::Dgram(_) => return Err(NetError::NotSupported),
            Proto::Stream(_) => return Err(NetError::Invalid),
        };
        let (child, client) = queue.pop_front().ok_or(NetError::WouldBlock)?;
        Ok((child, present(client, domain)))
    }

    /// Starts a connect: the SYN leaves now and the connect timer starts.
    pub(crate) fn stream_connect(
        &mut self,
        sock: SocketId,
        state: StreamState,
        addr: SocketAddr,
        now: u64,
    ) -> Result<ConnectProgress> {
        match state {
            StreamState::Connecting(_) => return Err(NetError::Already),
            StreamState::Connected(..) => return Err(NetError::IsConnected),
            StreamState::Fresh | StreamState::Failed => {}
        }
        let s = self.sock_mut(sock)?;
        // A failed connect reports its error before a new attempt starts.
        s.check_error()?;
        let (host, dst) = (s.host, to_v4(addr, s.domain)?);
        let route = self.route(sock, dst)?;
        let c = ConnId(self.next_conn);
        self.next_conn += 1;
        let mut conn = Connection::new(
            Side::new(host, route.src, Some(sock)),
            Side::new(route.to, route.dst, None),
        );
        let deadline = now + self.config.connect_timeout;
        conn.connect_timer = Some(self.agenda.schedule(deadline, Event::ConnectTimeout(c)));
        self.conns.insert(c, conn);
        let s = self.sock_mut(sock)?;
        s.local = Some(route.src);
        s.proto = Proto::Stream(StreamState::Connecting(c));
        self.push_segment(c, CLIENT, SegmentKind::Syn, now);
        Ok(ConnectProgress::InProgress)
    }

    /// Queues as much of `data` as the send buffer has room for.
    pub(crate) fn stream_send(
        &mut self,
        sock: SocketId,
        state: StreamState,
        data: &[u8],
        now: u64,
    ) -> Result<usize> {
        self.sock_mut(sock)?.check_error()?;
        let (c, side) = match state {
            StreamState::Connected(c, side) => (c, side),
            StreamState::Connecting(_) => return Err(NetError::WouldBlock),
            StreamState::Fresh | StreamState::Failed => return Err(NetError::BrokenPipe),
        };
        let limit = self.config.send_buffer;
        let segment = self.config.segment_size;
        let end = &mut self.conn_mut(c).sides[side];
        if end.reset || end.fin_sent {
            return Err(NetError::BrokenPipe);
        }
        if data.is_empty() {
            return Ok(0);
        }
        let n = data.len().min(limit.saturating_sub(end.unread_by_peer));
        if n == 0 {
            return Err(NetError::WouldBlock);
        }
        end.unread_by_peer += n;
        for chunk in data[..n].chunks(segment) {
            self.push_segment(c, side, SegmentKind::Data(chunk.to_vec()), now);
        }
        Ok(n)
    }

    /// Reads up to `max` buffered bytes; reading frees the sender's buffer
    /// space at once (the sender shows up in the next changes).
    pub(crate) fn stream_recv(
        &mut self,
        sock: SocketId,
        state: StreamState,
        max: usize,
        peek: bool,
    ) -> Result<Received> {
        // One rule for blocking, which `recv_would_block` asks beforehand.
        if self.stream_recv_would_block(state, self.sock(sock)?.error.is_some()) {
            return Err(NetError::WouldBlock);
        }
        let (c, side) = match state {
            StreamState::Connected(c, side) => (c, side),
            StreamState::Connecting(_) => return Err(NetError::WouldBlock),
            StreamState::Fresh => return Err(NetError::NotConnected),
            StreamState::Failed => {
                self.sock_mut(sock)?.check_error()?;
                return Ok(Received::default());
            }
        };
        let conn = self.conn_mut(c);
        let end = &mut conn.sides[side];
        if end.recv.is_empty() {
            // Not blocking (above), so at the end of the stream, reset, or
            // with an error pending. Linux order: end of stream first, then
            // the error.
            if !end.read_closed() {
                self.sock_mut(sock)?.check_error()?;
            }
            return Ok(Received::default());
        }
        let n = max.min(end.recv.len());
        let data: Vec<u8> = if peek {
            end.recv.iter().take(n).copied().collect()
        } else {
            end.recv.drain(..n).collect()
        };
        if !peek {
            let sender = &mut conn.sides[1 - side];
            sender.unread_by_peer -= n;
            if let Some(s) = sender.socket {
                self.touched.insert(s);
            }
        }
        Ok(Received::bytes(data))
    }

    /// Whether [`Network::stream_recv`] would fail with `WouldBlock` now,
    /// changing nothing: connecting, or connected with nothing to read, the
    /// read side open, no reset and no error pending.
    pub(crate) fn stream_recv_would_block(&self, state: StreamState, error: bool) -> bool {
        match state {
            StreamState::Connecting(_) => true,
            StreamState::Connected(c, side) => {
                let end = &self.conns[&c].sides[side];
                end.recv.is_empty() && !end.read_closed() && !end.reset && !error
            }
            StreamState::Fresh | StreamState::Failed => false,
        }
    }

    /// Closes one or both directions; closing writes sends a FIN after the
    /// data already queued.
    pub(crate) fn stream_shutdown(
        &mut self,
        sock: SocketId,
        state: StreamState,
        how: Shutdown,
        now: u64,
    ) -> Result<()> {
        let StreamState::Connected(c, side) = state else {
            return Err(NetError::NotConnected);
        };
        let end = &mut self.conn_mut(c).sides[side];
        if end.reset {
            return Err(NetError::NotConnected);
        }
        end.shut_rd |= how.reads();
        let send_fin = how.writes() && !end.fin_sent;
        end.fin_sent |= send_fin;
        if send_fin {
            self.push_segment(c, side, SegmentKind::Fin, now);
        }
        self.touched.insert(sock);
        Ok(())
    }

    /// Detaches a removed stream socket from its connection: gracefully
    /// (FIN after queued data) or, if `graceful` is false or unread data is
    /// left, with a reset, as Linux does.
    pub(crate) fn release_stream(&mut self, state: StreamState, graceful: bool, now: u64) {
        match state {
            StreamState::Fresh | StreamState::Failed => {}
            StreamState::Connecting(c) => {
                self.conn_mut(c).sides[CLIENT].socket = None;
                self.break_side(c, CLIENT, NetError::ConnReset, DropReason::Aborted, now);
                self.reap(c);
            }
            StreamState::Connected(c, side) => {
                let end = &mut self.conn_mut(c).sides[side];
                end.socket = None;
                if !end.reset {
                    if graceful && end.recv.is_empty() {
                        if !end.fin_sent {
                            end.fin_sent = true;
                            self.push_segment(c, side, SegmentKind::Fin, now);
                        }
                    } else {
                        self.abort_side(c, side, now);
                    }
                }
                self.reap(c);
            }
        }
    }

    /// Aborts the connections still waiting in a closed listener's queue.
    pub(crate) fn release_listener(&mut self, listener: Listener, now: u64) {
        for (child, _) in listener.queue {
            // Queued sockets have no fd, so nothing else can have closed them.
            let _ = self.release(child, false, now);
        }
    }

    /// Poll state of a connectable stream socket, as Linux's `tcp_poll`.
    pub(crate) fn stream_readiness(&self, state: StreamState, err: bool) -> Readiness {
        match state {
            // An unconnected TCP socket polls as writable and hung up.
            StreamState::Fresh => Readiness {
                writable: true,
                hup: true,
                err,
                ..Readiness::default()
            },
            StreamState::Failed => Readiness {
                readable: true,
                writable: true,
                hup: true,
                rdhup: true,
                err,
            },
            StreamState::Connecting(_) => Readiness {
                err,
                ..Readiness::default()
            },
            StreamState::Connected(c, side) => {
                let end = &self.conns[&c].sides[side];
                let rdhup = end.read_closed() || end.reset;
                Readiness {
                    readable: !end.recv.is_empty() || rdhup || err,
                    writable: end.reset
                        || end.fin_sent
                        || end.unread_by_peer < self.config.send_buffer,
                    hup: end.reset || (end.read_closed() && end.fin_sent),
                    rdhup,
                    err,
                }
            }
        }
    }

    /// The other end's address while the connection stands.
    pub(crate) fn stream_peer(&self, state: StreamState) -> Result<SocketAddrV4> {
        match state {
            StreamState::Connected(c, side) if !self.conns[&c].sides[side].reset => {
                Ok(self.conns[&c].sides[1 - side].addr)
            }
            _ => Err(NetError::NotConnected),
        }
    }

    /// Bytes a read could return now (FIONREAD).
    pub(crate) fn stream_pending(&self, state: StreamState) -> usize {
        match state {
            StreamState::Connected(c, side) => self.conns[&c].sides[side].recv.len(),
            _ => 0,
        }
    }

    /// Applies a segment that reached end `side` of `c` at `at`. Returns the
    /// segment if it cannot be taken yet (a SYN to a full accept queue).
    pub(crate) fn arrive(
        &mut self,
        c: ConnId,
        side: usize,
        seg: Segment,
        at: u64,
    ) -> Option<Segment> {
        match seg.kind {
            SegmentKind::Syn => return self.arrive_syn(c, seg, at),
            SegmentKind::Rst => self.arrive_rst(c, side, at),
            SegmentKind::SynAck => {
                if let Some(sock) = self.live_end(c, side, false, at) {
                    self.establish(c, sock);
                }
            }
            SegmentKind::Fin => {
                if let Some(sock) = self.live_end(c, side, true, at) {
                    self.conn_mut(c).sides[side].fin_received = true;
                    self.touched.insert(sock);
                }
            }
            SegmentKind::Data(bytes) => {
                if let Some(sock) = self.live_end(c, side, false, at) {
                    self.conn_mut(c).sides[side].recv.extend(bytes);
                    self.touched.insert(sock);
                }
            }
        }
        None
    }

    /// A SYN reached the server host: queue a new connection at the
    /// listener and answer SYN-ACK, or answer RST if nothing listens.
    fn arrive_syn(&mut self, c: ConnId, seg: Segment, at: u64) -> Option<Segment> {
        let conn = self.conn_mut(c);
        let (host, addr) = (conn.sides[SERVER].host, conn.sides[SERVER].addr);
        let client = conn.sides[CLIENT].addr;
        let Some(lid) = self.hosts[host.index()].find_listener(addr) else {
            self.abort_side(c, SERVER, at);
            return None;
        };
        let listener = self.listener_mut(lid);
        if listener.queue.len() > listener.backlog {
            return Some(seg);
        }
        let l = self.sock(lid).expect("listener exists");
        let mut child = Socket::new(
            host,
            l.domain,
            Proto::Stream(StreamState::Connected(c, SERVER)),
        );
        child.options = l.options.clone();
        child.local = Some(addr);
        let child = self.add_socket(child);
        self.conn_mut(c).sides[SERVER].socket = Some(child);
        self.listener_mut(lid).queue.push_back((child, client));
        self.touched.insert(lid);
        self.push_segment(c, SERVER, SegmentKind::SynAck, at);
        None
    }

    /// The listener `id` found through a listening binding.
    fn listener_mut(&mut self, id: SocketId) -> &mut Listener {
        match self.sockets.get_mut(&id).map(|s| &mut s.proto) {
            Some(Proto::Listener(listener)) => listener,
            _ => unreachable!("a listening binding belongs to a listener socket"),
        }
    }

    /// A reset reached an end: refused while connecting, EPIPE after the
    /// peer's FIN, ECONNRESET otherwise.
    fn arrive_rst(&mut self, c: ConnId, side: usize, at: u64) {
        let end = &self.conns[&c].sides[side];
        if end.reset {
            return;
        }
        let connecting = end.socket.is_some_and(|s| {
            matches!(
                self.sockets[&s].proto,
                Proto::Stream(StreamState::Connecting(_))
            )
        });
        let err = if connecting {
            NetError::ConnRefused
        } else if end.fin_received {
            NetError::BrokenPipe
        } else {
            NetError::ConnReset
        };
        self.break_side(c, side, err, DropReason::Aborted, at);
    }

    /// The socket of end `side` if it can take a segment. An end that is
    /// closed or broken answers with a reset instead, except that a closed
    /// end finishing a graceful close takes the peer's FIN quietly.
    fn live_end(&mut self, c: ConnId, side: usize, is_fin: bool, at: u64) -> Option<SocketId> {
        let end = &self.conn_mut(c).sides[side];
        match end.socket {
            Some(sock) if !end.reset => Some(sock),
            _ if is_fin && !end.reset => None,
            _ => {
                self.abort_side(c, side, at);
                None
            }
        }
    }

    /// The SYN-ACK reached the client: the connect succeeded.
    fn establish(&mut self, c: ConnId, sock: SocketId) {
        if let Some(s) = self.sockets.get_mut(&sock) {
            if let Proto::Stream(state @ StreamState::Connecting(_)) = &mut s.proto {
                *state = StreamState::Connected(c, CLIENT);
            }
        }
        if let Some(ticket) = self.conn_mut(c).connect_timer.take() {
            self.agenda.cancel(ticket);
        }
        self.touched.insert(sock);
    }

    /// The connect timer fired with the SYN-ACK still missing.
    pub(crate) fn connect_timed_out(&mut self, c: ConnId, at: u64) {
        self.conn_mut(c).connect_timer = None;
        self.break_side(c, CLIENT, NetError::TimedOut, DropReason::TimedOut, at);
        self.reap(c);
    }

    /// Resets every connection between a host of `a` and a host of `b`
    /// (a middlebox or a peer's reboot): both ends fail with ECONNRESET at
    /// once and what was in flight is dropped. Returns how many.
    pub fn reset_between(&mut self, a: &[HostId], b: &[HostId], now: u64) -> usize {
        let doomed: Vec<ConnId> = self
            .conns
            .iter()
            .filter(|(_, c)| {
                let (x, y) = (c.sides[CLIENT].host, c.sides[SERVER].host);
                (a.contains(&x) && b.contains(&y)) || (a.contains(&y) && b.contains(&x))
            })
            .filter(|(_, c)| c.sides.iter().any(|s| !s.reset))
            .map(|(&id, _)| id)
            .collect();
        for &c in &doomed {
            for side in [CLIENT, SERVER] {
                self.break_side(c, side, NetError::ConnReset, DropReason::Aborted, now);
            }
        }
        doomed.len()
    }

    /// Ends the connection for end `side`: drops what it has in flight
    /// (logged as `reason`) and reports `err` to its socket, if one is still
    /// attached; a connecting socket becomes failed.
    pub(crate) fn break_side(
        &mut self,
        c: ConnId,
        side: usize,
        err: NetError,
        reason: DropReason,
        at: u64,
    ) {
        let conn = self.conn_mut(c);
        if conn.sides[side].reset {
            return;
        }
        conn.sides[side].reset = true;
        if side == CLIENT {
            if let Some(ticket) = conn.connect_timer.take() {
                self.agenda.cancel(ticket);
            }
        }
        self.purge_lane(c, side, at, reason);
        let Some(sock) = self.conns[&c].sides[side].socket else {
            return;
        };
        let s = self.sock_mut(sock).expect("attached socket exists");
        s.error = Some(err);
        if let Proto::Stream(state @ StreamState::Connecting(_)) = &mut s.proto {
            *state = StreamState::Failed;
            self.conn_mut(c).sides[side].socket = None;
        }
        self.touched.insert(sock);
    }

    /// Breaks end `side` and tells the other end with a reset.
    fn abort_side(&mut self, c: ConnId, side: usize, at: u64) {
        self.break_side(c, side, NetError::ConnReset, DropReason::Aborted, at);
        self.push_segment(c, side, SegmentKind::Rst, at);
    }
}
