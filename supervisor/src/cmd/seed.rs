//! One seed of a scenario, in four steps: build the simulated cluster, run
//! it, judge the outcome, write the artifacts. `run` calls it for each seed,
//! `run -j` in a worker process per seed, `replay` into a fresh directory.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cmd::cli::{RunArgs, SimArgs};
use crate::cmd::links::{LinkError, StableLinks};
use crate::cmd::recheck::{self, Recheck};
use crate::cmd::settings::{config, SettingsError};
use crate::engine::probes::ProbeSpec;
use crate::engine::{Ending, Outcome, Supervisor};
use crate::host::launch::{LaunchError, LaunchSpec};
use crate::path_error::PathError;
use crate::report::artifacts::{self, Report, Verdict};
use crate::report::checks::{self, Failure};
use crate::report::provenance;
use crate::report::replays::Replays;
use crate::report::summary::SeedResult;
use crate::report::timeline_error::TimelineError;
use crate::scenario::plan::FaultSpec;
use crate::scenario::schedule_file::Schedule;
use crate::scenario::{NodeSpec, Scenario};
use crate::sim::netstate::{NetSetupError, NetState};
use crate::sim::seeds::SeedTextError;
use crate::sim::trace::TraceLog;
use crate::sys::table as syscalls;

/// The environment every node starts from (the host's would make runs
/// differ between machines); a node's `env` adds to it.
const BASE_ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/tmp"),
    ("LANG", "C.UTF-8"),
];

/// Why a seed could not be run or reported: faultline's failure, not the
/// program's (the program's failures are the verdict).
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// A simulation setting does not parse.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// A file of the seed (an artifact, a program to hash) cannot be read
    /// or written.
    #[error(transparent)]
    File(#[from] PathError),
    /// The simulated network cannot be set up.
    #[error(transparent)]
    Net(#[from] NetSetupError),
    /// A fixed-length link for {node_dir} or {history}.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// A node's simulated disk cannot be created.
    #[error("disk of node {node:?}: {source}")]
    Disk {
        /// The node.
        node: String,
        /// What the disk said.
        source: vfs::VfsError,
    },
    /// A node's disk has no host to attach to.
    #[error(transparent)]
    AddDisk(LaunchError),
    /// A node's disk directory has no canonical path to mount.
    #[error(transparent)]
    Mount(std::io::Error),
    /// A node's program could not be started.
    #[error("node {node:?}: {source}")]
    Launch {
        /// The node.
        node: String,
        /// Why.
        source: LaunchError,
    },
    /// The timeline page cannot be rendered.
    #[error(transparent)]
    Timeline(#[from] TimelineError),
    /// The report's seed or trace hash does not parse back.
    #[error(transparent)]
    Report(#[from] SeedTextError),
}

/// Everything a seed's run needs besides the seed: the same for every seed
/// of one `run`.
#[derive(Clone)]
pub struct SeedJob<'a> {
    /// The validated scenario.
    pub sc: &'a Scenario,
    /// The scenario file, absolute: nodes run in its folder.
    pub file: PathBuf,
    /// The file's text, copied into every seed's artifacts.
    pub text: String,
    /// The settings that shape the run.
    pub sim: &'a SimArgs,
    /// Wall-clock time a seed may take (None: no limit).
    pub seed_timeout: Option<Duration>,
    /// SHA-256 of each node's program.
    pub binaries: BTreeMap<String, String>,
    /// A recorded fault plan to run instead of planning the faults from
    /// the seed (`run --schedule`, `shrink`).
    pub schedule: Option<Schedule>,
    /// Which seeds run twice (`new` makes it `Never`).
    pub recheck: Recheck,
    /// The CPU slot of a `run -j` worker ([`crate::engine::Config::cpu_slot`]).
    pub cpu_slot: Option<crate::host::placement::CpuSlot>,
}

impl<'a> SeedJob<'a> {
    /// A job for `sc`, loaded from `file` whose text is `text`.
    pub fn new(
        sc: &'a Scenario,
        file: &Path,
        text: String,
        sim: &'a SimArgs,
        seed_timeout_ns: u64,
    ) -> Result<SeedJob<'a>, SeedError> {
        let file = std::path::absolute(file).map_err(PathError::io(file))?;
        Ok(SeedJob {
            sc,
            file,
            text,
            sim,
            seed_timeout: (seed_timeout_ns > 0).then(|| Duration::from_nanos(seed_timeout_ns)),
            binaries: provenance::hash_binaries(sc.nodes.iter().map(|n| n.program.as_path()))?,
            schedule: None,
            recheck: Recheck::Never,
            cpu_slot: None,
        })
    }

    /// The same job, running `schedule` instead of the seed's own plan.
    pub fn with_schedule(self, schedule: Schedule) -> SeedJob<'a> {
        SeedJob {
            schedule: Some(schedule),
            ..self
        }
    }

    /// The folder nodes run in (commands already resolve against it): the
    /// scenario's `folder`, else the file's.
    pub fn node_cwd(&self) -> PathBuf {
        self.sc.folder.clone().unwrap_or_else(|| {
            self.file
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
        })
    }
}

