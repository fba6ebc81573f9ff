//! `--progress`: a line on stderr every so often of wall time while a run
//! goes on (virtual time, events, speed), which never changes the run;
//! and a simulation flag's bad value refused with exit 2, naming the flag.

use faultline_e2e::checks::{assert_same_on_both_paths, run_twice};
use faultline_e2e::{Exec, Program};

/// 20,000 mutex/condvar hand-offs: about 110,000 events, a fraction of a
/// second of wall time.
fn handoffs() -> Exec {
    Exec::program(Program::c("bench_syscalls"))
        .arg("0")
        .arg("20000")
        .seed(3)
}

#[test]
fn progress_lines_come_as_asked_and_leave_the_run_as_it_was() {
    let with = run_twice(&handoffs().option("--progress", "1ms"));
    let lines: Vec<&str> = with
        .faultline_lines()
        .into_iter()
        .filter(|l| l.starts_with("faultline: progress: "))
        .collect();
    assert!(!lines.is_empty(), "no progress line\n{with}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains(" virtual s, ") && l.ends_with(" virtual s per wall s)")),
        "{lines:#?}"
    );
    // By default only a terminal gets them; with 0 nobody does.
    for quiet in [handoffs(), handoffs().option("--progress", "0")] {
        let without = quiet.run();
        assert!(
            without.faultline_line_with("progress:").is_none(),
            "{without}"
        );
        assert_same_on_both_paths(&with, &without, "--progress");
    }
}

#[test]
fn a_bad_setting_is_refused_with_exit_2_naming_its_flag() {
    for (flag, value, says) in [
        ("--progress", "5", "--progress: duration \"5\" needs a unit"),
        (
            "--progress",
            "soon",
            "--progress: duration \"soon\" does not start with a number",
        ),
        ("--timer-slack", "abc", "--timer-slack: duration \"abc\""),
        (
            "--timeout",
            "10 parsecs",
            "--timeout: duration \"10 parsecs\": unknown unit",
        ),
    ] {
        let run = handoffs().option(flag, value).run();
        run.expect_code(2);
        assert!(
            run.faultline_line_with(says).is_some(),
            "{flag} {value}: expected {says:?}\n{run}"
        );
    }
}
