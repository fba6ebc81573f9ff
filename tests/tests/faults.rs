//! The fault kinds beyond partitions and crashes, each with a small program
//! whose bug only that fault exposes: the same scenario without the fault
//! (or with a neighbouring fault) passes. Every run is made twice and must
//! give the same verdicts and trace hashes.

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{NodeOutcome, Program, ScenarioFile, ScenarioRun};

const SEED: u64 = 0xfa17;

/// The lease store and one lease holder (`clock`: wall or mono), plus `faults`.
fn lease_scenario(dir_name: &str, clock: &str, faults: &str) -> ScenarioRun {
    let dir = scratch_dir(dir_name);
    let file = faultline_e2e::lease::lease_file(&dir, "lease", clock, faults);
    run_scenario_twice(&file.runner().seed(SEED))
}

/// The store caught a write made after the lease expired.
#[track_caller]
fn assert_stale_write(run: &ScenarioRun) {
    run.expect_code(1);
    let report = run.report();
    assert!(!report.pass, "\n{run}");
    assert_eq!(report.node("store"), Some(&NodeOutcome::Exit(1)), "\n{run}");
    let err = run.node_stderr(SEED, "store");
    assert!(
        err.starts_with("STALE WRITE "),
        "store stderr: {err:?}\n{run}"
    );
}

/// Every write landed under a live lease.
#[track_caller]
fn assert_no_stale_write(run: &ScenarioRun) {
    run.expect_pass();
    assert_eq!(
        run.node_stdout(SEED, "store"),
        "server: 40 writes, none stale\n",
        "\n{run}"
    );
}

const PAUSE: &str = r#"
[[fault]]
kind = "pause"
node = "holder"
at = "2s"
down = "2s"
"#;

/// A lease without fencing tokens: the holder checks its lease, "works",
/// then writes. A 2 s pause between check and write (a GC pause) lets the
/// lease expire unnoticed; the store sees the stale write. Without the
/// pause every write is in time.
#[test]
fn pause_exposes_a_lease_without_fencing() {
    assert_stale_write(&lease_scenario("faults-pause", "mono", PAUSE));
    assert_no_stale_write(&lease_scenario("faults-nopause", "mono", ""));
}

/// A random pause entry (every/min_down/max_down within an at/until
/// window) pauses the holder within the window and exposes the same bug.
#[test]
fn random_pauses_within_a_window_expose_it_too() {
    let random = r#"
[[fault]]
kind = "pause"
every = "1s"
min_down = "1500ms"
max_down = "2s"
nodes = ["holder"]
at = "1s"
until = "5s"
"#;
    let run = lease_scenario("faults-pause-random", "mono", random);
    assert_stale_write(&run);
    let faults = std::fs::read_to_string(run.seed_dir(SEED).join("faults.json")).unwrap();
    assert!(faults.contains("\"pause\""), "faults.json: {faults}\n{run}");
}

const JUMP_BACK: &str = r#"
[[fault]]
kind = "clock_jump"
node = "holder"
at = "2s"
by = "-2s"
"#;

/// A lease timed by the wall clock: when the holder's CLOCK_REALTIME steps
/// back 2 s (as NTP may do), it believes its expired lease has 2 s left.
/// The same holder timing its lease on CLOCK_MONOTONIC is unaffected (the
/// jump leaves monotonic clocks alone), and without the jump the wall-clock
/// holder is fine too.
#[test]
fn backward_clock_jump_exposes_a_wall_clock_lease() {
    assert_stale_write(&lease_scenario("faults-jump-wall", "wall", JUMP_BACK));
    assert_no_stale_write(&lease_scenario("faults-jump-mono", "mono", JUMP_BACK));
    assert_no_stale_write(&lease_scenario("faults-nojump-wall", "wall", ""));
}

const DRIFT_SLOW: &str = r#"
[[fault]]
kind = "clock_drift"
node = "holder"
ppm = -500000
at = "1s"
"#;

/// A lease timed by the holder's own clock: when all its clocks run at
/// half speed (`clock_drift`, monotonic ones too), its 700 ms of lease
/// left last 1.4 s of the store's time, and the store sees a stale write.
/// Without the drift the same holder is fine (see the pause test).
#[test]
fn slow_clock_drift_exposes_a_lease_timed_by_the_holder() {
    let run = lease_scenario("faults-drift", "mono", DRIFT_SLOW);
    assert_stale_write(&run);
    let drift = run.faults_of(SEED, "clock_drift");
    assert_eq!(drift.len(), 1, "{drift:?}\n{run}");
    assert_eq!(drift[0].t, 1_000_000_000, "{drift:?}");
    assert_eq!(
        drift[0].detail, "clocks run slow by 500000 ppm",
        "{drift:?}"
    );
}

