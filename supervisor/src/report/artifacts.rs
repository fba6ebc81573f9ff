//! A seed's artifact directory (format 1): report.json, faults.json,
//! net.jsonl, timeline.txt, faultline.log (the diagnostics) and output.jsonl
//! (when the nodes wrote their output), written next to the trace
//! (trace.jsonl.zst), a copy of the scenario (scenario.toml) and the nodes'
//! output. Everything a bug report needs, readable without faultline.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cmd::cli::SimArgs;

use crate::engine::{signal_name, Outcome, Root};
use crate::report::checks::Failure;
use crate::scenario::Scenario;

/// Version of the artifact formats.
pub const FORMAT: u32 = 1;

/// The copy of the scenario file in every seed's directory.
pub const SCENARIO_COPY: &str = "scenario.toml";

/// The seed's trace, zstd-compressed (`zstdcat` it, or `faultline` reads it).
pub const TRACE: &str = "trace.jsonl.zst";

/// How a seed ended, as report.json, summary.json and the verdict line say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every check passed.
    Pass,
    /// A check failed.
    Fail,
    /// The seed ran past `--seed-timeout` of wall time.
    Stuck,
    /// SIGINT or SIGTERM stopped it; the report is partial.
    Interrupted,
    /// faultline itself failed (not the program).
    Error,
    /// `run --check-determinism`: a second run of the seed gave another
    /// trace (report.json's `replays` says where).
    Nondeterministic,
}

impl Verdict {
    /// The word for the terminal: PASS, FAIL, STUCK, INTERRUPTED, ERROR,
    /// NONDETERMINISTIC.
    pub fn upper(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Stuck => "STUCK",
            Verdict::Interrupted => "INTERRUPTED",
            Verdict::Error => "ERROR",
            Verdict::Nondeterministic => "NONDETERMINISTIC",
        }
    }

    /// The word in JSON and XML: pass, fail, stuck, interrupted, error,
    /// nondeterministic.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Stuck => "stuck",
            Verdict::Interrupted => "interrupted",
            Verdict::Error => "error",
            Verdict::Nondeterministic => "nondeterministic",
        }
    }
}

