//! Multi-node scenarios (`faultline run FILE`): several simulated hosts that
//! reach each other by name over the simulated network, node verdicts and
//! exit codes, partitions on virtual time, bad input, seeds derived from the
//! scenario name, and Debian's etcd serving etcdctl.
//!
//! Each test writes its scenario (with absolute paths to the built test
//! programs) into a scratch directory, passes `--artifacts` inside it, and
//! (except for bad input) runs it twice, asserting the same verdicts, trace
//! hashes and node output.

use std::fs;
use std::path::Path;

use faultline_e2e::checks::{run_scenario_twice, run_scenario_twice_with};
use faultline_e2e::output::value;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::scenario::mentions_line;
use faultline_e2e::{Node, NodeOutcome, Partition, Program, Scenario, ScenarioFile, ScenarioRun};

/// The seed the single-seed tests run.
const SEED: u64 = 0x5eed;

/// The first `faultline: ` line of `run`'s stderr naming `needle`, or a panic.
#[track_caller]
fn line_naming<'a>(run: &'a ScenarioRun, needle: &str) -> &'a str {
    run.run
        .faultline_line_with(needle)
        .unwrap_or_else(|| panic!("no faultline line names {needle:?}\n{run}"))
}

/// Go net/http on two hosts: the client reaches `server` by name, three
/// sequential GETs over a kept-alive connection get the server's hostname,
/// path and counter back, and the server shuts down after the third.
#[test]
fn go_http_pair_passes_with_exact_output() {
    let dir = scratch_dir("scenario-http");
    let scenario = Scenario::new("http-pair", "20s")
        .node(Node::program(
            "server",
            Program::go("httpserver"),
            ["-addr", ":8080", "-n", "3"],
        ))
        .node(Node::program(
            "client",
            Program::go("httpclient"),
            ["-n", "3", "-timeout", "2s", "http://server:8080/hello"],
        ));
    let run = run_scenario_twice(&scenario.write(&dir).runner().seed(SEED));
    run.expect_pass();
    let report = run.report();
    assert_eq!(report.seed, SEED, "\n{run}");
    assert_eq!(
        report.node("server"),
        Some(&NodeOutcome::Exit(0)),
        "\n{run}"
    );
    assert_eq!(
        report.node("client"),
        Some(&NodeOutcome::Exit(0)),
        "\n{run}"
    );
    assert_eq!(
        run.node_stdout(SEED, "client"),
        "1: 200 OK hello from server /hello 1\n\
         2: 200 OK hello from server /hello 2\n\
         3: 200 OK hello from server /hello 3\n",
        "\n{run}"
    );
    assert_eq!(
        run.node_stdout(SEED, "server"),
        "listening on :8080\nserved 3 requests\n",
        "\n{run}"
    );
}

/// A non-blocking edge-triggered epoll echo server in C and three blocking C
/// clients on their own hosts, all started at once (the clients retry a
/// refused connect until the server listens).
#[test]
fn c_epoll_echo_serves_three_clients() {
    let dir = scratch_dir("scenario-echo");
    let clients = ["c1", "c2", "c3"];
    let mut scenario = Scenario::new("epoll-echo", "10s").node(Node::program(
        "server",
        Program::c("epoll_echo"),
        ["7000", "3"],
    ));
    for name in clients {
        scenario = scenario.node(Node::program(
            name,
            Program::c("echo_client"),
            ["server", "7000", name, "4"],
        ));
    }
    let run = run_scenario_twice(&scenario.write(&dir).runner().seed(SEED));
    run.expect_pass();
    let report = run.report();
    for name in ["server", "c1", "c2", "c3"] {
        assert_eq!(
            report.node(name),
            Some(&NodeOutcome::Exit(0)),
            "{name}\n{run}"
        );
    }
    for name in clients {
        let expected: String = (1..=4)
            .map(|i| format!("echo: {name} line {i}\n"))
            .chain(["closed\n".to_owned()])
            .collect();
        assert_eq!(run.node_stdout(SEED, name), expected, "{name}\n{run}");
    }
    assert_eq!(
        run.node_stdout(SEED, "server"),
        "listening on port 7000\nserved 3 clients 12 lines\n",
        "\n{run}"
    );
}

