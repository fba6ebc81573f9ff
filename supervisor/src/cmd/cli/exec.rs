//! The options of `faultline exec`: one program, one seed.

use clap::Args;

use super::sim::SimArgs;
use super::values::{parse_seed, parse_signal_at};

/// Options of `faultline exec`.
#[derive(Debug, Args, Clone)]
pub struct ExecArgs {
    /// Seed for every random choice (scheduling, getrandom, AT_RANDOM): decimal or 0x-hex.
    #[arg(long, default_value = "0", value_parser = parse_seed)]
    pub seed: u64,

    /// Write the event trace as JSON lines (n, t, tid, call, args, ret) to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,

    /// Run twice with the same seed and report the first event where the runs differ.
    #[arg(long)]
    pub check_determinism: bool,

    /// Simulation settings shared with `run`.
    #[command(flatten)]
    pub sim: SimArgs,

    /// Stop after this much virtual time (exit 124), e.g. 10m.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,

    /// Send the program a signal at a virtual time, e.g. `--signal-at 5s:TERM`
    /// (repeatable). It arrives at the same point of every run.
    #[arg(long, value_name = "TIME:SIGNAL", value_parser = parse_signal_at)]
    pub signal_at: Vec<(u64, i32)>,

    /// The simulated host the program runs on: its name (uname, /etc/hosts)
    /// and address 127.77.0.1. 127.0.0.1 reaches the host itself.
    #[arg(
        long,
        alias = "hostname",
        default_value = "faultline",
        value_name = "NAME"
    )]
    pub host: String,

    /// The program and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        value_name = "PROGRAM [ARGS]..."
    )]
    pub command: Vec<String>,
}