/// A built cluster, ready to run; the open files and links live until the
/// seed ends.
struct Built {
    sup: Supervisor,
    outputs: Vec<(File, File)>,
    _links: StableLinks,
    history: PathBuf,
}

/// `<artifacts>/<scenario>/<seed as 16 hex digits>`.
pub fn seed_dir(args: &RunArgs, sc: &Scenario, seed: u64) -> PathBuf {
    args.artifacts.join(&sc.name).join(format!("{seed:016x}"))
}

/// Runs one seed into `dir` (emptied first) and returns its result.
pub fn run_seed(job: &SeedJob, seed: u64, dir: &Path) -> Result<SeedResult, SeedError> {
    run_judged(job, seed, dir).map(|(result, _)| result)
}

/// Runs, judges (running the seed again if `job.recheck` asks) and
/// reports one seed; returns its result and the run's outcome.
fn run_judged(job: &SeedJob, seed: u64, dir: &Path) -> Result<(SeedResult, Outcome), SeedError> {
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(PathError::io(dir))?;
    let copy = dir.join(artifacts::SCENARIO_COPY);
    std::fs::write(&copy, &job.text).map_err(PathError::io(&copy))?;
    let built = build(job, seed, dir)?;
    let outcome = built.sup.run();
    drop(built.outputs);
    let (mut verdict, mut failure) = judge(job, &outcome, dir, &built.history, started.elapsed());
    let replays = match job.recheck.wants(verdict) {
        true => second_run(job, seed, dir, &outcome)?,
        false => None,
    };
    if let (Recheck::Every, Some(Replays::Diverged(d))) = (job.recheck, &replays) {
        failure = Some(recheck::nondeterministic(d, verdict, failure.as_ref()));
        verdict = Verdict::Nondeterministic;
    }
    let report = report(
        job,
        seed,
        dir,
        &outcome,
        (verdict, failure, replays),
        started.elapsed(),
    )?;
    let mut result = SeedResult::from_report(&report)?;
    result.text = crate::cmd::verdict::seed_text(&report, &outcome, dir);
    Ok((result, outcome))
}

/// Runs the seed a second time into `dir`/recheck and compares the traces
/// (None if an interrupt cut the second run short).
fn second_run(
    job: &SeedJob,
    seed: u64,
    dir: &Path,
    first: &Outcome,
) -> Result<Option<Replays>, SeedError> {
    let again = dir.join(recheck::RECHECK_DIR);
    let once = SeedJob {
        recheck: Recheck::Never,
        ..job.clone()
    };
    let (_, second) = run_judged(&once, seed, &again)?;
    if crate::host::interrupt::received().is_some() {
        return Ok(None);
    }
    Ok(Some(recheck::compare(dir, &again, first, &second)?))
}

