//! From a failing seed to its cause: `run --schedule` runs a seed's
//! recorded fault plan (faults.json) again exactly, and `shrink` leaves out
//! recorded faults until only those the failure needs remain, in a
//! shrunk.toml that fails the same way.
//!
//! The program is the lease pair of tests/programs/c/lease.c: a holder
//! timing its lease on CLOCK_MONOTONIC writes after its lease expired only
//! when it is paused between its check and its write. Steps of the wall
//! clock (random and planned) are harmless to it, so of all the faults a
//! seed runs, one pause is the cause.

use std::path::Path;

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::runner::{faultline, report_json};
use faultline_e2e::{ScenarioFile, ScenarioRun};

const SEED: u64 = 0xfa17;

/// Harmless wall-clock steps on both nodes, random and planned, and random
/// pauses of the holder between 1 s and 5 s, one of which exposes the bug.
const FAULTS: &str = r#"
[[fault]]
kind = "clock_jump"
every = "700ms"
nodes = ["holder", "store"]
max_by = "3s"

[[fault]]
kind = "pause"
every = "1s"
min_down = "1500ms"
max_down = "2s"
nodes = ["holder"]
at = "1s"
until = "5s"

[[fault]]
kind = "clock_jump"
node = "store"
at = "1500ms"
by = "-1s"

[[fault]]
kind = "link"
between = ["holder"]
at = "6s"
until = "7s"
delay_min = "1ms"
delay_max = "3ms"
loss = 0.1
"#;

/// The lease pair in a fresh folder, plus `faults`.
fn lease_file(dir: &Path, faults: &str) -> ScenarioFile {
    faultline_e2e::lease::lease_file(dir, "lease-shrink", "mono", faults)
}

/// The failing check report.json names, if any.
fn failing_check(seed_dir: &Path) -> Option<String> {
    report_json(seed_dir)["failure"]["check"]
        .as_str()
        .map(str::to_owned)
}

/// A seed's trace hash as report.json records it.
fn hash(seed_dir: &Path) -> String {
    report_json(seed_dir)["trace_hash"]
        .as_str()
        .expect("trace_hash")
        .to_owned()
}

/// The seed with all its faults: it fails on a stale write.
fn failing_seed(label: &str) -> ScenarioRun {
    let dir = scratch_dir(label);
    let run = lease_file(&dir, FAULTS)
        .runner()
        .seed(SEED)
        .artifacts(dir.join("runs"))
        .run();
    run.expect_code(1);
    let seed_dir = run.seed_dir(SEED);
    assert_eq!(
        failing_check(&seed_dir).as_deref(),
        Some("node exit"),
        "\n{run}"
    );
    run
}

/// The same seed run from its recorded schedule is the same run: same
/// verdict, same trace hash, also from a copy of the scenario without any
/// `[[fault]]` entry (so the faults come from the schedule alone, with every
/// parameter), and twice alike. Without the schedule that copy passes.
#[test]
fn a_recorded_schedule_runs_the_seed_again_exactly() {
    let run = failing_seed("schedule");
    let seed_dir = run.seed_dir(SEED);
    let recorded = hash(&seed_dir);
    let schedule = seed_dir.join("faults.json");
    let faults = std::fs::read_to_string(&schedule).unwrap();
    for kind in ["pause", "clock_jump", "link"] {
        assert!(
            faults.contains(&format!("\"kind\": \"{kind}\"")),
            "{kind} missing from faults.json:\n{faults}"
        );
    }
    assert!(faults.contains("\"planned\""), "{faults}");

    let same_file = lease_file(&scratch_dir("schedule-same"), FAULTS);
    let again = same_file
        .runner()
        .seed(SEED)
        .flag("--schedule")
        .flag(schedule.to_str().unwrap())
        .run();
    again.expect_code(1);
    assert_eq!(hash(&again.seed_dir(SEED)), recorded, "\n{again}");

    let bare = lease_file(&scratch_dir("schedule-bare"), "");
    let scheduled = run_scenario_twice(
        &bare
            .runner()
            .seed(SEED)
            .flag("--schedule")
            .flag(schedule.to_str().unwrap()),
    );
    scheduled.expect_code(1);
    let scheduled_dir = scheduled.seed_dir(SEED);
    assert_eq!(hash(&scheduled_dir), recorded, "\n{scheduled}");
    assert_eq!(failing_check(&scheduled_dir).as_deref(), Some("node exit"));
    assert_eq!(report_json(&scheduled_dir)["scheduled"], true);
    // Its own faults.json is the same plan: a replay of it is identical.
    let replay = faultline(&["replay", scheduled_dir.to_str().unwrap()]);
    assert_eq!(replay.code(), 1, "{}", replay.stderr);
    assert!(
        replay.stderr.contains("replay identical"),
        "{}",
        replay.stderr
    );

    let unscheduled = bare.runner().seed(SEED).run();
    unscheduled.expect_pass();
}