/// report.json.
#[derive(Serialize, Deserialize)]
pub struct Report {
    /// Artifact format version.
    pub format: u32,
    /// Scenario name.
    pub scenario: String,
    /// The scenario file, absolute (its copy is scenario.toml, next to this).
    pub file: String,
    /// The seed, 0x-hex.
    pub seed: String,
    /// Whether every check passed.
    pub pass: bool,
    /// pass, fail, stuck, interrupted, error or nondeterministic.
    #[serde(default = "Verdict::unknown")]
    pub verdict: Verdict,
    /// SIGINT/SIGTERM stopped the seed: this report is partial.
    #[serde(default)]
    pub interrupted: bool,
    /// Virtual ns the seed ran.
    pub vtime_ns: u64,
    /// Trace events.
    pub events: u64,
    /// ptrace stops handled (a cost measure; not part of the determinism check).
    pub stops: u64,
    /// Calls answered without a ptrace stop: over the fast path or as
    /// seccomp notifications (`--notify`).
    pub fast_calls: u64,
    /// Turns the fast path handed from thread to thread in the programs'
    /// own CPU instead of waking the next thread from the supervisor's.
    pub handoffs: u64,
    /// Of `fast_calls`, the futex wakes a patched Go runtime made without
    /// a round trip, noted in its slot.
    #[serde(default)]
    pub noted_wakes: u64,
    /// Zero-timeout epoll waits of Go programs that found nothing,
    /// answered in place: no scheduling points, no trace events (a patched
    /// runtime's stub answers most of them without a round trip).
    #[serde(default)]
    pub quiet_polls: u64,
    /// Of `quiet_polls`, those a patched Go runtime's stub answered itself,
    /// without a round trip.
    #[serde(default)]
    pub quiet_polls_in_stub: u64,
    /// Reads of Go programs that failed with EAGAIN on an empty
    /// non-blocking simulated socket, answered in place as quiet polls are
    /// (Go reads a socket again until EAGAIN after each read with data).
    #[serde(default)]
    pub empty_reads: u64,
    /// Of `empty_reads`, those a patched Go runtime's stub answered itself.
    #[serde(default)]
    pub empty_reads_in_stub: u64,
    /// Times the watchdog preempted a thread: if not 0, the seed is
    /// possibly non-deterministic (there is no deterministic preemption).
    pub preemptions: u64,
    /// What faultline reported besides the verdict, counted by kind
    /// (`refused_call`, `blocked_connect`, `preemption`, `killed`, `vdso`);
    /// faultline.log has the lines.
    #[serde(default)]
    pub diagnostics: BTreeMap<String, u64>,
    /// Reads of host state faultline does not simulate, per call kind and
    /// node: if any, the seed is possibly non-deterministic too.
    #[serde(default)]
    pub host_state: Vec<crate::sys::host_state::HostStateRead>,
    /// The trace hash, 0x-hex.
    pub trace_hash: String,
    /// How threads were scheduled (`--schedule-policy` and its settings).
    pub schedule_policy: crate::sim::scheduler::SchedulePolicy,
    /// Wall-clock milliseconds the seed took.
    #[serde(default)]
    pub wall_ms: u64,
    /// Every setting that shapes the run (the simulation flags); replay
    /// reuses them.
    #[serde(default)]
    pub settings: SimArgs,
    /// The faultline version that ran the seed.
    #[serde(default)]
    pub faultline_version: String,
    /// SHA-256 of each program the nodes run, by path.
    #[serde(default)]
    pub binaries: BTreeMap<String, String>,
    /// The nodes in host order (host i has address 127.77.0.(i+1)).
    pub nodes: Vec<NodeReport>,
    /// The invariant probes, on the hosts after the nodes'.
    #[serde(default)]
    pub invariants: Vec<InvariantReport>,
    /// The first failing check.
    pub failure: Option<Failure>,
    /// The seed ran a recorded fault schedule (`run --schedule`, `shrink`)
    /// instead of planning its faults; its faults.json holds that plan, and
    /// replay runs it again.
    #[serde(default)]
    pub scheduled: bool,
    /// Whether a second run of the seed gave the same trace: "identical",
    /// or {"diverged": ...} with the first divergent event of each run and
    /// the likely cause. Absent when the seed was not run twice (it passed
    /// without `--check-determinism`, or `--no-recheck`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replays: Option<crate::report::replays::Replays>,
    /// The command that runs this seed again.
    pub replay: String,
}

impl Verdict {
    /// For reports older than the field: decided by `pass` below.
    fn unknown() -> Verdict {
        Verdict::Error
    }
}

/// One node in report.json.
#[derive(Serialize, Deserialize)]
pub struct NodeReport {
    /// Node (host) name.
    pub name: String,
    /// Its address.
    pub address: String,
    /// How it ended, in words.
    pub outcome: String,
    /// Crashes by the fault plan.
    pub crashes: u32,
    /// Restarts after exiting by itself.
    pub restarts: u32,
}

/// One invariant probe in report.json.
#[derive(Serialize, Deserialize)]
pub struct InvariantReport {
    /// The invariant's name.
    pub name: String,
    /// The host it runs on.
    pub host: String,
    /// Its address.
    pub address: String,
    /// Runs judged.
    pub runs: usize,
    /// Runs that failed (at most 1: the run stops at the first).
    pub failed: usize,
}

/// Builds report.json's invariant list.
pub fn invariant_reports(sc: &Scenario, outcome: &Outcome) -> Vec<InvariantReport> {
    sc.invariants
        .iter()
        .enumerate()
        .map(|(i, inv)| {
            let runs = outcome.probe_runs.iter().filter(|r| r.name == inv.name);
            InvariantReport {
                name: inv.name.clone(),
                host: inv.host.clone(),
                address: format!("127.77.0.{}", sc.nodes.len() + i + 1),
                runs: runs.clone().count(),
                failed: runs.filter(|r| !r.pass).count(),
            }
        })
        .collect()
}

/// How a node ended, in words.
pub fn outcome_words(r: &Root) -> String {
    match r.status {
        _ if r.down => "down at end (crashed by the fault plan)".into(),
        None => "running at end".into(),
        Some(st) if libc::WIFSIGNALED(st) => {
            format!("killed by {}", signal_name(libc::WTERMSIG(st)))
        }
        Some(st) => format!("exit {}", libc::WEXITSTATUS(st)),
    }
}

