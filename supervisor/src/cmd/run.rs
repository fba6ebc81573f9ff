//! `faultline run`: a scenario's nodes on one simulated network, for each of
//! its seeds, with a verdict per seed and each node's output kept under the
//! artifacts directory.

use std::fmt::Write as _;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use crate::cmd::cli::RunArgs;
use crate::cmd::exec::config;
use crate::engine::probes::ProbeSpec;
use crate::engine::{Ending, Supervisor};
use crate::host::launch::LaunchSpec;
use crate::host::seccomp;
use crate::report::artifacts::{self, Report};
use crate::report::checks;
use crate::scenario::plan::FaultSpec;
use crate::scenario::{self, Scenario};
use crate::sim::netstate::NetState;
use crate::sim::trace::TraceLog;
use crate::sys::table as syscalls;

/// Exit code: every seed passed.
const EXIT_PASS: i32 = 0;
/// Exit code: a seed failed.
const EXIT_FAIL: i32 = 1;
/// Exit code: the scenario or the command line is wrong.
const EXIT_BAD_INPUT: i32 = 2;

/// The environment every node starts from (the host's would make runs
/// differ between machines); a node's `env` adds to it.
const BASE_ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/tmp"),
    ("LANG", "C.UTF-8"),
];

/// Runs the verb; returns the process exit code.
pub fn run(args: &RunArgs) -> i32 {
    let sc = match scenario::load(&args.file) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    if let Err(e) = config(&args.sim, 0) {
        eprintln!("faultline: error: {e}");
        return EXIT_BAD_INPUT;
    }
    let seeds = match crate::cmd::seeds::select(&sc, args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    if let Some(Err(e)) = args
        .results
        .as_deref()
        .map(crate::cmd::results::check_writable)
    {
        eprintln!("faultline: error: {e}");
        return EXIT_BAD_INPUT;
    }
    let results = if args.jobs > 1 && seeds.len() > 1 {
        crate::cmd::parallel::run_seeds(args, &sc, &seeds)
    } else {
        run_in_process(&sc, args, &seeds)
    };
    let results = match results {
        Ok(r) => r,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            return EXIT_BAD_INPUT;
        }
    };
    let failed: Vec<&SeedResult> = results.iter().filter(|r| !r.pass).collect();
    if args.seed_worker {
        return if failed.is_empty() {
            EXIT_PASS
        } else {
            EXIT_FAIL
        };
    }
    if let Err(e) = write_summary(args, &sc, &results) {
        eprintln!("faultline: error: {e}");
        return EXIT_BAD_INPUT;
    }
    if failed.is_empty() {
        eprintln!(
            "faultline: {} seed(s) of {:?} passed",
            results.len(),
            sc.name
        );
        return EXIT_PASS;
    }
    let list: Vec<String> = failed
        .iter()
        .map(|r| format!("0x{:016x}", r.seed))
        .collect();
    eprintln!(
        "faultline: {} of {} seed(s) run failed: {}",
        failed.len(),
        results.len(),
        list.join(" ")
    );
    EXIT_FAIL
}

/// Runs the seeds one after another in this process, with a progress bar
/// when stderr is a terminal and plain lines otherwise.
fn run_in_process(sc: &Scenario, args: &RunArgs, seeds: &[u64]) -> Result<Vec<SeedResult>, String> {
    use std::io::IsTerminal;
    let bar = (std::io::stderr().is_terminal() && seeds.len() > 1).then(|| {
        let bar = indicatif::ProgressBar::new(seeds.len() as u64);
        let style = indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} seeds  {elapsed_precise}  {msg}",
        )
        .expect("valid progress template");
        bar.set_style(style);
        bar
    });
    let say = |line: &str| match &bar {
        Some(b) => b.println(line.trim_end()),
        None => eprint!("{line}"),
    };
    let mut results = Vec::new();
    let mut failures = 0;
    for &seed in seeds {
        if let Some(note) = sc.pinned.iter().find(|p| p.0 == seed).map(|p| &p.1) {
            say(&format!("faultline: pinned seed 0x{seed:016x}: {note}\n"));
        }
        let started = std::time::Instant::now();
        let r = run_seed(sc, args, seed)?;
        if let Some(path) = &args.results {
            crate::cmd::results::append(path, &seed_dir(args, sc, seed), started.elapsed())
                .map_err(|e| e.to_string())?;
        }
        say(&r.text);
        failures += usize::from(!r.pass);
        if let Some(b) = &bar {
            b.inc(1);
            b.set_message(format!("{failures} failed"));
        }
        let stop = !r.pass && !args.keep_going;
        results.push(r);
        if stop {
            break;
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(results)
}

/// One shard's (or one run's) verdicts, for `faultline merge`.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Summary {
    /// Artifact format version.
    pub format: u32,
    /// The scenario.
    pub scenario: String,
    /// Every seed run, in order.
    pub seeds: Vec<SeedResult>,
}

