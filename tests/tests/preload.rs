//! The shared-memory fast path (on by default; `--no-preload` turns it
//! off): a dynamic program's socket and pipe reads and writes, epoll waits,
//! sleeps, yields and futex calls (through the LD_PRELOAD library) and a Go
//! program's runtime calls (its patched wrappers) reach the supervisor over
//! shared memory instead of ptrace stops, with the same output and the
//! same trace as with `--no-preload`; signals interrupt and restart
//! those calls as on the ptrace path; a child whose channel was closed,
//! overwritten or dropped from its environment falls back to ptrace; other
//! static programs are not touched.

use faultline_e2e::checks::{assert_same_on_both_paths, run_twice};
use faultline_e2e::{Exec, Linkage, Node, Program, Run, Scenario};

/// Runs `exec` twice with the fast path (the default) and once with
/// `--no-preload`; asserts the three agree on stdout, events and trace
/// hash. Returns (with, without).
fn same_run_with_and_without(exec: Exec) -> (Run, Run) {
    let fast = run_twice(&exec);
    let trapped = exec.flag("--no-preload").run();
    assert!(
        fast.faultline_line_with("fast path is off").is_none(),
        "the library was not found\n{fast}"
    );
    assert_same_on_both_paths(&fast, &trapped, "the fast path");
    assert_eq!(
        trapped.summary().fast,
        0,
        "no fast path with --no-preload\n{trapped}"
    );
    (fast, trapped)
}

/// Asserts that the run with the fast path made at least `min_fast` calls
/// over the channel and `min_saved` stops fewer than the one without.
fn assert_took_the_channel(fast: &Run, trapped: &Run, min_fast: u64, min_saved: u64) {
    let (a, b) = (fast.summary(), trapped.summary());
    assert!(
        a.fast >= min_fast && a.stops + min_saved <= b.stops,
        "{} fast calls, {} stops (without: {})\n{fast}",
        a.fast,
        a.stops,
        b.stops
    );
}

#[test]
fn glibcs_own_calls_take_the_channel_once_their_sites_are_patched() {
    // Mutex and condvar hand-offs between two threads: glibc's pthread code
    // makes its futex calls inside libc, past the library's functions, so
    // each one stopped in ptrace. A `mov eax, NR; syscall` site of libc is
    // patched at its first stop to jump to a stub of faultline's, and the
    // calls made there afterwards go over the channel, with the same trace.
    let exec = Exec::program(Program::c("bench_syscalls"))
        .arg("0")
        .arg("2000")
        .seed(3);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert!(fast.out().contains("handoffs 2000 (odd 0)"), "\n{fast}");
    // 9,355 stops without; about 1,300 with, after 8,000 channel calls.
    assert_took_the_channel(&fast, &trapped, 6000, 7100);
}

#[test]
fn glibcs_inline_opens_take_the_channel_once_their_sites_are_patched() {
    // 100 name lookups: each opens /etc/hosts with glibc's inline
    // `__open_nocancel`, whose `syscall` follows other instructions than
    // its `mov eax, 257`; the jump covers the result check after it
    // instead. 3,461 stops without the fast path, 150 with it (551 when
    // such sites were left on ptrace stops).
    let exec = Exec::program(Program::c("name_lookups")).arg("100").seed(6);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert!(
        fast.out().contains("lookups 100 first 127.0.0.1"),
        "\n{fast}"
    );
    assert_took_the_channel(&fast, &trapped, 3200, 3250);
}

#[test]
fn the_loaders_calls_take_the_channel_once_their_sites_are_patched() {
    // Debian's redis-server loads 17 libraries: the dynamic loader opens,
    // reads, stats and closes each, before the library starts. faultline
    // maps the library's trampoline page (with its pass gate) at the exec,
    // so the loader's sites are patched like libc's: 52 stops, 168 without
    // the fast path (133 when the loader's calls all stopped).
    let exec = Exec::new("/usr/bin/redis-server").arg("--version").seed(1);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert!(fast.out().starts_with("Redis server v="), "\n{fast}");
    let (a, b) = (fast.summary().stops, trapped.summary().stops);
    assert!(
        a * 3 < b,
        "{a} stops with the fast path, {b} without\n{fast}"
    );
}

