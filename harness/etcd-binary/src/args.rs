//! Command-line flags of the workload (the scenario files pass them).

use std::time::Duration;

use clap::Parser;

/// Puts and gets of a few keys on random etcd members, every operation
/// recorded in a history for faultline's linearizability check.
#[derive(Parser, Clone, Debug)]
#[command(name = "etcd-workload")]
pub struct Args {
    /// host:port of each member's client endpoint, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub endpoints: Vec<String>,
    /// How long to run (virtual time under faultline): 12s, 1.5s, 500ms.
    #[arg(long, default_value = "20s", value_parser = etcd_harness::duration::parse)]
    pub duration: Duration,
    /// Client tasks, each one operation at a time.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub clients: u32,
    /// Distinct keys (k0, k1, ...).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub keys: u32,
    /// Stop after this many operations in all (0: no limit; the duration
    /// still bounds the run). For timing the same work outside faultline
    /// (`scripts/bench`).
    #[arg(long, default_value_t = 0)]
    pub ops: u64,
    /// Where the history goes (JSON lines, appended).
    #[arg(long, env = "FAULTLINE_HISTORY", default_value = "history.jsonl")]
    pub history: String,
    /// Bug switch: serializable reads (any member answers from its own,
    /// possibly stale, state) recorded as linearizable ones.
    #[arg(long)]
    pub serializable_reads: bool,
}
