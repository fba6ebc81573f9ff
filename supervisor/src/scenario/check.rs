//! The `[check]` section: what, besides node exits and invariant probes,
//! fails a seed (stderr patterns, a checker command, liveness).

use serde::Deserialize;
use toml::Spanned;

use super::error::Problem;

/// The stderr lines that mean a node failed, unless the scenario says otherwise.
pub const DEFAULT_STDERR_PATTERNS: &[&str] = &["panic:", "fatal error:", "DATA RACE", "data race"];
use super::{Ctx, ScenarioError};

/// The `[check]` section as written in the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CheckSection {
    stderr_patterns: Option<Vec<String>>,
    #[serde(default)]
    stderr_ignore: Vec<String>,
    command: Option<Vec<String>>,
    progress_within: Option<Spanned<String>>,
}

/// The checks a scenario asks for.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    /// stderr substrings that fail a seed.
    pub stderr_patterns: Vec<String>,
    /// stderr substrings that clear a line of those patterns: a program's
    /// expected answer to an injected fault is not a bug.
    pub stderr_ignore: Vec<String>,
    /// A checker command run on each seed's artifacts (empty: none).
    pub checker: Vec<String>,
    /// Liveness: from the start of the quiet period, a successful operation
    /// must be in the history within this many ns ("no progress" otherwise).
    pub progress_within: Option<u64>,
}

/// Validates the `[check]` section; `quiet` is `[faults] quiet`, which
/// `progress_within` counts from and must fit in.
pub(super) fn spec(
    ctx: &Ctx,
    raw: &CheckSection,
    quiet: Option<u64>,
) -> Result<CheckSpec, ScenarioError> {
    let progress_within = match &raw.progress_within {
        None => None,
        Some(v) => {
            let within = ctx.duration("check.progress_within", v)?;
            let problem = match quiet {
                None => Some(Problem::Rule(
                    "field `check.progress_within`: counts from the start of the quiet period; \
                     set [faults] quiet too",
                )),
                Some(q) if within > q || within == 0 => Some(Problem::ProgressWithin(q)),
                Some(_) => None,
            };
            if let Some(problem) = problem {
                return Err(ctx.at(v.span(), problem));
            }
            Some(within)
        }
    };
    Ok(CheckSpec {
        stderr_patterns: raw.stderr_patterns.clone().unwrap_or_else(|| {
            DEFAULT_STDERR_PATTERNS
                .iter()
                .map(|p| p.to_string())
                .collect()
        }),
        stderr_ignore: raw.stderr_ignore.clone(),
        checker: raw.command.clone().unwrap_or_default(),
        progress_within,
    })
}
