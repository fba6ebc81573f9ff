//! POSIX timers (timer_create, timer_settime, timer_gettime, timer_delete)
//! on virtual time: signals with SI_TIMER and the sigevent's value, interval
//! timers, glibc's SIGEV_THREAD, and coreutils `timeout`, which arms one;
//! timerfds, from a C program and from memcached's libevent clock.

use faultline_e2e::checks::run_twice;
use faultline_e2e::output::value;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{per_linkage, Exec, Program};

fn posix_timers_tick_on_virtual_time(program: Program) {
    let run = run_twice(&Exec::program(program).seed(4));
    run.expect_success();
    let out = run.out();
    assert_eq!(value::<u32>(out, "armed_left_ms"), 99, "{run}");
    for i in 1..=5 {
        let at = format!("tick {i} at {:.3}", i as f64 / 10.0);
        assert!(out.contains(&at), "missing {at:?}\n{run}");
    }
    assert_eq!(
        value::<u32>(out, "bad_info"),
        0,
        "SI_TIMER and sival\n{run}"
    );
    assert_eq!(value::<u32>(out, "thread_calls"), 7, "SIGEV_THREAD\n{run}");
    assert_eq!(value::<String>(out, "elapsed"), "2.500", "{run}");
    assert!(
        run.faultline_line_with("unsupported").is_none(),
        "a timer call was refused\n{run}"
    );
}
per_linkage!(
    c_posix_timers_tick_on_virtual_time,
    Program::c("posix_timer"),
    posix_timers_tick_on_virtual_time
);

#[test]
fn coreutils_timeout_kills_after_five_virtual_seconds() {
    let trace = scratch_dir("timeout").join("trace.jsonl");
    let exec = Exec::new("/usr/bin/timeout")
        .arg("5")
        .arg("sleep")
        .arg("60")
        .seed(2)
        .trace(&trace);
    let run = run_twice(&exec);
    run.expect_code(124);
    let vtime = run.summary().vtime_secs;
    assert!((5.0..5.01).contains(&vtime), "vtime {vtime}\n{run}");
    // It armed a POSIX timer (before, timer_create failed and coreutils
    // fell back to alarm).
    let text = std::fs::read_to_string(&trace).expect("trace");
    assert!(
        text.contains("\"call\":\"timer_settime\""),
        "no timer_settime in the trace\n{run}"
    );
    assert!(
        run.faultline_line_with("unsupported syscall timer")
            .is_none(),
        "{run}"
    );
}

/// timerfd on virtual time, waited for with epoll, poll, select and a
/// blocking read: periodic and one-shot, relative and absolute, on the
/// three clocks, with the expiration count and EAGAIN a timerfd gives.
fn timerfds_expire_on_virtual_time(program: Program) {
    let run = run_twice(&Exec::program(program).seed(5));
    run.expect_success();
    let out = run.out();
    for line in [
        "cloexec 1",
        "armed interval_ms 100",
        "tick 1 at 0.100 count 1",
        "tick 2 at 0.200 count 1",
        "tick 3 at 0.300 count 1",
        "after sleep count 3",
        "old interval_ms 100",
        "disarmed 1",
        "eagain 1",
        "oneshot after 0.050 count 1",
        "spent eagain 1",
        "abstime after 1.000 count 1",
        "blocking read after 0.200 count 1",
        "write einval 1",
        "elapsed 1.900",
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?}\n{run}");
    }
    assert!(
        run.faultline_line_with("unsupported").is_none(),
        "a timerfd call was refused\n{run}"
    );
}
per_linkage!(
    c_timerfds_expire_on_virtual_time,
    Program::c("timerfd"),
    timerfds_expire_on_virtual_time
);

#[test]
fn memcached_clock_ticks_on_a_timerfd() {
    // libevent's epoll backend times its waits with a timerfd when
    // EVENT_PRECISE_TIMER is set; memcached's clock event then fires once
    // a virtual second.
    let trace = scratch_dir("memcached-timerfd").join("trace.jsonl");
    let exec = Exec::new("/usr/bin/memcached")
        .arg("-u")
        .arg("nobody")
        .arg("-p")
        .arg("0")
        .arg("-U")
        .arg("0")
        .arg("-t")
        .arg("1")
        .env("EVENT_PRECISE_TIMER", "1")
        .option("--timeout", "10s")
        .seed(3)
        .trace(&trace);
    let run = run_twice(&exec);
    run.expect_code(124);
    let text = std::fs::read_to_string(&trace).expect("trace");
    assert!(
        text.contains("\"call\":\"timerfd_create\""),
        "no timerfd_create in the trace\n{run}"
    );
    let expiries: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"call\":\"timerfd\""))
        .collect();
    assert_eq!(expiries.len(), 9, "one expiry a virtual second\n{run}");
    assert!(run.faultline_line_with("unsupported").is_none(), "{run}");
}