/// Seconds from a `... at t=SECONDS` line of `out`.
#[track_caller]
fn time_on(out: &str, prefix: &str) -> f64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in:\n{out}"));
    let t = line
        .rsplit_once("t=")
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("no t= on {line:?}"));
    t.parse()
        .unwrap_or_else(|e| panic!("t={t:?} on {line:?} is not seconds ({e})"))
}

/// A partition on virtual time: the Go client pings the echo server every
/// 500 ms (1-5 ms per message, so each round trip takes 2-10 ms); at 2 s
/// the server is cut off, so the ping after the one at about 1.5 s goes
/// unanswered and the client's read deadline, 3 s after its last good
/// exchange, fires at about 4.5 s: at the same virtual time on both runs of
/// the seed (the stdout comparison covers it, microseconds included), and
/// inside the expected window.
#[test]
fn partition_timeout_fires_at_a_deterministic_virtual_time() {
    let dir = scratch_dir("scenario-partition");
    let scenario = Scenario::new("partition-timeout", "8s")
        .delay("1ms", "5ms")
        .node(Node::program(
            "server",
            Program::c("epoll_echo"),
            ["7000", "1"],
        ))
        .node(Node::program(
            "client",
            Program::go("deadline_client"),
            ["-interval", "500ms", "-deadline", "3s", "server:7000"],
        ))
        .partition(Partition::new("2s", ["server"]).until("6s"));
    let runner = scenario.write(&dir).runner().seed(SEED);
    let run = run_scenario_twice(&runner);
    run.expect_pass();
    let report = run.report();
    assert_eq!(
        report.node("client"),
        Some(&NodeOutcome::Exit(0)),
        "\n{run}"
    );
    let out = run.node_stdout(SEED, "client");

    let pongs: Vec<&str> = out.lines().filter(|l| l.starts_with("pong ")).collect();
    assert_eq!(
        pongs.len(),
        4,
        "expected the exchanges at about 0, 0.5, 1 and 1.5 s to succeed\n{run}"
    );
    for (i, line) in pongs.iter().enumerate() {
        assert!(
            line.starts_with(&format!("pong {} rtt=", i + 1)),
            "{line:?}\n{run}"
        );
        let rtt: f64 = line.rsplit_once("rtt=").unwrap().1.parse().unwrap();
        assert!(
            (0.002..0.015).contains(&rtt),
            "round trip {rtt}s outside [2 ms, 15 ms) with 1-5 ms per message\n{run}"
        );
    }
    let last_ok = time_on(&out, "last ok at");
    let timeout = time_on(&out, "timeout at");
    assert!(
        (1.5..1.7).contains(&last_ok),
        "last good exchange at {last_ok}s, expected in [1.5, 1.7)\n{run}"
    );
    assert!(
        (4.5..4.7).contains(&timeout),
        "timeout fired at {timeout}s, expected in [4.5, 4.7)\n{run}"
    );
    assert!(
        (3.0..3.01).contains(&(timeout - last_ok)),
        "the deadline fired {}s after the last good exchange, not 3s\n{run}",
        timeout - last_ok
    );
    assert!(
        out.ends_with(&format!(
            "last ok at t={last_ok:.6}\ntimeout at t={timeout:.6}\n"
        )),
        "\n{run}"
    );
    // The server's client vanished behind the partition: it either saw the
    // connection end after the heal (exit 0) or was still waiting.
    assert!(
        matches!(
            report.node("server"),
            Some(NodeOutcome::Exit(0) | NodeOutcome::RunningAtEnd)
        ),
        "\n{run}"
    );
    assert!(
        run.node_stdout(SEED, "server")
            .starts_with("listening on port 7000\n"),
        "\n{run}"
    );
}

