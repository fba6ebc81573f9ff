//! Scheduling policies (`--schedule-policy random|sticky|pct`): each is
//! deterministic per seed, PCT switches threads far less often than the
//! uniform choice (it runs the highest-priority thread until a change
//! point) unless the thread yields, sticky less often too unless the
//! thread yields, and the policy a seed ran under is recorded in
//! report.json.

use faultline_e2e::checks::assert_same_outcome;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{Exec, Program, ScenarioFile};

/// Three threads add to a shared counter without a lock, yielding between
/// the read and the write: the printed order of writes is the interleaving
/// the scheduler chose, and lost updates show in the count.
fn yield_race(policy: &str, seed: u64) -> faultline_e2e::Run {
    race(policy, "yield", seed)
}

/// The race with `call` (`yield` or `getrandom`) between read and write.
fn race(policy: &str, call: &str, seed: u64) -> faultline_e2e::Run {
    let run = Exec::program(Program::c("yield_race"))
        .arg("3")
        .arg("40")
        .arg(call)
        .seed(seed)
        .option("--schedule-policy", policy)
        .run();
    run.expect_success();
    run
}

/// How often consecutive writes of the printed order come from different threads.
fn switches(run: &faultline_e2e::Run) -> usize {
    let out = String::from_utf8_lossy(&run.stdout);
    let order = out
        .lines()
        .find_map(|l| l.strip_prefix("order "))
        .unwrap_or_else(|| panic!("no `order` line\n{run}"));
    order.as_bytes().windows(2).filter(|w| w[0] != w[1]).count()
}

#[test]
fn each_policy_repeats_its_run_and_pct_switches_threads_less_unless_they_yield() {
    let (mut random_switches, mut pct_switches, mut pct_yield_switches) = (0, 0, 0);
    let mut pct_orders = std::collections::BTreeSet::new();
    for seed in [1, 2, 3] {
        let random = race("random", "getrandom", seed);
        assert_same_outcome(&random, &race("random", "getrandom", seed));
        let pct = race("pct", "getrandom", seed);
        assert_same_outcome(&pct, &race("pct", "getrandom", seed));
        assert_ne!(
            random.summary().trace_hash,
            pct.summary().trace_hash,
            "the policy decides the run\n{random}\n{pct}"
        );
        let pct_yield = yield_race("pct", seed);
        assert_same_outcome(&pct_yield, &yield_race("pct", seed));
        random_switches += switches(&random);
        pct_switches += switches(&pct);
        pct_yield_switches += switches(&pct_yield);
        pct_orders.insert(pct.stdout.clone());
    }
    assert!(
        pct_switches * 4 < random_switches,
        "PCT switched {pct_switches} times, random {random_switches}"
    );
    assert!(pct_orders.len() > 1, "PCT seeds give different runs");
    // A thread that yields waits for another: PCT lowers it below all.
    assert!(
        pct_yield_switches > 4 * pct_switches,
        "PCT switched {pct_yield_switches} times with yields, {pct_switches} without"
    );
}

#[test]
fn sticky_runs_a_thread_on_unless_it_yields() {
    let (mut random_switches, mut sticky_switches, mut sticky_yield_switches) = (0, 0, 0);
    for seed in [1, 2, 3] {
        let sticky = race("sticky", "getrandom", seed);
        assert_same_outcome(&sticky, &race("sticky", "getrandom", seed));
        random_switches += switches(&race("random", "getrandom", seed));
        sticky_switches += switches(&sticky);
        sticky_yield_switches += switches(&race("sticky", "yield", seed));
    }
    // Staying 80% of the time (and a third of the rest), a thread runs
    // about 7 steps on average, against 1.5 under the uniform choice.
    assert!(
        sticky_switches * 3 < random_switches,
        "sticky switched {sticky_switches} times, random {random_switches}"
    );
    assert!(sticky_switches > 0, "a switch is possible at every point");
    // A thread that yields is not preferred: the choice is uniform again.
    assert!(
        sticky_yield_switches > sticky_switches * 3,
        "with sched_yield sticky switched {sticky_yield_switches} times, without {sticky_switches}"
    );
}

#[test]
fn a_scenario_records_its_policy_in_report_json() {
    let dir = scratch_dir("schedule-report");
    let text = "name = \"schedule-report\"\nduration = \"1s\"\n\n[[node]]\nname = \"n\"\ncommand = [\"/bin/sh\", \"-c\", \"echo hi\"]\n";
    let file = ScenarioFile::raw(&dir, "s.toml", text);
    let run_pct = || {
        file.runner()
            .seed(5)
            .flag("--schedule-policy")
            .flag("pct")
            .flag("--pct-depth")
            .flag("4")
            .run()
    };
    let run = run_pct();
    run.expect_pass();
    let report: serde_json::Value = serde_json::from_slice(
        &std::fs::read(run.seed_dir(5).join("report.json")).expect("report.json"),
    )
    .expect("report.json parses");
    assert_eq!(
        report["schedule_policy"],
        serde_json::json!({"kind": "pct", "depth": 4, "steps": 20000}),
        "{report}"
    );
    let again = run_pct();
    assert_eq!(run.report().trace_hash, again.report().trace_hash);
}
