//! The `[faults]` section: rules over all `[[fault]]` entries. A rule with
//! nothing to act on is an error, never silently ignored.

use serde::Deserialize;
use toml::Spanned;

use super::error::Problem;
use super::plan::{FaultSpec, PlanRules};
use super::{Ctx, ScenarioError};

/// The `[faults]` section as written in the file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FaultsSection {
    max_down: Option<Spanned<usize>>,
    quiet: Option<Spanned<String>>,
    swarm: Option<Spanned<bool>>,
}

/// Validates the section against the entries (`faults`; the nodes' clock
/// offsets among them do not count) and the seed's `duration` (ns).
pub(super) fn rules(
    ctx: &Ctx,
    raw: &FaultsSection,
    faults: &[FaultSpec],
    duration: u64,
) -> Result<PlanRules, ScenarioError> {
    let max_down = match &raw.max_down {
        None => None,
        Some(m) => {
            let outages = faults.iter().any(|f| {
                matches!(
                    f,
                    FaultSpec::OutageAt { .. } | FaultSpec::OutageRandom { .. }
                )
            });
            if *m.get_ref() == 0 || !outages {
                return Err(ctx.at(
                    m.span(),
                    Problem::Rule(
                        "field `faults.max_down`: bounds the nodes crashed, killed or paused at \
                         once; it must be at least 1, with a crash, kill or pause entry",
                    ),
                ));
            }
            Some(*m.get_ref())
        }
    };
    let quiet = match &raw.quiet {
        None => None,
        Some(q) => {
            let ns = ctx.duration("faults.quiet", q)?;
            if ns >= duration {
                return Err(ctx.at(
                    q.span(),
                    Problem::Rule("field `faults.quiet`: must be shorter than `duration`"),
                ));
            }
            Some(ns)
        }
    };
    let swarm = raw.swarm.as_ref().is_some_and(|s| *s.get_ref());
    let entries = faults
        .iter()
        .filter(|f| !matches!(f, FaultSpec::ClockOffset { .. }))
        .count();
    if let Some(s) = raw.swarm.as_ref().filter(|_| swarm && entries < 2) {
        return Err(ctx.at(
            s.span(),
            Problem::Rule(
                "field `faults.swarm`: picks a subset of the [[fault]] entries per seed; it needs \
                 two or more",
            ),
        ));
    }
    Ok(PlanRules {
        max_down,
        quiet,
        swarm,
    })
}
