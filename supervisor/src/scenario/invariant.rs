//! `[[invariant]]` entries: probes that check the cluster while the seed
//! runs (a safety violation that heals before the end is otherwise unseen).
//! Each becomes a program run on a simulated host of its own, `inv-1`,
//! `inv-2`, ... in file order.

use serde::Deserialize;
use toml::Spanned;

use super::error::Problem;
use super::{Ctx, ScenarioError};

/// The faults an invariant can be run right after (`after`): the kinds
/// the fault log records.
pub const AFTER_KINDS: &[&str] = &[
    "crash",
    "restart",
    "partition",
    "heal",
    "disk_crash",
    "reboot",
];

/// Virtual time a probe may take when the entry sets no `timeout`.
pub const DEFAULT_TIMEOUT_NS: u64 = 10_000_000_000;

/// One `[[invariant]]` as written in the file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawInvariant {
    name: Spanned<String>,
    every: Option<Spanned<String>>,
    after: Option<Spanned<Vec<String>>>,
    from: Option<Spanned<String>>,
    command: Spanned<Vec<String>>,
    timeout: Option<Spanned<String>>,
}

/// A validated invariant probe.
#[derive(Debug, Clone)]
pub struct InvariantSpec {
    /// The invariant's name: the check's name when it fails.
    pub name: String,
    /// The simulated host it runs on (`inv-N`).
    pub host: String,
    /// The program as the scenario names it (argv[0], resolved in the
    /// scenario's folder, where probes run): not the resolved path, which
    /// depends on how the scenario's path was given (a `-j` worker gets it
    /// absolute), so the trace would differ between runs of one seed.
    pub command0: String,
    /// argv[1..].
    pub args: Vec<String>,
    /// Virtual ns between runs (None: only after faults).
    pub every: Option<u64>,
    /// Fault kinds right after which it also runs.
    pub after: Vec<String>,
    /// Virtual ns before which it does not run (0: from the start): a
    /// check of a quiet period at the end starts no runs before it.
    pub from: u64,
    /// Virtual ns a run may take before it is killed and fails the seed.
    pub timeout: u64,
}

/// The host name of the `index`-th invariant (from 0).
pub fn host_name(index: usize) -> String {
    format!("inv-{}", index + 1)
}

/// Validates the `[[invariant]]` entries; `nodes` are the node names (a
/// probe's host name must not be one of them).
pub(super) fn specs(
    ctx: &Ctx,
    raw: &[RawInvariant],
    nodes: &[String],
) -> Result<Vec<InvariantSpec>, ScenarioError> {
    let mut specs: Vec<InvariantSpec> = Vec::new();
    for (i, inv) in raw.iter().enumerate() {
        let name = inv.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(ctx.at(
                inv.name.span(),
                Problem::Rule("field `name` of [[invariant]]: must not be empty"),
            ));
        }
        if specs.iter().any(|s| s.name == name) {
            return Err(ctx.at(
                inv.name.span(),
                Problem::Twice {
                    what: "invariant",
                    name,
                },
            ));
        }
        let host = host_name(i);
        if nodes.contains(&host) {
            return Err(ctx.at(inv.name.span(), Problem::ProbeHost { name, host }));
        }
        let every = inv
            .every
            .as_ref()
            .map(|e| match ctx.duration("every", e)? {
                0 => Err(ctx.at(
                    e.span(),
                    Problem::Rule("field `every`: must be longer than 0"),
                )),
                ns => Ok(ns),
            })
            .transpose()?;
        let after = match &inv.after {
            Some(list) => {
                for kind in list.get_ref() {
                    if !AFTER_KINDS.contains(&kind.as_str()) {
                        return Err(ctx.at(list.span(), Problem::AfterKind(kind.clone())));
                    }
                }
                list.get_ref().clone()
            }
            None => Vec::new(),
        };
        if every.is_none() && after.is_empty() {
            return Err(ctx.at(inv.name.span(), Problem::NeverRuns(name)));
        }
        let from = match &inv.from {
            Some(f) => ctx.duration("from", f)?,
            None => 0,
        };
        let timeout = match &inv.timeout {
            Some(t) => match ctx.duration("timeout", t)? {
                0 => {
                    return Err(ctx.at(
                        t.span(),
                        Problem::Rule("field `timeout`: must be longer than 0"),
                    ))
                }
                ns => ns,
            },
            None => DEFAULT_TIMEOUT_NS,
        };
        let (_, command0, args) = ctx.command(&inv.command, &format!("invariant {name:?}"))?;
        specs.push(InvariantSpec {
            name,
            host,
            command0,
            args,
            every,
            after,
            from,
            timeout,
        });
    }
    Ok(specs)
}
