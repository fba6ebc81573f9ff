//! `faultline replay DIR` and `faultline pin DIR`: what a seed's artifact
//! directory is good for after the run — running it again, identically, and
//! keeping it as a regression test in the scenario file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cmd::cli::{ReplayArgs, RunArgs};
use crate::cmd::run::run_seed;
use crate::scenario;

/// Exit code: the replay's trace differs from the recorded one.
const EXIT_DIVERGED: i32 = 3;

/// The part of report.json replay and pin need.
#[derive(Deserialize)]
struct Recorded {
    scenario: String,
    file: String,
    seed: String,
    pass: bool,
    trace_hash: String,
    failure: Option<RecordedFailure>,
}

#[derive(Deserialize)]
struct RecordedFailure {
    check: String,
    t_ns: u64,
    event: u64,
    unit: String,
}

fn read_report(dir: &Path) -> Result<Recorded, String> {
    let path = dir.join("report.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs the recorded seed again into the same directory and compares.
pub fn replay(args: &ReplayArgs) -> i32 {
    match try_replay(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            2
        }
    }
}

fn try_replay(args: &ReplayArgs) -> Result<i32, String> {
    let rec = read_report(&args.dir)?;
    let seed = crate::cmd::cli::parse_seed(&rec.seed)?;
    let sc = scenario::load(Path::new(&rec.file)).map_err(|e| e.to_string())?;
    if sc.name != rec.scenario {
        return Err(format!(
            "{} now names scenario {:?}, not {:?}",
            rec.file, sc.name, rec.scenario
        ));
    }
    // <artifacts>/<scenario>/<seed>: the same layout again.
    let artifacts: PathBuf = args
        .dir
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let run_args = RunArgs {
        file: PathBuf::from(&rec.file),
        seed: Some(seed),
        seeds: None,
        seed_list: None,
        explore: None,
        results: None,
        artifacts,
        keep_going: false,
        jobs: 1,
        seed_worker: false,
        shard: None,
        shard_count: None,
        sim: args.sim.clone(),
    };
    eprintln!(
        "faultline: replaying seed {} of {:?}",
        rec.seed, rec.scenario
    );
    let result = run_seed(&sc, &run_args, seed)?;
    eprint!("{}", result.text);
    let recorded = crate::cmd::cli::parse_seed(&rec.trace_hash)?;
    if result.hash != recorded {
        eprintln!(
            "faultline: replay DIFFERS: trace-hash 0x{:016x}, recorded {} (was the binary, the scenario or a flag changed?)",
            result.hash, rec.trace_hash
        );
        return Ok(EXIT_DIVERGED);
    }
    let what = match &rec.failure {
        Some(f) => format!(
            "the same check {:?} fails at t={:.9}s ({} {})",
            f.check,
            f.t_ns as f64 / 1e9,
            f.unit,
            f.event
        ),
        None => "the seed passes again".to_string(),
    };
    eprintln!(
        "faultline: replay identical: trace-hash {} matches; {what}",
        rec.trace_hash
    );
    Ok(if rec.pass { 0 } else { 1 })
}

/// Adds the recorded seed to the scenario file's [[pinned]] list.
pub fn pin(dir: &Path) -> i32 {
    match try_pin(dir) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("faultline: error: {e}");
            2
        }
    }
}

fn try_pin(dir: &Path) -> Result<(), String> {
    let rec = read_report(dir)?;
    let seed = crate::cmd::cli::parse_seed(&rec.seed)?;
    let file = Path::new(&rec.file);
    let sc = scenario::load(file).map_err(|e| e.to_string())?;
    if sc.pinned.iter().any(|p| p.0 == seed) {
        eprintln!(
            "faultline: seed {} is already pinned in {}",
            rec.seed, rec.file
        );
        return Ok(());
    }
    let note = match &rec.failure {
        Some(f) => format!(
            "check \"{}\" failed at t={:.9}s",
            f.check,
            f.t_ns as f64 / 1e9
        ),
        None => "passed when pinned".to_string(),
    };
    let mut text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "\n[[pinned]]\nseed = \"{}\"\nnote = {:?}\n",
        rec.seed, note
    ));
    std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    eprintln!(
        "faultline: pinned seed {} in {}: every `faultline run {}` runs it first",
        rec.seed, rec.file, rec.file
    );
    Ok(())
}
