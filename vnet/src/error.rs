//! Errors of socket operations, each one a Linux errno.

/// Linux x86_64 errno numbers for the errors vnet reports, so the supervisor
/// can return `-errno` to a tracee without vnet depending on libc.
pub mod errno {
    /// Bad file descriptor (unknown socket).
    pub const EBADF: i32 = 9;
    /// Resource temporarily unavailable (the call would block).
    pub const EAGAIN: i32 = 11;
    /// Invalid argument.
    pub const EINVAL: i32 = 22;
    /// Broken pipe.
    pub const EPIPE: i32 = 32;
    /// Destination address required.
    pub const EDESTADDRREQ: i32 = 89;
    /// Message too long.
    pub const EMSGSIZE: i32 = 90;
    /// Operation not supported on this socket.
    pub const EOPNOTSUPP: i32 = 95;
    /// Address family not supported by protocol.
    pub const EAFNOSUPPORT: i32 = 97;
    /// Address already in use.
    pub const EADDRINUSE: i32 = 98;
    /// Cannot assign requested address.
    pub const EADDRNOTAVAIL: i32 = 99;
    /// Network is unreachable.
    pub const ENETUNREACH: i32 = 101;
    /// Connection reset by peer.
    pub const ECONNRESET: i32 = 104;
    /// Transport endpoint is already connected.
    pub const EISCONN: i32 = 106;
    /// Transport endpoint is not connected.
    pub const ENOTCONN: i32 = 107;
    /// Connection timed out.
    pub const ETIMEDOUT: i32 = 110;
    /// Connection refused.
    pub const ECONNREFUSED: i32 = 111;
    /// Operation already in progress.
    pub const EALREADY: i32 = 114;
}

/// What a socket operation reports instead of succeeding; every variant is
/// exactly one errno, so the supervisor hands `-err.errno()` to the tracee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum NetError {
    /// The socket id is unknown (closed, or its host crashed).
    #[error("bad socket (EBADF)")]
    BadSocket,
    /// Nothing to do now; a blocking caller parks until readiness changes.
    #[error("operation would block (EAGAIN)")]
    WouldBlock,
    /// The call makes no sense in the socket's state (e.g. bind twice).
    #[error("invalid argument (EINVAL)")]
    Invalid,
    /// Writing to a connection that is shut down, reset, or never was.
    #[error("broken pipe (EPIPE)")]
    BrokenPipe,
    /// A datagram was sent without an address on an unconnected socket.
    #[error("destination address required (EDESTADDRREQ)")]
    DestAddrRequired,
    /// A datagram larger than a UDP datagram can be.
    #[error("message too long (EMSGSIZE)")]
    MessageTooLong,
    /// The call is for the other socket kind (e.g. listen on a datagram socket).
    #[error("operation not supported (EOPNOTSUPP)")]
    NotSupported,
    /// An IPv6 address given to an IPv4 socket.
    #[error("address family not supported (EAFNOSUPPORT)")]
    FamilyNotSupported,
    /// Another socket of the host holds the address and port.
    #[error("address in use (EADDRINUSE)")]
    AddrInUse,
    /// The address does not belong to the socket's host.
    #[error("address not available (EADDRNOTAVAIL)")]
    AddrNotAvailable,
    /// The address is not a simulated host: vnet fails closed.
    #[error("network unreachable (ENETUNREACH)")]
    NetUnreachable,
    /// The peer reset the connection (its process died or it aborted).
    #[error("connection reset by peer (ECONNRESET)")]
    ConnReset,
    /// The socket is already connected.
    #[error("already connected (EISCONN)")]
    IsConnected,
    /// The call needs a connected socket.
    #[error("not connected (ENOTCONN)")]
    NotConnected,
    /// A connect or retransmission gave up (e.g. under a partition).
    #[error("connection timed out (ETIMEDOUT)")]
    TimedOut,
    /// Nothing listens at the destination.
    #[error("connection refused (ECONNREFUSED)")]
    ConnRefused,
    /// A connect is already under way on this socket.
    #[error("connection already in progress (EALREADY)")]
    Already,
}

impl NetError {
    /// The Linux errno this error stands for.
    pub fn errno(&self) -> i32 {
        use errno::*;
        match self {
            NetError::BadSocket => EBADF,
            NetError::WouldBlock => EAGAIN,
            NetError::Invalid => EINVAL,
            NetError::BrokenPipe => EPIPE,
            NetError::DestAddrRequired => EDESTADDRREQ,
            NetError::MessageTooLong => EMSGSIZE,
            NetError::NotSupported => EOPNOTSUPP,
            NetError::FamilyNotSupported => EAFNOSUPPORT,
            NetError::AddrInUse => EADDRINUSE,
            NetError::AddrNotAvailable => EADDRNOTAVAIL,
            NetError::NetUnreachable => ENETUNREACH,
            NetError::ConnReset => ECONNRESET,
            NetError::IsConnected => EISCONN,
            NetError::NotConnected => ENOTCONN,
            NetError::TimedOut => ETIMEDOUT,
            NetError::ConnRefused => ECONNREFUSED,
            NetError::Already => EALREADY,
        }
    }
}

/// Result of a socket operation.
pub type Result<T> = std::result::Result<T, NetError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_values_match_linux() {
        assert_eq!(NetError::WouldBlock.errno(), 11);
        assert_eq!(NetError::ConnRefused.errno(), 111);
        assert_eq!(NetError::NetUnreachable.errno(), 101);
        assert_eq!(NetError::BrokenPipe.errno(), 32);
    }
}