#[test]
fn glibcs_own_reads_take_the_channel_once_their_sites_are_patched() {
    // stdio's refills are read(2) calls glibc makes inside itself, from a
    // site (`xor eax, eax; syscall; cmp rax, -4096`) too short for the
    // jump alone: the jump covers the compare too, which the stub makes.
    let exec = Exec::program(Program::c("stdio_reads")).seed(5);
    let (fast, trapped) = same_run_with_and_without(exec);
    let size = std::fs::metadata(Program::c("stdio_reads").path())
        .expect("the program")
        .len();
    assert!(
        fast.out().starts_with(&format!("bytes {size} sum ")),
        "\n{fast}"
    );
    // One read per 64 bytes, nearly all over the channel (20,536 bytes:
    // 321 channel calls, 314 stops fewer than without).
    let reads = size / 64;
    assert_took_the_channel(&fast, &trapped, reads, reads * 9 / 10);
}

fn paths(mode: &str) -> Exec {
    Exec::program(Program::c("preload_paths")).arg(mode).seed(5)
}

#[test]
fn c_socket_calls_and_sleeps_take_the_fast_path_with_the_same_trace() {
    let (fast, trapped) = same_run_with_and_without(paths("inherit"));
    let out = fast.out();
    for line in [
        "echoed 390 bytes",
        "nanosleep: EINTR, 4 s left, alarms 1",
        "clock_nanosleep: EINTR, 4 s left, alarms 2",
        "recv after SA_RESTART handler: 'ping', handlers 1",
        "child echoed 390 bytes",
        "child exit 0",
    ] {
        assert!(out.contains(line), "missing {line:?}\n{fast}");
    }
    let (a, b) = (fast.summary(), trapped.summary());
    assert!(a.fast > 1000, "few calls took the fast path\n{fast}");
    // The stat family traps on both paths (two stops each: the entry and
    // the exit that writes the simulated identity), which the fast path
    // does not take; the calls it does take still save most stops.
    assert!(
        a.stops * 3 < b.stops,
        "with the fast path {} stops, without {}\n{fast}",
        a.stops,
        b.stops
    );
}

#[test]
fn a_long_socket_exchange_runs_the_same_while_both_ends_spin() {
    // 2000 ping-pongs: tens of thousands of channel calls and hardly a
    // stop, so after the first few thousand events the program gets a CPU
    // of its own and both ends of the channel spin instead of sleeping.
    let exec = Exec::program(Program::c("loopback_pair"))
        .arg("127.0.0.1")
        .arg("2000")
        .seed(4);
    let (fast, _) = same_run_with_and_without(exec);
    let s = fast.summary();
    assert!(s.fast > 50 * s.stops, "{fast}");
}

#[test]
fn children_fall_back_to_ptrace_when_the_channel_is_taken_away() {
    let inherited = same_run_with_and_without(paths("inherit")).0.summary().fast;
    let mut parent_only = Vec::new();
    for mode in ["close", "scribble", "unset"] {
        let (fast, _) = same_run_with_and_without(paths(mode));
        assert!(
            fast.out().contains("child echoed 390 bytes"),
            "{mode}: the child did not run\n{fast}"
        );
        parent_only.push(fast.summary().fast);
    }
    // The child's exchange alone is hundreds of calls; none took the fast
    // path. (The parent's close of the descriptor in "close" is one.)
    let (least, most) = (parent_only.iter().min(), parent_only.iter().max());
    assert!(
        most.zip(least)
            .is_some_and(|(m, l)| m - l <= 1 && m + 300 < inherited),
        "fast-path calls per mode (close, scribble, unset) {parent_only:?}, inherited {inherited}"
    );
}

#[test]
fn pipe_reads_and_writes_are_passed_at_the_gate_with_the_same_trace() {
    // A pipe is no simulated socket: its reads wait for readiness in the
    // supervisor, then pass to the kernel. Over the channel the passed
    // call is made at the pass gate, which the seccomp filter lets
    // through: a gate that still trapped would decide each call twice
    // (another trace), one not let through at all would stop here.
    let exec = Exec::program(Program::c("pipe_threads")).seed(3);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert!(fast.out().contains("msg 009"), "\n{fast}");
    // 10 records written and read, each read waiting once: some 30 calls.
    assert_took_the_channel(&fast, &trapped, 30, 20);
}

