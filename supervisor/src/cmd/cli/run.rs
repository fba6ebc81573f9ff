//! The options of `faultline run`: which seeds, how many at a time, what
//! to write, and the shards of a run spread over machines.

use clap::Args;

use super::sim::SimArgs;
use super::values::{parse_jobs, parse_seed, parse_seeds, parse_shard, ValueError};

/// Options of `faultline run`.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// The scenario file (TOML).
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Run only this seed (decimal or 0x-hex), e.g. to replay a failure.
    #[arg(long, value_parser = parse_seed, conflicts_with_all = ["seeds", "seed_list", "explore"])]
    pub seed: Option<u64>,

    /// How many seeds to run (default: the file's `seeds`, else 1). The seeds
    /// derive from the scenario name, so every machine runs the same ones.
    #[arg(long, value_parser = parse_seeds)]
    pub seeds: Option<u64>,

    /// Run exactly the seeds listed in FILE: one per line, decimal or 0x-hex,
    /// `#` starts a comment, e.g. the failing seeds of a --results file.
    /// Shards split the list. A line that is not a seed is an error naming
    /// FILE:LINE (exit 2).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["seeds", "explore"])]
    pub seed_list: Option<std::path::PathBuf>,

    /// Derive the seeds from a fresh random base instead of the scenario's
    /// name, so a hunt does not always run the same seeds. The base is
    /// printed with the command that runs the same seeds again:
    /// `--explore=0xBASE` (with shards, pick the base once and give it to
    /// every shard).
    #[arg(long, value_name = "BASE", num_args = 0..=1, require_equals = true,
          default_missing_value = "fresh", value_parser = parse_explore)]
    pub explore: Option<Explore>,

    /// Append one JSON line per seed to FILE: {"scenario", "seed" (0x-hex),
    /// "verdict" ("pass" or "fail"), "check" (the failing check or null),
    /// "wall_s", "trace_hash" (0x-hex)}. Shards and -j children append to
    /// the files they are given; jq turns one into a --seed-list.
    #[arg(long, value_name = "FILE")]
    pub results: Option<std::path::PathBuf>,

    /// Where each seed's artifacts go: DIR/<scenario>/<seed>/.
    #[arg(long, default_value = "runs", value_name = "DIR")]
    pub artifacts: std::path::PathBuf,

    /// Run every seed even after one fails (default: stop at the first failure).
    #[arg(long)]
    pub keep_going: bool,

    /// Run N seeds at a time, each in its own faultline process (N >= 1).
    /// The workers die with this process, even when it is killed. They
    /// take CPUs apart: two each while N is at most half the CPUs, a home
    /// CPU each otherwise. A seed whose programs take the fast path keeps
    /// two CPUs working (its supervisor and its programs spin for each
    /// other), so for those N gains only up to half the machine's CPUs.
    #[arg(short = 'j', long = "jobs", default_value_t = 1, value_name = "N", value_parser = parse_jobs)]
    pub jobs: usize,

    /// Wall-clock time one seed may take, e.g. `30s` or `1h` (`0`: no limit).
    /// A node that spins without syscalls never lets virtual time reach the
    /// scenario's duration; such a seed ends with the verdict `stuck`, and
    /// its artifacts are kept like a failure's.
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = crate::scenario::duration::parse_ns)]
    pub seed_timeout: u64,

    /// Run the fault plan recorded in FILE (a seed's faults.json) instead of
    /// planning the faults from each seed: the scenario's random entries
    /// draw nothing, its planned entries are not read, and each event runs
    /// at its recorded time with its recorded parameters (down time, clock
    /// step, ppm, link delays and loss, corrupt glob and bytes). With the
    /// seed that recorded it, the run is the same (same verdict, same trace
    /// hash). The disk-error probabilities and disk bug switches still come
    /// from the scenario. A file that cannot be read, or an entry naming no
    /// node of the scenario, is an error naming the file and the entry (exit 2).
    #[arg(long, value_name = "FILE")]
    pub schedule: Option<std::path::PathBuf>,

    /// Also write the verdicts as JUnit XML to FILE: one test case per seed
    /// (failed ones carry the check and its message), for CI systems that
    /// show test reports, e.g. `--junit results.xml`.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<std::path::PathBuf>,

    /// Do not run a failing seed a second time. By default each failing
    /// seed is run again before it is reported, and its failure block says
    /// "replays: identical" or names the first event where the second run
    /// differs (report.json: `replays`); this flag saves that time.
    #[arg(long, conflicts_with = "check_determinism")]
    pub no_recheck: bool,

    /// Run every seed twice, passing ones too, and compare the traces event
    /// by event: a seed whose runs differ gets the verdict
    /// `nondeterministic` (exit 123), with the first divergent event of
    /// each run (node, thread, call, arguments, result) and the likely
    /// cause (host state read, watchdog preemption, or unknown).
    #[arg(long)]
    pub check_determinism: bool,

    /// Set by `run -j` on the faultline processes it starts, one per seed:
    /// run the seed and keep its artifacts, but leave summary.json and the
    /// verdict line to the parent, so a sharded `-j` run counts each seed once.
    #[arg(long, hide = true)]
    pub seed_worker: bool,

    /// Set by `run -j` on its workers: the parent's simulation settings as
    /// JSON (they replace the flags), so every setting reaches the workers.
    #[arg(long, hide = true, value_name = "JSON")]
    pub worker_settings: Option<String>,

    /// Set by `run -j` on its workers (with `-j`): the worker's number
    /// among those running at once, so that parallel seeds take CPUs apart
    /// (two picked by pid could share one and leave another idle).
    #[arg(long, hide = true, value_name = "K")]
    pub worker_cpu: Option<usize>,

    /// Run only slice I of N of the seeds (seeds whose index modulo N is I),
    /// e.g. `--shard 0/4` on the first of four machines.
    #[arg(long, value_name = "I/N", value_parser = parse_shard, conflicts_with = "shard_count")]
    pub shard: Option<(u64, u64)>,

    /// Like --shard, with I taken from $JOB_COMPLETION_INDEX (a Kubernetes
    /// Indexed Job or a CI matrix) or, when that is unset, from
    /// $SLURM_ARRAY_TASK_ID minus $SLURM_ARRAY_TASK_MIN (`sbatch --array`);
    /// under Slurm, N must equal $SLURM_ARRAY_TASK_COUNT.
    #[arg(long, value_name = "N")]
    pub shard_count: Option<u64>,

    /// Simulation settings.
    #[command(flatten)]
    pub sim: SimArgs,
}

impl RunArgs {
    /// Which seeds run twice: every one (`--check-determinism`), none
    /// (`--no-recheck`), or the failing ones.
    pub fn recheck(&self) -> crate::cmd::recheck::Recheck {
        use crate::cmd::recheck::Recheck;
        match (self.check_determinism, self.no_recheck) {
            (true, _) => Recheck::Every,
            (false, true) => Recheck::Never,
            (false, false) => Recheck::Failures,
        }
    }
}

/// Where `--explore` takes its seeds from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explore {
    /// A base drawn from the OS (a bare `--explore`).
    Fresh,
    /// A base given (`--explore=0xBASE`), to run an exploration again.
    Base(u64),
}

/// Parses the value of `--explore`: a 0x-hex or decimal base, or `fresh`
/// (what a bare `--explore` means).
pub(super) fn parse_explore(s: &str) -> Result<Explore, ValueError> {
    match s {
        "fresh" => Ok(Explore::Fresh),
        base => parse_seed(base)
            .map(Explore::Base)
            .map_err(|_| ValueError::ExploreBase { text: s.into() }),
    }
}
