//! Go 1.19 programs (static, default GOMAXPROCS): goroutines and channels,
//! map order, time.Now/Sleep, timers and select, math/rand and crypto/rand.

use faultline_e2e::checks::{
    assert_fast, assert_in_range, assert_seeds_all_differ, assert_seeds_vary, run_twice,
};
use faultline_e2e::output::{value, word_after, words};
use faultline_e2e::{Exec, Program, DEFAULT_EPOCH, STARTUP_SLACK_SECS};

#[test]
fn goroutine_interleaving_follows_seed() {
    let exec = Exec::program(Program::go("goroutines"));
    let run = run_twice(&exec.clone().seed(31));
    run.expect_success();
    let out = run.out();
    assert_eq!(words(out, "counts"), ["25", "25", "25", "25"], "\n{run}");
    assert_eq!(value::<String>(out, "order").len(), 100, "\n{run}");
    assert_seeds_vary(&exec, |out| value(out, "order"));
}

#[test]
fn cpus_option_sets_the_visible_cpu_count() {
    let run = run_twice(&Exec::program(Program::go("goroutines")).seed(31).cpus(3));
    run.expect_success();
    let out = run.out();
    assert_eq!(
        word_after::<u32>(out, "gomaxprocs", "numcpu"),
        3,
        "runtime.NumCPU()\n{run}"
    );
    assert_eq!(
        value::<u32>(out, "gomaxprocs"),
        3,
        "default GOMAXPROCS\n{run}"
    );
}

#[test]
fn map_order_follows_seed() {
    let exec = Exec::program(Program::go("maps"));
    let run = run_twice(&exec.clone().seed(32));
    run.expect_success();
    let expected: Vec<String> = (0..16).map(|i| format!("key{i:02}")).collect();
    for pass in ["pass1", "pass2"] {
        let mut keys = words(run.out(), pass);
        keys.sort_unstable();
        assert_eq!(keys, expected, "{pass} lost or invented keys\n{run}");
    }
    assert_seeds_vary(&exec, |out| {
        format!(
            "{} / {}",
            words(out, "pass1").join(" "),
            words(out, "pass2").join(" ")
        )
    });
}

#[test]
fn hour_sleep_is_virtual() {
    let run = run_twice(&Exec::program(Program::go("clock")).seed(33));
    run.expect_success();
    assert_fast(&run);
    let out = run.out();
    let start: i64 = word_after(out, "now", "unix");
    assert_in_range(
        start,
        DEFAULT_EPOCH,
        DEFAULT_EPOCH + STARTUP_SLACK_SECS,
        "time.Now() at start",
        &run,
    );
    assert!(
        value::<String>(out, "now").starts_with("2025-01-01T00:00:0"),
        "\n{run}"
    );
    assert_in_range(
        value::<f64>(out, "slept"),
        3600.0,
        3601.0,
        "time.Since after time.Sleep(time.Hour)",
        &run,
    );
    let end = out.lines().last().unwrap_or_default();
    assert!(
        end.starts_with("now 2025-01-01T01:00:0"),
        "time.Now() after the sleep: {end:?}\n{run}"
    );
}

#[test]
fn epoch_option_moves_time_now() {
    let run = run_twice(
        &Exec::program(Program::go("clock"))
            .arg("1s")
            .seed(33)
            .epoch("2030-06-15T12:00:00Z"),
    );
    run.expect_success();
    assert!(
        value::<String>(run.out(), "now").starts_with("2030-06-15T12:00:0"),
        "\n{run}"
    );
}

#[test]
fn timers_and_select_fire_in_virtual_order() {
    // Each clock read costs --step-cost, so the runtime's own work adds about
    // a millisecond over the run; a 10 s unit keeps that below the 0.001-unit
    // rounding, leaving only the timer order and durations visible. Exact
    // deadlines (no timer slack): with Linux's slack the runtime's 10 s
    // epoll wait ends 10 ms late, as it does natively (time.rs has the
    // slack's own test).
    let run = run_twice(
        &Exec::program(Program::go("timers"))
            .arg("10s")
            .seed(34)
            .option("--timer-slack", "0"),
    );
    run.expect_success();
    assert_fast(&run);
    assert_eq!(
        run.out(),
        "timer won at 1.000\nafterfunc ran at 1.500\ntick 1 at 1.600\ntick 2 at 1.700\n\
         tick 3 at 1.800\ntimeout at 4.800\n",
        "\n{run}"
    );
}

#[test]
fn crypto_rand_follows_seed() {
    let exec = Exec::program(Program::go("rand"));
    let run = run_twice(&exec.clone().seed(35));
    run.expect_success();
    assert_eq!(words(run.out(), "math").len(), 4, "\n{run}");
    assert_eq!(value::<String>(run.out(), "crypto").len(), 32, "\n{run}");
    assert_seeds_all_differ(&exec, |out| value(out, "crypto"));
}