/// A node exiting 3 fails the seed and makes `run` exit 1; the verdict says
/// FAIL and names the node's exit code; the other nodes' verdicts and the
/// failing node's stdout and stderr artifacts are still there.
#[test]
fn node_exiting_3_fails_the_seed() {
    let dir = scratch_dir("scenario-exit3");
    let scenario = Scenario::new("exit-three", "5s")
        .node(Node::new(
            "x",
            ["sh", "-c", "echo out; echo err >&2; exit 3"],
        ))
        .node(Node::program("ok", Program::c("random"), [] as [&str; 0]));
    let run = run_scenario_twice(&scenario.write(&dir).runner().seed(SEED));
    run.expect_code(1);
    let report = run.report();
    assert!(!report.pass, "\n{run}");
    assert_eq!(report.seed, SEED, "\n{run}");
    assert!(
        line_naming(&run, &format!("seed={SEED:#018x}")).contains(" FAIL "),
        "\n{run}"
    );
    assert!(
        run.run.stderr.contains("faultline:   node x: exit 3\n"),
        "\n{run}"
    );
    assert_eq!(report.node("x"), Some(&NodeOutcome::Exit(3)), "\n{run}");
    assert_eq!(report.node("ok"), Some(&NodeOutcome::Exit(0)), "\n{run}");
    assert_eq!(run.node_stdout(SEED, "x"), "out\n", "\n{run}");
    let stderr = run.node_stderr(SEED, "x");
    let program_lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("faultline: "))
        .collect();
    assert_eq!(program_lines, ["err"], "\n{run}");
}

/// A node killed by SIGSEGV fails the seed, and the verdict names the signal.
#[test]
fn node_killed_by_a_signal_fails_the_seed() {
    let dir = scratch_dir("scenario-segv");
    let scenario = Scenario::new("segfault-node", "5s").node(Node::program(
        "crash",
        Program::c("segfault"),
        [] as [&str; 0],
    ));
    let run = run_scenario_twice(&scenario.write(&dir).runner().seed(SEED));
    run.expect_code(1);
    let report = run.report();
    assert!(!report.pass, "\n{run}");
    assert_eq!(
        report.node("crash"),
        Some(&NodeOutcome::Killed("SIGSEGV".into())),
        "\n{run}"
    );
    assert_eq!(
        run.node_stdout(SEED, "crash"),
        "about to segfault\n",
        "\n{run}"
    );
}

/// A node still running when the duration ends passes, the seed's virtual
/// time is the duration (the sleeper's hour is cut short, in milliseconds of
/// wall time); a relative command path resolves against the scenario file's
/// directory; `env` reaches the node, and its host name is the node's name.
#[test]
fn running_node_passes_at_the_end_of_the_duration() {
    let dir = scratch_dir("scenario-running");
    let script = dir.join("greet.sh");
    fs::write(&script, "#!/bin/sh\necho \"$GREETING from $(uname -n)\"\n").expect("write script");
    make_executable(&script);
    let scenario = Scenario::new("running-at-end", "2s")
        .node(Node::new("sleeper", ["sleep", "3600"]))
        .node(Node::new("greeter", ["./greet.sh"]).env("GREETING", "hi"));
    let run = run_scenario_twice(&scenario.write(&dir).runner().seed(SEED));
    run.expect_pass();
    let report = run.report();
    assert_eq!(
        report.node("sleeper"),
        Some(&NodeOutcome::RunningAtEnd),
        "\n{run}"
    );
    assert_eq!(
        report.node("greeter"),
        Some(&NodeOutcome::Exit(0)),
        "\n{run}"
    );
    assert!(
        (2.0..2.5).contains(&report.vtime_secs),
        "vtime {}s, expected the 2s duration\n{run}",
        report.vtime_secs
    );
    assert!(
        run.run.wall.as_secs() < 10,
        "a 2 s scenario took {:?} of wall time\n{run}",
        run.run.wall
    );
    assert_eq!(
        run.node_stdout(SEED, "greeter"),
        "hi from greeter\n",
        "\n{run}"
    );
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// Runs a malformed scenario `text` (written as `file_name`) and asserts
/// exit 2 with a message naming the file, every `needle`, and line `line`.
#[track_caller]
fn rejects(file_name: &str, text: &str, line: u32, needles: &[&str]) {
    let dir = scratch_dir("scenario-bad");
    let file = ScenarioFile::raw(&dir, file_name, text);
    let run = file.runner().seed(1).run();
    run.expect_code(2);
    let stderr = &run.run.stderr;
    assert!(
        stderr.contains(file.path.to_str().unwrap()) || stderr.contains(file_name),
        "the message does not name the file\n{run}"
    );
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "the message does not name {needle:?}\n{run}"
        );
    }
    assert!(
        mentions_line(stderr, line),
        "the message does not name line {line}\n{run}"
    );
    assert!(run.reports().is_empty(), "bad input still ran seeds\n{run}");
}

