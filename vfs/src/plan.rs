//! The seeded choices of a crash: which unsynced changes of each file and
//! how many of the namespace survive, and how many sectors of the first
//! lost write.

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

/// What survives of one file: the changes whose flag is set, in full, and
/// the first `torn_sectors` sectors of the first change that is not.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cut {
    pub kept: Vec<bool>,
    pub torn_sectors: u64,
}

impl Cut {
    /// The first `keep` of `len` changes survive.
    fn prefix(keep: usize, len: usize, torn_sectors: u64) -> Cut {
        Cut {
            kept: (0..len).map(|i| i < keep).collect(),
            torn_sectors,
        }
    }
}

/// Chooses each dirty file's cut. `files` lists each file's pending changes in order.
pub(crate) fn plan_data(
    config: &DiskConfig,
    rng: &mut ChaCha8Rng,
    files: &BTreeMap<Ino, Vec<Candidate>>,
) -> BTreeMap<Ino, Cut> {
    let torn = config.crash_model == CrashModel::PrefixTorn;
    match config.crash_model {
        CrashModel::LoseAll => files
            .iter()
            .map(|(&ino, changes)| (ino, Cut::prefix(0, changes.len(), 0)))
            .collect(),
        CrashModel::Subset => files
            .iter()
            .map(|(&ino, changes)| {
                let kept = changes.iter().map(|_| rng.gen_bool(0.5)).collect();
                (
                    ino,
                    Cut {
                        kept,
                        torn_sectors: 0,
                    },
                )
            })
            .collect(),
        CrashModel::Prefix | CrashModel::PrefixTorn if config.reorder_across_files => files
            .iter()
            .map(|(&ino, changes)| {
                let keep = rng.gen_range(0..=changes.len());
                let torn_sectors = match changes.get(keep) {
                    Some(next) if torn => tear(rng, next.sectors),
                    _ => 0,
                };
                (ino, Cut::prefix(keep, changes.len(), torn_sectors))
            })
            .collect(),
        CrashModel::Prefix | CrashModel::PrefixTorn => global_prefix(rng, files, torn),
    }
}

/// Without reordering: one prefix of the disk-wide order survives, and only
/// the change right after it may tear (if `torn`).
fn global_prefix(
    rng: &mut ChaCha8Rng,
    files: &BTreeMap<Ino, Vec<Candidate>>,
    torn: bool,
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
                Some(next) if torn && next.seq == cutoff => tear(rng, next.sectors),
                _ => 0,
            };
            (ino, Cut::prefix(keep, changes.len(), torn_sectors))
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
        CrashModel::LoseAll => 0,
        CrashModel::Prefix | CrashModel::PrefixTorn | CrashModel::Subset => {
            rng.gen_range(0..=count)
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// One file with ten two-sector writes.
    fn ten_writes() -> BTreeMap<Ino, Vec<Candidate>> {
        let changes = (0..10).map(|seq| Candidate { seq, sectors: 2 }).collect();
        BTreeMap::from([(Ino(1), changes)])
    }

    /// The cut of `model` for each of 64 seeds.
    fn cuts(model: CrashModel) -> Vec<Cut> {
        let config = DiskConfig {
            crash_model: model,
            ..DiskConfig::default()
        };
        (0..64)
            .map(|seed| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                plan_data(&config, &mut rng, &ten_writes())[&Ino(1)].clone()
            })
            .collect()
    }

    fn is_prefix(kept: &[bool]) -> bool {
        kept.windows(2).all(|w| w[0] || !w[1])
    }

    #[test]
    fn each_model_keeps_what_it_says() {
        assert!(cuts(CrashModel::LoseAll)
            .iter()
            .all(|c| c.kept.iter().all(|k| !k) && c.torn_sectors == 0));
        let prefix = cuts(CrashModel::Prefix);
        assert!(prefix
            .iter()
            .all(|c| is_prefix(&c.kept) && c.torn_sectors == 0));
        let torn = cuts(CrashModel::PrefixTorn);
        assert!(torn.iter().all(|c| is_prefix(&c.kept)));
        assert!(torn.iter().any(|c| c.torn_sectors > 0), "some write tears");
        let subset = cuts(CrashModel::Subset);
        assert!(subset.iter().all(|c| c.torn_sectors == 0));
        assert!(
            subset.iter().any(|c| !is_prefix(&c.kept)),
            "some later write survives an earlier lost one"
        );
    }
}
