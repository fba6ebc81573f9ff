//! Stream transport: a connection's two ends and the two lanes that carry
//! its segments in order, with per-segment delay, retransmission of the
//! segments a lossy link loses (later, never lost), holding and
//! retransmission under partitions, and the retransmit timeout.

use std::collections::VecDeque;
use std::net::SocketAddrV4;

use crate::agenda::Ticket;
use crate::error::NetError;
use crate::event::{DropReason, MessageKind, NetEvent};
use crate::host::HostId;
use crate::socket::SocketId;
use crate::{Event, Network};

/// Index of the connecting end in [`Connection::sides`] and of its lane.
pub(crate) const CLIENT: usize = 0;
/// Index of the accepting end.
pub(crate) const SERVER: usize = 1;

/// Identifies a connection inside the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ConnId(pub(crate) u64);

/// What a segment carries.
pub(crate) enum SegmentKind {
    Syn,
    SynAck,
    Data(Vec<u8>),
    Fin,
    Rst,
}

impl SegmentKind {
    /// How the segment appears in the message log.
    fn message(&self) -> MessageKind {
        match self {
            SegmentKind::Syn => MessageKind::Syn,
            SegmentKind::SynAck => MessageKind::SynAck,
            SegmentKind::Data(bytes) => MessageKind::Data { len: bytes.len() },
            SegmentKind::Fin => MessageKind::Fin,
            SegmentKind::Rst => MessageKind::Rst,
        }
    }
}

/// A segment on its way.
pub(crate) struct Segment {
    pub(crate) kind: SegmentKind,
    sent_at: u64,
    due: u64,
    /// A lossy link lost every transmission until the retransmit timeout
    /// was spent: at `due` the sender gives up (ETIMEDOUT); or it lost this
    /// reset, which is never sent again.
    expired: bool,
}

/// The segments from one end to the other, in send order. Due times never
/// decrease along a lane, so delivery preserves order; a lane has a wake-up
/// scheduled exactly when it is non-empty (outside of its own processing).
#[derive(Default)]
pub(crate) struct Lane {
    queue: VecDeque<Segment>,
    last_due: u64,
    wake: Option<Ticket>,
    stalled_since: Option<u64>,
}

/// One end of a connection: where it is, and what it knows of the stream.
pub(crate) struct Side {
    pub(crate) host: HostId,
    pub(crate) addr: SocketAddrV4,
    /// The socket of this end; `None` before the SYN arrives (server end)
    /// and after the socket is closed or failed.
    pub(crate) socket: Option<SocketId>,
    /// Received bytes not read yet.
    pub(crate) recv: VecDeque<u8>,
    pub(crate) fin_received: bool,
    pub(crate) shut_rd: bool,
    pub(crate) fin_sent: bool,
    /// The connection is gone for this end (RST, timeout, abort): it sends
    /// nothing more and answers segments with RST.
    pub(crate) reset: bool,
    /// Bytes this end sent that the other end has not read: what fills the
    /// send buffer.
    pub(crate) unread_by_peer: usize,
}

impl Side {
    /// An end at `addr` on `host`.
    pub(crate) fn new(host: HostId, addr: SocketAddrV4, socket: Option<SocketId>) -> Side {
        Side {
            host,
            addr,
            socket,
            recv: VecDeque::new(),
            fin_received: false,
            shut_rd: false,
            fin_sent: false,
            reset: false,
            unread_by_peer: 0,
        }
    }

    /// Whether reads end at the end of the buffer (peer's FIN or SHUT_RD).
    pub(crate) fn read_closed(&self) -> bool {
        self.fin_received || self.shut_rd
    }
}

/// A stream connection between two ends.
pub(crate) struct Connection {
    pub(crate) sides: [Side; 2],
    lanes: [Lane; 2],
    /// Fires ETIMEDOUT if the connect is still pending.
    pub(crate) connect_timer: Option<Ticket>,
}

impl Connection {
    /// A connection from `client` to `server` with nothing sent yet.
    pub(crate) fn new(client: Side, server: Side) -> Connection {
        Connection {
            sides: [client, server],
            lanes: Default::default(),
            connect_timer: None,
        }
    }

    /// Whether nothing can happen on it any more: no socket, nothing in flight.
    fn idle(&self) -> bool {
        self.sides.iter().all(|s| s.socket.is_none())
            && self.lanes.iter().all(|l| l.queue.is_empty())
    }
}

impl Network {
    /// The connection `c`, which the caller knows to exist.
    pub(crate) fn conn_mut(&mut self, c: ConnId) -> &mut Connection {
        self.conns.get_mut(&c).expect("connection exists")
    }

    /// Sends a segment from end `from` of `c` at `now`.
    pub(crate) fn push_segment(&mut self, c: ConnId, from: usize, kind: SegmentKind, now: u64) {
        let conn = self.conns.get(&c).expect("connection exists");
        let (src, dst) = (conn.sides[from].host, conn.sides[1 - from].host);
        let delay = self.links.delay(src, dst);
        // Resets are not retransmitted: a lossy link loses them.
        let (resent, expired) = match kind {
            SegmentKind::Rst => (0, self.links.segment_lost(src, dst)),
            _ => self.retransmissions(src, dst),
        };
        let lane = &mut self.conn_mut(c).lanes[from];
        let due = (now + delay + resent).max(lane.last_due);
        lane.last_due = due;
        lane.queue.push_back(Segment {
            kind,
            sent_at: now,
            due,
            expired,
        });
        if lane.wake.is_none() {
            self.schedule_lane(c, from, due);
        }
    }

