//! The checks that decide a seed: node exits, stderr patterns that mean
//! failure, the linearizability of the key-value history the workload
//! recorded, and an optional checker command. The first failing check is
//! the seed's failure, with the virtual time and event it happened at.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::engine::{signal_name, Outcome};

/// Why a seed failed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    /// The check's name: "node exit", "stderr pattern", "linearizable", "checker".
    pub check: String,
    /// What went wrong, for a person.
    pub message: String,
    /// Virtual ns at which it happened (or was detected).
    pub t_ns: u64,
    /// The trace event number (or, for the history, the operation index).
    pub event: u64,
    /// What `event` counts: "event" (trace) or "operation" (history).
    pub unit: String,
}

/// The stderr lines that mean a node failed, unless the scenario says otherwise.
pub const DEFAULT_STDERR_PATTERNS: &[&str] = &["panic:", "fatal error:", "DATA RACE", "data race"];

/// A node that exited with a non-zero code or died on a signal, without the
/// fault plan having killed it.
pub fn node_exits(outcome: &Outcome, dir: &Path) -> Option<Failure> {
    let mut failed: Vec<_> = outcome
        .roots
        .iter()
        .filter(|r| !r.down)
        .filter_map(|r| {
            let st = r.status?;
            let what = if libc::WIFSIGNALED(st) {
                format!("was killed by {}", signal_name(libc::WTERMSIG(st)))
            } else if libc::WEXITSTATUS(st) != 0 {
                format!("exited with code {}", libc::WEXITSTATUS(st))
            } else {
                return None;
            };
            let (t, event) = r.exited_at.unwrap_or((outcome.vtime, outcome.events));
            Some((
                t,
                event,
                format!("node {} {what}{}", r.name, last_words(dir, &r.name)),
            ))
        })
        .collect();
    failed.sort_by_key(|f| (f.0, f.1));
    failed
        .into_iter()
        .next()
        .map(|(t, event, message)| Failure {
            check: "node exit".into(),
            message,
            t_ns: t,
            event,
            unit: "event".into(),
        })
}

/// The last line a node printed (stdout, else stderr), as context.
fn last_words(dir: &Path, node: &str) -> String {
    for stream in ["stdout", "stderr"] {
        let text =
            std::fs::read_to_string(dir.join(format!("{node}.{stream}"))).unwrap_or_default();
        if let Some(line) = text.lines().rev().find(|l| !l.trim().is_empty()) {
            return format!(": {}", line.trim());
        }
    }
    String::new()
}

/// A node whose stderr contains one of `patterns`.
pub fn stderr_patterns(outcome: &Outcome, dir: &Path, patterns: &[String]) -> Option<Failure> {
    for r in &outcome.roots {
        let text =
            std::fs::read_to_string(dir.join(format!("{}.stderr", r.name))).unwrap_or_default();
        for line in text.lines() {
            if let Some(p) = patterns.iter().find(|p| line.contains(p.as_str())) {
                return Some(Failure {
                    check: "stderr pattern".into(),
                    message: format!("node {} printed {p:?}: {}", r.name, line.trim()),
                    t_ns: outcome.vtime,
                    event: outcome.events,
                    unit: "event".into(),
                });
            }
        }
    }
    None
}

/// The key-value history at `path`, if the workload wrote one, checked for
/// linearizability.
pub fn linearizable(path: &Path) -> Option<Failure> {
    let has_ops = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    if !has_ops {
        return None;
    }
    // History times are the programs' CLOCK_MONOTONIC readings; shifted
    // onto the run's virtual time, explanations and the trace agree.
    let shifted = history::read_history(path).map(|mut ops| {
        for op in &mut ops {
            op.invoke = op
                .invoke
                .saturating_sub(crate::sim::vclock::MONOTONIC_BASE_NS);
            op.complete = op
                .complete
                .map(|c| c.saturating_sub(crate::sim::vclock::MONOTONIC_BASE_NS));
        }
        ops
    });
    match shifted.map(|ops| history::check(&ops)) {
        Ok(history::Verdict::Violation(v)) => Some(Failure {
            check: "linearizable".into(),
            message: v.explanation.clone(),
            t_ns: v.at,
            event: v.op_index as u64,
            unit: "operation".into(),
        }),
        Ok(history::Verdict::Linearizable) => None,
        // The search gave up: the history is neither shown linearizable nor
        // shown to violate it, and a seed that was not shown correct must
        // not pass.
        Ok(history::Verdict::Unknown { reason }) => Some(Failure {
            check: "linearizable".into(),
            message: format!(
                "unknown: the checker gave up before an answer ({reason}); the history is \
                 neither shown linearizable nor shown to violate it (check it with a larger \
                 budget: faultline check-history --budget N history.jsonl)"
            ),
            t_ns: 0,
            event: 0,
            unit: "operation".into(),
        }),
        Err(e) => Some(Failure {
            check: "linearizable".into(),
            message: format!("the history is malformed: {e}"),
            t_ns: 0,
            event: 0,
            unit: "operation".into(),
        }),
    }
}

/// The scenario's checker command, run on the artifacts: a non-zero exit
/// fails the seed with its output as the message.
pub fn checker(command: &[String], dir: &Path, outcome: &Outcome) -> Option<Failure> {
    let (program, args) = command.split_first()?;
    let result = std::process::Command::new(program)
        .args(args)
        .env("FAULTLINE_ARTIFACTS", dir)
        .output();
    let message = match result {
        Ok(out) if out.status.success() => return None,
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            format!("{} failed ({}): {}", program, out.status, text.trim())
        }
        Err(e) => format!("cannot run {program}: {e}"),
    };
    Some(Failure {
        check: "checker".into(),
        message,
        t_ns: outcome.vtime,
        event: outcome.events,
        unit: "event".into(),
    })
}
