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

/// A Python asyncio program whose thread pool finishes work out of order and
/// shuts down at exit: its workers' exits (the kernel's clear-child-tid store
/// and wake, here on faultline's futex) are ordered events, so the same seed
/// gives the same run; the order the workers finish follows the seed.
const ASYNCIO_POOL: &str = r#"
import asyncio, concurrent.futures, threading, time

done = []
def work(i):
    time.sleep(0.01 * (i % 3))
    done.append(i)
    return threading.get_ident() != 0

async def main():
    loop = asyncio.get_running_loop()
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        ok = await asyncio.gather(*[loop.run_in_executor(pool, work, i) for i in range(40)])
    print("all", all(ok))
    print("order", " ".join(map(str, done)))

asyncio.run(main())
"#;

#[test]
fn python_asyncio_thread_pool_exits_the_same_way_every_run() {
    let dir = faultline_e2e::paths::scratch_dir("asyncio-pool");
    let script = dir.join("pool.py");
    std::fs::write(&script, ASYNCIO_POOL).unwrap();
    let exec = Exec::new("python3").arg(&script);
    let run = run_twice(&exec.clone().seed(3));
    run.expect_success();
    assert_eq!(value::<String>(run.out(), "all"), "True", "\n{run}");
    assert_eq!(words(run.out(), "order").len(), 40, "\n{run}");
    assert_seeds_vary(&exec, |out| words(out, "order").join(" "));
}

/// What `wake_pipe` prints natively and under faultline: the waits in
/// virtual milliseconds, exact.
const WAKE_PIPE_OUT: &str = "\
empty: EAGAIN, epoll timed out after 30 ms
woken after 20 ms: events 0x1 data 42
FIONREAD 1, drained 'w', still level-ready: 0
capacity 65536, set to 5000: 8192
full: write -1 EAGAIN, poll POLLOUT 0
blocking read waited 15 ms
from the child: child
end of file after 10 ms
poll revents 0x10
exec closed the child's copy: end of file
no reader: write -1 EPIPE, SIGPIPEs 1
";

/// An event loop's wake-up pipe (pipe2 with O_NONBLOCK) is simulated: its
/// bytes, readiness, waits, end of file (across fork, exit and exec) and
/// EPIPE behave as the kernel's, the same on every run, and none of its
/// reads and writes is passed to the kernel (the trace shows each answered,
/// where a kernel pipe's would say `pass`).
fn c_wake_pipe_is_simulated_as_the_kernel_has_it(program: Program) {
    let dir = faultline_e2e::paths::scratch_dir("wake-pipe");
    let path = dir.join("trace.jsonl");
    let run = run_twice(&Exec::program(program).seed(5).trace(&path));
    run.expect_success();
    assert_eq!(run.out(), WAKE_PIPE_OUT, "\n{run}");
    let events = faultline_e2e::trace::read_trace(&path).unwrap_or_else(|e| panic!("{e}\n{run}"));
    let pipe_io: Vec<&str> = events
        .iter()
        .filter(|e| matches!(e.call.as_str(), "read" | "write"))
        // Not stdout's (fd 1); a file's read shows only its descriptor.
        .filter(|e| {
            e.raw["args"]
                .as_array()
                .is_some_and(|a| a.len() > 1 && a[0].as_i64() >= Some(3))
        })
        .filter_map(|e| e.ret.as_str())
        .collect();
    assert!(
        pipe_io.len() >= 12 && !pipe_io.contains(&"pass"),
        "the pipe's reads and writes: {pipe_io:?}\n{run}"
    );
}
per_linkage!(
    c_wake_pipe_is_simulated_as_the_kernel_has_it,
    Program::c("wake_pipe"),
    c_wake_pipe_is_simulated_as_the_kernel_has_it
);
