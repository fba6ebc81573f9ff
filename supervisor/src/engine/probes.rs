//! Invariant probes (`[[invariant]]`): short-lived programs started on a
//! simulated host of their own every `every` of virtual time and right after
//! the named faults, judged when they exit. They are scheduled like any
//! thread, so a probe run is as reproducible as the nodes it looks at; a run
//! that exits non-zero, or outlives its virtual timeout, fails the seed and
//! stops the run there (the state it saw is the state at that point of the
//! trace).

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::host::launch::{LaunchError, LaunchSpec};

use super::Supervisor;

/// A probe ready to launch.
#[derive(Clone)]
pub struct ProbeSpec {
    /// The invariant's name (the failing check's name).
    pub name: String,
    /// Its simulated host.
    pub host: String,
    /// What to run; `FAULTLINE_VTIME` is added to its environment per run.
    pub launch: LaunchSpec,
    /// Virtual ns between runs (None: only after faults).
    pub every: Option<u64>,
    /// Fault kinds right after which it also runs.
    pub after: Vec<String>,
    /// Virtual ns before which it does not run.
    pub from: u64,
    /// Virtual ns a run may take.
    pub timeout: u64,
    /// The files its stdout and stderr go to (every run appends), from
    /// which a failing run's own output is quoted.
    pub output_files: (PathBuf, PathBuf),
}

/// One finished run of a probe, for the report and the check.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeRun {
    /// The invariant.
    pub name: String,
    /// Its host.
    pub host: String,
    /// Virtual ns it started at.
    pub started: u64,
    /// Virtual ns it was judged at.
    pub t: u64,
    /// The trace event that records the verdict.
    pub event: u64,
    /// The invariant held.
    pub pass: bool,
    /// How it ended, with its output quoted when it failed.
    pub message: String,
}

/// A run in progress.
struct Running {
    pid: i32,
    started: u64,
    /// Output file lengths when it started: its own output follows.
    out_from: (u64, u64),
    /// Its wait status, once the program has exited.
    status: Option<i32>,
}

/// How a run ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// The program exited with this wait status.
    Exited(i32),
    /// It outlived its timeout and was killed.
    TimedOut,
}

/// One probe's schedule.
struct Slot {
    spec: ProbeSpec,
    /// When it should start next (None: only after a fault).
    due: Option<u64>,
    running: Option<Running>,
}

/// Every probe of the run.
#[derive(Default)]
pub(crate) struct Probes {
    slots: Vec<Slot>,
    runs: Vec<ProbeRun>,
    failed: bool,
}

impl Probes {
    /// The earliest virtual time a probe needs the loop: a start or a
    /// timeout.
    pub(super) fn next_time(&self) -> Option<u64> {
        self.slots
            .iter()
            .filter_map(|s| match &s.running {
                Some(r) => Some(r.started.saturating_add(s.spec.timeout)),
                None => s.due,
            })
            .min()
    }

    /// A run failed: the seed has failed and the run stops.
    pub(super) fn failed(&self) -> bool {
        self.failed
    }

    /// Whether `host` is a probe's (probes are never partitioned).
    pub(super) fn is_host(&self, host: &str) -> bool {
        self.slots.iter().any(|s| s.spec.host == host)
    }

    /// A fault of `kind` happened at `now`: probes that run after it are
    /// due (those whose `from` has come).
    pub(super) fn after_fault(&mut self, kind: &str, now: u64) {
        for s in &mut self.slots {
            if now >= s.spec.from && s.spec.after.iter().any(|k| k == kind) {
                s.due = Some(s.due.map_or(now, |d| d.min(now)));
            }
        }
    }

    /// Notes the exit of process `pid`; true if it was a probe's.
    pub(super) fn exited(&mut self, pid: i32, status: i32) -> bool {
        let run = self
            .slots
            .iter_mut()
            .filter_map(|s| s.running.as_mut())
            .find(|r| r.pid == pid && r.status.is_none());
        match run {
            Some(r) => {
                r.status = Some(status);
                true
            }
            None => false,
        }
    }

    /// The finished runs, in the order they were judged.
    pub(super) fn take_runs(&mut self) -> Vec<ProbeRun> {
        std::mem::take(&mut self.runs)
    }
}

impl Supervisor {
    /// Adds the scenario's probes; each first runs `every` after the start,
    /// or at its `from`.
    pub fn add_probes(&mut self, specs: Vec<ProbeSpec>) {
        self.probes.slots.extend(specs.into_iter().map(|spec| Slot {
            due: first_run(spec.every, spec.from),
            spec,
            running: None,
        }));
    }