/// Writes `<artifacts>/<scenario>/summary[-shard-I-of-N].json`.
fn write_summary(args: &RunArgs, sc: &Scenario, results: &[SeedResult]) -> Result<(), String> {
    let dir = args.artifacts.join(&sc.name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let name = match crate::cmd::seeds::shard(args).map_err(|e| e.to_string())? {
        Some((i, n)) => format!("summary-shard-{i}-of-{n}.json"),
        None => "summary.json".to_string(),
    };
    let summary = Summary {
        format: artifacts::FORMAT,
        scenario: sc.name.clone(),
        seeds: results.to_vec(),
    };
    let text = serde_json::to_string_pretty(&summary).map_err(|e| e.to_string())?;
    std::fs::write(dir.join(&name), text + "\n")
        .map_err(|e| format!("{}/{name}: {e}", dir.display()))
}

pub fn seed_dir(args: &RunArgs, sc: &Scenario, seed: u64) -> PathBuf {
    args.artifacts.join(&sc.name).join(format!("{seed:016x}"))
}

/// Runs one seed into its artifact directory.
pub fn run_seed(sc: &Scenario, args: &RunArgs, seed: u64) -> Result<SeedResult, String> {
    let dir = seed_dir(args, sc, seed);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let create = |name: String| {
        File::create(dir.join(&name)).map_err(|e| format!("{}/{name}: {e}", dir.display()))
    };
    let mut cfg = config(&args.sim, seed)?;
    cfg.until_ns = Some(sc.duration_ns);
    let mut names: Vec<String> = sc.nodes.iter().map(|n| n.name.clone()).collect();
    // Each invariant probe runs on a host of its own, after the nodes'.
    names.extend(sc.invariants.iter().map(|i| i.host.clone()));
    let net =
        NetState::new(seed, sc.net.clone(), &names, &dir.join("etc")).map_err(|e| e.to_string())?;
    let trace = TraceLog::new(Some(create("trace.jsonl".into())?), false);
    let faults = crate::scenario::plan::enabled(&sc.faults, &sc.rules, seed);
    let plan = crate::scenario::plan::build(&faults, &sc.rules, seed, sc.duration_ns);
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
        std::fs::create_dir_all(&node_dir).map_err(|e| format!("{}: {e}", node_dir.display()))?;
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
        let spec = LaunchSpec {
            program: node.program.display().to_string(),
            args: node.args.iter().map(expand).collect(),
            env,
            filter: seccomp::build_filter(&syscalls::trapped_numbers()),
            output: Some((out.as_raw_fd(), err.as_raw_fd())),
            mounts: Vec::new(),
            channel_fd: None,
        };
        let spec = match &node.data_dir {
            Some(data_dir) => {
                let disk_dir = dir.join(format!("{}.disk", node.name));
                let mut disk = vfs::Disk::new(
                    &disk_dir,
                    crate::sim::seeds::Streams::split(seed).disk(&node.name),
                )
                .map_err(|e| format!("disk of node {:?}: {e}", node.name))?;
                for f in &faults {
                    let cfg = disk.config_mut();
                    match f {
                        FaultSpec::FsyncError { probability, nodes }
                            if nodes.contains(&node.name) =>
                        {
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
                disk.config_mut().ordered_metadata = sc.ordered_metadata;
                // The mount point must exist; in the node's private mount
                // namespace the disk is mounted over it, so nothing is written
                // to the host's directory.
                std::fs::create_dir_all(data_dir)
                    .map_err(|e| format!("data_dir {}: {e}", data_dir.display()))?;
                sup.add_disk(&node.name, data_dir.clone(), disk)
                    .map_err(|e| e.to_string())?;
                let source = disk_dir.canonicalize().map_err(|e| e.to_string())?;
                LaunchSpec {
                    mounts: vec![(source, data_dir.clone())],
                    ..spec
                }
            }
            None => spec,
        };
        sup.launch(&spec, &node.name)
            .map_err(|e| format!("node {:?}: {e}", node.name))?;
        if let Some(delay) = node.restart_on_exit {
            sup.restart_last_on_exit(delay, node.reboot_on_exit);
        }
        outputs.push((out, err));
    }
    let probes = probe_specs(sc, &dir, &history_link)?;
    outputs.extend(probes.1);
    sup.add_probes(probes.0);
    let outcome = sup.run();
    drop(outputs);
    let failure = checks::node_exits(&outcome, &dir)
        .or_else(|| checks::invariants(&outcome))
        .or_else(|| checks::stderr_patterns(&outcome, &dir, &sc.stderr_patterns))
        .or_else(|| checks::linearizable(&history))
        .or_else(|| checks::checker(&sc.checker, &dir, &outcome));
    let report = Report {
        format: artifacts::FORMAT,
        scenario: &sc.name,
        file: args.file.display().to_string(),
        seed: format!("0x{seed:016x}"),
        pass: failure.is_none(),
        vtime_ns: outcome.vtime,
        events: outcome.events,
        stops: outcome.stops,
        fast_calls: outcome.fast_calls,
        preemptions: outcome.preemptions,
        diagnostics: crate::engine::diagnostics::counts(&outcome.diagnostics),
        trace_hash: format!("0x{:016x}", outcome.hash),
        schedule_policy: args.sim.schedule(),
        nodes: artifacts::node_reports(&outcome),
        invariants: artifacts::invariant_reports(sc, &outcome),
        failure,
        replay: format!("faultline replay {}", dir.display()),
    };
    artifacts::write(&dir, &report, &outcome).map_err(|e| format!("{}: {e}", dir.display()))?;
    crate::report::timeline::render(&dir)?;
    // The seed's verdict, printed by the caller (above a progress bar, if any).
    let mut text = String::new();
    let _ = writeln!(
        text,
        "faultline: seed=0x{seed:016x} {} vtime={:.6}s events={} trace-hash=0x{:016x}",
        if report.pass { "PASS" } else { "FAIL" },
        outcome.vtime as f64 / 1e9,
        outcome.events,
        outcome.hash
    );
    for (root, node) in outcome.roots.iter().zip(&report.nodes) {
        let mut notes = String::new();
        if root.crashes > 0 {
            notes.push_str(&format!(
                " (crashed {} time(s) by the fault plan)",
                root.crashes
            ));
        }
        if root.restarts > 0 {
            notes.push_str(&format!(
                " (exited and was restarted {} time(s))",
                root.restarts
            ));
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
    if let Ending::Deadlock(_) = outcome.ending {
        let _ = writeln!(
            text,
            "faultline:   every node idle from t={:.6}s with nothing pending",
            outcome.vtime as f64 / 1e9
        );
    }
    if let Some(f) = &report.failure {
        // The bug report block, in the format people paste into issues.
        let _ = writeln!(
            text,
            "FAIL seed=0x{seed:016x}  check {:?} at t={:.9}s ({} {})",
            f.check,
            f.t_ns as f64 / 1e9,
            f.unit,
            f.event
        );
        text.push_str(&f.indented("  "));
        let _ = writeln!(text, "  replay:    faultline replay {}", dir.display());
        let _ = writeln!(text, "  artifacts: {}/", dir.display());
    }
    Ok(SeedResult {
        seed,
        pass: report.pass,
        hash: outcome.hash,
        text,
    })
}

/// A program's stdout and stderr files, kept open while the seed runs.
type OutputFiles = (File, File);

/// The scenario's invariant probes for one seed, with the files their
/// output goes to (`<host>.stdout`, `<host>.stderr`, every run appended;
/// kept open until the seed ends). A probe's environment is the nodes' base
/// plus `FAULTLINE_NODES` (`name=address,...` of the nodes) and
/// `FAULTLINE_HISTORY`; the engine adds `FAULTLINE_VTIME` per run.
fn probe_specs(
    sc: &Scenario,
    dir: &std::path::Path,
    history_link: &str,
) -> Result<(Vec<ProbeSpec>, Vec<OutputFiles>), String> {
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
        let open =
            |p: &std::path::Path| File::create(p).map_err(|e| format!("{}: {e}", p.display()));
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
                program: inv.program.display().to_string(),
                args: inv.args.clone(),
                env,
                filter: seccomp::build_filter(&syscalls::trapped_numbers()),
                output: Some((out.as_raw_fd(), err.as_raw_fd())),
                mounts: Vec::new(),
                channel_fd: None,
            },
            every: inv.every,
            after: inv.after.clone(),
            timeout: inv.timeout,
            output_files: (out_path, err_path),
        });
        files.push((out, err));
    }
    Ok((specs, files))
}

/// Paths handed to the nodes, as symlinks of one fixed length: a path in the
/// environment or the arguments moves the initial stack (and so addresses
/// a program may print) by its length, and the artifacts directory must not
/// change a run. Removed when the seed ends.
#[derive(Default)]
struct StableLinks(Vec<PathBuf>);

impl StableLinks {
    /// A link `/tmp/faultline-links/<16 hex>-<suffix>` to `target`.
    fn add(&mut self, target: &std::path::Path, suffix: &str) -> Result<String, String> {
        let target = std::path::absolute(target).map_err(|e| e.to_string())?;
        let digest = crate::sim::trace::hash_bytes(target.as_os_str().as_encoded_bytes());
        let dir = PathBuf::from("/tmp/faultline-links");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let link = dir.join(format!("{digest:016x}-{suffix}"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link)
            .map_err(|e| format!("{}: {e}", link.display()))?;
        self.0.push(link.clone());
        Ok(link.display().to_string())
    }
}

impl Drop for StableLinks {
    fn drop(&mut self) {
        for link in &self.0 {
            let _ = std::fs::remove_file(link);
        }
    }
}

/// What one seed gave.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SeedResult {
    /// The seed.
    pub seed: u64,
    /// Every check passed.
    pub pass: bool,
    /// The trace hash.
    pub hash: u64,
    /// The verdict lines for the terminal.
    #[serde(skip)]
    pub text: String,
}
