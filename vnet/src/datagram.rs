//! Datagram (UDP) sockets: each datagram travels on its own, with its own
//! delay draw (so datagrams reorder), loss draw and duplication draw (a
//! duplicate travels with a delay of its own).

use std::collections::VecDeque;
use std::net::{SocketAddr, SocketAddrV4};

use crate::addr::{present, to_v4};
use crate::error::{NetError, Result};
use crate::event::{DropReason, MessageKind, NetEvent};
use crate::host::HostId;
use crate::socket::{ConnectProgress, Proto, Readiness, Received, Shutdown, SocketId};
use crate::{Event, Network};

/// Largest UDP payload over IPv4.
const MAX_DATAGRAM: usize = 65507;

/// A received datagram waiting to be read.
struct Queued {
    from: SocketAddrV4,
    data: Vec<u8>,
}

/// State of a datagram socket.
#[derive(Default)]
pub(crate) struct DgramState {
    queue: VecDeque<Queued>,
    queued_bytes: usize,
    /// Default destination and only accepted source, once connected.
    peer: Option<SocketAddrV4>,
    shut_rd: bool,
    shut_wr: bool,
}

impl DgramState {
    /// Poll state, as Linux's `udp_poll`: always writable.
    pub(crate) fn readiness(&self, err: bool) -> Readiness {
        Readiness {
            readable: !self.queue.is_empty() || self.shut_rd || err,
            writable: true,
            hup: self.shut_rd && self.shut_wr,
            rdhup: self.shut_rd,
            err,
        }
    }

    /// Size of the next datagram (FIONREAD).
    pub(crate) fn pending(&self) -> usize {
        self.queue.front().map_or(0, |q| q.data.len())
    }

    /// The connected peer.
    pub(crate) fn peer(&self) -> Result<SocketAddrV4> {
        self.peer.ok_or(NetError::NotConnected)
    }
}

/// A datagram on its way (cloned when a link delivers it twice).
#[derive(Clone)]
pub(crate) struct InFlight {
    from: HostId,
    to: HostId,
    src: SocketAddrV4,
    dst: SocketAddrV4,
    data: Vec<u8>,
    sent_at: u64,
    lost: bool,
    sender: SocketId,
}

impl Network {
    /// The datagram state of `sock`; EOPNOTSUPP for a stream socket.
    fn dgram_mut(&mut self, sock: SocketId) -> Result<&mut DgramState> {
        match &mut self.sock_mut(sock)?.proto {
            Proto::Dgram(d) => Ok(d),
            Proto::Stream(_) | Proto::Listener(_) => Err(NetError::NotSupported),
        }
    }

    /// Sets the default destination (and the only accepted source).
    pub(crate) fn dgram_connect(
        &mut self,
        sock: SocketId,
        addr: SocketAddr,
    ) -> Result<ConnectProgress> {
        let dst = to_v4(addr, self.sock(sock)?.domain)?;
        let route = self.route(sock, dst)?;
        self.sock_mut(sock)?.local = Some(route.src);
        self.dgram_mut(sock)?.peer = Some(route.dst);
        Ok(ConnectProgress::Connected)
    }

    /// Sends one datagram to `to`, or to the connected peer.
    pub(crate) fn dgram_send(
        &mut self,
        sock: SocketId,
        data: &[u8],
        to: Option<SocketAddr>,
        now: u64,
    ) -> Result<usize> {
        let s = self.sock_mut(sock)?;
        let (host, domain) = (s.host, s.domain);
        let Proto::Dgram(d) = &s.proto else {
            return Err(NetError::NotSupported);
        };
        if d.shut_wr {
            return Err(NetError::BrokenPipe);
        }
        let peer = d.peer;
        s.check_error()?;
        let dst = match to {
            Some(addr) => to_v4(addr, domain)?,
            None => peer.ok_or(NetError::DestAddrRequired)?,
        };
        if data.len() > MAX_DATAGRAM {
            return Err(NetError::MessageTooLong);
        }
        let route = self.route(sock, dst)?;
        let lost = self.links.lost(host, route.to);
        let delay = self.links.delay(host, route.to);
        let datagram = InFlight {
            from: host,
            to: route.to,
            src: route.src,
            dst: route.dst,
            data: data.to_vec(),
            sent_at: now,
            lost,
            sender: sock,
        };
        if !lost && self.links.duplicated(host, route.to) {
            let again = self.links.delay(host, route.to);
            let copy = Box::new(datagram.clone());
            self.agenda.schedule(now + again, Event::Datagram(copy));
        }
        self.agenda
            .schedule(now + delay, Event::Datagram(Box::new(datagram)));
        Ok(data.len())
    }

