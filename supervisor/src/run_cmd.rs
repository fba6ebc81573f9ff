//! `faultline run`: a scenario's nodes on one simulated network, for each of
//! its seeds, with a verdict per seed and each node's output kept under the
//! artifacts directory.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use crate::cli::RunArgs;
use crate::exec_cmd::config;
use crate::launch::LaunchSpec;
use crate::netstate::NetState;
use crate::plan::FaultSpec;
use crate::scenario::{self, Scenario};
use crate::supervisor::{signal_name, Ending, Supervisor};
use crate::trace::TraceLog;
use crate::{seccomp, syscalls};

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
    let seeds: Vec<u64> = match args.seed {
        Some(s) => vec![s],
        None => (0..args.seeds.unwrap_or(sc.seeds))
            .map(|i| scenario::seed(&sc.name, i))
            .collect(),
    };
    for (i, &seed) in seeds.iter().enumerate() {
        match run_seed(&sc, args, seed) {
            Ok(true) => {}
            Ok(false) => {
                eprintln!(
                    "faultline: seed 0x{seed:016x} failed ({} of {} seeds run)",
                    i + 1,
                    seeds.len()
                );
                eprintln!(
                    "faultline:   replay:    faultline run {} --seed 0x{seed:016x}",
                    args.file.display()
                );
                eprintln!(
                    "faultline:   artifacts: {}/",
                    seed_dir(args, &sc, seed).display()
                );
                return EXIT_FAIL;
            }
            Err(e) => {
                eprintln!("faultline: error: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    eprintln!("faultline: {} seed(s) of {:?} passed", seeds.len(), sc.name);
    EXIT_PASS
}

fn seed_dir(args: &RunArgs, sc: &Scenario, seed: u64) -> PathBuf {
    args.artifacts.join(&sc.name).join(format!("{seed:016x}"))
}

/// Runs one seed; true if every node passed.
fn run_seed(sc: &Scenario, args: &RunArgs, seed: u64) -> Result<bool, String> {
    let dir = seed_dir(args, sc, seed);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let create = |name: String| {
        File::create(dir.join(&name)).map_err(|e| format!("{}/{name}: {e}", dir.display()))
    };
    let mut cfg = config(&args.sim, seed)?;
    cfg.until_ns = Some(sc.duration_ns);
    let names: Vec<String> = sc.nodes.iter().map(|n| n.name.clone()).collect();
    let net = NetState::new(seed, sc.net.clone(), &names, &dir.join("etc"))?;
    let trace = TraceLog::new(Some(create("trace.jsonl".into())?), false);
    let plan = crate::plan::build(&sc.faults, seed, sc.duration_ns);
    let mut sup = Supervisor::new(cfg, trace, net, plan);
    let mut outputs = Vec::new();
    for node in &sc.nodes {
        // `{node_dir}` in a node's arguments or environment is a fresh,
        // empty directory of this seed (a data directory, say).
        let node_dir = dir.join(format!("{}.d", node.name));
        std::fs::create_dir_all(&node_dir).map_err(|e| format!("{}: {e}", node_dir.display()))?;
        let node_dir = node_dir
            .canonicalize()
            .map_err(|e| e.to_string())?
            .display()
            .to_string();
        let expand = |s: &String| s.replace("{node_dir}", &node_dir);
        let out = create(format!("{}.stdout", node.name))?;
        let err = create(format!("{}.stderr", node.name))?;
        let mut env: Vec<(String, String)> = BASE_ENV
            .iter()
            .map(|&(k, v)| (k.into(), v.into()))
            .collect();
        env.extend(node.env.iter().map(|(k, v)| (k.clone(), expand(v))));
        let spec = LaunchSpec {
            program: node.program.display().to_string(),
            args: node.args.iter().map(expand).collect(),
            env,
            filter: seccomp::build_filter(&syscalls::trapped_numbers()),
            output: Some((out.as_raw_fd(), err.as_raw_fd())),
            mounts: Vec::new(),
        };
        let spec = match &node.data_dir {
            Some(data_dir) => {
                let disk_dir = dir.join(format!("{}.disk", node.name));
                let mut disk = vfs::Disk::new(
                    &disk_dir,
                    seed ^ crate::trace::hash_bytes(node.name.as_bytes()),
                )
                .map_err(|e| format!("disk of node {:?}: {e}", node.name))?;
                for f in &sc.faults {
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
                        _ => {}
                    }
                }
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
            sup.restart_last_on_exit(delay);
        }
        outputs.push((out, err));
    }
    let outcome = sup.run();
    drop(outputs);
    let mut pass = true;
    let mut lines = Vec::new();
    for root in &outcome.roots {
        let (ok, mut what) = match root.status {
            _ if root.down => (true, "down at end (crashed by the fault plan)".to_string()),
            None => (true, "running at end".to_string()),
            Some(st) if libc::WIFSIGNALED(st) => (
                false,
                format!("killed by {}", signal_name(libc::WTERMSIG(st))),
            ),
            Some(st) => {
                let code = libc::WEXITSTATUS(st);
                (code == 0, format!("exit {code}"))
            }
        };
        if root.crashes > 0 {
            what.push_str(&format!(
                " (crashed {} time(s) by the fault plan)",
                root.crashes
            ));
        }
        if root.restarts > 0 {
            what.push_str(&format!(
                " (exited and was restarted {} time(s))",
                root.restarts
            ));
        }
        pass &= ok;
        lines.push(format!("faultline:   node {}: {what}", root.name));
    }
    if let Ending::Deadlock(_) = outcome.ending {
        lines.push(format!(
            "faultline:   every node idle from t={:.6}s with nothing pending",
            outcome.vtime as f64 / 1e9
        ));
    }
    eprintln!(
        "faultline: seed=0x{seed:016x} {} vtime={:.6}s events={} trace-hash=0x{:016x}",
        if pass { "PASS" } else { "FAIL" },
        outcome.vtime as f64 / 1e9,
        outcome.events,
        outcome.hash
    );
    for l in lines {
        eprintln!("{l}");
    }
    Ok(pass)
}
