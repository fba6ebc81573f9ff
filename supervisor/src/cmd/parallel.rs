//! `faultline run -j N`: seeds in parallel, each in its own faultline process
//! (one supervisor per process: a supervisor reaps with waitpid(-1), so two
//! cannot share one). Each seed's report is printed whole, in seed order.

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};

use crate::cmd::cli::{RunArgs, SimArgs};
use crate::cmd::run::SeedResult;
use crate::scenario::Scenario;

/// The flags that make a child simulate the same machine as this run.
fn sim_flags(sim: &SimArgs) -> Vec<String> {
    let mut flags = vec![
        "--epoch".to_string(),
        sim.epoch.clone(),
        "--cpus".into(),
        sim.cpus.to_string(),
        "--step-cost".into(),
        sim.step_cost.clone(),
        "--spin-limit".into(),
        sim.spin_limit.clone(),
        "--clock-step-every".into(),
        sim.clock_step_every.to_string(),
        "--schedule-policy".into(),
        sim.schedule().name().into(),
        "--pct-depth".into(),
        sim.pct_depth.to_string(),
        "--pct-steps".into(),
        sim.pct_steps.to_string(),
    ];
    if sim.no_pin {
        flags.push("--no-pin".into());
    }
    if sim.no_vdso {
        flags.push("--no-vdso".into());
    }
    if sim.preload {
        flags.push("--preload".into());
    }
    flags
}

fn spawn(args: &RunArgs, seed: u64) -> Result<Child, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find the faultline binary: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("run")
        .arg(&args.file)
        .arg("--seed-worker")
        .arg("--seed")
        .arg(format!("0x{seed:016x}"))
        .arg("--artifacts")
        .arg(&args.artifacts)
        .args(sim_flags(&args.sim));
    // Each child appends its seed's line (with its own wall time).
    if let Some(results) = &args.results {
        cmd.arg("--results").arg(results);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start a faultline child: {e}"))
}

/// Runs `seeds` with at most `args.jobs` at a time; stops starting new ones
/// after a failure unless --keep-going.
pub fn run_seeds(args: &RunArgs, sc: &Scenario, seeds: &[u64]) -> Result<Vec<SeedResult>, String> {
    let mut queue = seeds.iter().copied().enumerate();
    let mut running: Vec<(usize, u64, Child)> = Vec::new();
    let mut done: BTreeMap<usize, (SeedResult, Vec<u8>)> = BTreeMap::new();
    let mut printed = 0;
    let mut failed = false;
    loop {
        while (args.keep_going || !failed) && running.len() < args.jobs {
            let Some((i, seed)) = queue.next() else { break };
            running.push((i, seed, spawn(args, seed)?));
        }
        if running.is_empty() {
            break;
        }
        let (i, seed, child) = running.remove(0);
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        match out.status.code() {
            Some(0) | Some(1) => {}
            _ => {
                return Err(format!(
                    "seed 0x{seed:016x}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            }
        }
        let pass = out.status.code() == Some(0);
        failed |= !pass;
        let hash = recorded_hash(args, sc, seed).unwrap_or(0);
        done.insert(
            i,
            (
                SeedResult {
                    seed,
                    pass,
                    hash,
                    text: String::new(),
                },
                out.stderr,
            ),
        );
        // Print finished seeds in order.
        while let Some((_, stderr)) = done.get(&printed) {
            eprint!("{}", String::from_utf8_lossy(stderr));
            printed += 1;
        }
    }
    for (_, stderr) in done.range(printed..) {
        eprint!("{}", String::from_utf8_lossy(&stderr.1));
    }
    Ok(done.into_values().map(|(r, _)| r).collect())
}

/// The trace hash a child recorded in its seed's report.json.
fn recorded_hash(args: &RunArgs, sc: &Scenario, seed: u64) -> Option<u64> {
    let dir = crate::cmd::run::seed_dir(args, sc, seed);
    crate::cmd::results::Recorded::read(&dir).ok()?.hash()
}