/// With `--go-yields` the Go runtime's yield (runtime.gosched_m, found in
/// the program's pclntab) is a scheduling point: the trace shows each call
/// as a `yield … go` event, at the same points on every run; by default it
/// is not.
#[test]
fn go_runtime_yields_are_scheduling_points() {
    let dir = faultline_e2e::paths::scratch_dir("go-yields");
    let exec = Exec::program(Program::go("goroutines")).seed(31);
    let yields = |flags: &[&str], name: &str| {
        let path = dir.join(name);
        let run = flags
            .iter()
            .fold(exec.clone(), |e, f| e.flag(f))
            .trace(&path)
            .run();
        run.expect_success();
        let events =
            faultline_e2e::trace::read_trace(&path).unwrap_or_else(|e| panic!("{e}\n{run}"));
        let n = events
            .iter()
            .filter(|e| e.call == "yield" && e.ret == "go")
            .count();
        (n, std::fs::read(&path).unwrap())
    };
    let (first, trace_a) = yields(&["--go-yields"], "a.jsonl");
    let (second, trace_b) = yields(&["--go-yields"], "b.jsonl");
    assert!(first > 0, "no yield events in the trace");
    assert_eq!(first, second);
    assert!(trace_a == trace_b, "same seed, different traces");
    let (off, _) = yields(&[], "off.jsonl");
    assert_eq!(off, 0, "yields were scheduling points without --go-yields");
}

/// Go's background sweeper waits for the sweepers of other threads in a
/// loop without a system call; with goroutines allocating on every P while
/// collections are forced, that thread is often one faultline has stopped.
/// The sweeper's `runtime.freeSomeWbufs` is a give-way point, so the wait
/// ends at the same instruction on every run: no watchdog preemption (the
/// program had 4 to 19 per seed before, a spin of 1 s each), the same trace.
#[test]
fn go_sweeper_waits_give_way_instead_of_spinning() {
    let dir = faultline_e2e::paths::scratch_dir("go-give-way");
    for seed in [1, 2, 3] {
        let path = dir.join(format!("{seed}.jsonl"));
        let exec = Exec::program(Program::go("gcwait")).seed(seed).trace(&path);
        let run = run_twice(&exec);
        run.expect_success();
        assert!(run.out().contains("gc cycles >= 20: true"), "\n{run}");
        assert!(
            !run.stderr.contains("watchdog preempted"),
            "seed {seed}: the sweeper's wait was preempted\n{run}"
        );
        let events =
            faultline_e2e::trace::read_trace(&path).unwrap_or_else(|e| panic!("{e}\n{run}"));
        let give_ways = events
            .iter()
            .filter(|e| e.call == "yield" && e.ret == "give-way")
            .count();
        assert!(
            give_ways > 0,
            "seed {seed}: no give-way in the trace\n{run}"
        );
    }
}

#[test]
fn a_go_programs_futex_wakes_are_not_scheduling_points() {
    // Under `random` every scheduling point picks any ready thread, so a
    // switch follows most calls of a program with several threads. Go's
    // runtime wakes an idle thread and goes on: its wakes are answered in
    // place, so the waker's next event follows each (over the channel the
    // stub notes them without a round trip; without it they trap), and
    // both paths give one trace.
    let dir = faultline_e2e::paths::scratch_dir("go-wakes");
    let run = |path: &str, extra: Option<&str>| {
        let trace = dir.join(path);
        let mut exec = Exec::program(Program::go("gcwait"))
            .seed(5)
            .option("--schedule-policy", "random")
            .trace(&trace);
        if let Some(flag) = extra {
            exec = exec.flag(flag);
        }
        let run = run_twice(&exec);
        run.expect_success();
        (
            run,
            faultline_e2e::trace::read_trace(&trace).expect("trace"),
        )
    };
    let (fast, events) = run("fast.jsonl", None);
    let (trapped, _) = run("trapped.jsonl", Some("--no-preload"));
    faultline_e2e::checks::assert_same_on_both_paths(&fast, &trapped, "the fast path");
    let is_wake = |e: &faultline_e2e::trace::TraceEvent| {
        e.call == "futex" && e.raw["args"] == serde_json::json!([1])
    };
    let after = |pick: &dyn Fn(&faultline_e2e::trace::TraceEvent) -> bool| {
        let pairs = events.windows(2).filter(|w| pick(&w[0]));
        let (mut n, mut switched) = (0, 0);
        for w in pairs {
            n += 1;
            switched += usize::from(w[1].tid != w[0].tid);
        }
        (n, switched)
    };
    let (wakes, switched) = after(&is_wake);
    assert!(wakes > 20, "{wakes} futex wakes\n{fast}");
    assert_eq!(switched, 0, "a switch came at a futex wake\n{fast}");
    let (others, others_switched) = after(&|e| !is_wake(e) && e.call != "spawn");
    assert!(
        others_switched * 4 > others,
        "random switched after {others_switched} of {others} other events\n{fast}"
    );
}
