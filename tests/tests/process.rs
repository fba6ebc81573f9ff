//! Processes: exit codes and signals, faultline's own errors, stdout and
//! stderr pass-through, fork/exec, a real Go binary (etcd), and that no
//! process outlives a killed supervisor.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use faultline_e2e::checks::run_twice;
use faultline_e2e::exec::{drain, kill_group, run_command};
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::procs::{descendants, ProcInfo};
use faultline_e2e::{per_linkage, Exec, Program};

const ETCD: &str = "/usr/bin/etcd";

fn segfault_gives_139_and_a_report(program: Program) {
    let run = run_twice(&Exec::program(program).seed(21));
    run.expect_code(139);
    assert_eq!(run.out(), "about to segfault\n", "\n{run}");
    assert!(
        run.faultline_line_with("SIGSEGV").is_some(),
        "no faultline line names SIGSEGV\n{run}"
    );
    assert_eq!(run.summary().exit, 139, "summary exit code\n{run}");
}
per_linkage!(
    segfault_gives_139_and_a_report,
    Program::c("segfault"),
    segfault_gives_139_and_a_report
);

#[test]
fn missing_binary_is_faultlines_error() {
    let missing = scratch_dir("missing").join("no-such-program");
    let run = Exec::new(&missing).run();
    run.expect_code(125);
    assert!(run.stdout.is_empty(), "\n{run}");
    let error = run
        .faultline_line_with("faultline: error:")
        .unwrap_or_else(|| panic!("no `faultline: error:` line\n{run}"));
    assert!(
        error.contains("no-such-program"),
        "the error does not name the program: {error}\n{run}"
    );
}

#[test]
fn exit_codes_pass_through() {
    for (script, code) in [("exit 0", 0), ("exit 3", 3), ("exit 77", 77)] {
        let run = Exec::new("/bin/sh").arg("-c").arg(script).run();
        run.expect_code(code);
        assert_eq!(run.summary().exit, code, "summary exit code\n{run}");
    }
}

#[test]
fn stdout_is_byte_exact_and_program_stderr_passes() {
    let script = r"printf 'bin\000\001\377\r\nno newline'; printf 'to stderr\n' >&2";
    let native = Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .output()
        .expect("run /bin/sh");
    let run = Exec::new("/bin/sh").arg("-c").arg(script).run();
    run.expect_success();
    assert_eq!(
        run.stdout, native.stdout,
        "stdout differs from the native run\n{run}"
    );
    assert_eq!(
        run.program_stderr_lines(),
        ["to stderr"],
        "program stderr\n{run}"
    );
}

fn fork_exec_and_wait(program: Program) {
    let run = run_twice(&Exec::program(program).seed(22));
    run.expect_success();
    assert_eq!(
        run.out(),
        "/bin/true exited 0\nforked child exited 7\n/bin/false exited 1\n",
        "\n{run}"
    );
}
per_linkage!(
    fork_exec_and_wait,
    Program::c("fork_exec"),
    fork_exec_and_wait
);

#[test]
fn etcd_version_runs_deterministically() {
    assert!(
        Path::new(ETCD).is_file(),
        "{ETCD} is missing: run scripts/setup (apt-get install etcd-server)"
    );
    let native = Command::new(ETCD)
        .arg("--version")
        .output()
        .expect("run etcd natively");
    assert!(
        native.status.success(),
        "etcd --version fails natively: {native:?}"
    );
    let run = run_twice(&Exec::new(ETCD).arg("--version").seed(23));
    run.expect_success();
    assert!(run.out().starts_with("etcd Version: "), "\n{run}");
    assert_eq!(
        run.stdout, native.stdout,
        "etcd --version prints differently under faultline\n{run}"
    );
}

/// Started the way a background shell or nohup starts it (SIGINT, SIGQUIT
/// and SIGHUP ignored, SIGUSR1 blocked), faultline gives the program the
/// same start as from a terminal: Go installs no handler for an ignored
/// SIGINT, so before the signal state was reset etcd's trace had one
/// `rt_sigaction` fewer (860 events or 863, by how faultline was started).
#[test]
fn inherited_signal_state_does_not_reach_the_program() {
    use std::os::unix::process::CommandExt;
    let exec = Exec::new(ETCD).arg("--version").seed(23);
    let plain = exec.run();
    plain.expect_success();
    let mut command = exec.command();
    // SAFETY: only signal calls, async-signal-safe, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP] {
                libc::signal(sig, libc::SIG_IGN);
            }
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            Ok(())
        });
    }
    let ignoring = run_command(command, Duration::from_secs(120));
    ignoring.expect_success();
    assert_eq!(
        ignoring.summary().trace_hash,
        plain.summary().trace_hash,
        "started with signals ignored and blocked\n{ignoring}\nfrom a terminal\n{plain}"
    );
}

