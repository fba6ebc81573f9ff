//! Assertions shared across test topics: reproducibility of a seed (for
//! `faultline exec` and `faultline run`) and variation across seeds.

use std::collections::BTreeSet;

use crate::exec::{Exec, Run};
use crate::scenario::{RunScenario, ScenarioRun};

/// Runs a scenario twice (see [`run_scenario_twice_with`]).
#[track_caller]
pub fn run_scenario_twice(runner: &RunScenario) -> ScenarioRun {
    run_scenario_twice_with(runner, || {})
}

/// Runs a scenario twice, calling `before_each` before each run (to reset
/// state outside the simulation, such as a data directory), with artifacts in
/// `<artifacts>/first` and `<artifacts>/second` of the runner's artifacts
/// directory, and asserts the runs agree (see
/// [`assert_same_scenario_outcome`]). Returns the first.
#[track_caller]
pub fn run_scenario_twice_with(runner: &RunScenario, before_each: impl Fn()) -> ScenarioRun {
    let (first, second) = two_runs(runner, before_each);
    assert_same_scenario_outcome(&first, &second);
    first
}

/// Runs `runner` into `<artifacts>/first`, then `<artifacts>/second`.
#[track_caller]
fn two_runs(runner: &RunScenario, before_each: impl Fn()) -> (ScenarioRun, ScenarioRun) {
    let base = runner
        .artifacts_dir()
        .expect("running a scenario twice needs an artifacts directory")
        .to_owned();
    before_each();
    let first = runner.clone().artifacts(base.join("first")).run();
    before_each();
    let second = runner.clone().artifacts(base.join("second")).run();
    (first, second)
}

/// Asserts two `faultline run`s that should be identical are: same exit
/// code, same faultline stdout, the same seed verdicts (seed, PASS/FAIL,
/// vtime, events, trace hash, node outcomes), and byte-identical stdout and
/// stderr artifacts for every node of every seed.
#[track_caller]
pub fn assert_same_scenario_outcome(first: &ScenarioRun, second: &ScenarioRun) {
    assert_eq!(
        first.code(),
        second.code(),
        "same seeds, different exit codes of `run`\n{first}\n{second}"
    );
    assert!(
        first.run.stdout == second.run.stdout,
        "same seeds, different stdout of `run`\n{first}\n{second}"
    );
    let (a, b) = (first.reports(), second.reports());
    assert_eq!(
        a, b,
        "same seeds, different verdicts (trace hash, events, vtime or node outcomes)\n{first}\n{second}"
    );
    for report in &a {
        for (node, _) in &report.nodes {
            for stream in ["stdout", "stderr"] {
                let (x, y) = (
                    first.node_output(report.seed, node, stream),
                    second.node_output(report.seed, node, stream),
                );
                assert!(
                    x.is_some(),
                    "no {stream} artifact for node {node} of seed {:#018x}\n{first}",
                    report.seed
                );
                assert!(
                    x == y,
                    "seed {:#018x}: node {node} wrote different {stream} on the two runs\n{first}\n{second}",
                    report.seed
                );
            }
        }
    }
}

/// Seeds compared by the "another seed gives another outcome" tests.
pub const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// Runs `exec` twice and asserts the two runs agree (see
/// [`assert_same_outcome`]). Returns the first.
#[track_caller]
pub fn run_twice(exec: &Exec) -> Run {
    let first = exec.run();
    let second = exec.run();
    assert_same_outcome(&first, &second);
    first
}

/// Asserts that two successful runs of one program and seed, one with and
/// one without the optional path `what` (faultline's vDSO, the fast path),
/// printed the same and left the same trace.
#[track_caller]
pub fn assert_same_on_both_paths(with: &Run, without: &Run, what: &str) {
    with.expect_success();
    without.expect_success();
    assert_eq!(
        with.stdout, without.stdout,
        "{what} changed what the program saw\n{with}\n{without}"
    );
    let (a, b) = (with.summary(), without.summary());
    assert_eq!(
        (a.events, a.trace_hash),
        (b.events, b.trace_hash),
        "{what} changed the trace\n{with}\n{without}"
    );
}

/// Asserts two runs that should be identical are: same exit code,
/// byte-identical stdout, same trace hash and event count.
#[track_caller]
pub fn assert_same_outcome(first: &Run, second: &Run) {
    assert_eq!(
        first.code(),
        second.code(),
        "same seed, different exit codes\n{first}\n{second}"
    );
    assert!(
        first.stdout == second.stdout,
        "same seed, different stdout\n{first}\n{second}"
    );
    let (a, b) = (first.summary(), second.summary());
    assert_eq!(
        a.trace_hash, b.trace_hash,
        "same seed, different trace hashes\n{first}\n{second}"
    );
    assert_eq!(
        a.events, b.events,
        "same seed, different event counts\n{first}\n{second}"
    );
}

/// Runs `exec` once per seed in [`SEEDS`] (each run must succeed) and
/// returns `project` of each run's stdout, in seed order.
#[track_caller]
pub fn per_seed(exec: &Exec, project: impl Fn(&str) -> String) -> Vec<String> {
    SEEDS
        .iter()
        .map(|&seed| {
            let run = exec.clone().seed(seed).run();
            run.expect_success();
            assert_eq!(
                run.summary().seed,
                seed,
                "summary names another seed\n{run}"
            );
            project(run.out())
        })
        .collect()
}

/// Asserts that `project` of the stdout is not the same for every seed in
/// [`SEEDS`]: the seed really steers the outcome.
#[track_caller]
pub fn assert_seeds_vary(exec: &Exec, project: impl Fn(&str) -> String) {
    let outcomes = per_seed(exec, project);
    let distinct: BTreeSet<&String> = outcomes.iter().collect();
    assert!(
        distinct.len() > 1,
        "seeds {SEEDS:?} all gave the same outcome: {:?}",
        outcomes[0]
    );
}

/// Asserts that `project` of the stdout differs for every pair of seeds in
/// [`SEEDS`] (for values, such as random bytes, that must never collide).
#[track_caller]
pub fn assert_seeds_all_differ(exec: &Exec, project: impl Fn(&str) -> String) {
    assert_all_distinct(&per_seed(exec, project), "per-seed values");
}

/// Asserts no two of `values` are equal.
#[track_caller]
pub fn assert_all_distinct(values: &[String], what: &str) {
    let distinct: BTreeSet<&String> = values.iter().collect();
    assert_eq!(
        distinct.len(),
        values.len(),
        "{what} are not all distinct: {values:?}"
    );
}

/// Wall-clock bound for a run whose program sleeps hours of virtual time:
/// a generous sanity limit, not a benchmark.
pub const VIRTUAL_SLEEP_WALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Asserts `low <= value < high` for a reading named `what` of `run`.
#[track_caller]
pub fn assert_in_range<T: PartialOrd + std::fmt::Debug>(
    value: T,
    low: T,
    high: T,
    what: &str,
    run: &Run,
) {
    assert!(
        low <= value && value < high,
        "{what} = {value:?}, expected in [{low:?}, {high:?})\n{run}"
    );
}

/// Asserts the run took less than [`VIRTUAL_SLEEP_WALL_LIMIT`] of wall time.
#[track_caller]
pub fn assert_fast(run: &Run) {
    assert!(
        run.wall < VIRTUAL_SLEEP_WALL_LIMIT,
        "virtual sleeps took {:?} of wall time (limit {VIRTUAL_SLEEP_WALL_LIMIT:?})\n{run}",
        run.wall
    );
}
