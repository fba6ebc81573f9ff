//! What every simulated socket has, whatever its kind: owner host, family,
//! local address, options and pending error.

use std::collections::BTreeMap;
use std::net::{SocketAddr, SocketAddrV4};

use crate::addr::Domain;
use crate::datagram::DgramState;
use crate::error::NetError;
use crate::host::HostId;
use crate::stream::{Listener, StreamState};

/// `SOL_SOCKET`, the option level vnet interprets options of.
pub const SOL_SOCKET: i32 = 1;
/// `SO_REUSEADDR`: a non-zero value lets binds share a port as Linux does.
pub const SO_REUSEADDR: i32 = 2;

/// Opaque handle of a simulated socket; the supervisor maps a tracee's
/// placeholder fd to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SocketId(u64);

impl SocketId {
    /// Wraps a raw id (vnet hands them out in increasing order).
    pub(crate) fn new(raw: u64) -> SocketId {
        SocketId(raw)
    }
}

/// Socket type: a reliable ordered stream (TCP) or datagrams (UDP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// SOCK_STREAM.
    Stream,
    /// SOCK_DGRAM.
    Dgram,
}

/// Which direction `shutdown(2)` closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// SHUT_RD.
    Read,
    /// SHUT_WR.
    Write,
    /// SHUT_RDWR.
    Both,
}

impl Shutdown {
    /// Whether the receive direction is closed.
    pub(crate) fn reads(self) -> bool {
        matches!(self, Shutdown::Read | Shutdown::Both)
    }

    /// Whether the send direction is closed.
    pub(crate) fn writes(self) -> bool {
        matches!(self, Shutdown::Write | Shutdown::Both)
    }
}

/// What poll/epoll would report for a socket, with Linux semantics; the
/// supervisor translates it to `POLLIN`/`POLLOUT`/`POLLHUP`/`POLLRDHUP`/`POLLERR`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Readiness {
    /// A read or accept would not block.
    pub readable: bool,
    /// A write would not block.
    pub writable: bool,
    /// Both directions are closed, or the connection is gone.
    pub hup: bool,
    /// The receive direction is closed (peer's FIN, or own SHUT_RD).
    pub rdhup: bool,
    /// An error is pending (SO_ERROR would return it).
    pub err: bool,
}

/// A socket whose readiness may have changed since the last
/// [`crate::Network::advance`]: the supervisor re-checks threads parked on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Change {
    /// The socket (possibly one not accepted yet, which no fd names).
    pub socket: SocketId,
    /// Its readiness now.
    pub readiness: Readiness,
}

/// Per-kind state of a socket; a listening stream socket is its own case
/// because it carries an accept queue instead of a connection.
pub(crate) enum Proto {
    Stream(StreamState),
    Listener(Listener),
    Dgram(DgramState),
}

/// A simulated socket.
pub(crate) struct Socket {
    pub(crate) host: HostId,
    pub(crate) domain: Domain,
    /// Options as set by the tracee, keyed by (level, name).
    pub(crate) options: BTreeMap<(i32, i32), Vec<u8>>,
    /// Bound or connected local address; `None` until bound.
    pub(crate) local: Option<SocketAddrV4>,
    /// The error SO_ERROR reports (and the next operation returns).
    pub(crate) error: Option<NetError>,
    pub(crate) proto: Proto,
}

impl Socket {
    /// A fresh, unbound socket.
    pub(crate) fn new(host: HostId, domain: Domain, proto: Proto) -> Socket {
        Socket {
            host,
            domain,
            options: BTreeMap::new(),
            local: None,
            error: None,
            proto,
        }
    }

    /// The socket's type.
    pub(crate) fn kind(&self) -> Kind {
        match self.proto {
            Proto::Stream(_) | Proto::Listener(_) => Kind::Stream,
            Proto::Dgram(_) => Kind::Dgram,
        }
    }

    /// Whether SO_REUSEADDR is set to a non-zero value.
    pub(crate) fn reuse_addr(&self) -> bool {
        self.options
            .get(&(SOL_SOCKET, SO_REUSEADDR))
            .is_some_and(|v| v.iter().any(|&b| b != 0))
    }

    /// Fails with the pending error, consuming it, if there is one.
    pub(crate) fn check_error(&mut self) -> crate::error::Result<()> {
        self.error.take().map_or(Ok(()), Err)
    }
}

/// Whether a connect finished at once (datagram sockets) or continues in the
/// background (streams: wait for writability, then read SO_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectProgress {
    /// The SYN is on its way (the caller's EINPROGRESS).
    InProgress,
    /// The socket is connected.
    Connected,
}

/// What a receive returned. For a stream, empty `data` with `max > 0`
/// means end of stream, as `read(2)` returning 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Received {
    /// The bytes (at most the `max` asked for).
    pub data: Vec<u8>,
    /// The sender, for datagrams.
    pub from: Option<SocketAddr>,
    /// Length of the whole datagram before truncation to `max` (for
    /// MSG_TRUNC); for a stream, `data.len()`.
    pub full_len: usize,
}

impl Received {
    /// Stream bytes.
    pub(crate) fn bytes(data: Vec<u8>) -> Received {
        Received {
            full_len: data.len(),
            data,
            from: None,
        }
    }
}