#[test]
fn a_simulated_pipes_reads_and_writes_take_the_channel_with_the_same_trace() {
    // A wake-up pipe (pipe2 with O_NONBLOCK) is answered by the
    // supervisor: over the channel as when trapped, and nothing of it is
    // made at the pass gate.
    let exec = Exec::program(Program::c("wake_pipe")).seed(5);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert!(fast.out().contains("no reader: write -1 EPIPE"), "\n{fast}");
    assert_took_the_channel(&fast, &trapped, 20, 15);
}

#[test]
fn rust_std_net_and_sleep_take_the_fast_path_with_the_same_trace() {
    let exec = Exec::program(Program::rust("tcp_pair")).arg("4").seed(9);
    let (fast, _) = same_run_with_and_without(exec);
    assert!(fast.summary().fast > 50, "{fast}");
}

#[test]
fn rust_std_mutexes_channels_and_parking_take_the_fast_path_with_the_same_trace() {
    // The standard library makes its futex calls through libc's
    // `syscall`, which the library replaces, and yields with libc's
    // `sched_yield`: four threads contending for a Mutex, yielding and
    // sending over mpsc make those calls (over a hundred) over the
    // channel; starting and ending threads still stops.
    let exec = Exec::program(Program::rust("threads")).seed(14);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert_took_the_channel(&fast, &trapped, 101, 101);
}

/// What `bad_buffers` prints natively: every read, wait and accept into
/// memory the program cannot write fails with EFAULT (the accept's
/// connection is dropped), the rest read what was sent.
const BAD_BUFFERS_OUT: &str = "\
inherited: tcp 'ping 1' pipe 'wake 1' big 3000 ok
inherited: tcp EFAULT EFAULT EFAULT, pipe EFAULT EFAULT EFAULT
inherited: after: tcp 'ping 2' pipe 'wake 2'
inherited: epoll 1 event data 7, into a bad pointer EFAULT
inherited: accept into a bad address EFAULT, its peer reads 0
closed: tcp 'ping 1' pipe 'wake 1' big 3000 ok
closed: tcp EFAULT EFAULT EFAULT, pipe EFAULT EFAULT EFAULT
closed: after: tcp 'ping 2' pipe 'wake 2'
closed: epoll 1 event data 7, into a bad pointer EFAULT
closed: accept into a bad address EFAULT, its peer reads 0
";

#[test]
fn answers_written_into_memory_the_program_cannot_write_fail_with_efault() {
    // Over the channel, a read's data and an epoll wait's events travel in
    // the thread's slot, and the library copies them out with a pread of
    // the channel's memfd, which the kernel fails with EFAULT on an address
    // in the first page, a read-only page or an unmapped one, as it fails
    // the call natively (a plain copy would crash the program inside the
    // library). After the program closed every descriptor and put
    // /dev/zero where the memfd was, the bytes read are not the slot's and
    // the library copies from its own mapping instead; a library that took
    // them would hand the program zeros. Without the fast path (and in a
    // static program) the supervisor's writes fail the same way: a
    // read-only page is not written through /proc/<pid>/mem. An accept
    // whose address cannot be written fails, and its peer reads end of
    // file, as the kernel drops the connection it took.
    let exec = Exec::program(Program::c("bad_buffers")).seed(4);
    let fast = run_twice(&exec);
    fast.expect_success();
    assert_eq!(fast.out(), BAD_BUFFERS_OUT, "\n{fast}");
    assert!(fast.summary().fast > 100, "{fast}");
    for trapped in [
        exec.clone().flag("--no-preload"),
        Exec::program(Program::c("bad_buffers").with_linkage(Linkage::Static)).seed(4),
    ] {
        let trapped = run_twice(&trapped);
        trapped.expect_success();
        assert_eq!(trapped.out(), BAD_BUFFERS_OUT, "\n{trapped}");
    }
}