    /// How much later a segment arrives because the link lost transmissions
    /// of it: each lost one is sent again after the retransmission timeout,
    /// which doubles every time (as TCP backs off). True once the retransmit
    /// timeout is spent: the sender gives up then.
    fn retransmissions(&mut self, src: HostId, dst: HostId) -> (u64, bool) {
        let (mut waited, mut rto) = (0u64, self.config.retransmit_interval);
        let limit = self.config.retransmit_timeout;
        while self.links.segment_lost(src, dst) {
            waited = waited.saturating_add(rto);
            rto = rto.saturating_mul(2);
            if waited >= limit {
                return (limit, true);
            }
        }
        (waited, false)
    }

    fn schedule_lane(&mut self, c: ConnId, dir: usize, at: u64) {
        let ticket = self.agenda.schedule(at, Event::Lane(c, dir));
        self.conn_mut(c).lanes[dir].wake = Some(ticket);
    }

    /// Drops everything end `dir` of `c` has in flight, logging it as `reason`.
    pub(crate) fn purge_lane(&mut self, c: ConnId, dir: usize, at: u64, reason: DropReason) {
        let conn = self.conns.get_mut(&c).expect("connection exists");
        let (from, to) = (conn.sides[dir].host, conn.sides[1 - dir].host);
        let lane = &mut conn.lanes[dir];
        if let Some(ticket) = lane.wake.take() {
            self.agenda.cancel(ticket);
        }
        lane.stalled_since = None;
        for seg in lane.queue.drain(..) {
            self.log.record(NetEvent {
                sent_at: seg.sent_at,
                at,
                from,
                to,
                kind: seg.kind.message(),
                dropped: Some(reason),
            });
        }
    }

    /// Handles the wake-up of lane `dir` of `c` at `t`: delivers every due
    /// segment in order while the link is up; holds the head otherwise.
    pub(crate) fn run_lane(&mut self, c: ConnId, dir: usize, t: u64) {
        let conn = self.conn_mut(c);
        conn.lanes[dir].wake = None;
        let (from, to) = (conn.sides[dir].host, conn.sides[1 - dir].host);
        loop {
            let lane = &mut self.conn_mut(c).lanes[dir];
            let Some(due) = lane.queue.front().map(|s| s.due) else {
                return;
            };
            if due > t {
                return self.schedule_lane(c, dir, due);
            }
            let seg = lane.queue.pop_front().expect("lane has a head");
            let event = NetEvent {
                sent_at: seg.sent_at,
                at: t,
                from,
                to,
                kind: seg.kind.message(),
                dropped: None,
            };
            if seg.expired {
                if matches!(seg.kind, SegmentKind::Rst) {
                    self.log.record(NetEvent {
                        dropped: Some(DropReason::Loss),
                        ..event
                    });
                    continue;
                }
                lane.queue.push_front(seg);
                return self.break_side(c, dir, NetError::TimedOut, DropReason::TimedOut, t);
            }
            if self.links.is_cut(from, to) {
                if matches!(seg.kind, SegmentKind::Rst) {
                    // Resets are not retransmitted: a cut link loses them.
                    self.log.record(NetEvent {
                        dropped: Some(DropReason::Partition),
                        ..event
                    });
                    continue;
                }
                return self.hold(c, dir, seg, t);
            }
            if let Some(seg) = self.arrive(c, 1 - dir, seg, t) {
                return self.hold(c, dir, seg, t);
            }
            self.conn_mut(c).lanes[dir].stalled_since = None;
            self.log.record(event);
        }
    }

    /// Puts an undeliverable head back and schedules the next attempt, or
    /// fails the sender with ETIMEDOUT once it has been stuck for the
    /// retransmit timeout. SYNs are bounded by the connect timeout instead.
    fn hold(&mut self, c: ConnId, dir: usize, seg: Segment, t: u64) {
        let interval = self.config.retransmit_interval;
        let timeout = self.config.retransmit_timeout;
        let is_syn = matches!(seg.kind, SegmentKind::Syn);
        let lane = &mut self.conn_mut(c).lanes[dir];
        lane.queue.push_front(seg);
        let since = *lane.stalled_since.get_or_insert(t);
        if is_syn {
            self.schedule_lane(c, dir, t + interval);
        } else if t >= since + timeout {
            self.break_side(c, dir, NetError::TimedOut, DropReason::TimedOut, t);
        } else {
            self.schedule_lane(c, dir, (t + interval).min(since + timeout));
        }
    }

    /// Forgets `c` once nothing can happen on it any more.
    pub(crate) fn reap(&mut self, c: ConnId) {
        if self.conns.get(&c).is_some_and(Connection::idle) {
            self.conns.remove(&c);
        }
    }
}