/// Builds report.json's node list.
pub fn node_reports(outcome: &Outcome) -> Vec<NodeReport> {
    outcome
        .roots
        .iter()
        .enumerate()
        .map(|(i, r)| NodeReport {
            name: r.name.clone(),
            address: format!("127.77.0.{}", i + 1),
            outcome: outcome_words(r),
            crashes: r.crashes,
            restarts: r.restarts,
        })
        .collect()
}

/// The report.json in a seed's directory `dir`.
pub fn read_report(dir: &Path) -> Result<Report, crate::path_error::PathError> {
    crate::path_error::read_json(&dir.join("report.json"))
}

/// Writes report.json, faults.json, net.jsonl, output.jsonl, faultline.log
/// and timeline.txt into `dir`.
pub fn write(dir: &Path, report: &Report, outcome: &Outcome) -> std::io::Result<()> {
    std::fs::write(dir.join("report.json"), pretty(report)? + "\n")?;
    std::fs::write(dir.join("faults.json"), pretty(&outcome.faults)? + "\n")?;
    std::fs::write(dir.join("net.jsonl"), json_lines(&outcome.messages)?)?;
    std::fs::write(dir.join("output.jsonl"), json_lines(&outcome.output)?)?;
    std::fs::write(dir.join("faultline.log"), log_text(report, outcome))?;
    std::fs::write(dir.join("timeline.txt"), timeline_text(report, outcome))
}

/// One JSON line per item.
fn json_lines<T: Serialize>(items: &[T]) -> std::io::Result<String> {
    let mut out = String::new();
    for item in items {
        out.push_str(&serde_json::to_string(item).map_err(std::io::Error::other)?);
        out.push('\n');
    }
    Ok(out)
}

/// faultline.log: every diagnostic of the seed, at its first occurrence,
/// with how often it happened.
fn log_text(report: &Report, outcome: &Outcome) -> String {
    let mut out = format!(
        "# faultline diagnostics: scenario {:?} seed {}: {} distinct\n",
        report.scenario,
        report.seed,
        outcome.diagnostics.len()
    );
    for d in &outcome.diagnostics {
        let _ = writeln!(
            out,
            "t={:>14.9}s  event {:>7}  {:<16} {}x  {}",
            d.t as f64 / 1e9,
            d.event,
            d.kind.name(),
            d.count,
            d.message
        );
    }
    out
}

/// timeline.txt: the faults, node exits and the failure in time order.
fn timeline_text(report: &Report, outcome: &Outcome) -> String {
    let mut rows: Vec<(u64, u64, String)> = outcome
        .faults
        .iter()
        .filter(|f| f.kind != crate::engine::fault_log::UNAPPLIED)
        .map(|f| {
            (
                f.t,
                f.event,
                format!("{:<10} {:<12} {}", f.node, f.kind, f.detail),
            )
        })
        .collect();
    for r in &outcome.roots {
        if let Some((t, event)) = r.exited_at {
            rows.push((
                t,
                event,
                format!("{:<10} {:<12} {}", r.name, "exit", outcome_words(r)),
            ));
        }
    }
    if let Some(f) = &report.failure {
        rows.push((
            f.t_ns,
            u64::MAX,
            // A message's further lines stay indented under its row.
            format!(
                "{:<10} {:<12} check {:?}: {}",
                "-",
                "FAIL",
                f.check,
                f.message.replace('\n', "\n      ")
            ),
        ));
    }
    rows.sort_by_key(|r| (r.0, r.1));
    let mut out = format!(
        "# faultline timeline: scenario {:?} seed {} ({})\n",
        report.scenario,
        report.seed,
        if report.pass { "PASS" } else { "FAIL" }
    );
    for (t, event, text) in rows {
        let ev = if event == u64::MAX {
            "-".to_string()
        } else {
            event.to_string()
        };
        let _ = writeln!(out, "t={:>14.9}s  event {:>7}  {text}", t as f64 / 1e9, ev);
    }
    let _ = writeln!(
        out,
        "end t={:.9}s after {} events",
        outcome.vtime as f64 / 1e9,
        outcome.events
    );
    out
}

/// Pretty JSON of an artifact.
fn pretty<T: Serialize>(v: &T) -> std::io::Result<String> {
    serde_json::to_string_pretty(v).map_err(std::io::Error::other)
}
