//! What faultline knows about one descriptor of a simulated process: the
//! object a descriptor call acts on, looked up once per call (sys/mod.rs
//! routes by it), kept per process as descriptors open, close and dup.

/// What faultline knows about one descriptor of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdKind {
    /// Regular file, directory or block device: reads never block.
    File,
    /// Pipe, socket, eventfd, tty...: readiness must be probed.
    Pollable,
    /// /dev/urandom or /dev/random: reads are answered from the seed.
    Random,
    /// A file under /proc: its content describes how faultline laid the
    /// process out (its vDSO, the LD_PRELOAD library), so reading it is no
    /// scheduling point (see `proc_read_in_place`).
    Proc,
    /// A placeholder for a virtual socket of the simulated network.
    Socket(crate::sim::netstate::VsId),
    /// A placeholder for one end of a simulated pipe (`sim::pipes`): the
    /// kernel's pipe it stands on is never read or written.
    Pipe(crate::sim::netstate::VsId),
    /// A placeholder for a NETLINK_ROUTE socket answered by the supervisor.
    Netlink,
    /// A timerfd: an eventfd whose counter the supervisor fills from a
    /// virtual timer (`sys::timerfd`), by the timer's id.
    Timer(u32),
    /// A file or directory on a node's simulated disk.
    Disk {
        /// Which disk.
        disk: usize,
        /// Which file on it.
        ino: vfs::Ino,
        /// Opened O_APPEND: writes go to the end.
        append: bool,
    },
}

impl FdKind {
    /// The simulated object behind the descriptor that counts its
    /// descriptors (a virtual socket or a pipe end), so that a dup, fork,
    /// close or exit keeps the count.
    pub fn counted(self) -> Option<crate::sim::netstate::VsId> {
        match self {
            FdKind::Socket(vs) | FdKind::Pipe(vs) => Some(vs),
            _ => None,
        }
    }
}
