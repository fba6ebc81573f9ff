//! The `[faults]` rules over all fault entries: `max_down` bounds the nodes
//! down at once, `quiet` ends every fault before the seed does, and `swarm`
//! gives each seed its own subset of the entries. Every run is made twice
//! and must give the same verdicts and trace hashes.

use std::collections::BTreeSet;

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::exec::{run_command, DEFAULT_TIMEOUT};
use faultline_e2e::fault_log::{most_down_at_once, FaultEntry};
use faultline_e2e::paths::{faultline_bin, scratch_dir};
use faultline_e2e::{ScenarioFile, ScenarioRun};

/// Three idle nodes (`c` with a simulated disk), `faults` (entries and a
/// `[faults]` section), `seeds` seeds of `duration`.
fn idle_cluster(dir_name: &str, duration: &str, seeds: u32, faults: &str) -> ScenarioRun {
    let dir = scratch_dir(dir_name);
    let disk = dir.join("mnt").join("c");
    let nodes: String = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let data_dir = if *n == "c" {
                format!("data_dir = \"{}\"\n", disk.display())
            } else {
                String::new()
            };
            format!("[[node]]\nname = \"{n}\"\n{data_dir}command = [\"sleep\", \"1000\"]\n\n")
        })
        .collect();
    let text =
        format!("name = \"rules\"\nduration = \"{duration}\"\nseeds = {seeds}\n\n{nodes}{faults}");
    let file = ScenarioFile::raw(&dir, "rules.toml", &text);
    let run = run_scenario_twice(&file.runner().flag("--keep-going"));
    run.expect_pass();
    run
}

const OUTAGES: &str = r#"
[[fault]]
kind = "crash"
every = "100ms"
min_down = "200ms"
max_down = "400ms"
max_down_nodes = 3

[[fault]]
kind = "pause"
every = "150ms"
min_down = "100ms"
max_down = "300ms"
max_down_nodes = 3
"#;

/// Crashes and pauses that alone take two or three nodes down at once are
/// bounded by `[faults] max_down = 1`, over both entries together.
#[test]
fn max_down_bounds_the_nodes_down_at_once() {
    let bounded = idle_cluster(
        "rules-max-down",
        "5s",
        2,
        &format!("{OUTAGES}\n[faults]\nmax_down = 1\n"),
    );
    let free = idle_cluster("rules-max-down-free", "5s", 2, OUTAGES);
    for seed in bounded.reports() {
        let faults = bounded.faults(seed.seed);
        let outages = faults
            .iter()
            .filter(|f| f.kind == "crash" || f.kind == "pause")
            .count();
        assert!(
            outages >= 5,
            "seed {:#x}: few outages: {faults:?}",
            seed.seed
        );
        assert_eq!(most_down_at_once(&faults), 1, "{faults:?}\n{bounded}");
        assert!(
            most_down_at_once(&free.faults(seed.seed)) >= 2,
            "without max_down the same entries take several nodes down\n{free}"
        );
    }
}

/// The kinds that start a fault (their ends: restart, resume, heal,
/// link_normal, disk_space, and a clock_drift back to the true rate).
fn starts_a_fault(f: &FaultEntry) -> bool {
    match f.kind.as_str() {
        "crash" | "kill" | "pause" | "partition" | "link" | "clock_jump" | "reset"
        | "disk_full" | "corrupt" => true,
        "clock_drift" => f.detail != "clocks back at the true rate",
        _ => false,
    }
}

/// `[faults] quiet = "1s"`: no fault starts in the last second, and
/// whatever was in effect then ends at its start: crashed nodes restart,
/// paused ones resume, the partition heals, the slow link, the drifting
/// clock and the full disk return to normal (no entry has an `until`).
#[test]
fn quiet_period_starts_no_fault_and_heals_everything() {
    let faults = r#"
[[fault]]
kind = "crash"
every = "200ms"
min_down = "300ms"
max_down = "3s"
nodes = ["a"]

[[fault]]
kind = "pause"
every = "300ms"
min_down = "2s"
max_down = "3s"
nodes = ["b"]

[[fault]]
kind = "clock_jump"
every = "200ms"
max_by = "1s"

[[fault]]
kind = "partition"
at = "2500ms"
isolate = ["c"]

[[fault]]
kind = "link"
between = ["a"]
at = "2s"
delay_min = "50ms"
delay_max = "60ms"

[[fault]]
kind = "clock_drift"
node = "c"
ppm = 1000
at = "2800ms"

[[fault]]
kind = "disk_full"
node = "c"
at = "2900ms"

[faults]
quiet = "1s"
"#;
    let run = idle_cluster("rules-quiet", "4s", 2, faults);
    const QUIET: u64 = 3_000_000_000;
    for seed in run.reports() {
        let log = run.faults(seed.seed);
        let late: Vec<&FaultEntry> = log
            .iter()
            .filter(|f| f.t >= QUIET && starts_a_fault(f))
            .collect();
        assert!(
            late.is_empty(),
            "faults started in the quiet period: {late:?}"
        );
        assert!(
            log.iter().any(|f| f.t < QUIET && f.kind == "clock_jump"),
            "{log:?}"
        );
        let ends_at_quiet = |kind: &str| log.iter().any(|f| f.t == QUIET && f.kind == kind);
        for kind in ["heal", "link_normal", "clock_drift", "disk_space"] {
            assert!(
                ends_at_quiet(kind),
                "no {kind} at the quiet period's start: {log:?}"
            );
        }
        // Replaying the log, nothing is down at the end.
        let mut down = BTreeSet::new();
        for f in &log {
            match f.kind.as_str() {
                "crash" | "pause" => down.insert(f.node.clone()),
                "restart" | "resume" => down.remove(&f.node),
                _ => false,
            };
        }
        assert!(down.is_empty(), "still down at the end: {down:?}\n{log:?}");
    }
}

