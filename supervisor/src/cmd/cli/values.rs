//! The value parsers of the flags (seeds, counts, shards, signals), also
//! used for the seeds that report.json and scenario files write as text.

use crate::scenario::duration::{self, DurationError};
use crate::sim::seeds::{self, SeedTextError};

/// Why a flag's value (or a seed written as text) does not parse; each
/// names the text as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ValueError {
    /// Not a decimal or 0x-hex u64.
    #[error(transparent)]
    Seed(#[from] SeedTextError),
    /// `--explore=BASE` whose BASE is not a seed.
    #[error("--explore={text}: expected a base seed, e.g. --explore=0x5eed")]
    ExploreBase {
        /// The value given.
        text: String,
    },
    /// `--seeds 0`.
    #[error("--seeds 0 runs nothing: give 1 or more seeds")]
    NoSeeds,
    /// `--seeds` with no number.
    #[error("{text:?} is not a number of seeds")]
    SeedCount {
        /// The value given.
        text: String,
    },
    /// `-j 0`.
    #[error("-j 0 runs nothing: give 1 or more jobs")]
    NoJobs,
    /// `-j` with no number.
    #[error("{text:?} is not a number of jobs")]
    JobCount {
        /// The value given.
        text: String,
    },
    /// `--shard` that is not `I/N` with I < N.
    #[error("shard {text:?}: expected I/N with 0 <= I < N, e.g. 0/4")]
    Shard {
        /// The value given.
        text: String,
    },
    /// `--signal-at` without its `:`.
    #[error("{text:?}: expected TIME:SIGNAL, e.g. 5s:TERM")]
    SignalAt {
        /// The value given.
        text: String,
    },
    /// `--signal-at` whose time is not a duration.
    #[error(transparent)]
    SignalTime(#[from] DurationError),
    /// `--signal-at` whose signal is neither a known name nor 1-64.
    #[error(
        "{text:?}: unknown signal {signal:?} (TERM, INT, KILL, HUP, USR1, USR2, ALRM or 1-64)"
    )]
    Signal {
        /// The value given.
        text: String,
        /// Its signal part.
        signal: String,
    },
}

/// Parses `--seeds N` with N >= 1.
pub(super) fn parse_seeds(s: &str) -> Result<u64, ValueError> {
    match s.parse::<u64>() {
        Ok(0) => Err(ValueError::NoSeeds),
        Ok(n) => Ok(n),
        Err(_) => Err(ValueError::SeedCount { text: s.into() }),
    }
}

/// Parses `-j N` with N >= 1.
pub(super) fn parse_jobs(s: &str) -> Result<usize, ValueError> {
    match s.parse::<usize>() {
        Ok(0) => Err(ValueError::NoJobs),
        Ok(n) => Ok(n),
        Err(_) => Err(ValueError::JobCount { text: s.into() }),
    }
}

/// Parses `I/N` with I < N.
pub(super) fn parse_shard(s: &str) -> Result<(u64, u64), ValueError> {
    let bad = || ValueError::Shard { text: s.into() };
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Parses a seed flag: decimal, or hexadecimal with a 0x prefix.
pub fn parse_seed(s: &str) -> Result<u64, ValueError> {
    Ok(seeds::parse_seed(s)?)
}

/// Parses `TIME:SIGNAL` such as `5s:TERM`, `1500ms:SIGUSR1` or `2s:9`.
pub(super) fn parse_signal_at(s: &str) -> Result<(u64, i32), ValueError> {
    let (time, sig) = s
        .split_once(':')
        .ok_or_else(|| ValueError::SignalAt { text: s.into() })?;
    let at = duration::parse_ns(time)?;
    let name = sig.trim_start_matches("SIG");
    let num = match name {
        "HUP" => libc::SIGHUP,
        "INT" => libc::SIGINT,
        "QUIT" => libc::SIGQUIT,
        "KILL" => libc::SIGKILL,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "ALRM" => libc::SIGALRM,
        "TERM" => libc::SIGTERM,
        other => other
            .parse()
            .ok()
            .filter(|n| (1..=64).contains(n))
            .ok_or_else(|| ValueError::Signal {
                text: s.into(),
                signal: sig.into(),
            })?,
    };
    Ok((at, num))
}
