//! The "no progress" check (`[check] progress_within`): liveness. Faults
//! may stop a cluster from serving; once the quiet period has healed them
//! all, a system that recovers serves again, so the history must show a
//! successful operation soon after the quiet period starts. A seed where
//! none completes in time has a system that does not recover by itself.

use std::path::Path;

use super::checks::{read_history, Failure};

/// The check's name in reports.
pub const CHECK: &str = "no progress";

/// Fails unless an operation of the history at `path` completed
/// successfully between `from` (the quiet period's start, virtual ns) and
/// `from + within`.
pub fn progress(path: &Path, from: u64, within: u64) -> Option<Failure> {
    let deadline = from + within;
    // A malformed history fails the linearizable check, which runs first.
    let ops = read_history(path).unwrap_or_default();
    let ok = |op: &&history::Operation| op.outcome == history::Outcome::Ok;
    if ops
        .iter()
        .filter(ok)
        .any(|op| op.complete.is_some_and(|c| (from..=deadline).contains(&c)))
    {
        return None;
    }
    let secs = |ns: u64| format!("{:.6}s", ns as f64 / 1e9);
    let last = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| ok(op))
        .filter_map(|(i, op)| Some((i, op.complete?)))
        .filter(|&(_, c)| c < from)
        .max_by_key(|&(_, c)| c);
    let before = match last {
        Some((i, c)) => format!(
            "the last one completed at t={} (operation {i} of {})",
            secs(c),
            ops.len()
        ),
        None => format!(
            "none completed before either ({} operation(s) recorded)",
            ops.len()
        ),
    };
    Some(Failure {
        check: CHECK.into(),
        message: format!(
            "no operation succeeded within {} of the quiet period's start at t={} \
             (until t={}): the faults had healed, the system did not serve again; {before}",
            secs(within),
            secs(from),
            secs(deadline)
        ),
        t_ns: deadline,
        event: last.map_or(0, |(i, _)| i as u64),
        unit: "operation".into(),
        operations: last.map(|(i, _)| vec![i]).unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;

    /// A history of one put per (completion time, outcome), in its own
    /// directory (removed when dropped), and the history file's path.
    fn history(label: &str, completes: &[(u64, &str)]) -> (ScratchDir, std::path::PathBuf) {
        let dir = ScratchDir::new(&format!("progress-{label}"));
        let base = crate::sim::vclock::MONOTONIC_BASE_NS;
        let text: String = completes
            .iter()
            .enumerate()
            .map(|(i, (t, outcome))| {
                format!(
                    "{{\"process\":1,\"op\":\"put\",\"key\":\"k{i}\",\"value\":\"v\",\"invoke\":{},\"complete\":{},\"outcome\":\"{outcome}\"}}\n",
                    base + t - 1,
                    base + t
                )
            })
            .collect();
        let path = dir.join("history.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_success_in_the_window_is_progress() {
        let (_dir, path) = history("ok", &[(10, "ok"), (3_500, "ok")]);
        assert!(progress(&path, 3_000, 1_000).is_none());
    }

    #[test]
    fn successes_only_before_or_after_the_window_are_not() {
        let (_dir, path) = history("late", &[(10, "ok"), (3_500, "fail"), (5_000, "ok")]);
        let failure = progress(&path, 3_000, 1_000).expect("no progress");
        assert_eq!(failure.check, "no progress");
        assert_eq!(failure.t_ns, 4_000);
        assert_eq!(failure.operations, vec![0]);
        assert!(
            failure
                .message
                .contains("the last one completed at t=0.000000s (operation 0 of 3)"),
            "{}",
            failure.message
        );
        let (_empty_dir, empty) = history("empty", &[]);
        assert!(progress(&empty, 3_000, 1_000).is_some());
    }
}
