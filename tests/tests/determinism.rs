//! Determinism machinery: seed parsing, `--check-determinism` (both
//! verdicts), `--trace` files, and the watchdog for spinning threads.

use std::collections::BTreeSet;
use std::fs;

use faultline_e2e::checks::assert_same_outcome;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::trace::read_trace;
use faultline_e2e::{Exec, Program};

/// Iterations of the spin program: about 2 s of wall time natively.
const SPIN_ITERATIONS: &str = "1200000000";
/// What the spin program prints after [`SPIN_ITERATIONS`] (pure computation).
const SPIN_RESULT: &str = "spin done fee615838bee281d\n";

#[test]
fn seed_accepts_decimal_and_hex_and_defaults_to_zero() {
    let exec = Exec::program(Program::c("random"));
    let decimal = exec.clone().seed(7).run();
    let hex = exec.clone().seed_text("0x7").run();
    decimal.expect_success();
    hex.expect_success();
    assert_eq!(decimal.summary().seed, 7, "\n{decimal}");
    assert_same_outcome(&decimal, &hex);

    let default = exec.clone().run();
    let zero = exec.clone().seed(0).run();
    default.expect_success();
    assert_eq!(default.summary().seed, 0, "default seed\n{default}");
    assert_same_outcome(&default, &zero);
    assert!(
        default.stdout != decimal.stdout,
        "seeds 0 and 7 gave the same random bytes\n{default}\n{decimal}"
    );

    let big = exec.seed_text("0xdeadbeefcafef00d").run();
    big.expect_success();
    assert_eq!(big.summary().seed, 0xdead_beef_cafe_f00d, "\n{big}");
}

/// `--check-determinism` on `program` prints `determinism ok` and succeeds.
fn check_determinism_passes(program: Program, seed: u64) {
    let run = Exec::program(program).seed(seed).check_determinism().run();
    run.expect_success();
    assert!(
        run.faultline_line_with("faultline: determinism ok")
            .is_some(),
        "\n{run}"
    );
}

#[test]
fn check_determinism_passes_for_c_threads() {
    check_determinism_passes(Program::c("mutex_log"), 41);
}

#[test]
fn check_determinism_passes_for_go_goroutines() {
    check_determinism_passes(Program::go("goroutines"), 42);
}

#[test]
fn check_determinism_keeps_the_exit_code() {
    let run = Exec::new("/bin/sh")
        .arg("-c")
        .arg("exit 3")
        .check_determinism()
        .run();
    run.expect_code(3);
    assert!(
        run.faultline_line_with("faultline: determinism ok")
            .is_some(),
        "\n{run}"
    );
}

#[test]
fn check_determinism_reports_divergence() {
    // The counter program makes one more nanosleep on every run.
    let counter = scratch_dir("counter").join("count");
    fs::write(&counter, "0\n").expect("create counter file");
    let run = Exec::program(Program::c("counter"))
        .arg(&counter)
        .seed(43)
        .check_determinism()
        .run();
    run.expect_code(123);
    assert_eq!(
        fs::read_to_string(&counter).ok().as_deref(),
        Some("2\n"),
        "expected exactly two runs\n{run}"
    );
    assert!(
        run.faultline_line_with("determinism ok").is_none(),
        "\n{run}"
    );
    // The report shows the first divergent event of each run: a syscall the
    // program makes (where exactly depends on which arguments and results
    // faultline hashes).
    let calls = ["openat", "read", "write", "close", "nanosleep"];
    let naming_a_call = run
        .faultline_lines()
        .into_iter()
        .filter(|l| !l.starts_with(faultline_e2e::summary::SUMMARY_PREFIX))
        .filter(|l| calls.iter().any(|c| l.contains(c)))
        .count();
    assert!(
        naming_a_call >= 2,
        "expected the first divergent event of each run, naming its syscall\n{run}"
    );
}

