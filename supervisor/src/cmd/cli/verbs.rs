//! The options of the verbs that work on what a run left behind: `replay`
//! and `shrink` (a seed's artifact directory) and `check-history` (a
//! recorded history).

use clap::Args;

/// Options of `faultline check-history`.
#[derive(Debug, Args, Clone)]
pub struct CheckHistoryArgs {
    /// The history file.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Its format: json, edn or porcupine (default: detected from the text).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<history::Format>,

    /// Distinct (linearized operations, value) states the search may visit
    /// per key before giving up (exit 3); typical histories need about one
    /// per operation.
    #[arg(long, value_name = "STATES", default_value_t = history::Budget::default().max_states)]
    pub budget: usize,

    /// Also write a self-contained HTML page of the operations per key, as
    /// bars in time, with the violating ones in red.
    #[arg(long, value_name = "OUT")]
    pub html: Option<std::path::PathBuf>,
}

/// Options of `faultline replay`.
#[derive(Debug, Args, Clone)]
pub struct ReplayArgs {
    /// A seed's artifact directory (it holds report.json). It is only read.
    #[arg(value_name = "DIR")]
    pub dir: std::path::PathBuf,

    /// Where the replay's artifacts go (default: the first free DIR/replay-N/).
    #[arg(long, value_name = "OUT")]
    pub artifacts: Option<std::path::PathBuf>,

    /// Wall-clock time the replay may take (as `run --seed-timeout`).
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = crate::scenario::duration::parse_ns)]
    pub seed_timeout: u64,
}

/// Options of `faultline shrink`.
#[derive(Debug, Args, Clone)]
pub struct ShrinkArgs {
    /// A failing seed's artifact directory (it holds report.json and
    /// faults.json). Only DIR/shrink/ and DIR/shrunk.toml are written.
    #[arg(value_name = "DIR")]
    pub dir: std::path::PathBuf,

    /// Most runs of the seed to make, the first (the whole schedule)
    /// included; when they are spent, the fewest faults found so far are
    /// written.
    #[arg(long, default_value_t = 64, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_runs: u64,

    /// Wall-clock time one run may take (as `run --seed-timeout`).
    #[arg(long, default_value = "10m", value_name = "DURATION", value_parser = crate::scenario::duration::parse_ns)]
    pub seed_timeout: u64,
}