/// `[faults] swarm = true`: each seed keeps its own seeded subset of the
/// entries (here six planned clock jumps, told apart by their size), the
/// same subset on every run of the seed, never none.
#[test]
fn swarm_enables_a_seeded_subset_per_seed() {
    let faults: String = (1..=6)
        .map(|i| {
            format!(
                "[[fault]]\nkind = \"clock_jump\"\nnode = \"a\"\nat = \"{i}00ms\"\nby = \"{i}s\"\n\n"
            )
        })
        .collect();
    let run = idle_cluster(
        "rules-swarm",
        "1s",
        8,
        &format!("{faults}[faults]\nswarm = true\n"),
    );
    let subsets: BTreeSet<Vec<u64>> = run
        .reports()
        .iter()
        .map(|seed| {
            let jumps: Vec<u64> = run
                .faults_of(seed.seed, "clock_jump")
                .iter()
                .map(|f| f.t / 100_000_000)
                .collect();
            assert!(!jumps.is_empty(), "seed {:#x} enabled no entry", seed.seed);
            jumps
        })
        .collect();
    assert!(
        subsets.len() > 2,
        "8 seeds enabled only these subsets: {subsets:?}"
    );
}

/// `faultline run --help` names every fault kind and rule, and the keys
/// of what a crash keeps, link duplication and liveness.
#[test]
fn run_help_documents_the_fault_model_keys() {
    let mut command = std::process::Command::new(faultline_bin());
    command.args(["run", "--help"]);
    let help = run_command(command, DEFAULT_TIMEOUT);
    help.expect_code(0);
    for key in [
        "clock_drift",
        "\"link\"",
        "duplicate",
        "\"reset\"",
        "\"disk_full\"",
        "\"corrupt\"",
        "max_down = 1",
        "quiet =",
        "swarm = true",
        "unsynced = \"prefix_torn\"",
        "\"prefix\"",
        "\"subset\"",
        "\"lose_all\"",
        "progress_within",
        "no progress",
    ] {
        assert!(help.out().contains(key), "run --help lacks {key:?}\n{help}");
    }
}

/// A node's `clock_offset` is part of the node, not a `[[fault]]` entry:
/// `swarm` never drops it, whichever entries a seed enables.
#[test]
fn swarm_keeps_every_node_clock_offset() {
    let dir = scratch_dir("rules-swarm-offset");
    let text = r#"name = "swarm-offset"
duration = "1s"
seeds = 8

[[node]]
name = "a"
clock_offset = "-1h"
command = ["date", "-u", "+%Y-%m-%dT%H:%M:%S"]

[[fault]]
kind = "clock_jump"
node = "a"
at = "500ms"
by = "1s"

[[fault]]
kind = "clock_jump"
node = "a"
at = "600ms"
by = "2s"

[faults]
swarm = true
"#;
    let file = ScenarioFile::raw(&dir, "offset.toml", text);
    let run = run_scenario_twice(&file.runner().flag("--keep-going"));
    run.expect_pass();
    for seed in run.reports() {
        assert_eq!(
            run.node_stdout(seed.seed, "a"),
            "2024-12-31T23:00:00\n",
            "seed {:#x} lost the node's clock_offset\n{run}",
            seed.seed
        );
    }
}

/// A `[faults]` rule with nothing to act on is an error naming it:
/// `max_down` without an outage entry (or 0), `swarm` with fewer than two
/// entries (a node's clock_offset is not one).
#[test]
fn rules_with_nothing_to_act_on_are_errors() {
    let dir = scratch_dir("rules-idle");
    let jump = "[[fault]]\nkind = \"clock_jump\"\nnode = \"a\"\nat = \"1s\"\nby = \"1s\"\n\n";
    let crash = "[[fault]]\nkind = \"crash\"\nnode = \"a\"\nat = \"1s\"\ndown = \"1s\"\n\n";
    for (faults, rules, field) in [
        (jump, "max_down = 1", "faults.max_down"),
        (crash, "max_down = 0", "faults.max_down"),
        (jump, "swarm = true", "faults.swarm"),
    ] {
        let text = format!(
            "name = \"bad\"\nduration = \"3s\"\n\n[[node]]\nname = \"a\"\nclock_offset = \"1s\"\ncommand = [\"true\"]\n\n{faults}[faults]\n{rules}\n"
        );
        let run = ScenarioFile::raw(&dir, "bad.toml", &text).runner().run();
        run.expect_code(2);
        assert!(
            run.run.stderr.contains(&format!("field `{field}`: ")),
            "{rules}\n{run}"
        );
    }
}
