//! The notification path (`--notify`): futex, nanosleep, clock_nanosleep
//! and sched_yield reach the supervisor as seccomp user notifications
//! instead of ptrace stops, in dynamic, static and Go programs alike, with
//! the same output and the same trace as without it; signals interrupt and
//! restart those calls as on the ptrace path; forked and exec'd children
//! inherit the listener; a preempted spinner gets its held signals back.

use faultline_e2e::checks::{assert_same_on_both_paths, run_twice};
use faultline_e2e::{per_linkage, Exec, Program, Run};

/// Runs `exec` twice with `--notify` (which turns the default fast path
/// off) and once with `--no-preload`; asserts the three agree on stdout,
/// events and trace hash, and that the notified run took `min_notified`
/// calls or more without a stop. Returns (with, without).
fn same_run_with_and_without(exec: Exec, min_notified: u64) -> (Run, Run) {
    let notified = run_twice(&exec.clone().flag("--notify"));
    let trapped = exec.flag("--no-preload").run();
    assert_same_on_both_paths(&notified, &trapped, "the notification path");
    let (a, b) = (notified.summary(), trapped.summary());
    assert_eq!(
        b.fast, 0,
        "no call skips ptrace with --no-preload\n{trapped}"
    );
    assert!(
        a.fast >= min_notified,
        "only {} notified calls\n{notified}",
        a.fast
    );
    // Every notified call is a stop saved; a call that gives back signals
    // held since a preemption costs one stop more.
    assert!(
        (b.stops..=b.stops + 8).contains(&(a.stops + a.fast)),
        "stops {} + notified {} against {} stops\n{notified}\n{trapped}",
        a.stops,
        a.fast,
        b.stops
    );
    (notified, trapped)
}

fn mutex_handoffs(program: Program) {
    // 2000 mutex/condvar hand-offs between two threads: futex waits and
    // wakes, nearly every event.
    let exec = Exec::program(program).arg("0").arg("2000").seed(3);
    same_run_with_and_without(exec, 4000);
}

per_linkage!(
    c_mutex_handoffs,
    Program::c("bench_syscalls"),
    mutex_handoffs
);

#[test]
fn interrupted_and_restarted_sleeps_agree_with_the_ptrace_path() {
    // nanosleep and clock_nanosleep cut short by SIGALRM (EINTR with the
    // time left), a recv restarted after an SA_RESTART handler, and a
    // forked child that does the same exchange.
    let exec = Exec::program(Program::c("preload_paths"))
        .arg("inherit")
        .seed(5);
    let (notified, _) = same_run_with_and_without(exec, 2);
    let out = notified.out();
    for line in [
        "nanosleep: EINTR, 4 s left, alarms 1",
        "clock_nanosleep: EINTR, 4 s left, alarms 2",
        "child exit 0",
    ] {
        assert!(out.contains(line), "missing {line:?}\n{notified}");
    }
}

#[test]
fn forked_and_execd_children_run_the_same() {
    // fork, exec of /bin/true and /bin/false, waits: the filter and its
    // listener survive both.
    let exec = Exec::program(Program::c("fork_exec")).seed(2);
    same_run_with_and_without(exec, 0);
}

#[test]
fn go_programs_make_their_futex_calls_as_notifications() {
    for (name, seed) in [("goroutines", 42), ("timers", 9)] {
        // Under the uniform choice the goroutines' threads contend at
        // every step, so their runtime sleeps and wakes on futexes often
        // (sticky runs make 7 such calls here; seeds 41-46 make 13-20).
        let exec = Exec::program(Program::go(name))
            .seed(seed)
            .option("--schedule-policy", "random");
        same_run_with_and_without(exec, 12);
    }
}

#[test]
fn a_preempted_spinner_gets_its_signals_back_before_its_next_notified_call() {
    // The spinner's first call after its spin is a nanosleep, notified: the
    // signals the watchdog's preemption held come back at a stop made for
    // them just before it.
    let exec = Exec::program(Program::c("spin_wait"))
        .seed(1)
        .option("--spin-limit", "30ms");
    let (notified, _) = same_run_with_and_without(exec, 1);
    assert_eq!(
        notified.out(),
        "signals during the spin: 0\nsignals after it: yes\n",
        "\n{notified}"
    );
}