#[test]
fn unknown_field_is_bad_input_naming_line_and_field() {
    rejects(
        "unknown-field.toml",
        "name = \"bad-field\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\n\
         command = [\"true\"]\ncolour = \"red\"\n",
        7,
        &["colour"],
    );
}

#[test]
fn missing_binary_is_bad_input_naming_line_and_field() {
    rejects(
        "missing-binary.toml",
        "name = \"missing-binary\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\n\
         command = [\"/nonexistent/faultline-e2e/prog\", \"--flag\"]\n",
        6,
        &["command", "/nonexistent/faultline-e2e/prog"],
    );
}

#[test]
fn malformed_toml_and_bad_values_are_bad_input() {
    rejects(
        "unterminated.toml",
        "name = \"unterminated\"\nduration = \"1s\n\n[[node]]\nname = \"a\"\ncommand = [\"true\"]\n",
        2,
        &[],
    );
    rejects(
        "bad-duration.toml",
        "name = \"bad-duration\"\nduration = \"soon\"\n\n[[node]]\nname = \"a\"\n\
         command = [\"true\"]\n",
        2,
        &["duration"],
    );
    rejects(
        "bad-fault.toml",
        "name = \"bad-fault\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\n\
         command = [\"true\"]\n\n[[fault]]\nkind = \"earthquake\"\nat = \"1s\"\n\
         isolate = [\"a\"]\n",
        9,
        &["kind", "earthquake"],
    );
}

#[test]
fn missing_scenario_file_is_bad_input() {
    let dir = scratch_dir("scenario-nofile");
    let file = ScenarioFile {
        path: dir.join("absent.toml"),
        name: None,
    };
    let run = file.runner().run();
    run.expect_code(2);
    assert!(
        run.run.stderr.contains("absent.toml"),
        "the message does not name the file\n{run}"
    );
}

/// A one-node scenario whose node prints random bytes from its seed.
fn random_scenario(name: &str) -> Scenario {
    Scenario::new(name, "1s").node(Node::program("n", Program::c("random"), [] as [&str; 0]))
}

