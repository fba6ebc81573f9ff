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
    /// `--step-cost`, `--timer-slack` or `--spin-limit`.
    #[error(transparent)]
    Duration(#[from] DurationError),
}

/// The run settings from the shared simulation flags, for one seed.
pub fn config(sim: &SimArgs, seed: u64) -> Result<Config, SettingsError> {
    Ok(Config {
        seed,
        epoch_secs: vclock::parse_epoch(&sim.epoch)?,
        cpus: sim.cpus,
        step_cost_ns: duration::parse_ns(&sim.step_cost)?,
        timer_slack_ns: duration::parse_ns(&sim.timer_slack)?,
        spin_limit: Duration::from_nanos(duration::parse_ns(&sim.spin_limit)?.max(1_000_000)),
        idle_limit: Duration::from_secs(10),
        pin_cpu: !sim.no_pin,
        cpu_slot: None,
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