/// Reads `reader` line by line on a thread.
fn lines_of<R: std::io::Read + Send + 'static>(reader: R) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The processes of `procs` still alive after waiting up to `grace`.
fn survivors_after(procs: &[ProcInfo], grace: Duration) -> Vec<ProcInfo> {
    let deadline = Instant::now() + grace;
    loop {
        let alive: Vec<ProcInfo> = procs.iter().copied().filter(ProcInfo::is_alive).collect();
        if alive.is_empty() || Instant::now() >= deadline {
            return alive;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

fn no_process_survives_killed_supervisor(program: Program) {
    let mut faultline = Exec::program(program).seed(24).spawn();
    // Held open until the end: on EOF the program would reap its child itself.
    let _stdin = faultline.stdin.take().expect("piped stdin");
    let stderr = drain(faultline.stderr.take().expect("piped stderr"));
    let stdout = lines_of(faultline.stdout.take().expect("piped stdout"));
    let first = stdout.recv_timeout(Duration::from_secs(30));
    let Ok(first) = first else {
        kill_group(&faultline);
        let _ = faultline.wait();
        let stderr = stderr
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default();
        panic!(
            "the program never printed its child's pid; stderr:\n{}",
            String::from_utf8_lossy(&stderr)
        );
    };
    assert!(
        first.starts_with("child "),
        "unexpected first line {first:?}"
    );

    let tracees = descendants(faultline.id());
    assert!(
        tracees.len() >= 2,
        "expected the program and its child below faultline (pid {}), found {tracees:?}",
        faultline.id()
    );
    assert!(
        faultline.try_wait().expect("poll faultline").is_none(),
        "faultline exited on its own"
    );

    faultline.kill().expect("SIGKILL faultline"); // by its pid only
    faultline.wait().expect("reap faultline");
    // A SIGKILLed faultline cannot remove its scratch directory (the
    // simulated /etc files): this test removes what its run left.
    let scratch = std::env::temp_dir().join(format!("faultline-exec-{}", faultline.id()));
    let _ = std::fs::remove_dir_all(scratch);

    let survivors = survivors_after(&tracees, Duration::from_secs(5));
    for p in &survivors {
        // Clean up before failing, by pid, so the machine is left as found.
        let pid = libc::pid_t::try_from(p.pid).expect("pid fits pid_t");
        // SAFETY: plain kill(2) of a process this test started (indirectly).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert!(
        survivors.is_empty(),
        "processes outlived the SIGKILLed supervisor: {survivors:?}"
    );
}
per_linkage!(
    no_process_survives_killed_supervisor,
    Program::c("orphan"),
    no_process_survives_killed_supervisor
);

/// `kill(child, SIGKILL); waitpid(child)`: the kernel kills the child on
/// its own time, so faultline waits for its end before the next scheduling
/// decision. Before, the parent's wait could find the child still there:
/// some runs deadlocked, others let virtual time jump to the child's
/// hour-long sleep. Four runs, one outcome.
fn a_killed_child_is_reaped_before_its_parent_waits(program: Program) {
    let exec = Exec::program(program).seed(1);
    let first = run_twice(&exec);
    first.expect_success();
    assert!(first.out().ends_with("stdin closed\n"), "\n{first}");
    let summary = first.summary();
    assert!(
        summary.vtime_secs < 1.0,
        "virtual time jumped to the dead child's sleep: {}s\n{first}",
        summary.vtime_secs
    );
    let again = run_twice(&exec);
    assert_eq!(again.summary().trace_hash, summary.trace_hash, "\n{again}");
}
per_linkage!(
    a_killed_child_is_reaped_before_its_parent_waits,
    Program::c("orphan"),
    a_killed_child_is_reaped_before_its_parent_waits
);

fn pids_follow_creation_order(program: Program) {
    let run = run_twice(&Exec::program(program).seed(5));
    run.expect_success();
    assert_eq!(
        run.out(),
        "pid 2 ppid 1\nthread tid 3\nchild pid 4 ppid 2\nparent saw child 4 exit 0\n",
        "pids are not the namespace's creation-order ids\n{run}"
    );
}
per_linkage!(
    pids_follow_creation_order,
    Program::c("pids"),
    pids_follow_creation_order
);

/// Fail closed: a simulated process reaching for the host's loopback network
/// stays inside the simulation (127.0.0.1 is its own simulated host, where
/// nothing listens) or gets ENETUNREACH with a report (127.0.0.2 is not a
/// simulated host); the real listeners on both addresses see nothing.
#[test]
fn nothing_reaches_the_host_network() {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("bind tcp");
    let port = tcp.local_addr().expect("tcp addr").port();
    let listeners: Vec<(std::net::TcpListener, std::net::UdpSocket)> = ["127.0.0.1", "127.0.0.2"]
        .iter()
        .map(|ip| {
            let t = if *ip == "127.0.0.1" {
                tcp.try_clone().expect("clone listener")
            } else {
                std::net::TcpListener::bind((*ip, port)).expect("bind tcp")
            };
            let u = std::net::UdpSocket::bind((*ip, port)).expect("bind udp");
            t.set_nonblocking(true).expect("nonblocking tcp");
            u.set_nonblocking(true).expect("nonblocking udp");
            (t, u)
        })
        .collect();

    let run = run_twice(&Exec::program(Program::c("net_escape")).arg(port.to_string()));
    run.expect_success();
    assert_eq!(
        run.out(),
        "tcp 127.0.0.1 connect: Connection refused\n\
         udp 127.0.0.1 sendto: sent\n\
         tcp 127.0.0.2 connect: Network is unreachable\n\
         udp 127.0.0.2 sendto: Network is unreachable\n\
         raw 127.0.0.2 socket: Protocol not supported\n",
        "\n{run}"
    );
    assert!(
        run.faultline_line_with("returning EPROTONOSUPPORT")
            .is_some(),
        "no report line names the raw socket's refusal\n{run}"
    );
    assert!(
        run.faultline_line_with("127.0.0.2").is_some(),
        "no report line names the refused address\n{run}"
    );
    for (tcp, udp) in &listeners {
        assert!(
            tcp.accept().is_err(),
            "a connection reached a host listener"
        );
        let mut buf = [0u8; 8];
        assert!(
            udp.recv_from(&mut buf).is_err(),
            "a datagram reached the host"
        );
    }
}

/// A descriptor faultline inherits without close-on-exec (a shell's, the
/// output file of `time -o`) does not reach the program: it would shift
/// the numbers the program's own opens get, and so its trace.
#[test]
fn descriptors_faultline_inherits_do_not_reach_the_program() {
    use std::os::fd::AsRawFd;
    let dir = faultline_e2e::paths::scratch_dir("inherited-fd");
    let file = std::fs::File::create(dir.join("held")).unwrap();
    // SAFETY: dup2 onto a free number; the copy has no close-on-exec.
    assert_eq!(unsafe { libc::dup2(file.as_raw_fd(), 57) }, 57);
    let run = Exec::new("sh")
        .arg("-c")
        .arg("test -e /proc/self/fd/57 && echo leaked || echo closed")
        .seed(1)
        .run();
    // SAFETY: closes the copy made above.
    unsafe { libc::close(57) };
    run.expect_success();
    assert_eq!(run.out(), "closed\n", "\n{run}");
}

/// A finished child's exit code and CPU time, its reaped descendants'
/// included (what `time` counts), from `wait4`.
// Reaped by wait4, which std's wait cannot replace: it gives the rusage.
#[allow(clippy::zombie_processes)]
fn exit_and_cpu(mut command: Command) -> (i32, Duration) {
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let child = command.spawn().expect("spawn");
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it and the status.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    while unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) } < 0 {
        let e = std::io::Error::last_os_error();
        assert_eq!(e.raw_os_error(), Some(libc::EINTR), "wait4: {e}");
    }
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, time(usage.ru_utime) + time(usage.ru_stime))
}

/// faultline forks its programs through a spawner of its own (a small
/// child process), under a namespace init; the program's CPU time still
/// reaches faultline's when it exits, as `time faultline ...` expects.
#[test]
fn a_programs_cpu_time_is_counted_in_faultlines() {
    let spin = Program::c("spin").path();
    let iterations = "300000000";
    let mut native = Command::new(&spin);
    native.args(["0", iterations]);
    let (code, native) = exit_and_cpu(native);
    assert_eq!(code, 0, "natively");
    let exec = Exec::new(&spin).arg("0").arg(iterations).seed(1);
    let (code, under) = exit_and_cpu(exec.command());
    assert_eq!(code, 0, "under faultline");
    assert!(
        under >= native.mul_f64(0.7),
        "faultline's CPU time {under:?} leaves out its program's (natively {native:?})"
    );
}
