//! Linux errno values the supervisor hands back to the tracee, kept here so
//! vfs needs no libc dependency.

use serde::{Deserialize, Serialize};

/// A Linux errno number that a faulted syscall must fail with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Errno(pub i32);

impl Errno {
    /// I/O error: what Linux reports when writeback or a write fails on the device.
    pub const EIO: Errno = Errno(5);
    /// No space left on device: the usual way a write fails on a full disk.
    pub const ENOSPC: Errno = Errno(28);

    /// The errno's symbolic name, for fault logs (`EIO`, `ENOSPC`, else `errno N`).
    pub fn name(self) -> String {
        match self {
            Errno::EIO => "EIO".into(),
            Errno::ENOSPC => "ENOSPC".into(),
            Errno(n) => format!("errno {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Errno;

    #[test]
    fn names_the_errnos_vfs_injects() {
        assert_eq!(Errno::EIO.name(), "EIO");
        assert_eq!(Errno::ENOSPC.name(), "ENOSPC");
        assert_eq!(Errno(1).name(), "errno 1");
    }
}
