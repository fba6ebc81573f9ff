//! The network fault kinds (`link` delay, loss and duplication, `reset`),
//! each with a small request/response program whose bug only that fault
//! exposes: the same scenario without the fault passes. Over TCP, loss
//! delays and never loses. Every run is made twice and must
//! give the same verdicts and trace hashes.

use faultline_e2e::rpc::{self, Client};
use faultline_e2e::{NodeOutcome, ScenarioRun};

const SEED: u64 = 0x11e7;

/// The rpc scenario with a client sending 40 pings over `proto` (tcp or
/// udp), each waiting `timeout_ms` for its answer, with `flags`, plus `faults`.
fn rpc_scenario(
    dir_name: &str,
    proto: &str,
    timeout_ms: u32,
    flags: &[&str],
    faults: &str,
) -> ScenarioRun {
    let client = Client {
        proto,
        timeout_ms,
        count: 40,
        flags,
    };
    rpc::rpc_scenario(dir_name, SEED, client, faults)
}

/// The client failed with `what` (TIMEOUT or RESET) on its stderr.
#[track_caller]
fn assert_client_failed(run: &ScenarioRun, what: &str) {
    run.expect_code(1);
    assert_eq!(
        run.report().node("client"),
        Some(&NodeOutcome::Exit(1)),
        "\n{run}"
    );
    let err = run.node_stderr(SEED, "client");
    assert!(err.starts_with(what), "client stderr: {err:?}\n{run}");
}

/// The client got all its answers.
#[track_caller]
fn assert_client_done(run: &ScenarioRun, reconnects: u32) {
    run.expect_pass();
    assert_eq!(
        run.node_stdout(SEED, "client"),
        format!("client: 40 pongs, {reconnects} reconnect(s)\n"),
        "\n{run}"
    );
}

const SLOW_LINK: &str = r#"
[[fault]]
kind = "link"
between = ["client"]
and = ["server"]
at = "500ms"
until = "1500ms"
delay_min = "100ms"
delay_max = "200ms"
"#;

/// A 50 ms timeout is ample on the default 1-5 ms links; a `link` fault
/// that slows the client's link to 100-200 ms exposes it. The fault log
/// names the window's start and end.
#[test]
fn link_delay_exposes_a_too_short_timeout() {
    let run = rpc_scenario("net-link-delay", "tcp", 50, &[], SLOW_LINK);
    assert_client_failed(&run, "TIMEOUT");
    let link = run.faults_of(SEED, "link");
    assert_eq!(link.len(), 1, "{link:?}\n{run}");
    assert_eq!(link[0].t, 500_000_000);
    assert_eq!(link[0].node, "client <-> server");
    assert_eq!(link[0].detail, "delay 100.000-200.000ms, loss 0");
    assert_client_done(&rpc_scenario("net-link-none", "tcp", 50, &[], ""), 0);
}

const LOSSY_LINK: &str = r#"
[[fault]]
kind = "link"
between = ["client"]
at = "500ms"
loss = 0.5
"#;

/// A UDP client that never resends: half its datagrams lost from 500 ms
/// on, a ping (or its pong) goes missing and the client times out. Without
/// the fault every ping is answered.
#[test]
fn link_loss_exposes_a_udp_client_without_retries() {
    let run = rpc_scenario("net-link-loss", "udp", 100, &[], LOSSY_LINK);
    assert_client_failed(&run, "TIMEOUT");
    assert_client_done(&rpc_scenario("net-link-loss-none", "udp", 100, &[], ""), 0);
}

const RESET: &str = r#"
[[fault]]
kind = "reset"
between = ["server"]
at = "1s"
"#;

/// A `reset` breaks the client's connection (ECONNRESET): a client that
/// does not handle it fails, one that reconnects carries on, and without
/// the fault neither reconnects.
#[test]
fn reset_exposes_a_client_that_does_not_reconnect() {
    let run = rpc_scenario("net-reset", "tcp", 1000, &[], RESET);
    assert_client_failed(&run, "RESET");
    let reset = run.faults_of(SEED, "reset");
    assert_eq!(reset.len(), 1, "{reset:?}\n{run}");
    assert_eq!(reset[0].detail, "1 connection(s) reset", "{reset:?}");
    assert_client_done(
        &rpc_scenario("net-reset-reconnect", "tcp", 1000, &["reconnect"], RESET),
        1,
    );
    assert_client_done(&rpc_scenario("net-reset-none", "tcp", 1000, &[], ""), 0);
}

const LOSSY_TCP: &str = r#"
[[fault]]
kind = "link"
between = ["client"]
at = "500ms"
loss = 0.3
"#;

/// Over TCP a lossy link loses transmissions, not bytes: each lost one is
/// resent after a retransmission timeout (200 ms, doubling). A patient
/// client gets every answer, in order and without a reset; one with a
/// 100 ms timeout gives up on a resent segment.
#[test]
fn link_loss_over_tcp_delays_but_never_loses() {
    assert_client_done(
        &rpc_scenario("net-tcp-loss", "tcp", 5000, &[], LOSSY_TCP),
        0,
    );
    let run = rpc_scenario("net-tcp-loss-short", "tcp", 100, &[], LOSSY_TCP);
    assert_client_failed(&run, "TIMEOUT");
}

const DUPLICATING_LINK: &str = r#"
[[fault]]
kind = "link"
between = ["client"]
at = "500ms"
duplicate = 0.5
"#;

/// `duplicate`: datagrams arrive twice. A UDP client that takes the next
/// datagram as the answer to its latest ping reads a copy of an old pong.
/// Without the fault (see the loss test) every answer is the right one.
#[test]
fn link_duplicate_exposes_a_udp_client_trusting_every_datagram() {
    let run = rpc_scenario("net-dup", "udp", 100, &[], DUPLICATING_LINK);
    assert_client_failed(&run, "STALE: ping ");
    let link = run.faults_of(SEED, "link");
    assert_eq!(
        link[0].detail, "delay 1.000-5.000ms, loss 0, datagrams duplicated 0.5",
        "{link:?}"
    );
}
