//! The simulated network inside one host (`faultline exec --host NAME`): TCP
//! and UDP between threads of one C or Rust program, over 127.0.0.1, the
//! host's own name and its address 127.77.0.1. Every test runs its seed twice
//! and asserts the same stdout and trace hash (so ephemeral ports, which the
//! programs print, must be deterministic too).

use faultline_e2e::checks::run_twice;
use faultline_e2e::output::value;
use faultline_e2e::{per_linkage, Exec, Linkage, Program, Run};

/// The simulated host the tests run on.
const HOST: &str = "alpha";
/// Its address: the first simulated host is 127.77.0.1.
const HOST_ADDR: &str = "127.77.0.1";

/// The ephemeral port on the run's `port N` line, checked to be one.
#[track_caller]
fn ephemeral_port(run: &Run) -> u16 {
    let port: u16 = value(run.out(), "port");
    assert!(port >= 1024, "port {port} is not an ephemeral port\n{run}");
    port
}

/// What loopback_pair prints after its `port` line when its client reaches
/// the server at `peer` from `local`.
fn loopback_pair_output(port: u16, local: &str, peer: &str, lines: usize) -> String {
    let mut out = format!(
        "port {port}\nrefused: Connection refused\nclient local {local} peer {peer}:port\n\
         server peer {local} matches client local: yes\n"
    );
    let mut bytes = 0;
    for i in 1..=lines {
        out.push_str(&format!("reply {i}: echo line {i}\n"));
        bytes += format!("line {i}\n").len();
    }
    out.push_str(&format!(
        "client eof: yes\nserver echoed {lines} lines {bytes} bytes\n"
    ));
    out
}

/// Blocking and non-blocking TCP over 127.0.0.1 on one host: select() on the
/// listener, EINPROGRESS connect with poll and SO_ERROR, TCP_NODELAY,
/// getsockname/getpeername agreeing on both ends, shutdown and EOF, and
/// ECONNREFUSED from a port nobody listens on.
fn loopback_pair_over_localhost_address(program: Program) {
    let run = run_twice(&Exec::program(program).host(HOST).seed(61));
    run.expect_success();
    let port = ephemeral_port(&run);
    assert_eq!(
        run.out(),
        loopback_pair_output(port, "127.0.0.1", "127.0.0.1", 3),
        "\n{run}"
    );
}
per_linkage!(
    c_loopback_pair,
    Program::c("loopback_pair"),
    loopback_pair_over_localhost_address
);

/// The host reaches itself by its own name (simulated /etc/hosts), by its
/// address 127.77.0.1, and by `localhost`. Which of its own addresses the
/// client's socket is bound to when it dials 127.77.0.1 is the simulator's
/// choice (a real kernel picks 127.0.0.1), so only that word may vary; the
/// server must see exactly the client's address and port.
#[test]
fn loopback_pair_reaches_own_name_address_and_localhost() {
    let program = Program::c("loopback_pair").with_linkage(Linkage::Dynamic);
    for (target, peer) in [
        (HOST, HOST_ADDR),
        (HOST_ADDR, HOST_ADDR),
        ("localhost", "127.0.0.1"),
    ] {
        let run = run_twice(
            &Exec::program(program)
                .host(HOST)
                .seed(62)
                .arg(target)
                .arg("2"),
        );
        run.expect_success();
        let port = ephemeral_port(&run);
        let local: String = faultline_e2e::output::word_after(run.out(), "client", "local");
        let allowed: &[&str] = if peer == HOST_ADDR {
            &["127.0.0.1", HOST_ADDR]
        } else {
            &["127.0.0.1"]
        };
        assert!(
            allowed.contains(&local.as_str()),
            "client bound to {local} to reach {target}\n{run}"
        );
        assert_eq!(
            run.out(),
            loopback_pair_output(port, &local, peer, 2),
            "target {target}\n{run}"
        );
    }
}

/// The host name the program sees (uname) is the `--host` name.
#[test]
fn uname_reports_the_host_name() {
    let run = run_twice(&Exec::new("uname").arg("-n").host(HOST).seed(63));
    run.expect_success();
    assert_eq!(run.out(), format!("{HOST}\n"), "\n{run}");
}

/// std::net TCP: a listener on 127.0.0.1:0, three concurrent client threads,
/// a handler thread per connection, half-close and EOF, ConnectionRefused.
fn tcp_pair_exchanges(program: Program) {
    let run = run_twice(&Exec::program(program).host(HOST).seed(64));
    run.expect_success();
    let port = ephemeral_port(&run);
    let mut expected = format!("port {port}\nrefused: ConnectionRefused\n");
    for id in 0..3 {
        for n in 1..=3 {
            expected.push_str(&format!("client {id}: echo client {id} says {n}\n"));
        }
        expected.push_str(&format!("client {id}: eof\n"));
    }
    expected.push_str("server: 3 connections 9 lines, peers match clients: yes\n");
    assert_eq!(run.out(), expected, "\n{run}");
}
per_linkage!(rust_tcp_pair, Program::rust("tcp_pair"), tcp_pair_exchanges);

/// std::net UDP: send_to/recv_from both ways with the right source
/// addresses, connected send/recv, MSG_PEEK, truncation of a datagram larger
/// than the buffer, and SO_RCVTIMEO firing after 200 ms of virtual time.
fn udp_pair_exchanges(program: Program) {
    let run = run_twice(&Exec::program(program).host(HOST).seed(65));
    run.expect_success();
    assert_eq!(
        run.out(),
        "ports distinct: yes\n\
         a got pong 1 from b\n\
         a got pong 2 from b\n\
         a got pong 3 from b\n\
         b saw 3 of 3 pings from a\n\
         b got hello from a (connected)\n\
         a got world from b (connected)\n\
         b peeked 5 bytes: peek!, then read 5 bytes: peek!\n\
         b read 4 of 1000 bytes\n\
         a recv timeout after 0.2s: WouldBlock\n",
        "\n{run}"
    );
}
per_linkage!(rust_udp_pair, Program::rust("udp_pair"), udp_pair_exchanges);

/// Interface listing (rtnetlink RTM_GETLINK/RTM_GETADDR) answers with the
/// simulated host: lo and eth0 with its 127.77.0.1 address, nothing of the
/// real machine's interfaces.
#[test]
fn go_interface_listing_shows_the_simulated_host() {
    let run = run_twice(&Exec::program(Program::go("interfaces")).host(HOST).seed(66));
    run.expect_success();
    assert_eq!(
        run.out(),
        "1 lo 65536  up|loopback [127.0.0.1/8]\n2 eth0 1500 02:00:7f:4d:00:01 up|broadcast|multicast [127.77.0.1/16]\n",
        "\n{run}"
    );
}
