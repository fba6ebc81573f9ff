//! From the simulation flags (`SimArgs`) to the engine's `Config` for one
//! seed: the one place their text values (epoch, durations) are parsed, so
//! `exec`, `run`, its workers and `replay` refuse a bad value alike.

use std::time::Duration;

use crate::cmd::cli::SimArgs;
use crate::engine::Config;
use crate::scenario::duration::{self, DurationError};
use crate::sim::vclock::{self, EpochError};

/// A simulation flag whose value does not parse.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// `--epoch`.
    #[error(transparent)]
    Epoch(#[from] EpochError),
    /// `--step-cost`, `--timer-slack` or `--spin-limit`: not a duration.
    #[error("{flag}: {source}")]
    Duration {
        /// The flag.
        flag: &'static str,
        /// What is wrong with its value.
        source: DurationError,
    },
    /// `--progress`: neither `auto` nor a duration.
    #[error("--progress: {0} (or `auto`)")]
    Progress(#[source] DurationError),
}

/// The nanoseconds of duration flag `flag`'s value `text`.
fn flag_ns(flag: &'static str, text: &str) -> Result<u64, SettingsError> {
    duration::parse_ns(text).map_err(|source| SettingsError::Duration { flag, source })
}

/// How often a progress line is printed (`--progress`): `auto` every
/// [`AUTO_PROGRESS`] when stderr is a terminal, else never; `0` never.
fn progress_every(text: &str) -> Result<Option<Duration>, SettingsError> {
    use std::io::IsTerminal;
    if text == PROGRESS_AUTO {
        return Ok(std::io::stderr().is_terminal().then_some(AUTO_PROGRESS));
    }
    let ns = duration::parse_ns(text).map_err(SettingsError::Progress)?;
    Ok((ns > 0).then(|| Duration::from_nanos(ns)))
}

/// `--progress`'s default: a line every [`AUTO_PROGRESS`] on a terminal.
pub const PROGRESS_AUTO: &str = "auto";

/// `--progress auto`'s interval on a terminal.
const AUTO_PROGRESS: Duration = Duration::from_secs(5);

/// The run settings from the shared simulation flags, for one seed.
pub fn config(sim: &SimArgs, seed: u64) -> Result<Config, SettingsError> {
    Ok(Config {
        seed,
        epoch_secs: vclock::parse_epoch(&sim.epoch)?,
        cpus: sim.cpus,
        step_cost_ns: flag_ns("--step-cost", &sim.step_cost)?,
        timer_slack_ns: flag_ns("--timer-slack", &sim.timer_slack)?,
        spin_limit: Duration::from_nanos(flag_ns("--spin-limit", &sim.spin_limit)?.max(1_000_000)),
        idle_limit: Duration::from_secs(10),
        pin_cpu: !sim.no_pin,
        cpu_slot: None,
        progress: progress_every(&sim.progress)?,
        signals_at: Vec::new(),
        until_ns: None,
        vdso: !sim.no_vdso,
        notify: sim.notify,
        go_yields: sim.go_yields,
        preload: sim.fast_path(),
        clock_step_every: sim.clock_step_every,
        schedule: sim.schedule(),
        wall_deadline: None,
    })
}
