//! What `faultline run` prints: the start line, each seed's verdict block,
//! and at the end the table of failing seeds, as a CI log reader expects.

use std::fmt::Write as _;
use std::path::Path;

use crate::engine::{signal_name, Ending, Outcome};
use crate::report::artifacts::Report;
use crate::report::summary::SeedResult;

/// `faultline: run FILE: scenario "NAME", N seed(s), J job(s), artifacts in DIR/`.
pub fn start_line(file: &Path, name: &str, seeds: usize, jobs: usize, dir: &Path) -> String {
    format!(
        "faultline: run {}: scenario {name:?}, {seeds} seed(s), {jobs} job(s), artifacts in {}/\n",
        file.display(),
        dir.display()
    )
}

/// The line before a pinned seed runs: what it did when it was pinned.
pub fn pinned_line(seed: u64, note: &str) -> String {
    if note.starts_with("check ") {
        format!("faultline: pinned seed 0x{seed:016x} (failed before: {note})\n")
    } else {
        format!("faultline: pinned seed 0x{seed:016x} ({note})\n")
    }
}

/// A seed's verdict block: the verdict line with its wall time, one line per
/// node, warnings, and for a failure the bug-report block.
pub fn seed_text(report: &Report, outcome: &Outcome, dir: &Path) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "faultline: seed={} {} vtime={:.6}s events={} trace-hash={} wall={:.1}s",
        report.seed,
        report.verdict.upper(),
        outcome.vtime as f64 / 1e9,
        outcome.events,
        report.trace_hash,
        report.wall_ms as f64 / 1e3
    );
    for (root, node) in outcome.roots.iter().zip(&report.nodes) {
        let mut notes = String::new();
        if root.crashes > 0 {
            let _ = write!(
                notes,
                " (crashed {} time(s) by the fault plan)",
                root.crashes
            );
        }
        if root.restarts > 0 {
            let _ = write!(
                notes,
                " (exited and was restarted {} time(s))",
                root.restarts
            );
        }
        let _ = writeln!(
            text,
            "faultline:   node {}: {}{notes}",
            node.name, node.outcome
        );
    }
    if outcome.preemptions > 0 {
        let _ = writeln!(
            text,
            "faultline:   warning: the watchdog preempted a thread {} time(s); this seed is possibly non-deterministic",
            outcome.preemptions
        );
    }
    if !outcome.host_state.is_empty() {
        let _ = writeln!(
            text,
            "faultline:   warning: {}; this seed is possibly non-deterministic",
            crate::sys::host_state::host_state_words(&outcome.host_state)
        );
    }
    match &outcome.ending {
        Ending::Deadlock(_) => {
            let _ = writeln!(
                text,
                "faultline:   every node idle from t={:.6}s with nothing pending",
                outcome.vtime as f64 / 1e9
            );
        }
        Ending::Interrupted(sig) => {
            let _ = writeln!(
                text,
                "faultline:   interrupted by {} at t={:.6}s: partial report in {}/report.json",
                signal_name(*sig),
                outcome.vtime as f64 / 1e9,
                dir.display()
            );
        }
        _ => {}
    }
    if let (None, Some(r)) = (&report.failure, &report.replays) {
        for line in r.text(&report.host_state).lines() {
            let _ = writeln!(text, "faultline: {line}");
        }
    }
    if let Some(f) = &report.failure {
        // The bug report block, in the format people paste into issues.
        let _ = writeln!(
            text,
            "{} seed={}  check {:?} at t={:.9}s ({} {})",
            report.verdict.upper(),
            report.seed,
            f.check,
            f.t_ns as f64 / 1e9,
            f.unit,
            f.event
        );
        text.push_str(&f.indented("  "));
        if let Some(r) = &report.replays {
            text.push_str(&r.text(&report.host_state));
        }
        let _ = writeln!(text, "  replay:    faultline replay {}", dir.display());
        let _ = writeln!(text, "  artifacts: {}/", dir.display());
    }
    text
}

/// The closing lines: every seed passed, or the table of the ones that did
/// not (seed, check, first line of the message), and the seeds not run.
pub fn end_text(name: &str, results: &[SeedResult], not_run: usize, interrupted: bool) -> String {
    let mut text = String::new();
    let failed: Vec<&SeedResult> = results.iter().filter(|r| !r.pass).collect();
    if failed.is_empty() {
        let _ = writeln!(
            text,
            "faultline: {} seed(s) of {name:?} passed",
            results.len()
        );
    } else {
        let list: Vec<String> = failed
            .iter()
            .map(|r| format!("0x{:016x}", r.seed))
            .collect();
        let _ = writeln!(
            text,
            "faultline: {} of {} seed(s) run failed: {}",
            failed.len(),
            results.len(),
            list.join(" ")
        );
        let width = failed
            .iter()
            .map(|r| r.check.as_deref().map_or(0, str::len))
            .max()
            .unwrap_or(0)
            .max("check".len());
        // "nondeterministic" is the one verdict word wider than the column.
        let vwidth = failed
            .iter()
            .map(|r| r.verdict().word().len())
            .max()
            .unwrap_or(0)
            .max(11);
        let _ = writeln!(
            text,
            "  {:<18}  {:<vwidth$}  {:<width$}  message",
            "seed", "verdict", "check"
        );
        for r in failed {
            let message = r
                .message
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("");
            let _ = writeln!(
                text,
                "  0x{:016x}  {:<vwidth$}  {:<width$}  {message}",
                r.seed,
                r.verdict().word(),
                r.check.as_deref().unwrap_or("-"),
            );
        }
    }
    if not_run > 0 && !interrupted {
        let _ = writeln!(
            text,
            "faultline: stopped after the first failure: {not_run} seed(s) not run (use --keep-going)"
        );
    }
    text
}
