//! A hunt spread over machines (Slurm array tasks, Kubernetes pods, CI
//! matrix jobs) against the same hunt run locally: the kv scenario with its
//! bug on (so some seeds fail), the verdicts and trace hashes the shards'
//! `summary*.json` and `--results` files record, and the check that `faultline
//! merge` of the shards gives the local run's verdict and seed set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::exec::{run_command, Run, DEFAULT_TIMEOUT};
use crate::kv::KvScenario;
use crate::paths::faultline_bin;

/// Seeds of the hunt.
pub const HUNT_SEEDS: u64 = 8;

/// Each seed's verdict (pass) and trace hash.
pub type Verdicts = BTreeMap<u64, (bool, u64)>;

/// Writes the hunt's scenario (the kv server losing writes because it never
/// fsyncs its directory, crashed every ~500 ms) as `dir/kv.toml`.
pub fn hunt_scenario(name: &str, dir: &Path) -> PathBuf {
    let text = KvScenario {
        duration: "30s",
        bug: Some("no-dir-fsync"),
        puts: 60,
        ..KvScenario::rust(name)
    }
    .toml(dir);
    let path = dir.join("kv.toml");
    std::fs::write(&path, text).expect("write the hunt scenario");
    path
}

/// The hunt on this machine, all seeds in one process: the reference.
pub fn local_hunt(file: &Path, artifacts: &Path) -> (Run, Verdicts) {
    let mut c = Command::new(faultline_bin());
    c.arg("run")
        .arg(file)
        .arg("--seeds")
        .arg(HUNT_SEEDS.to_string())
        .arg("--keep-going")
        .arg("--artifacts")
        .arg(artifacts);
    let run = run_command(c, DEFAULT_TIMEOUT);
    let verdicts = recorded(artifacts);
    assert_eq!(verdicts.len() as u64, HUNT_SEEDS, "\n{run}");
    assert!(
        verdicts.values().any(|v| !v.0) && verdicts.values().any(|v| v.0),
        "the hunt should have passing and failing seeds\n{run}"
    );
    (run, verdicts)
}

/// Every seed of every `<dir>/<scenario>/summary*.json`; a seed recorded
/// twice (two shards ran it) is a failure.
pub fn recorded(dir: &Path) -> Verdicts {
    let mut out = Verdicts::new();
    for path in summary_files(dir) {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read summary"))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for s in v["seeds"].as_array().expect("seeds array") {
            // Seeds and hashes are 0x-hex strings (JSON numbers lose u64 bits).
            let hex = |key: &str| {
                let text = s[key]
                    .as_str()
                    .unwrap_or_else(|| panic!("{key} is not a string: {s}"));
                u64::from_str_radix(text.trim_start_matches("0x"), 16)
                    .unwrap_or_else(|e| panic!("{key} {text:?}: {e}"))
            };
            let seed = hex("seed");
            let entry = (s["pass"].as_bool().expect("pass"), hex("hash"));
            assert!(
                out.insert(seed, entry).is_none(),
                "seed 0x{seed:016x} recorded twice under {}",
                dir.display()
            );
        }
    }
    out
}

/// The `summary*.json` files under `<dir>/<scenario>/`, sorted.
pub fn summary_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for scenario in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let scenario = scenario.expect("dir entry").path();
        if !scenario.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&scenario).expect("read scenario dir") {
            let f = f.expect("dir entry").path();
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name.starts_with("summary") && name.ends_with(".json") {
                out.push(f);
            }
        }
    }
    out.sort();
    out
}

/// The verdicts of `--results` files (JSON lines: seed and trace hash as
/// 0x-hex strings, verdict "pass" or "fail"); a seed in two lines is a
/// failure.
pub fn results_lines(files: &[PathBuf]) -> Verdicts {
    let hex = |v: &serde_json::Value| {
        u64::from_str_radix(v.as_str().expect("hex string").trim_start_matches("0x"), 16)
            .expect("0x-hex")
    };
    let mut out = Verdicts::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for line in text.lines() {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            let pass = match v["verdict"].as_str() {
                Some("pass") => true,
                Some("fail") => false,
                other => panic!("verdict {other:?} in {line}"),
            };
            assert_eq!(
                v["check"].is_null(),
                pass,
                "a failing seed names its check: {line}"
            );
            assert!(v["wall_s"].as_f64().is_some_and(|w| w > 0.0), "{line}");
            let seed = hex(&v["seed"]);
            assert!(
                out.insert(seed, (pass, hex(&v["trace_hash"]))).is_none(),
                "seed 0x{seed:016x} has two result lines"
            );
        }
    }
    out
}

/// `faultline merge` of the shards' artifact directories: exits as the
/// local run did and counts the same seeds and failures; the shards
/// recorded exactly the local run's seeds with its verdicts and trace hashes
/// (each seed ran twice, on two "machines", to the same trace).
pub fn assert_merge_agrees(local: &(Run, Verdicts), shard_dirs: &[PathBuf]) -> Run {
    let mut c = Command::new(faultline_bin());
    c.arg("merge").args(shard_dirs);
    let merged = run_command(c, DEFAULT_TIMEOUT);
    let (run, verdicts) = local;
    merged.expect_code(run.code());
    let failed = verdicts.values().filter(|v| !v.0).count();
    let line = format!("{} seed(s), {failed} failed", verdicts.len());
    assert!(merged.stderr.contains(&line), "want {line:?}\n{merged}");
    let mut sharded = Verdicts::new();
    for dir in shard_dirs {
        for (seed, v) in recorded(dir) {
            assert!(sharded.insert(seed, v).is_none(), "0x{seed:016x} ran twice");
        }
    }
    assert_eq!(&sharded, verdicts, "shards vs the local run\n{merged}");
    merged
}