#[test]
fn static_programs_are_left_alone() {
    let exec = Exec::program(Program::c("preload_paths").with_linkage(Linkage::Static))
        .arg("inherit")
        .seed(5);
    let (fast, _) = same_run_with_and_without(exec);
    assert_eq!(fast.summary().fast, 0, "{fast}");
}

#[test]
fn a_missing_library_turns_the_fast_path_off_with_a_warning() {
    let run = paths("inherit")
        .flag("--preload")
        .env("FAULTLINE_PRELOAD", "/nonexistent/libfaultline_preload.so")
        .run();
    run.expect_success();
    let line = run
        .faultline_line_with("fast path is off")
        .unwrap_or_else(|| panic!("no warning\n{run}"));
    assert!(
        line.contains("/nonexistent/libfaultline_preload.so") && line.contains("build-preload"),
        "{line}"
    );
    assert_eq!(run.summary().fast, 0, "{run}");
}

#[test]
fn a_preempted_spinner_gets_its_signals_back_at_its_next_fast_call() {
    // The spinner's first call after its spin is a nanosleep: over the
    // channel with --preload, trapped without. The signals the watchdog's
    // preemption held must come back there on both paths.
    let exec = Exec::program(Program::c("spin_wait"))
        .seed(1)
        .option("--spin-limit", "30ms");
    let (fast, _) = same_run_with_and_without(exec);
    assert_eq!(
        fast.out(),
        "signals during the spin: 0\nsignals after it: yes\n",
        "\n{fast}"
    );
    assert!(fast.summary().fast > 0, "{fast}");
}

#[test]
fn go_runtime_futex_sleep_and_yield_calls_take_the_fast_path_with_the_same_trace() {
    // Goroutine hand-offs (futex), timers (the runtime's usleep) and a GC
    // that waits for its sweepers (yields): the patched wrappers post them,
    // the same handlers answer, and the runs agree with and without.
    for (name, seed, at_least) in [
        ("goroutines", 42, 10),
        ("timers", 9, 40),
        ("gcwait", 3, 500),
    ] {
        let (fast, trapped) =
            same_run_with_and_without(Exec::program(Program::go(name)).seed(seed));
        let (f, t) = (fast.summary(), trapped.summary());
        assert!(f.fast >= at_least, "{name}: {} fast calls\n{fast}", f.fast);
        // Every call stopped, came over the channel or was answered by
        // the runtime's stub (a quiet poll or empty read).
        assert!(
            f.stops + f.fast + f.in_stub >= t.stops,
            "{name}: calls went missing\n{fast}"
        );
    }
}

#[test]
fn clock_reads_that_reach_the_supervisor_take_the_channel() {
    // 64,000 clock reads: faultline's vDSO answers them, and every 64th (a
    // scheduling point) reaches the supervisor. The vDSO sends those over
    // the channel instead of trapping: in a patched Go program (time.Now)
    // through the runtime's stub, in a dynamic C program (clock_gettime)
    // through the shared code of the stub page glibc's patched sites use,
    // before its library has announced itself. A thousand stops fewer, the
    // same trace.
    for (program, args) in [
        (Program::go("bench"), ["0", "64000"]),
        (Program::c("bench_syscalls"), ["64000", "0"]),
    ] {
        let exec = Exec::program(program).arg(args[0]).arg(args[1]).seed(2);
        let (fast, trapped) = same_run_with_and_without(exec);
        assert_took_the_channel(&fast, &trapped, 1000, 990);
    }
    // A forked child and three threads read the clock too (clock_paths).
    let (fast, trapped) =
        same_run_with_and_without(Exec::program(Program::c("clock_paths")).seed(5));
    assert_took_the_channel(&fast, &trapped, 200, 200);
}

#[test]
fn a_c_programs_socket_file_and_directory_calls_take_the_channel() {
    // socket, bind, listen, connect, accept4, the names and options, poll,
    // shutdown; open, fstat, stat, lstat, fstatat, fsync, dup, ftruncate,
    // rename, unlink, mkdir, rmdir; getrandom and readlink: the library's
    // versions make glibc's calls over the channel, with the same trace.
    // Before, only the writes and reads did (818 stops; 850 without).
    let exec = Exec::program(Program::c("fd_calls")).seed(4);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert_eq!(fast.out(), "20 rounds, random 9bccaf32\n", "\n{fast}");
    assert_took_the_channel(&fast, &trapped, 800, 750);
}