#[test]
fn trace_is_json_lines_and_reproducible() {
    let dir = scratch_dir("trace");
    let exec = Exec::program(Program::c("mutex_log")).seed(44);
    let (path_a, path_b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    let a = exec.clone().trace(&path_a).run();
    let b = exec.trace(&path_b).run();
    a.expect_success();
    b.expect_success();
    assert_same_outcome(&a, &b);

    let events = read_trace(&path_a).unwrap_or_else(|e| panic!("{e}\n{a}"));
    assert!(!events.is_empty(), "empty trace\n{a}");
    assert_eq!(
        events.len() as u64,
        a.summary().events,
        "trace lines vs summary events\n{a}"
    );
    assert_eq!(
        events[0].tid, 1,
        "the first event is not the first thread's\n{a}"
    );
    for pair in events.windows(2) {
        assert_eq!(
            pair[1].n,
            pair[0].n + 1,
            "event numbers not consecutive: {pair:?}"
        );
        assert!(
            pair[1].t >= pair[0].t,
            "virtual time went backwards: {pair:?}"
        );
    }
    let tids: BTreeSet<u64> = events.iter().map(|e| e.tid).collect();
    assert!(
        tids.len() >= 5 && !tids.contains(&0),
        "expected main + 4 workers, got tids {tids:?}"
    );
    let calls: BTreeSet<&str> = events.iter().map(|e| e.call.as_str()).collect();
    assert!(
        calls.contains("sched_yield"),
        "no sched_yield event: {calls:?}"
    );
    assert!(
        calls.iter().any(|c| c.contains("nanosleep")),
        "no nanosleep event: {calls:?}"
    );
    assert!(
        fs::read(&path_a).unwrap() == fs::read(&path_b).unwrap(),
        "same seed, different trace files"
    );
}

#[test]
fn trace_time_follows_virtual_sleep() {
    let path = scratch_dir("trace-sleep").join("trace.jsonl");
    let run = Exec::program(Program::c("sleep_hour"))
        .seed(45)
        .trace(&path)
        .run();
    run.expect_success();
    let events = read_trace(&path).unwrap_or_else(|e| panic!("{e}\n{run}"));
    let last = events.iter().map(|e| e.t).max().unwrap_or(0);
    assert!(
        last >= 5_400_000_000_000,
        "last event at t={last} ns, before the 1.5 h of sleeps ended\n{run}"
    );
}

#[test]
fn spinning_alone_completes() {
    let run = Exec::program(Program::c("spin"))
        .arg("0")
        .arg(SPIN_ITERATIONS)
        .seed(46)
        .run();
    run.expect_success();
    assert_eq!(run.out(), SPIN_RESULT, "\n{run}");
}

#[test]
fn spinning_beside_a_runnable_thread_is_flagged() {
    let run = Exec::program(Program::c("spin"))
        .arg("1")
        .arg(SPIN_ITERATIONS)
        .option("--spin-limit", "200ms")
        .seed(47)
        .run();
    run.expect_success();
    assert_eq!(run.out(), SPIN_RESULT, "\n{run}");
    assert!(
        run.faultline_line_with("possibly non-deterministic").is_some(),
        "a thread spun ~2 s without a syscall while another was runnable: the watchdog must preempt it and flag the run\n{run}"
    );
}

#[test]
fn spin_result_is_pure_computation() {
    // Guards SPIN_RESULT: the same binary run natively prints it too.
    let native = std::process::Command::new(Program::c("spin").path())
        .args(["0", SPIN_ITERATIONS])
        .output()
        .expect("run spin natively");
    assert!(native.status.success());
    assert_eq!(String::from_utf8_lossy(&native.stdout), SPIN_RESULT);
}

/// A thread that spins until a stopped thread sets a flag is preempted at
/// whatever instruction wall time stops it at; the run must not depend on
/// that. With two spin limits the watchdog fires at different points of the
/// spin, yet the trace is the same: signals sent to the spinner wait for its
/// next system call, and the spin's in-place clock reads are not counted.
#[test]
fn preempting_a_spin_gives_the_same_run_whenever_the_watchdog_fires() {
    let exec = |limit: &str| {
        Exec::program(Program::c("spin_wait"))
            .seed(1)
            .option("--spin-limit", limit)
            .run()
    };
    let (short, long) = (exec("30ms"), exec("90ms"));
    for run in [&short, &long] {
        run.expect_success();
        assert_eq!(
            run.out(),
            "signals during the spin: 0\nsignals after it: yes\n",
            "\n{run}"
        );
        assert!(
            run.faultline_line_with("possibly non-deterministic")
                .is_some(),
            "the spinner was not preempted\n{run}"
        );
    }
    assert_same_outcome(&short, &long);
}

/// A one-node scenario whose node is `program` with `args`, in a fresh
/// scratch directory (the node runs there).
fn one_node(tag: &str, program: Program, args: &[&str]) -> faultline_e2e::scenario::ScenarioFile {
    let mut command = vec![program.path().display().to_string()];
    command.extend(args.iter().map(|a| a.to_string()));
    faultline_e2e::runner::command_scenario(
        tag,
        &command.iter().map(String::as_str).collect::<Vec<_>>(),
        "",
    )
}

#[test]
fn run_replays_a_failing_seed_before_reporting_it() {
    let file = faultline_e2e::runner::sh_scenario("recheck", "echo boom >&2; exit 4", "");
    let run = file.runner().seeds(1).run();
    run.expect_code(1);
    let replays = faultline_e2e::runner::any_line(&run.run, "replays:")
        .unwrap_or_else(|| panic!("no replays line\n{run}"));
    assert_eq!(
        replays.trim(),
        "replays:   identical (a second run gave the same trace)",
        "\n{run}"
    );
    let dir = run.seed_dir(run.report().seed);
    let report = faultline_e2e::runner::report_json(&dir);
    assert_eq!(report["replays"], "identical", "{report}");
    assert!(
        !dir.join("recheck").exists(),
        "an identical rerun is not kept"
    );

    // --no-recheck runs it once.
    let once = file.runner().seeds(1).flag("--no-recheck").run();
    once.expect_code(1);
    assert!(
        faultline_e2e::runner::any_line(&once.run, "replays:").is_none(),
        "\n{once}"
    );
    let report = faultline_e2e::runner::report_json(&once.seed_dir(once.report().seed));
    assert!(report.get("replays").is_none(), "{report}");
}

#[test]
fn run_check_determinism_passes_a_deterministic_scenario() {
    let file = one_node("determinism-ok", Program::c("mutex_log"), &[]);
    let run = file.runner().seeds(2).flag("--check-determinism").run();
    run.expect_pass();
    let identical = run
        .run
        .stderr
        .lines()
        .filter(|l| l.contains("replays:   identical"))
        .count();
    assert_eq!(identical, 2, "each seed ran twice, identically\n{run}");
    for r in run.reports() {
        let report = faultline_e2e::runner::report_json(&run.seed_dir(r.seed));
        assert_eq!(report["replays"], "identical", "{report}");
    }
}

#[test]
fn run_check_determinism_fails_a_seed_whose_runs_differ() {
    // The counter program keeps its count in a file of the scenario's
    // folder: each run reads what the one before wrote and makes one more
    // nanosleep, a difference faultline cannot virtualize.
    let file = one_node("determinism-differs", Program::c("counter"), &["count"]);
    let count = file.path.parent().expect("folder").join("count");
    let run = file.runner().seeds(1).flag("--check-determinism").run();
    run.expect_code(123);
    assert_eq!(
        fs::read_to_string(&count).ok().as_deref(),
        Some("2\n"),
        "expected exactly two runs\n{run}"
    );
    let seed = run.report();
    assert_eq!(seed.verdict, "NONDETERMINISTIC", "\n{run}");
    for which in ["run 1:", "run 2:"] {
        let line = faultline_e2e::runner::any_line(&run.run, which)
            .unwrap_or_else(|| panic!("no {which} line\n{run}"));
        assert!(line.contains("node n, thread 1, t="), "{line}");
    }
    assert!(
        faultline_e2e::runner::any_line(&run.run, "cause:   unknown").is_some(),
        "\n{run}"
    );
    let dir = run.seed_dir(seed.seed);
    let report = faultline_e2e::runner::report_json(&dir);
    assert_eq!(report["verdict"], "nondeterministic", "{report}");
    let diverged = &report["replays"]["diverged"];
    assert_eq!(diverged["cause"], "unknown", "{report}");
    assert_eq!(diverged["first"]["node"], "n", "{report}");
    assert!(diverged["first"]["call"].is_string(), "{report}");
    assert!(
        dir.join("recheck").join("report.json").exists(),
        "the differing run is kept"
    );

    // Without the check the seed passes: only --check-determinism runs a
    // passing seed twice.
    let plain = file.runner().seeds(1).run();
    plain.expect_pass();
}
