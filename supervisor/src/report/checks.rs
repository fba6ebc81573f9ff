//! The checks that decide a seed: node exits, the scenario's invariant
//! probes, stderr patterns that mean failure, the linearizability of the key-value history the workload
//! recorded, and an optional checker command. The first failing check is
//! the seed's failure, with the virtual time and event it happened at.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::engine::{signal_name, Outcome};

/// Why a seed failed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Failure {
    /// The check's name: "node exit", an invariant's name, "stderr pattern",
    /// "linearizable", "checker".
    pub check: String,
    /// What went wrong, for a person.
    pub message: String,
    /// Virtual ns at which it happened (or was detected).
    pub t_ns: u64,
    /// The trace event number (or, for the history, the operation index).
    pub event: u64,
    /// What `event` counts: "event" (trace) or "operation" (history).
    pub unit: String,
    /// For a linearizability violation: the history indices of the
    /// operations its explanation names, for the timeline to highlight.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<usize>,
}

/// How many of a failed node's last stderr lines its failure quotes.
const QUOTED_LINES: usize = 5;

impl Failure {
    /// The message with every line indented by `indent`, for the failure
    /// block on the terminal: a checker's or a node's lines stay inside it.
    pub fn indented(&self, indent: &str) -> String {
        self.message
            .lines()
            .map(|l| format!("{indent}{l}\n"))
            .collect()
    }
}

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
            operations: Vec::new(),
        })
}