#[test]
fn a_vfork_child_makes_its_calls_for_real_until_it_execs() {
    // The child shares the parent's memory, so its library would post in
    // the parent's slot, where the supervisor does not look for another
    // process's calls: it hung there. The library's vfork marks the child's
    // calls to be made for real.
    let exec = Exec::program(Program::c("vfork_exec")).seed(1);
    let (fast, _) = same_run_with_and_without(exec);
    assert_eq!(
        fast.out(),
        "child\nchild 0 exited 0\nchild\nchild 1 exited 0\nchild\nchild 2 exited 0\n",
        "\n{fast}"
    );
    // The parent, resumed, posts again (its stat of / after each child).
    assert!(fast.summary().fast >= 3, "\n{fast}");
}

#[test]
fn a_go_programs_file_socket_and_machine_calls_take_the_channel() {
    // Files created, synced, stat-ed, renamed and removed; TCP connections
    // made, accepted and closed; the host name and random bytes: package
    // syscall's calls reach the supervisor over the channel (a file path
    // rewritten below the caller's stack, a simulated socket made as an
    // eventfd at the pass gate) with the same trace. Before, each of them
    // stopped (407 stops; the run without the fast path makes 981).
    let exec = Exec::program(Program::go("files")).seed(4);
    let (fast, trapped) = same_run_with_and_without(exec);
    assert!(
        fast.out()
            .ends_with("sockets done\nhost faultline, random 9bccaf3222981c1d\n"),
        "\n{fast}"
    );
    assert_took_the_channel(&fast, &trapped, 800, 750);
}

#[test]
fn a_go_program_that_signals_itself_and_execs_children_runs_the_same() {
    // The runtime's signal handler makes a futex call (waking the goroutine
    // that receives the signal); os/exec forks and execs. The exec'd Go
    // child has no channel descriptor (its patched parent closed it) and
    // runs on ptrace stops, /bin/true is not Go.
    let exec = Exec::program(Program::go("spawn")).seed(6);
    let (fast, _) = same_run_with_and_without(exec);
    assert_eq!(
        fast.out(),
        "signals: 3\nchild done\nparent done\n",
        "\n{fast}"
    );
    assert!(fast.summary().fast > 50, "{fast}");
}

#[test]
fn a_go_programs_signals_and_masks_are_its_own_while_the_stub_holds_them() {
    // Between two answers the stub may leave a Go thread's signals blocked
    // (when none can be pending), saving two calls a round trip. A signal
    // sent meanwhile still arrives where it would without the fast path,
    // the program reads its own mask (the runtime's `rt_sigprocmask` gives
    // the held one back first), and a child it starts blocks nothing.
    let exec = Exec::program(Program::go("sigmask")).seed(3);
    let (fast, _) = same_run_with_and_without(exec);
    assert_eq!(
        fast.out(),
        "signals 40 sum 780\nown 0000000000000000\nchild 0000000000000000\n",
        "\n{fast}"
    );
}

/// A scenario's seed run with `--preload` (twice: the runs must agree) and
/// without, in one artifacts directory (programs may log its paths).
/// Asserts the same events and trace; returns the counts of the run with
/// and the one without.
fn scenario_with_and_without(scenario: Scenario, seed: u64) -> (Counts, Counts) {
    let dir = faultline_e2e::paths::scratch_dir(&format!("preload-{}", scenario.name()));
    let file = scenario.write(&dir);
    let run = |preload: bool| {
        let mut runner = file.runner().seed(seed);
        if !preload {
            runner = runner.flag("--no-preload");
        }
        let run = runner.run();
        run.expect_pass();
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.seed_dir(seed).join("report.json")).expect("report.json"),
        )
        .expect("report.json is JSON");
        let count = |key: &str| report[key].as_u64().expect("a count");
        let counts = Counts {
            stops: count("stops"),
            fast: count("fast_calls"),
            handoffs: count("handoffs"),
            noted_wakes: count("noted_wakes"),
            quiet_polls: count("quiet_polls"),
            quiet_polls_in_stub: count("quiet_polls_in_stub"),
            empty_reads: count("empty_reads"),
            empty_reads_in_stub: count("empty_reads_in_stub"),
            preemptions: count("preemptions"),
            n1_stdout: run
                .node_output(seed, "n1", "stdout")
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default(),
        };
        (run.report(), counts)
    };
    let (with, counts) = run(true);
    let (again, _) = run(true);
    let (without, counts_without) = run(false);
    for (other, what) in [
        (&again, "a second run with --preload"),
        (&without, "the run without"),
    ] {
        assert_eq!(
            (with.events, with.trace_hash),
            (other.events, other.trace_hash),
            "--preload's run and {what} differ"
        );
    }
    (counts, counts_without)
}

