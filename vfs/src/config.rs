//! How strict a crash is, which faults fire, and the bug switches: the knobs a
//! scenario sets per node.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What a crash keeps of the changes that were never made durable (a
/// scenario's `[disk] unsynced`, named as there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashModel {
    /// Lose everything not synced, directory operations too: the POSIX
    /// worst case, for deterministic tests.
    LoseAll,
    /// Keep a seeded prefix of each file's unsynced writes, whole: a file
    /// system that never tears a write.
    Prefix,
    /// Keep a seeded prefix of the unsynced changes, possibly tearing the next
    /// write at a sector boundary, as the ALICE study observed on real file systems.
    #[default]
    PrefixTorn,
    /// Keep a seeded subset of each file's unsynced writes, each one
    /// independently: writes reach the platter out of order (a later write
    /// survives, an earlier one is lost, its bytes read as zeros or old data).
    Subset,
}

impl CrashModel {
    /// Every model, by its scenario name, for parsing and error messages.
    pub const ALL: [(&'static str, CrashModel); 4] = [
        ("lose_all", CrashModel::LoseAll),
        ("prefix", CrashModel::Prefix),
        ("prefix_torn", CrashModel::PrefixTorn),
        ("subset", CrashModel::Subset),
    ];
}

/// Per-disk settings; `Default` is the honest seeded disk without faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskConfig {
    /// What a crash keeps of unsynced changes.
    pub crash_model: CrashModel,
    /// Prefix models only: each file keeps its own prefix of unsynced writes
    /// (writes to different files persist out of order). When false, one
    /// prefix of the disk-wide write order is kept.
    pub reorder_across_files: bool,
    /// Chance that an fsync fails with EIO (dropping the file's dirty data).
    pub fsync_eio_probability: f64,
    /// Chance that a write fails with ENOSPC.
    pub write_enospc_probability: f64,
    /// Chance that a write fails with EIO.
    pub write_eio_probability: f64,
    /// Bug switch: file fsyncs (and the data part of sync/syncfs) report
    /// success but persist nothing, so a crash loses the acknowledged data.
    /// Directory fsyncs stay honest.
    pub lying_fsync: bool,
    /// Bug switch: on crash, every entry of these directories (paths relative
    /// to the disk root) is dropped from the durable state, synced or not.
    pub lose_dir_entries: Vec<PathBuf>,
    /// Metadata is journaled in order, as ext4 and xfs do: any successful
    /// fsync (of a file or a directory) also makes every earlier directory
    /// operation durable. Off by default: then only an fsync of a directory
    /// makes its own entries durable (what POSIX promises).
    pub ordered_metadata: bool,
    /// The disk is full: every write fails with ENOSPC (a `disk_full` fault).
    pub full: bool,
}

impl Default for DiskConfig {
    fn default() -> Self {
        DiskConfig {
            crash_model: CrashModel::default(),
            reorder_across_files: true,
            fsync_eio_probability: 0.0,
            write_enospc_probability: 0.0,
            write_eio_probability: 0.0,
            lying_fsync: false,
            ordered_metadata: false,
            lose_dir_entries: Vec::new(),
            full: false,
        }
    }
}