/// `shrink` leaves exactly the one pause the stale write needs; its
/// shrunk.toml fails the same check, twice with the same trace hash, and
/// the seed's own artifacts are untouched.
#[test]
fn shrink_leaves_the_one_fault_the_failure_needs() {
    let run = failing_seed("shrink");
    let seed_dir = run.seed_dir(SEED);
    let before: Vec<(String, Vec<u8>)> = ["faults.json", "report.json", "scenario.toml"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(seed_dir.join(f)).unwrap()))
        .collect();
    let recorded_faults: serde_json::Value =
        serde_json::from_slice(&before[0].1).expect("faults.json");
    let planned = recorded_faults
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("planned").is_some())
        .count();
    assert!(planned >= 6, "few planned faults:\n{recorded_faults}");

    let shrink = faultline(&["shrink", seed_dir.to_str().unwrap()]);
    assert_eq!(shrink.code(), 0, "{}", shrink.stderr);
    let attempts = shrink
        .stderr
        .lines()
        .filter(|l| l.starts_with("faultline: shrink attempt "))
        .count();
    assert!(attempts >= 3, "{}", shrink.stderr);
    assert!(
        shrink.stderr.contains("shrunk to 1 fault(s)"),
        "{}",
        shrink.stderr
    );
    for (file, bytes) in &before {
        assert_eq!(
            &std::fs::read(seed_dir.join(file)).unwrap(),
            bytes,
            "{file} changed"
        );
    }
    let kept: Vec<_> = std::fs::read_dir(seed_dir.join("shrink"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(kept.len(), 1, "one attempt kept: {kept:?}");

    let shrunk_path = seed_dir.join("shrunk.toml");
    let shrunk = std::fs::read_to_string(&shrunk_path).unwrap();
    assert_eq!(shrunk.matches("[[fault]]").count(), 1, "{shrunk}");
    let entry = shrunk.split("[[fault]]").nth(1).unwrap();
    assert!(entry.contains("kind = \"pause\""), "{shrunk}");
    assert!(entry.contains("node = \"holder\""), "{shrunk}");
    assert!(!shrunk.contains("every"), "{shrunk}");
    assert!(
        shrink.stderr.contains(&format!(
            "faultline run {} --seed 0x{SEED:016x}",
            shrunk_path.display()
        )),
        "{}",
        shrink.stderr
    );

    let file = ScenarioFile {
        path: shrunk_path,
        name: Some("lease-shrink-shrunk".into()),
    };
    let again = run_scenario_twice(
        &file
            .runner()
            .seed(SEED)
            .artifacts(scratch_dir("shrink-again")),
    );
    again.expect_code(1);
    assert_eq!(
        failing_check(&again.seed_dir(SEED)).as_deref(),
        Some("node exit"),
        "\n{again}"
    );
    assert!(
        again.node_stderr(SEED, "store").starts_with("STALE WRITE "),
        "\n{again}"
    );
}

/// Bad input is exit 2 with a message naming what is wrong: a seed that
/// passed, a folder without report.json, a schedule file that is missing or
/// names a node the scenario lacks.
#[test]
fn bad_input_is_named() {
    let dir = scratch_dir("shrink-bad");
    let passing = lease_file(&dir, "").runner().seed(SEED).run();
    passing.expect_pass();
    let pass_dir = passing.seed_dir(SEED);
    let out = faultline(&["shrink", pass_dir.to_str().unwrap()]);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(out.stderr.contains("not a failing seed"), "{}", out.stderr);
    assert!(!pass_dir.join("shrunk.toml").exists());

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = faultline(&["shrink", empty.to_str().unwrap()]);
    assert_eq!(out.code(), 2, "{}", out.stderr);
    assert!(out.stderr.contains("report.json"), "{}", out.stderr);

    let file = lease_file(&dir, "");
    let missing = dir.join("no-such-faults.json");
    let out = file
        .runner()
        .seed(SEED)
        .flag("--schedule")
        .flag(missing.to_str().unwrap())
        .run();
    out.expect_code(2);
    assert!(
        out.run.stderr.contains("no-such-faults.json: cannot read"),
        "\n{out}"
    );

    let wrong = dir.join("wrong-node.json");
    std::fs::write(
        &wrong,
        r#"[{"t":1,"event":1,"kind":"pause","node":"x","detail":"","planned":{"fault":1,"at":1,"event":{"kind":"pause","args":"x"}}}]"#,
    )
    .unwrap();
    let out = file
        .runner()
        .seed(SEED)
        .flag("--schedule")
        .flag(wrong.to_str().unwrap())
        .run();
    out.expect_code(2);
    assert!(
        out.run
            .stderr
            .contains("wrong-node.json: entry 0 (pause): node \"x\" is not a node"),
        "\n{out}"
    );
}

/// `--max-runs` bounds the runs: when they are spent, the fewest faults
/// found so far are written, and the summary says the search stopped.
#[test]
fn max_runs_bounds_the_attempts() {
    let run = failing_seed("shrink-bounded");
    let seed_dir = run.seed_dir(SEED);
    let shrink = faultline(&["shrink", seed_dir.to_str().unwrap(), "--max-runs", "2"]);
    assert_eq!(shrink.code(), 0, "{}", shrink.stderr);
    let attempts = shrink
        .stderr
        .lines()
        .filter(|l| l.starts_with("faultline: shrink attempt "))
        .count();
    assert_eq!(attempts, 2, "{}", shrink.stderr);
    assert!(
        shrink.stderr.contains("stopped at --max-runs"),
        "{}",
        shrink.stderr
    );
    assert!(seed_dir.join("shrunk.toml").exists());
}