/// `--seeds 3` runs three seeds derived from the scenario name: two
/// invocations print the same three verdicts (seeds and trace hashes) and the
/// node output differs between the seeds; `--seed S` reruns one of them
/// exactly; the file's `seeds = 3` is the default; another name gives other
/// seeds.
#[test]
fn seeds_derive_from_the_scenario_name() {
    let dir = scratch_dir("scenario-seeds");
    let file = random_scenario("seed-derivation").write(&dir);
    let run = run_scenario_twice(&file.runner().seeds(3));
    run.expect_pass();
    let reports = run.reports();
    let seeds: Vec<u64> = reports.iter().map(|r| r.seed).collect();
    assert_eq!(seeds.len(), 3, "\n{run}");
    assert!(
        seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2],
        "seeds repeat: {seeds:x?}\n{run}"
    );
    let outputs: Vec<String> = seeds.iter().map(|&s| run.node_stdout(s, "n")).collect();
    assert!(
        outputs[0] != outputs[1] && outputs[1] != outputs[2] && outputs[0] != outputs[2],
        "different seeds gave the node the same random bytes\n{run}"
    );
    for out in &outputs {
        assert_eq!(value::<String>(out, "getrandom").len(), 32, "\n{run}");
    }

    let one = file
        .runner()
        .artifacts(dir.join("one"))
        .seed_text(&format!("{:#018x}", seeds[1]))
        .run();
    one.expect_pass();
    assert_eq!(
        one.report(),
        reports[1],
        "--seed did not rerun the second seed exactly\n{one}"
    );
    assert_eq!(one.node_stdout(seeds[1], "n"), outputs[1], "\n{one}");

    let defaulted = random_scenario("seed-derivation")
        .seeds(3)
        .write(&scratch_dir("scenario-seeds-default"))
        .runner()
        .run();
    defaulted.expect_pass();
    assert_eq!(
        defaulted
            .reports()
            .iter()
            .map(|r| r.seed)
            .collect::<Vec<_>>(),
        seeds,
        "the file's `seeds = 3` did not give the same three seeds\n{defaulted}"
    );

    let renamed = random_scenario("seed-derivation-2")
        .write(&dir)
        .runner()
        .artifacts(dir.join("renamed"))
        .seeds(3)
        .run();
    renamed.expect_pass();
    let other: Vec<u64> = renamed.reports().iter().map(|r| r.seed).collect();
    assert!(
        other.iter().all(|s| !seeds.contains(s)),
        "another scenario name gave the same seeds {other:x?} vs {seeds:x?}\n{renamed}"
    );
}

/// Debian's etcd as a single node `n1`, and etcdctl on a second host: `put k
/// v`, then `get k`, each retried (every 500 ms) until etcd serves it.
/// The data directory is recreated before each run, at the same path, so
/// both runs see the same file system.
#[test]
#[cfg_attr(
    no_etcd,
    ignore = "/usr/bin/etcd is absent: install etcd-server (scripts/setup) to run this test"
)]
fn etcd_single_node_serves_etcdctl_put_and_get() {
    let dir = scratch_dir("scenario-etcd");
    let data = dir.join("n1");
    let data_text = data.to_str().expect("UTF-8 scratch path").to_owned();
    let etcdctl = |args: &[&str]| {
        let mut words = vec!["/usr/bin/etcdctl", "--endpoints", "http://n1:2379"];
        words.extend_from_slice(args);
        words.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let mut client = vec!["20".to_owned(), "500".to_owned(), "--".to_owned()];
    client.extend(etcdctl(&["put", "k", "v"]));
    client.push("--".to_owned());
    client.extend(etcdctl(&["get", "k"]));
    let scenario = Scenario::new("etcd-single", "15s")
        .node(Node::new(
            "n1",
            [
                "/usr/bin/etcd",
                "--name",
                "n1",
                "--data-dir",
                &data_text,
                "--listen-client-urls",
                "http://0.0.0.0:2379",
                "--advertise-client-urls",
                "http://n1:2379",
                "--listen-peer-urls",
                "http://0.0.0.0:2380",
            ],
        ))
        .node(Node::program("client", Program::c("steps"), &client));
    let runner = scenario.write(&dir).runner().seed(SEED);
    let run = run_scenario_twice_with(&runner, || {
        if data.exists() {
            fs::remove_dir_all(&data)
                .unwrap_or_else(|e| panic!("cannot clear {}: {e}", data.display()));
        }
    });
    run.expect_pass();
    let report = run.report();
    assert_eq!(
        report.node("client"),
        Some(&NodeOutcome::Exit(0)),
        "\n{run}"
    );
    assert_eq!(
        report.node("n1"),
        Some(&NodeOutcome::RunningAtEnd),
        "\n{run}"
    );
    assert_eq!(run.node_stdout(SEED, "client"), "OK\nk\nv\n", "\n{run}");
}