/// What a seed's report.json counted.
struct Counts {
    stops: u64,
    fast: u64,
    handoffs: u64,
    noted_wakes: u64,
    quiet_polls: u64,
    quiet_polls_in_stub: u64,
    empty_reads: u64,
    empty_reads_in_stub: u64,
    preemptions: u64,
    /// What node n1 printed.
    n1_stdout: String,
}

#[test]
fn an_epoll_server_and_its_clients_take_the_fast_path_with_the_same_trace() {
    // The library's epoll_wait, readv and writev: the C echo server waits
    // in epoll_wait on simulated sockets, answered over the channel.
    let mut scenario = Scenario::new("epoll-echo", "10s").node(Node::program(
        "server",
        Program::c("epoll_echo"),
        ["7000", "3"],
    ));
    for name in ["c1", "c2", "c3"] {
        scenario = scenario.node(Node::program(
            name,
            Program::c("echo_client"),
            ["server", "7000", name, "4"],
        ));
    }
    let (with, without) = scenario_with_and_without(scenario, 4);
    assert!(with.fast > 20, "{} fast calls", with.fast);
    assert_eq!(without.fast, 0);
    assert!(
        with.stops < without.stops,
        "{} stops against {}",
        with.stops,
        without.stops
    );
}

#[test]
fn etcd_makes_its_runtime_calls_over_the_channel_and_runs_the_same() {
    // Debian's etcd is a Go program (linked with cgo): it gets no library
    // and no LD_PRELOAD (Go lays out memory by the environment's size), its
    // runtime's wrappers are patched at exec, and the channel's descriptor
    // is closed once mapped (etcd counts its descriptors). So the run is
    // the one without --preload.
    let node = Node::new("n1", ["/usr/bin/etcd", "--data-dir", "{node_dir}"]);
    let scenario = Scenario::new("preload-etcd", "5s").node(node);
    let (with, without) = scenario_with_and_without(scenario, 3);
    assert!(with.fast > 1000, "etcd made {} fast-path calls", with.fast);
    assert_eq!(
        (without.fast, without.handoffs, without.noted_wakes),
        (0, 0, 0)
    );
    // Its WAL writes and syncs on the simulated disk, epoll waits the
    // kernel answers and the vDSO's trapping clock reads go over the
    // channel too (the writes report their results back rather than
    // stopping at their exits), and so do the calls cgo makes through
    // libc, whose sites are patched beside the runtime's (a `sigaction`
    // for each signal at start): few stops are left (221 before libc's
    // sites were patched in Go programs). Each preemption signal the
    // runtime sends while it stops the world costs a few stops more, so
    // seeds vary: 92-211 of 2,738-2,962 for seeds 1-5.
    assert!(
        with.stops * 10 < without.stops,
        "{} stops against {}",
        with.stops,
        without.stops
    );
    // Its calls are nearly all over the channel, so it runs on a CPU of its
    // own, where a thread that gives way wakes the next one itself.
    assert!(with.handoffs > 10, "{} handoffs", with.handoffs);
    // Its runtime's futex wakes are noted in the slot, without a round
    // trip: the stub goes on at once.
    assert!(
        with.noted_wakes > 100 && with.noted_wakes < with.fast,
        "{} wakes noted of {} fast calls",
        with.noted_wakes,
        with.fast
    );
    // Its scheduler's zero-timeout polls of the network that find nothing
    // are answered in place on both paths (the same trace), and most of
    // them by the stub itself, without a round trip.
    assert!(
        with.quiet_polls > 100 && with.quiet_polls == without.quiet_polls,
        "{} quiet polls, {} without the fast path",
        with.quiet_polls,
        without.quiet_polls
    );
    assert!(
        with.quiet_polls_in_stub * 2 > with.quiet_polls && without.quiet_polls_in_stub == 0,
        "{} of {} quiet polls answered by the stub",
        with.quiet_polls_in_stub,
        with.quiet_polls
    );
    // Its network code's reads until EAGAIN, likewise in place on both
    // paths (a member alone reads little: its own gateway's connections;
    // the harness's members make thousands, nearly all answered by the
    // stub, as the test of tests/programs/go/emptyread.go shows in small).
    assert!(
        with.empty_reads > 0 && with.empty_reads == without.empty_reads,
        "{} empty reads, {} without the fast path",
        with.empty_reads,
        without.empty_reads
    );
    assert_eq!(without.empty_reads_in_stub, 0);
}