    /// Takes (or peeks at) the next datagram, truncated to `max` bytes.
    pub(crate) fn dgram_recv(
        &mut self,
        sock: SocketId,
        max: usize,
        peek: bool,
    ) -> Result<Received> {
        let s = self.sock_mut(sock)?;
        s.check_error()?;
        let domain = s.domain;
        let Proto::Dgram(d) = &mut s.proto else {
            return Err(NetError::NotSupported);
        };
        let Some(next) = d.queue.front() else {
            return if d.shut_rd {
                Ok(Received::default())
            } else {
                Err(NetError::WouldBlock)
            };
        };
        let received = Received {
            data: next.data[..max.min(next.data.len())].to_vec(),
            from: Some(present(next.from, domain)),
            full_len: next.data.len(),
        };
        if !peek {
            d.queue.pop_front();
            d.queued_bytes -= received.full_len;
        }
        Ok(received)
    }

    /// Closes directions of a datagram socket; like Linux, the flags take
    /// effect even on an unconnected socket, which still reports ENOTCONN.
    pub(crate) fn dgram_shutdown(&mut self, sock: SocketId, how: Shutdown) -> Result<()> {
        let d = self.dgram_mut(sock)?;
        d.shut_rd |= how.reads();
        d.shut_wr |= how.writes();
        let connected = d.peer.is_some();
        self.touched.insert(sock);
        if connected {
            Ok(())
        } else {
            Err(NetError::NotConnected)
        }
    }

    /// A datagram reached its due time: deliver it or log why not.
    pub(crate) fn arrive_datagram(&mut self, datagram: InFlight, at: u64) {
        let mut event = NetEvent {
            sent_at: datagram.sent_at,
            at,
            from: datagram.from,
            to: datagram.to,
            kind: MessageKind::Datagram {
                len: datagram.data.len(),
            },
            dropped: None,
        };
        event.dropped = if datagram.lost {
            Some(DropReason::Loss)
        } else if self.links.is_cut(datagram.from, datagram.to) {
            Some(DropReason::Partition)
        } else {
            self.enqueue(datagram).err()
        };
        self.log.record(event);
    }

    /// Puts an arrived datagram into the receiving socket's queue.
    fn enqueue(&mut self, datagram: InFlight) -> std::result::Result<(), DropReason> {
        let capacity = self.config.dgram_recv_buffer;
        let receiver = self.hosts[datagram.to.index()].find_dgram(datagram.dst);
        let Some(receiver) = receiver else {
            self.port_unreachable(&datagram);
            return Err(DropReason::NoSocket);
        };
        let d = self
            .dgram_mut(receiver)
            .expect("bound datagram socket exists");
        if d.peer.is_some_and(|p| p != datagram.src) {
            return Err(DropReason::NoSocket);
        }
        if d.queued_bytes + datagram.data.len() > capacity {
            return Err(DropReason::BufferFull);
        }
        d.queued_bytes += datagram.data.len();
        d.queue.push_back(Queued {
            from: datagram.src,
            data: datagram.data,
        });
        self.touched.insert(receiver);
        Ok(())
    }

    /// Nothing was bound at the destination: a sender connected to it gets
    /// ECONNREFUSED, as Linux reports the ICMP port-unreachable.
    fn port_unreachable(&mut self, datagram: &InFlight) {
        let Ok(d) = self.dgram_mut(datagram.sender) else {
            return;
        };
        if d.peer == Some(datagram.dst) {
            self.sock_mut(datagram.sender).expect("sender exists").error =
                Some(NetError::ConnRefused);
            self.touched.insert(datagram.sender);
        }
    }
}