/// Step 1: the supervisor with every node launched on its host.
fn build(job: &SeedJob, seed: u64, dir: &Path) -> Result<Built, SeedError> {
    let sc = job.sc;
    let create = |name: String| {
        let path = dir.join(name);
        File::create(&path).map_err(PathError::io(&path))
    };
    let mut cfg = config(job.sim, seed)?;
    cfg.until_ns = Some(sc.duration_ns);
    cfg.cpu_slot = job.cpu_slot;
    cfg.wall_deadline = job.seed_timeout.map(|t| Instant::now() + t);
    let mut names: Vec<String> = sc.nodes.iter().map(|n| n.name.clone()).collect();
    // Each invariant probe runs on a host of its own, after the nodes'.
    names.extend(sc.invariants.iter().map(|i| i.host.clone()));
    let net = NetState::new(seed, sc.net.clone(), &names, &dir.join("etc"))?;
    let trace = TraceLog::compressed(create(artifacts::TRACE.into())?)
        .map_err(PathError::io(&dir.join(artifacts::TRACE)))?;
    let faults = crate::scenario::plan::enabled(&sc.faults, &sc.rules, seed);
    let plan = match &job.schedule {
        Some(schedule) => schedule.plan(),
        None => crate::scenario::plan::build(&faults, &sc.rules, seed, sc.duration_ns),
    };
    let mut sup = Supervisor::new(cfg, trace, net, plan);
    let mut outputs = Vec::new();
    // Workload clients append their key-value operations here ({history} or
    // $FAULTLINE_HISTORY); the linearizability check reads it.
    let history = dir.join("history.jsonl");
    let mut links = StableLinks::default();
    let history_link = links.add(&history, "history.jsonl")?;
    sup.watch_history(history.clone());
    for node in &sc.nodes {
        // `{node_dir}` in a node's arguments or environment is a fresh,
        // empty directory of this seed (a data directory, say).
        let node_dir = dir.join(format!("{}.d", node.name));
        std::fs::create_dir_all(&node_dir).map_err(PathError::io(&node_dir))?;
        let node_dir = links.add(&node_dir, "dir")?;
        let expand = |s: &String| {
            s.replace("{node_dir}", &node_dir)
                .replace("{history}", &history_link)
        };
        let out = create(format!("{}.stdout", node.name))?;
        let err = create(format!("{}.stderr", node.name))?;
        let mut env: Vec<(String, String)> = BASE_ENV
            .iter()
            .map(|&(k, v)| (k.into(), v.into()))
            .collect();
        env.push(("FAULTLINE_HISTORY".into(), history_link.clone()));
        env.extend(node.env.iter().map(|(k, v)| (k.clone(), expand(v))));
        let mut spec = LaunchSpec {
            program: node.command0.clone(),
            args: node.args.iter().map(expand).collect(),
            env,
            filter: syscalls::seccomp_filter(None),
            output: Some((out.as_raw_fd(), err.as_raw_fd())),
            mounts: Vec::new(),
            channel_fd: None,
            notify_filter: None,
            cwd: Some(job.node_cwd()),
        };
        if let Some(data_dir) = &node.data_dir {
            let disk_dir = dir.join(format!("{}.disk", node.name));
            let disk = node_disk(sc, &faults, node, seed, &disk_dir)?;
            sup.add_disk(&node.name, data_dir.clone(), disk, sc.disk.size)
                .map_err(SeedError::AddDisk)?;
            // In the node's private mount namespace the disk is mounted over
            // the data_dir (made at each launch), so nothing is written to
            // the host's directory.
            let source = disk_dir.canonicalize().map_err(SeedError::Mount)?;
            spec.mounts = vec![(source, data_dir.clone())];
        }
        sup.launch(&spec, &node.name)
            .map_err(|source| SeedError::Launch {
                node: node.name.clone(),
                source,
            })?;
        if let Some(delay) = node.restart_on_exit {
            sup.restart_last_on_exit(delay, node.reboot_on_exit);
        }
        outputs.push((out, err));
    }
    let (probes, probe_outputs) = probe_specs(sc, dir, &history_link, &job.node_cwd())?;
    outputs.extend(probe_outputs);
    sup.add_probes(probes);
    Ok(Built {
        sup,
        outputs,
        _links: links,
        history,
    })
}

