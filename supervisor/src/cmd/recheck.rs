//! A seed run twice: `run` runs each failing seed again (with
//! `--check-determinism`, every seed) and compares the two traces, so a
//! failure that does not replay, or a seed that is not deterministic, says
//! so before anyone debugs it. Here: which seeds run again, and how the
//! two runs compare; `cmd::seed` runs the second one.

use std::path::Path;

use crate::engine::Outcome;
use crate::path_error::PathError;
use crate::report::artifacts::{self, Verdict};
use crate::report::checks::Failure;
use crate::report::divergence::{first_divergence, Divergence};
use crate::report::replays::{Diverged, Replays};
use crate::sim::trace::read_lines;

/// Which seeds run a second time, to check that their trace replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recheck {
    /// None (`run --no-recheck`, `replay`, and the second run itself).
    Never,
    /// The failing ones, so a failure that does not replay says so (the
    /// default of `run`).
    Failures,
    /// Every one; a seed whose runs differ is `nondeterministic`
    /// (`run --check-determinism`).
    Every,
}

impl Recheck {
    /// Whether a seed with this verdict runs again. A stuck seed does not:
    /// where it stopped depends on the wall clock.
    pub fn wants(self, verdict: Verdict) -> bool {
        matches!(
            (self, verdict),
            (Recheck::Failures, Verdict::Fail) | (Recheck::Every, Verdict::Pass | Verdict::Fail)
        )
    }
}

/// Where a seed's second run goes, inside its directory; kept only when
/// the runs differ.
pub const RECHECK_DIR: &str = "recheck";

/// Compares the traces of a seed's first run (in `dir`) and its second
/// (in `again`) event by event; the second run's directory is removed when
/// they are the same.
pub(crate) fn compare(
    dir: &Path,
    again: &Path,
    first: &Outcome,
    second: &Outcome,
) -> Result<Replays, PathError> {
    if (second.hash, second.events) == (first.hash, first.events) {
        let _ = std::fs::remove_dir_all(again);
        return Ok(Replays::Identical);
    }
    let read = |d: &Path| read_lines(&d.join(artifacts::TRACE)).map_err(PathError::io(d));
    let divergence = first_divergence(read(dir)?, read(again)?).unwrap_or(Divergence {
        // The hash is over the lines, so equal files with another hash
        // mean a trace file was cut short (a full disk): the runs differ
        // past what was written.
        event: first.events as usize + 1,
        first: "(run ended)".into(),
        second: "(run ended)".into(),
    });
    Ok(Replays::Diverged(Box::new(Diverged::new(
        &divergence,
        first,
        second,
    ))))
}

/// The failure of a seed whose two runs differ: at the first divergent
/// event, naming what the first run's verdict was.
pub(crate) fn nondeterministic(
    d: &Diverged,
    verdict: Verdict,
    failed: Option<&Failure>,
) -> Failure {
    let first = match failed {
        Some(f) => format!(
            "{} (check {:?}: {})",
            verdict.word(),
            f.check,
            f.message.lines().next().unwrap_or("")
        ),
        None => verdict.word().to_string(),
    };
    Failure {
        check: "determinism".into(),
        message: format!(
            "two runs of this seed differ from event {} on (the first run's verdict: {first})",
            d.event
        ),
        t_ns: d.first.as_ref().or(d.second.as_ref()).map_or(0, |e| e.t_ns),
        event: d.event as u64,
        unit: "event".into(),
        operations: Vec::new(),
    }
}
