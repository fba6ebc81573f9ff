//! Threads under the one-at-a-time seeded scheduler: mutexes, condition
//! variables, pipes between threads, Rust's std::sync, and deadlocks.

use faultline_e2e::checks::{assert_seeds_vary, run_twice};
use faultline_e2e::output::{value, words};
use faultline_e2e::{per_linkage, Exec, Program};

/// Asserts a `counts` line of the interleaving programs: every worker
/// appended exactly `per_worker` times.
fn assert_counts(out: &str, workers: usize, per_worker: usize, run: &faultline_e2e::Run) {
    let expected = vec![per_worker.to_string(); workers];
    assert_eq!(
        words(out, "counts"),
        expected,
        "lost or duplicated appends\n{run}"
    );
    assert_eq!(
        value::<String>(out, "order").len(),
        workers * per_worker,
        "log length\n{run}"
    );
}

fn c_mutex_interleaving_follows_seed(program: Program) {
    let exec = Exec::program(program);
    let run = run_twice(&exec.clone().seed(11));
    run.expect_success();
    assert_counts(run.out(), 4, 25, &run);
    assert_seeds_vary(&exec, |out| value(out, "order"));
}
per_linkage!(
    c_mutex_interleaving_follows_seed,
    Program::c("mutex_log"),
    c_mutex_interleaving_follows_seed
);

fn c_condvar_delivers_every_item_once(program: Program) {
    let run = run_twice(&Exec::program(program).seed(12));
    run.expect_success();
    let out = run.out();
    assert_eq!(words(out, "total"), ["40", "sum", "2380"], "\n{run}");
    let items: Vec<u32> = out
        .lines()
        .filter_map(|l| l.strip_prefix("consumer "))
        .map(|rest| rest.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    let mut sorted = items.clone();
    sorted.sort_unstable();
    let expected: Vec<u32> = (0..20).chain(100..120).collect();
    assert_eq!(sorted, expected, "items lost or duplicated\n{run}");
    for producer in [0, 1] {
        let from_producer: Vec<u32> = items
            .iter()
            .copied()
            .filter(|i| i / 100 == producer)
            .collect();
        assert!(
            from_producer.windows(2).all(|w| w[0] < w[1]),
            "producer {producer}'s items left the FIFO out of order\n{run}"
        );
    }
}
per_linkage!(
    c_condvar_delivers_every_item_once,
    Program::c("condvar"),
    c_condvar_delivers_every_item_once
);

fn c_pipe_between_threads(program: Program) {
    let run = run_twice(&Exec::program(program).seed(13));
    run.expect_success();
    let mut expected: String = (0..10).map(|i| format!("got msg {i:03}\n")).collect();
    expected.push_str("eof\n");
    assert_eq!(run.out(), expected, "\n{run}");
}
per_linkage!(
    c_pipe_between_threads,
    Program::c("pipe_threads"),
    c_pipe_between_threads
);

fn rust_std_sync_interleaving_follows_seed(program: Program) {
    let exec = Exec::program(program);
    let run = run_twice(&exec.clone().seed(14));
    run.expect_success();
    let out = run.out();
    assert_counts(out, 4, 25, &run);
    let mut finished = words(out, "finished");
    finished.sort_unstable();
    assert_eq!(
        finished,
        ["0", "1", "2", "3"],
        "mpsc lost or duplicated a message\n{run}"
    );
    assert_seeds_vary(&exec, |out| {
        format!(
            "{} / {}",
            value::<String>(out, "order"),
            words(out, "finished").join(" ")
        )
    });
}
per_linkage!(
    rust_std_sync_interleaving_follows_seed,
    Program::rust("threads"),
    rust_std_sync_interleaving_follows_seed
);

fn deadlock_is_reported_not_hung(program: Program) {
    let run = run_twice(&Exec::program(program).seed(15));
    run.expect_code(124);
    assert_eq!(run.out(), "threads started\n", "\n{run}");
    let deadlock_lines: Vec<&str> = run
        .faultline_lines()
        .into_iter()
        .filter(|l| l.starts_with("faultline: deadlock:"))
        .collect();
    let on_futex = deadlock_lines
        .iter()
        .filter(|l| l.contains("futex"))
        .count();
    assert!(
        on_futex >= 2,
        "expected the two lockers (at least) reported as parked on a futex, got {deadlock_lines:#?}\n{run}"
    );
    run.summary();
}
per_linkage!(
    deadlock_is_reported_not_hung,
    Program::c("deadlock"),
    deadlock_is_reported_not_hung
);
