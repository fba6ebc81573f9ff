//! The message log: one entry per message when it is delivered or dropped,
//! which the supervisor drains into the run's timeline.

use serde::Serialize;

use crate::host::HostId;

/// What a logged message was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MessageKind {
    /// A connection request.
    Syn,
    /// A connection acceptance.
    SynAck,
    /// A stream segment of `len` bytes.
    Data {
        /// Payload bytes.
        len: usize,
    },
    /// End of one direction of a stream.
    Fin,
    /// A reset: refused connect, aborted or unknown connection.
    Rst,
    /// A datagram of `len` bytes.
    Datagram {
        /// Payload bytes.
        len: usize,
    },
}

/// Why a message never reached a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum DropReason {
    /// The link lost the datagram (seeded loss probability).
    Loss,
    /// The link was cut by a partition when the message was due.
    Partition,
    /// No socket was bound at the destination.
    NoSocket,
    /// The receiving datagram socket's queue was full.
    BufferFull,
    /// The stream gave up retransmitting it (ETIMEDOUT).
    TimedOut,
    /// The connection was reset or aborted with it still in flight.
    Aborted,
}

/// One message of the timeline: sent by `from` at `sent_at`, and at `at`
/// either delivered to `to` (`dropped` is `None`) or given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NetEvent {
    /// Virtual time the message was sent.
    pub sent_at: u64,
    /// Virtual time it was delivered or dropped.
    pub at: u64,
    /// Sending host.
    pub from: HostId,
    /// Destination host.
    pub to: HostId,
    /// What the message was.
    pub kind: MessageKind,
    /// Why it was not delivered, if it was not.
    pub dropped: Option<DropReason>,
}

/// Collects events when logging is enabled.
pub(crate) struct EventLog {
    enabled: bool,
    events: Vec<NetEvent>,
}

impl EventLog {
    /// A log that records only if `enabled`.
    pub(crate) fn new(enabled: bool) -> EventLog {
        EventLog {
            enabled,
            events: Vec::new(),
        }
    }

    /// Records one event.
    pub(crate) fn record(&mut self, event: NetEvent) {
        if self.enabled {
            self.events.push(event);
        }
    }

    /// Takes all events recorded so far.
    pub(crate) fn drain(&mut self) -> Vec<NetEvent> {
        std::mem::take(&mut self.events)
    }
}