/// A node's simulated disk in `disk_dir`, with the seed's enabled disk faults.
fn node_disk(
    sc: &Scenario,
    faults: &[FaultSpec],
    node: &NodeSpec,
    seed: u64,
    disk_dir: &Path,
) -> Result<vfs::Disk, SeedError> {
    let mut disk = vfs::Disk::new(
        disk_dir,
        crate::sim::seeds::Streams::split(seed).disk(&node.name),
    )
    .map_err(|source| SeedError::Disk {
        node: node.name.clone(),
        source,
    })?;
    let cfg = disk.config_mut();
    for f in faults {
        match f {
            FaultSpec::FsyncError { probability, nodes } if nodes.contains(&node.name) => {
                cfg.fsync_eio_probability = *probability;
            }
            FaultSpec::WriteError {
                probability,
                errno,
                nodes,
            } if nodes.contains(&node.name) => {
                if *errno == libc::EIO {
                    cfg.write_eio_probability = *probability;
                } else {
                    cfg.write_enospc_probability = *probability;
                }
            }
            FaultSpec::DiskBug {
                lying_fsync,
                lose_dir_entries,
                nodes,
            } if nodes.contains(&node.name) => {
                cfg.lying_fsync |= *lying_fsync;
                cfg.lose_dir_entries.extend(lose_dir_entries.clone());
            }
            _ => {}
        }
    }
    cfg.ordered_metadata = sc.disk.ordered_metadata;
    cfg.crash_model = sc.disk.unsynced;
    Ok(disk)
}

/// Step 3: the verdict. A run faultline could not finish (stuck,
/// interrupted, its own error) is not judged by the program's checks.
fn judge(
    job: &SeedJob,
    outcome: &Outcome,
    dir: &Path,
    history: &Path,
    wall: Duration,
) -> (Verdict, Option<Failure>) {
    let here = |check: &str, message: String| Failure {
        check: check.into(),
        message,
        t_ns: outcome.vtime,
        event: outcome.events,
        unit: "event".into(),
        operations: Vec::new(),
    };
    match &outcome.ending {
        Ending::Interrupted(_) => (Verdict::Interrupted, None),
        Ending::Internal(e) => (
            Verdict::Error,
            Some(here("faultline", format!("faultline failed, not the program: {e}"))),
        ),
        Ending::Stuck => (
            Verdict::Stuck,
            Some(here(
                "stuck",
                format!(
                    "the seed ran {:.1}s of wall time (--seed-timeout) but reached only t={:.6}s of its {:.6}s: \
                     a node that spins without syscalls keeps virtual time from advancing \
                     (the watchdog preempted {} time(s))",
                    wall.as_secs_f64(),
                    outcome.vtime as f64 / 1e9,
                    job.sc.duration_ns as f64 / 1e9,
                    outcome.preemptions
                ),
            )),
        ),
        _ => {
            let sc = job.sc;
            let failure = checks::node_exits(outcome, dir)
                .or_else(|| checks::invariants(outcome))
                .or_else(|| {
                    let check = &sc.check;
                    checks::stderr_patterns(outcome, dir, &check.stderr_patterns, &check.stderr_ignore)
                })
                .or_else(|| checks::linearizable(history))
                .or_else(|| {
                    let within = sc.check.progress_within?;
                    let from = sc.duration_ns - sc.rules.quiet?;
                    crate::report::progress::progress(history, from, within)
                })
                .or_else(|| checks::checker(&sc.check.checker, dir, outcome));
            let verdict = if failure.is_some() {
                Verdict::Fail
            } else {
                Verdict::Pass
            };
            (verdict, failure)
        }
    }
}