#[test]
fn a_go_threads_polls_in_a_loop_are_answered_in_place_and_still_give_way() {
    // A Go thread polls an epoll instance with a zero timeout until a
    // goroutine on another thread sets a flag: each poll that finds nothing
    // is answered in place, with no trace event, on both paths; every 64th
    // of the thread is a scheduling point, so the other thread gets its
    // turn and the watchdog never has to stop the loop.
    let scenario = Scenario::new("quiet-poll", "5s").node(Node::program(
        "n1",
        Program::go("quietpoll"),
        [] as [&str; 0],
    ));
    let (with, without) = scenario_with_and_without(scenario, 2);
    assert!(
        with.quiet_polls >= 63 && with.quiet_polls == without.quiet_polls,
        "{} quiet polls, {} without the fast path",
        with.quiet_polls,
        without.quiet_polls
    );
    assert_eq!((with.preemptions, without.preemptions), (0, 0));
}

#[test]
fn a_go_threads_reads_of_an_empty_socket_are_answered_in_place_until_data_comes() {
    // A Go thread reads an empty non-blocking simulated socket in a loop
    // until a goroutine on another thread sets a flag, then until the
    // peer's "ping" arrives. Each read that fails with EAGAIN is answered
    // in place, with no trace event, on both paths, most by the stub; every
    // 64th is a scheduling point, so the other thread runs and virtual
    // time moves on until the data is there, and the stub never answers
    // EAGAIN once it is.
    let scenario = Scenario::new("empty-read", "5s").node(Node::program(
        "n1",
        Program::go("emptyread"),
        [] as [&str; 0],
    ));
    let (with, without) = scenario_with_and_without(scenario, 2);
    assert!(
        with.empty_reads >= 63 && with.empty_reads == without.empty_reads,
        "{} empty reads, {} without the fast path",
        with.empty_reads,
        without.empty_reads
    );
    assert!(
        with.empty_reads_in_stub * 2 > with.empty_reads && without.empty_reads_in_stub == 0,
        "{} of {} empty reads answered by the stub",
        with.empty_reads_in_stub,
        with.empty_reads
    );
    assert_eq!((with.preemptions, without.preemptions), (0, 0));
    for out in [&with.n1_stdout, &without.n1_stdout] {
        assert!(out.contains("got ping"), "the data never came: {out:?}");
    }
}

#[test]
fn a_signal_from_another_thread_interrupts_a_blocked_call_when_it_is_sent() {
    // Two readers block, on a pipe and on a simulated socket; the main
    // thread sends each SIGUSR1 (no SA_RESTART) after 1 ms and writes to
    // both only 500 ms later. The kill is passed to the kernel, which sends
    // the signal when its sender runs: the readers' waits are looked at
    // after that step, so both calls end with EINTR at 1 ms, as natively,
    // on either path (not with data when the writes come).
    let (fast, _) = same_run_with_and_without(Exec::program(Program::c("kill_interrupts")).seed(2));
    let out = fast.out();
    for line in [
        "pipe read: Interrupted system call at 0.001 s",
        "socket recv: Interrupted system call at 0.001 s",
        "handlers 2",
    ] {
        assert!(out.contains(line), "missing {line:?}\n{fast}");
    }
}
