//! Which seeds a `faultline run` runs, so that seed sets can be passed
//! around and spread over machines: the scenario's own seeds (derived from
//! its name), the seeds of an explored base (`--explore`), or a list read
//! from a file (`--seed-list`); pinned seeds first; and the slice of them
//! this machine runs when the seeds are sharded (`--shard`, `--shard-count`
//! with a Kubernetes, CI or Slurm array index).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::cmd::cli::{parse_seed, Explore, RunArgs};
use crate::scenario::{self, Scenario};

/// The index of a Kubernetes Indexed Job's pod (and of a CI matrix job that sets it).
const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// The index of a Slurm array task (`sbatch --array=0-3`).
const SLURM_INDEX: &str = "SLURM_ARRAY_TASK_ID";
/// The smallest index of the Slurm array (`--array=1-4` starts at 1).
const SLURM_MIN: &str = "SLURM_ARRAY_TASK_MIN";
/// How many tasks the Slurm array has.
const SLURM_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";

/// Why no seed set could be made; each is bad input (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SeedsError {
    /// The seed list file cannot be read.
    #[error("seed list {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A line of the seed list is not a seed.
    #[error("{path}:{line}: {text:?} is not a seed (one decimal or 0x-hex seed per line, # starts a comment)")]
    BadLine {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// The line as written.
        text: String,
    },
    /// The seed list has no seed in it.
    #[error("seed list {0}: no seeds in it")]
    Empty(PathBuf),
    /// `--shard-count` without an index to take.
    #[error("--shard-count needs ${K8S_INDEX} (Kubernetes Indexed Job, CI matrix) or ${SLURM_INDEX} (sbatch --array)")]
    NoIndex,
    /// An index variable that is not a number.
    #[error("${0} is {1:?}, not a number")]
    BadIndex(&'static str, String),
    /// The index is not below the shard count: the engine runs more tasks
    /// than there are shards.
    #[error(
        "${var} is {index}, not below --shard-count {count} (indices run from 0 to {count}-1)"
    )]
    IndexOutOfRange {
        /// The variable the index came from.
        var: &'static str,
        /// Its value (for Slurm, minus $SLURM_ARRAY_TASK_MIN).
        index: u64,
        /// --shard-count.
        count: u64,
    },
    /// The Slurm array has another number of tasks than `--shard-count`
    /// says: some seeds would run twice or never.
    #[error("--shard-count {count} but the Slurm array has {tasks} tasks (${SLURM_COUNT}); make them equal, e.g. sbatch --array=0-{last}", last = count.saturating_sub(1))]
    SlurmCount {
        /// --shard-count.
        count: u64,
        /// $SLURM_ARRAY_TASK_COUNT.
        tasks: u64,
    },
    /// A fresh `--explore` base on a sharded run: each machine would draw
    /// its own base, and the shards would not split one seed set.
    #[error("--explore draws a fresh base on each machine; for shards draw it once and pass it to every shard: --explore=0xBASE")]
    ExploreShards,
    /// The OS would not give a random base.
    #[error("cannot read a random --explore base from /dev/urandom: {0}")]
    Random(std::io::Error),
}

/// The seeds this run (or this shard) runs, in order, each once.
pub fn select(sc: &Scenario, args: &RunArgs) -> Result<Vec<u64>, SeedsError> {
    if let Some(s) = args.seed {
        return Ok(vec![s]);
    }
    let mut seeds: Vec<u64> = Vec::new();
    let mut add = |s: u64| {
        if !seeds.contains(&s) {
            seeds.push(s);
        }
    };
    if let Some(path) = &args.seed_list {
        // A list runs exactly its seeds (pinned ones only if listed).
        read_list(path)?.into_iter().for_each(&mut add);
    } else {
        sc.pinned.iter().for_each(|p| add(p.0));
        let count = args.seeds.unwrap_or(sc.seeds);
        let base = match args.explore {
            None => scenario::name_base(&sc.name),
            Some(explore) => explore_base(args, explore, count)?,
        };
        (0..count).for_each(|i| add(scenario::seed_from(base, i)));
    }
    Ok(match shard(args)? {
        Some((i, n)) => seeds
            .into_iter()
            .enumerate()
            .filter(|(k, _)| *k as u64 % n == i)
            .map(|(_, s)| s)
            .collect(),
        None => seeds,
    })
}

/// The `--explore` base: the one given, or a fresh one from the OS, printed
/// as the command line that runs the same seeds again.
fn explore_base(args: &RunArgs, explore: Explore, count: u64) -> Result<u64, SeedsError> {
    if let Explore::Base(base) = explore {
        return Ok(base);
    }
    if args.shard.is_some() || args.shard_count.is_some() {
        return Err(SeedsError::ExploreShards);
    }
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(SeedsError::Random)?;
    let base = u64::from_le_bytes(bytes);
    eprintln!(
        "faultline: exploring {count} seed(s) from base 0x{base:016x}; the same seeds again: faultline run {} --explore=0x{base:016x} --seeds {count}",
        args.file.display()
    );
    Ok(base)
}

/// Reads a seed list: one seed per line, decimal or 0x-hex; blank lines and
/// everything after `#` are ignored; repeated seeds run once.
pub fn read_list(path: &Path) -> Result<Vec<u64>, SeedsError> {
    let text = std::fs::read_to_string(path).map_err(|source| SeedsError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut seeds = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let seed = parse_seed(line).map_err(|_| SeedsError::BadLine {
            path: path.to_owned(),
            line: n + 1,
            text: raw.to_string(),
        })?;
        if !seeds.contains(&seed) {
            seeds.push(seed);
        }
    }
    if seeds.is_empty() {
        return Err(SeedsError::Empty(path.to_owned()));
    }
    Ok(seeds)
}

/// The slice `(I, N)` this machine runs, if the seeds are sharded:
/// `--shard I/N`; or `--shard-count N` with I from `$JOB_COMPLETION_INDEX`,
/// else from `$SLURM_ARRAY_TASK_ID` (minus `$SLURM_ARRAY_TASK_MIN`, so an
/// array may start at 1), whose `$SLURM_ARRAY_TASK_COUNT` must then be N.
pub fn shard(args: &RunArgs) -> Result<Option<(u64, u64)>, SeedsError> {
    if let Some(s) = args.shard {
        return Ok(Some(s));
    }
    let Some(n) = args.shard_count else {
        return Ok(None);
    };
    let (var, i) = match index_var(K8S_INDEX)? {
        Some(i) => (K8S_INDEX, i),
        None => {
            let id = index_var(SLURM_INDEX)?.ok_or(SeedsError::NoIndex)?;
            if let Some(tasks) = index_var(SLURM_COUNT)? {
                if tasks != n {
                    return Err(SeedsError::SlurmCount { count: n, tasks });
                }
            }
            (
                SLURM_INDEX,
                id.saturating_sub(index_var(SLURM_MIN)?.unwrap_or(0)),
            )
        }
    };
    if i >= n {
        return Err(SeedsError::IndexOutOfRange {
            var,
            index: i,
            count: n,
        });
    }
    Ok(Some((i, n)))
}

/// A numeric environment variable, if set.
fn index_var(name: &'static str) -> Result<Option<u64>, SeedsError> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| SeedsError::BadIndex(name, v)),
        Err(_) => Ok(None),
    }
}
