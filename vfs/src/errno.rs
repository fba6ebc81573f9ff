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
}
