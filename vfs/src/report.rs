//! What a crash did, for the run's timeline and for tests.

use std::path::PathBuf;

use serde::Serialize;

use crate::{CrashModel, DirOp, Ino};

/// Everything a crash decided: per dirty file, per unsynced namespace
/// operation, and the entries a bug switch dropped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrashReport {
    /// The model the crash followed.
    pub model: CrashModel,
    /// Files that had unsynced or dropped changes and still exist after the crash.
    pub files: Vec<FileReport>,
    /// Unsynced namespace operations, in issue order, and whether each survived.
    pub dir_ops: Vec<DirOpReport>,
    /// Entries removed by the `lose_dir_entries` bug switch.
    pub dropped_entries: Vec<PathBuf>,
}

/// What survived of one file's unsynced changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// The file's path after the crash.
    pub path: PathBuf,
    /// The file's inode.
    pub ino: Ino,
    /// Unsynced changes (writes, truncations) that survived whole.
    pub kept_changes: usize,
    /// Unsynced changes lost whole.
    pub lost_changes: usize,
    /// Changes lost because a failed or lying fsync had dropped them.
    pub dropped_changes: usize,
    /// The write that survived only in part, if any.
    pub torn: Option<TornWrite>,
    /// Size before the crash.
    pub len_before: u64,
    /// Size after the crash.
    pub len_after: u64,
}

/// A write of which only its first sectors persisted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TornWrite {
    /// File offset of the write.
    pub offset: u64,
    /// Bytes the write had.
    pub len: u64,
    /// Leading bytes that persisted (ends on a sector boundary or at the write's end).
    pub persisted: u64,
}

/// The fate of one unsynced namespace operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirOpReport {
    /// The operation.
    pub op: DirOp,
    /// Whether it survived; false means it was reverted.
    pub survived: bool,
}
