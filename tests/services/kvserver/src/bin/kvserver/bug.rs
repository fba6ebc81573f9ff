//! The `--bug` switches: each cuts one corner that real storage code gets
//! wrong and that only a crash (or an fsync error) exposes. Natively they
//! all appear to work; under faultline's simulated disk each loses an
//! acknowledged put within the first few seeds.

use std::fmt;
use std::str::FromStr;

/// A deliberate durability bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    /// Ack a put right after write(); a background thread fdatasyncs the
    /// log every 5 ms. A crash in between loses acknowledged puts.
    AckBeforeFsync,
    /// Never fsync the data directory, so the creation of `wal.log` (and
    /// the rename that recovery does) is not durable: a crash can take the
    /// whole log, with every acknowledged put in it.
    NoDirFsync,
    /// On an fdatasync error, retry until one succeeds and then ack. Linux
    /// drops the dirty pages when writeback fails, so the retry "succeeds"
    /// without the data ever reaching the disk.
    IgnoreFsyncError,
}

impl FromStr for Bug {
    type Err = String;

    fn from_str(name: &str) -> Result<Bug, String> {
        match name {
            "ack-before-fsync" => Ok(Bug::AckBeforeFsync),
            "no-dir-fsync" => Ok(Bug::NoDirFsync),
            "ignore-fsync-error" => Ok(Bug::IgnoreFsyncError),
            _ => Err(format!(
                "unknown bug {name:?} (ack-before-fsync, no-dir-fsync, ignore-fsync-error)"
            )),
        }
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bug::AckBeforeFsync => "ack-before-fsync",
            Bug::NoDirFsync => "no-dir-fsync",
            Bug::IgnoreFsyncError => "ignore-fsync-error",
        })
    }
}