/// The last lines a node wrote to stderr (where programs say why they
/// fail), else its last stdout line, as context: one line follows a colon,
/// more follow on lines of their own.
fn last_words(dir: &Path, node: &str) -> String {
    let last_lines = |stream: &str, n: usize| -> Vec<String> {
        let text =
            std::fs::read_to_string(dir.join(format!("{node}.{stream}"))).unwrap_or_default();
        let mut lines: Vec<String> = text
            .lines()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(|l| l.trim_end().to_string())
            .collect();
        lines.reverse();
        lines
    };
    let (stream, lines) = match last_lines("stderr", QUOTED_LINES) {
        lines if lines.is_empty() => ("stdout", last_lines("stdout", 1)),
        lines => ("stderr", lines),
    };
    match lines.as_slice() {
        [] => String::new(),
        [line] => format!(": {}", line.trim()),
        _ => format!(
            "; the end of its {stream}:\n{}",
            lines
                .iter()
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// The first run of an invariant probe that failed (the run stopped there):
/// the check is named after the invariant.
pub fn invariants(outcome: &Outcome) -> Option<Failure> {
    let run = outcome.probe_runs.iter().find(|r| !r.pass)?;
    Some(Failure {
        check: run.name.clone(),
        message: run.message.clone(),
        t_ns: run.t,
        event: run.event,
        unit: "event".into(),
        operations: Vec::new(),
    })
}

/// A node whose stderr has a line with one of `patterns` and none of
/// `ignore` (a program's expected answer to an injected fault, such as
/// etcd's panic when an fsync error hits the WAL it creates).
pub fn stderr_patterns(
    outcome: &Outcome,
    dir: &Path,
    patterns: &[String],
    ignore: &[String],
) -> Option<Failure> {
    for r in &outcome.roots {
        let text =
            std::fs::read_to_string(dir.join(format!("{}.stderr", r.name))).unwrap_or_default();
        if let Some((p, line)) = failing_line(&text, patterns, ignore) {
            return Some(Failure {
                check: "stderr pattern".into(),
                message: format!("node {} printed {p:?}: {}", r.name, line.trim()),
                t_ns: outcome.vtime,
                event: outcome.events,
                unit: "event".into(),
                operations: Vec::new(),
            });
        }
    }
    None
}

/// The first line of `text` that contains one of `patterns` and none of
/// `ignore`, with the pattern it contains.
fn failing_line<'a>(
    text: &'a str,
    patterns: &'a [String],
    ignore: &[String],
) -> Option<(&'a str, &'a str)> {
    text.lines()
        .filter(|line| !ignore.iter().any(|i| line.contains(i.as_str())))
        .find_map(|line| {
            let p = patterns.iter().find(|p| line.contains(p.as_str()))?;
            Some((p.as_str(), line))
        })
}

/// The key-value history at `path`, if the workload wrote one, checked for
/// linearizability.
pub fn linearizable(path: &Path) -> Option<Failure> {
    let has_ops = std::fs::metadata(path).is_ok_and(|m| m.len() > 0);
    if !has_ops {
        return None;
    }
    let shifted = read_history(path);
    match shifted.map(|ops| history::check(&ops)) {
        Ok(history::Verdict::Violation(v)) => Some(Failure {
            check: "linearizable".into(),
            message: v.explanation.clone(),
            t_ns: v.at,
            event: v.op_index as u64,
            unit: "operation".into(),
            operations: v.operations.clone(),
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
            operations: Vec::new(),
        }),
        Err(e) => Some(Failure {
            check: "linearizable".into(),
            message: format!("the history is malformed: {e}"),
            t_ns: 0,
            event: 0,
            unit: "operation".into(),
            operations: Vec::new(),
        }),
    }
}

/// The workload's history with its times on the run's virtual time: history
/// times are the programs' CLOCK_MONOTONIC readings; shifted onto the run's
/// virtual time, explanations and the trace agree.
pub fn read_history(path: &Path) -> Result<Vec<history::Operation>, history::HistoryError> {
    history::read_history(path).map(|mut ops| {
        for op in &mut ops {
            op.invoke = op
                .invoke
                .saturating_sub(crate::sim::vclock::MONOTONIC_BASE_NS);
            op.complete = op
                .complete
                .map(|c| c.saturating_sub(crate::sim::vclock::MONOTONIC_BASE_NS));
        }
        ops
    })
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
            match text
                .trim_end()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count()
            {
                0 => format!("{} failed ({})", program, out.status),
                1 => format!("{} failed ({}): {}", program, out.status, text.trim()),
                _ => format!("{} failed ({}):\n{}", program, out.status, text.trim_end()),
            }
        }
        Err(e) => format!("cannot run {program}: {e}"),
    };
    Some(Failure {
        check: "checker".into(),
        message,
        t_ns: outcome.vtime,
        event: outcome.events,
        unit: "event".into(),
        operations: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;

    /// A seed directory holding `node`'s stdout and stderr.
    fn outputs(label: &str, stdout: &str, stderr: &str) -> ScratchDir {
        let dir = ScratchDir::new(&format!("checks-{label}"));
        std::fs::write(dir.join("n.stdout"), stdout).unwrap();
        std::fs::write(dir.join("n.stderr"), stderr).unwrap();
        dir
    }

    #[test]
    fn quotes_the_last_stderr_lines_not_stdout() {
        let stderr = (1..=7).map(|i| format!("e{i}\n")).collect::<String>();
        let cases = [
            (
                "many",
                "last stdout\n",
                stderr.as_str(),
                "; the end of its stderr:\n  e3\n  e4\n  e5\n  e6\n  e7",
            ),
            ("one", "out\n", "panic: boom\n\n", ": panic: boom"),
            ("none", "only stdout\n", "", ": only stdout"),
        ];
        for (label, stdout, stderr, quoted) in cases {
            let dir = outputs(label, stdout, stderr);
            assert_eq!(last_words(&dir, "n"), quoted, "{label}");
        }
    }

    #[test]
    fn an_ignored_line_does_not_fail_the_seed_but_the_next_match_does() {
        let patterns = vec!["panic:".to_string(), "fatal error:".to_string()];
        let ignore = vec!["panic: failed to create WAL".to_string()];
        let text = "starting\npanic: failed to create WAL\nrestarted\npanic: tocommit(9) is out of range\n";
        assert_eq!(
            failing_line(text, &patterns, &ignore),
            Some(("panic:", "panic: tocommit(9) is out of range"))
        );
        assert_eq!(
            failing_line(text, &patterns, &[]),
            Some(("panic:", "panic: failed to create WAL"))
        );
        assert_eq!(
            failing_line("panic: failed to create WAL\n", &patterns, &ignore),
            None
        );
    }

    #[test]
    fn indents_every_line_of_the_message() {
        let f = Failure {
            check: "checker".into(),
            message: "check.sh failed (exit status: 1):\nbad 1\nbad 2".into(),
            t_ns: 0,
            event: 0,
            unit: "event".into(),
            operations: Vec::new(),
        };
        assert_eq!(
            f.indented("  "),
            "  check.sh failed (exit status: 1):\n  bad 1\n  bad 2\n"
        );
    }
}