/// Step 4: report.json and the other artifacts, and the timeline page.
fn report(
    job: &SeedJob,
    seed: u64,
    dir: &Path,
    outcome: &Outcome,
    (verdict, failure, replays): (Verdict, Option<Failure>, Option<Replays>),
    wall: Duration,
) -> Result<Report, SeedError> {
    let report = Report {
        format: artifacts::FORMAT,
        scenario: job.sc.name.clone(),
        file: job.file.display().to_string(),
        seed: format!("0x{seed:016x}"),
        pass: verdict == Verdict::Pass,
        verdict,
        interrupted: verdict == Verdict::Interrupted,
        vtime_ns: outcome.vtime,
        events: outcome.events,
        stops: outcome.stops,
        fast_calls: outcome.fast_calls,
        handoffs: outcome.handoffs,
        noted_wakes: outcome.noted_wakes,
        quiet_polls: outcome.quiet_polls,
        quiet_polls_in_stub: outcome.quiet_polls_in_stub,
        empty_reads: outcome.empty_reads,
        empty_reads_in_stub: outcome.empty_reads_in_stub,
        preemptions: outcome.preemptions,
        host_state: outcome.host_state.clone(),
        diagnostics: crate::sim::diagnostics::counts(&outcome.diagnostics),
        trace_hash: format!("0x{:016x}", outcome.hash),
        schedule_policy: job.sim.schedule(),
        wall_ms: wall.as_millis() as u64,
        settings: job.sim.clone(),
        faultline_version: provenance::VERSION.to_string(),
        binaries: job.binaries.clone(),
        nodes: artifacts::node_reports(outcome),
        invariants: artifacts::invariant_reports(job.sc, outcome),
        failure,
        scheduled: job.schedule.is_some(),
        replays,
        replay: format!("faultline replay {}", dir.display()),
    };
    artifacts::write(dir, &report, outcome).map_err(PathError::io(dir))?;
    crate::report::timeline::render(dir)?;
    Ok(report)
}

/// A program's stdout and stderr files, kept open while the seed runs.
type OutputFiles = (File, File);

/// The scenario's invariant probes for one seed, with the files their
/// output goes to (`<host>.stdout`, `<host>.stderr`, every run appended;
/// kept open until the seed ends). A probe runs in the scenario's folder,
/// like the nodes; its environment is the nodes' base plus
/// `FAULTLINE_NODES` (`name=address,...` of the nodes) and
/// `FAULTLINE_HISTORY`; the engine adds `FAULTLINE_VTIME` per run.
fn probe_specs(
    sc: &Scenario,
    dir: &Path,
    history_link: &str,
    cwd: &Path,
) -> Result<(Vec<ProbeSpec>, Vec<OutputFiles>), SeedError> {
    let nodes: Vec<String> = sc
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{}=127.77.0.{}", n.name, i + 1))
        .collect();
    let mut specs = Vec::new();
    let mut files = Vec::new();
    for inv in &sc.invariants {
        let path = |stream: &str| dir.join(format!("{}.{stream}", inv.host));
        let (out_path, err_path) = (path("stdout"), path("stderr"));
        let open = |p: &Path| File::create(p).map_err(PathError::io(p));
        let (out, err) = (open(&out_path)?, open(&err_path)?);
        let mut env: Vec<(String, String)> = BASE_ENV
            .iter()
            .map(|&(k, v)| (k.into(), v.into()))
            .collect();
        env.push(("FAULTLINE_NODES".into(), nodes.join(",")));
        env.push(("FAULTLINE_HISTORY".into(), history_link.to_string()));
        specs.push(ProbeSpec {
            name: inv.name.clone(),
            host: inv.host.clone(),
            launch: LaunchSpec {
                program: inv.command0.clone(),
                args: inv.args.clone(),
                env,
                filter: syscalls::seccomp_filter(None),
                output: Some((out.as_raw_fd(), err.as_raw_fd())),
                mounts: Vec::new(),
                channel_fd: None,
                notify_filter: None,
                cwd: Some(cwd.to_path_buf()),
            },
            every: inv.every,
            after: inv.after.clone(),
            from: inv.from,
            timeout: inv.timeout,
            output_files: (out_path, err_path),
        });
        files.push((out, err));
    }
    Ok((specs, files))
}
