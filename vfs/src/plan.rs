//! The seeded choices of a crash: how many unsynced changes of each file and
//! of the namespace survive, and how many sectors of the first lost write.

use std::collections::BTreeMap;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::{CrashModel, DiskConfig, Ino};

/// An unsynced change as the planner sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    /// Position in the disk-wide order of data changes.
    pub seq: u64,
    /// Sectors the change spans (1 means it cannot tear).
    pub sectors: u64,
}

/// What survives of one file: the first `keep` changes in full, then the
/// first `torn_sectors` sectors of the next one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Cut {
    pub keep: usize,
    pub torn_sectors: u64,
}

/// Chooses each dirty file's cut. `files` lists each file's pending changes in order.
pub(crate) fn plan_data(
    config: &DiskConfig,
    rng: &mut ChaCha8Rng,
    files: &BTreeMap<Ino, Vec<Candidate>>,
) -> BTreeMap<Ino, Cut> {
    match config.crash_model {
        CrashModel::Strict => files.keys().map(|&ino| (ino, Cut::default())).collect(),
        CrashModel::Seeded if config.reorder_across_files => files
            .iter()
            .map(|(&ino, changes)| {
                let keep = rng.gen_range(0..=changes.len());
                let torn_sectors = changes.get(keep).map_or(0, |next| tear(rng, next.sectors));
                (ino, Cut { keep, torn_sectors })
            })
            .collect(),
        CrashModel::Seeded => global_prefix(rng, files),
    }
}

/// Without reordering: one prefix of the disk-wide order survives, and only
/// the change right after it may tear.
fn global_prefix(
    rng: &mut ChaCha8Rng,
    files: &BTreeMap<Ino, Vec<Candidate>>,
) -> BTreeMap<Ino, Cut> {
    let mut order: Vec<u64> = files.values().flatten().map(|c| c.seq).collect();
    order.sort_unstable();
    let keep = rng.gen_range(0..=order.len());
    let cutoff = order.get(keep).copied().unwrap_or(u64::MAX);
    files
        .iter()
        .map(|(&ino, changes)| {
            let keep = changes.partition_point(|c| c.seq < cutoff);
            let torn_sectors = match changes.get(keep) {
                Some(next) if next.seq == cutoff => tear(rng, next.sectors),
                _ => 0,
            };
            (ino, Cut { keep, torn_sectors })
        })
        .collect()
}

/// How many leading sectors of a lost change still reach the platter (0: none).
fn tear(rng: &mut ChaCha8Rng, sectors: u64) -> u64 {
    if sectors > 1 {
        rng.gen_range(0..sectors)
    } else {
        0
    }
}

/// Chooses how many of `count` unsynced namespace operations survive.
pub(crate) fn plan_dirs(model: CrashModel, rng: &mut ChaCha8Rng, count: usize) -> usize {
    match model {
        CrashModel::Strict => 0,
        CrashModel::Seeded => rng.gen_range(0..=count),
    }
}