/// A per-node `clock_offset` makes the holder's wall clock start behind:
/// harmless for leases timed on durations, and visible in faults.json.
#[test]
fn clock_offset_is_applied_at_start() {
    let dir = scratch_dir("faults-offset");
    let text = r#"name = "offset"
duration = "1s"

[[node]]
name = "a"
command = ["date", "-u", "+%Y-%m-%dT%H:%M:%S"]

[[node]]
name = "b"
clock_offset = "-1h"
command = ["date", "-u", "+%Y-%m-%dT%H:%M:%S"]
"#;
    let file = ScenarioFile::raw(&dir, "offset.toml", text);
    let run = run_scenario_twice(&file.runner().seed(SEED));
    run.expect_pass();
    assert_eq!(
        run.node_stdout(SEED, "a"),
        "2025-01-01T00:00:00\n",
        "\n{run}"
    );
    assert_eq!(
        run.node_stdout(SEED, "b"),
        "2024-12-31T23:00:00\n",
        "\n{run}"
    );
}

/// `pidlock` on a simulated disk, with `fault` (a planned kill or crash).
fn pidlock_scenario(dir_name: &str, fault: &str) -> ScenarioRun {
    let dir = scratch_dir(dir_name);
    let data = dir.join("mnt").join("svc");
    let text = format!(
        r#"name = "pidlock"
duration = "3s"

[[node]]
name = "svc"
data_dir = "{data}"
command = ["{program}", "{data}"]
{fault}"#,
        data = data.display(),
        program = Program::c("pidlock").path().display(),
    );
    let file = ScenarioFile::raw(&dir, "pidlock.toml", &text);
    run_scenario_twice(&file.runner().seed(SEED))
}

/// A lock file removed only on a clean exit: a kill (SIGKILL, the machine
/// and its page cache survive) leaves it behind and the restarted service
/// refuses to start. A crash at the same time does not expose it (the
/// file's directory entry was never fsynced, so the power cut takes it back),
/// and neither does a run without faults.
#[test]
fn kill_exposes_a_stale_lock_file_that_a_crash_hides() {
    let planned = |kind: &str| {
        format!("\n[[fault]]\nkind = \"{kind}\"\nnode = \"svc\"\nat = \"1s\"\ndown = \"300ms\"\n")
    };
    let run = pidlock_scenario("faults-kill", &planned("kill"));
    run.expect_code(1);
    assert_eq!(
        run.report().node("svc"),
        Some(&NodeOutcome::Exit(1)),
        "\n{run}"
    );
    assert!(
        run.node_stderr(SEED, "svc").starts_with("STALE LOCK: "),
        "\n{run}"
    );
    let faults = std::fs::read_to_string(run.seed_dir(SEED).join("faults.json")).unwrap();
    assert!(
        faults.contains("\"kill\"") && !faults.contains("disk_crash"),
        "{faults}"
    );
    pidlock_scenario("faults-kill-crash", &planned("crash")).expect_pass();
    pidlock_scenario("faults-kill-none", "").expect_pass();
}

/// Fields a fault kind does not use are errors (exit 2) naming the field
/// and its line; `until` on a random crash was once silently ignored.
#[test]
fn unused_fault_fields_are_errors() {
    let dir = scratch_dir("faults-unused");
    for (fault, field) in [
        ("kind = \"crash\"\nevery = \"1s\"\nmin_down = \"1ms\"\nmax_down = \"2ms\"\nuntil = \"5s\"", "until"),
        ("kind = \"pause\"\nnode = \"a\"\nat = \"1s\"\ndown = \"1s\"\nby = \"1s\"", "by"),
        ("kind = \"clock_jump\"\nnode = \"a\"\nat = \"1s\"\nby = \"1s\"\ndown = \"1s\"", "down"),
        ("kind = \"reset\"\nbetween = [\"a\"]\nat = \"1s\"\nduplicate = 0.1", "duplicate"),
    ] {
        let text = format!(
            "name = \"bad\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\ncommand = [\"true\"]\n\n[[fault]]\n{fault}\n"
        );
        let file = ScenarioFile::raw(&dir, "bad.toml", &text);
        let run = file.runner().run();
        run.expect_code(2);
        let needle = format!("field `{field}` is not used by");
        assert!(run.run.stderr.contains(&needle), "{needle:?}\n{run}");
    }
}

/// A crash kills every process of a node at once, and the kernel reports
/// their deaths in an order of its own: faultline records the ends in
/// creation order, so a node with several processes (a shell and its
/// children) crashes the same way in every run.
#[test]
fn a_crash_of_several_processes_ends_them_in_the_same_order_every_run() {
    let dir = scratch_dir("faults-crash-tree");
    let text = r#"name = "crash-tree"
duration = "3s"
seeds = 3

[[node]]
name = "tree"
command = ["/bin/sh", "-c", "sleep 100 & sleep 100 & sleep 100 & sleep 100 & wait"]

[[fault]]
kind = "crash"
every = "300ms"
min_down = "10ms"
max_down = "50ms"
"#;
    let file = ScenarioFile::raw(&dir, "tree.toml", text);
    let first = run_scenario_twice(&file.runner().flag("--keep-going"));
    first.expect_code(0);
    for seed in first.reports() {
        let faults = std::fs::read_to_string(first.seed_dir(seed.seed).join("faults.json"))
            .expect("faults.json");
        assert!(
            faults.contains("5 process(es) killed"),
            "seed {:#x}: no crash killed the shell and its four children\n{faults}",
            seed.seed
        );
    }
}