    /// At a scheduling point: judges the probes that exited or ran out of
    /// time, and starts those that are due.
    pub(super) fn tend_probes(&mut self) -> Result<(), LaunchError> {
        let now = self.sim.clock.now();
        for i in 0..self.probes.slots.len() {
            let slot = &self.probes.slots[i];
            let verdict = match &slot.running {
                Some(r) if r.status.is_some() => r.status.map(End::Exited),
                Some(r) if now >= r.started.saturating_add(slot.spec.timeout) => {
                    Some(End::TimedOut)
                }
                _ => None,
            };
            if let Some(v) = verdict {
                self.judge(i, v)?;
            }
            if self.probes.failed {
                return Ok(());
            }
            let slot = &self.probes.slots[i];
            if slot.running.is_none() && slot.due.is_some_and(|d| d <= now) {
                self.start_probe(i)?;
            }
        }
        Ok(())
    }

    /// Starts a run of probe `i` now.
    fn start_probe(&mut self, i: usize) -> Result<(), LaunchError> {
        let now = self.sim.clock.now();
        let slot = &mut self.probes.slots[i];
        // The next periodic run: the first multiple of `every` after now.
        slot.due = slot.spec.every.map(|e| (now / e + 1) * e);
        let spec = slot.spec.clone();
        let len = |p: &PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
        let out_from = (len(&spec.output_files.0), len(&spec.output_files.1));
        let mut launch = spec.launch.clone();
        launch.env.push(("FAULTLINE_VTIME".into(), now.to_string()));
        self.fault("probe", &spec.host, &[i as i64], spec.name.clone());
        let (pid, vtid) = self.spawn_on(&launch, &spec.host)?;
        self.probes.slots[i].running = Some(Running {
            pid,
            started: now,
            out_from,
            status: None,
        });
        self.run_until_stopped(vtid)
    }

    /// Ends the run of probe `i` and records the verdict; whatever it left
    /// running on its host is killed.
    fn judge(&mut self, i: usize, end: End) -> Result<(), LaunchError> {
        let Some(run) = self.probes.slots[i].running.take() else {
            return Ok(());
        };
        let spec = self.probes.slots[i].spec.clone();
        let host = self.sim.net.hosts[&spec.host];
        self.kill_host(host)?;
        let pass = end == End::Exited(0);
        let how = match end {
            End::Exited(status) => super::lifecycle::describe_status(status),
            End::TimedOut => format!(
                "no verdict within its timeout of {}s (virtual): killed",
                spec.timeout as f64 / 1e9
            ),
        };
        let kind = if pass { "probe_pass" } else { "probe_fail" };
        let code = match end {
            End::Exited(status) => status as i64,
            End::TimedOut => -1,
        };
        self.fault(
            kind,
            &spec.host,
            &[i as i64, code],
            format!("{}: {how}", spec.name),
        );
        let mut message = format!(
            "invariant {:?} {} on {} (run from t={}): {how}",
            spec.name,
            if pass { "held" } else { "failed" },
            spec.host,
            seconds(run.started)
        );
        if !pass {
            for (stream, path, from) in [
                ("stdout", &spec.output_files.0, run.out_from.0),
                ("stderr", &spec.output_files.1, run.out_from.1),
            ] {
                message.push_str(&quote(stream, path, from));
            }
        }
        self.probes.runs.push(ProbeRun {
            name: spec.name,
            host: spec.host,
            started: run.started,
            t: self.sim.clock.now(),
            event: self.sim.trace.count(),
            pass,
            message,
        });
        self.probes.failed |= !pass;
        Ok(())
    }
}

/// Most lines of a failing run's output quoted per stream.
const QUOTED_LINES: usize = 20;

/// The output a run wrote to `path` past byte `from`, as indented lines
/// (its last [`QUOTED_LINES`]), or nothing if it wrote none.
fn quote(stream: &str, path: &PathBuf, from: u64) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let own = String::from_utf8_lossy(bytes.get(from as usize..).unwrap_or_default()).into_owned();
    let lines: Vec<&str> = own.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!("\n    {stream}:");
    if lines.len() > QUOTED_LINES {
        let _ = write!(out, " (last {QUOTED_LINES} of {} lines)", lines.len());
    }
    for line in &lines[lines.len().saturating_sub(QUOTED_LINES)..] {
        let _ = write!(out, "\n      | {line}");
    }
    out
}

/// When a probe run every `every` (if at all) first runs: `every` after
/// the start, or at `from` if that is set.
fn first_run(every: Option<u64>, from: u64) -> Option<u64> {
    every.map(|e| if from > 0 { from } else { e })
}

/// Virtual ns as seconds, for messages.
fn seconds(ns: u64) -> String {
    format!("{:.9}s", ns as f64 / 1e9)
}
