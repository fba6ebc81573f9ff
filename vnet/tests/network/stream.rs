//! Stream sockets: connect/accept, data, close, readiness, addresses.

use vnet::{
    ConnectProgress, Domain, Kind, MessageKind, NetConfig, NetError, Readiness, Shutdown,
    SOL_SOCKET, SO_REUSEADDR,
};

use crate::common::{addr, connected, listener, read_all, settle, two_hosts, MS};

#[test]
fn connect_accept_send_recv_round_trip_with_delays() {
    let (mut net, a, b) = two_hosts(1, NetConfig::default());
    let l = listener(&mut net, b, 8080);
    let c = net.socket(a, Domain::Inet, Kind::Stream);
    assert_eq!(
        net.connect(c, addr("127.77.0.2:8080"), 0),
        Ok(ConnectProgress::InProgress)
    );
    assert_eq!(net.readiness(c).unwrap(), Readiness::default());
    assert_eq!(net.accept(l), Err(NetError::WouldBlock));

    // The SYN arrives after one link delay and queues the connection.
    let syn_at = net.next_event_time().unwrap();
    assert!((MS..=5 * MS).contains(&syn_at), "SYN due at {syn_at}");
    let changes = net.advance(syn_at);
    assert!(changes
        .iter()
        .any(|ch| ch.socket == l && ch.readiness.readable));
    let (s, peer) = net.accept(l).unwrap();
    assert_eq!(peer, addr("127.77.0.1:40000"));
    assert_eq!(net.local_addr(s).unwrap(), addr("127.77.0.2:8080"));
    assert!(!net.readiness(l).unwrap().readable);
    assert!(!net.readiness(c).unwrap().writable);

    // The SYN-ACK makes the client established.
    let ack_at = net.next_event_time().unwrap();
    assert!((syn_at + MS..=syn_at + 5 * MS).contains(&ack_at));
    let changes = net.advance(ack_at);
    assert!(changes
        .iter()
        .any(|ch| ch.socket == c && ch.readiness.writable));
    assert_eq!(net.pending_error(c).unwrap(), None);
    assert_eq!(net.peer_addr(c).unwrap(), addr("127.77.0.2:8080"));
    assert_eq!(net.local_addr(c).unwrap(), addr("127.77.0.1:40000"));

    assert_eq!(net.send(c, b"hello", ack_at), Ok(5));
    assert_eq!(net.recv(s, 100, false), Err(NetError::WouldBlock));
    let data_at = net.next_event_time().unwrap();
    assert!((ack_at + MS..=ack_at + 5 * MS).contains(&data_at));
    net.advance(data_at);
    assert_eq!(net.pending_bytes(s), Ok(5));
    assert_eq!(net.recv(s, 3, true).unwrap().data, b"hel");
    assert_eq!(net.recv(s, 100, false).unwrap().data, b"hello");

    net.send(s, b"world", data_at).unwrap();
    settle(&mut net, data_at);
    assert_eq!(read_all(&mut net, c), b"world");
}

#[test]
fn bytes_arrive_in_order_within_a_connection() {
    let config = NetConfig {
        segment_size: 7,
        ..NetConfig::default()
    };
    let (mut net, a, b) = two_hosts(3, config);
    let l = listener(&mut net, b, 80);
    let (c, s, mut now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    let mut sent = Vec::new();
    for i in 0..200u32 {
        let chunk = format!("<{i}>");
        assert_eq!(net.send(c, chunk.as_bytes(), now), Ok(chunk.len()));
        sent.extend_from_slice(chunk.as_bytes());
        if i % 3 == 0 {
            now += MS / 2;
            net.advance(now);
        }
    }
    let mut got = read_all(&mut net, s);
    settle(&mut net, now);
    got.extend(read_all(&mut net, s));
    assert_eq!(
        String::from_utf8(got).unwrap(),
        String::from_utf8(sent).unwrap()
    );
}

#[test]
fn connect_without_listener_is_refused_after_the_round_trip() {
    let (mut net, a, _) = two_hosts(4, NetConfig::default());
    let c = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(c, addr("127.77.0.2:9"), 0).unwrap();
    let end = settle(&mut net, 0);
    assert!((2 * MS..=10 * MS).contains(&end));
    let r = net.readiness(c).unwrap();
    assert!(r.err && r.writable && r.hup);
    assert_eq!(net.pending_error(c).unwrap(), Some(NetError::ConnRefused));
    assert!(!net.readiness(c).unwrap().err);
    let kinds: Vec<_> = net.drain_events().iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [MessageKind::Syn, MessageKind::Rst]);
}

#[test]
fn unsimulated_addresses_are_unreachable_at_once() {
    let (mut net, a, _) = two_hosts(5, NetConfig::default());
    for target in [
        "8.8.8.8:53",
        "10.0.0.1:80",
        "127.77.0.99:80",
        "127.0.1.1:80",
    ] {
        let c = net.socket(a, Domain::Inet, Kind::Stream);
        assert_eq!(
            net.connect(c, addr(target), 0),
            Err(NetError::NetUnreachable)
        );
        let u = net.socket(a, Domain::Inet, Kind::Dgram);
        assert_eq!(
            net.send_to(u, b"x", Some(addr(target)), 0),
            Err(NetError::NetUnreachable)
        );
    }
    let c6 = net.socket(a, Domain::Inet6, Kind::Stream);
    assert_eq!(
        net.connect(c6, addr("[2001:db8::1]:80"), 0),
        Err(NetError::NetUnreachable)
    );
    assert_eq!(
        net.connect(c6, addr("[::ffff:8.8.8.8]:80"), 0),
        Err(NetError::NetUnreachable)
    );
    let c4 = net.socket(a, Domain::Inet, Kind::Stream);
    assert_eq!(
        net.connect(c4, addr("[::1]:80"), 0),
        Err(NetError::FamilyNotSupported)
    );
    assert_eq!(net.next_event_time(), None, "nothing may leave");
    assert!(net.drain_events().is_empty());
}

#[test]
fn ephemeral_ports_are_deterministic_per_host() {
    let (mut net, a, b) = two_hosts(6, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c1, _, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    let (c2, _, _) = connected(&mut net, a, "127.77.0.2:80", l, now);
    assert_eq!(net.local_addr(c1).unwrap(), addr("127.77.0.1:40000"));
    assert_eq!(net.local_addr(c2).unwrap(), addr("127.77.0.1:40001"));
    let u = net.socket(b, Domain::Inet, Kind::Dgram);
    net.bind(u, addr("0.0.0.0:0")).unwrap();
    assert_eq!(net.local_addr(u).unwrap(), addr("0.0.0.0:40000"));
    let auto = net.socket(b, Domain::Inet, Kind::Stream);
    net.listen(auto, 1).unwrap();
    assert_eq!(net.local_addr(auto).unwrap(), addr("0.0.0.0:40001"));
}

#[test]
fn readiness_follows_kernel_semantics() {
    let config = NetConfig {
        send_buffer: 10,
        ..NetConfig::default()
    };
    let (mut net, a, b) = two_hosts(7, config);
    let l = listener(&mut net, b, 80);
    let fresh = net.socket(a, Domain::Inet, Kind::Stream);
    let r = net.readiness(fresh).unwrap();
    assert!(r.writable && r.hup && !r.readable);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    let r = net.readiness(c).unwrap();
    assert!(r.writable && !r.readable && !r.hup);

    // A full send buffer blocks writes until the peer reads.
    assert_eq!(net.send(c, b"0123456789abc", now), Ok(10));
    assert_eq!(net.send(c, b"x", now), Err(NetError::WouldBlock));
    assert!(!net.readiness(c).unwrap().writable);
    let now = settle(&mut net, now);
    assert!(net.readiness(s).unwrap().readable);
    assert_eq!(net.recv(s, 4, false).unwrap().data, b"0123");
    let changes = net.advance(now);
    assert!(changes
        .iter()
        .any(|ch| ch.socket == c && ch.readiness.writable));
    assert_eq!(net.send(c, b"abcdefg", now), Ok(4));

    // The peer's FIN: readable, rdhup, reads drain then return end of stream.
    net.shutdown(c, Shutdown::Write, now).unwrap();
    assert_eq!(net.send(c, b"x", now), Err(NetError::BrokenPipe));
    settle(&mut net, now);
    let r = net.readiness(s).unwrap();
    assert!(r.readable && r.rdhup && !r.hup);
    assert_eq!(read_all(&mut net, s), b"456789abcd");
    assert_eq!(net.recv(s, 10, false).unwrap().data, b"");
    net.shutdown(s, Shutdown::Write, now).unwrap();
    assert!(net.readiness(s).unwrap().hup);
}

#[test]
fn write_after_peer_closed_gets_epipe_after_the_reset() {
    let (mut net, a, b) = two_hosts(8, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    net.close(s, now).unwrap();
    assert_eq!(net.readiness(s), Err(NetError::BadSocket));
    let now = settle(&mut net, now);
    assert_eq!(net.recv(c, 10, false).unwrap().data, b"");
    // The first write goes out; the closed end answers with a reset.
    assert_eq!(net.send(c, b"ping", now), Ok(4));
    let now = settle(&mut net, now);
    let r = net.readiness(c).unwrap();
    assert!(r.err && r.hup);
    assert_eq!(net.send(c, b"ping", now), Err(NetError::BrokenPipe));
    assert_eq!(net.send(c, b"ping", now), Err(NetError::BrokenPipe));
    let kinds: Vec<_> = net.drain_events().iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds[kinds.len() - 3..],
        [
            MessageKind::Fin,
            MessageKind::Data { len: 4 },
            MessageKind::Rst
        ]
    );
}

#[test]
fn close_with_unread_data_resets_the_peer() {
    let (mut net, a, b) = two_hosts(9, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    net.send(c, b"unread", now).unwrap();
    let now = settle(&mut net, now);
    net.close(s, now).unwrap();
    settle(&mut net, now);
    assert_eq!(net.recv(c, 10, false), Err(NetError::ConnReset));
    assert_eq!(net.recv(c, 10, false).unwrap().data, b"");
}

#[test]
fn binding_rules_match_linux() {
    let (mut net, a, _) = two_hosts(10, NetConfig::default());
    let l = listener(&mut net, a, 80);
    let other = net.socket(a, Domain::Inet, Kind::Stream);
    assert_eq!(
        net.bind(other, addr("127.77.0.1:80")),
        Err(NetError::AddrInUse)
    );
    assert_eq!(
        net.bind(other, addr("127.77.0.2:81")),
        Err(NetError::AddrNotAvailable)
    );
    net.bind(other, addr("127.0.0.1:81")).unwrap();
    assert_eq!(
        net.bind(other, addr("127.0.0.1:82")),
        Err(NetError::Invalid)
    );
    net.close(l, 0).unwrap();
    listener(&mut net, a, 80);

    let reuse = |net: &mut vnet::Network| {
        let s = net.socket(a, Domain::Inet, Kind::Stream);
        net.set_option(s, SOL_SOCKET, SO_REUSEADDR, &1i32.to_ne_bytes())
            .unwrap();
        s
    };
    let (r1, r2) = (reuse(&mut net), reuse(&mut net));
    net.bind(r1, addr("0.0.0.0:90")).unwrap();
    net.bind(r2, addr("0.0.0.0:90")).unwrap();
    net.listen(r1, 1).unwrap();
    assert_eq!(net.listen(r2, 1), Err(NetError::AddrInUse));
    assert_eq!(
        net.get_option(r1, SOL_SOCKET, SO_REUSEADDR).unwrap(),
        Some(1i32.to_ne_bytes().to_vec())
    );
    let u = net.socket(a, Domain::Inet, Kind::Dgram);
    assert_eq!(net.listen(u, 1), Err(NetError::NotSupported));
}

#[test]
fn loopback_reaches_only_the_own_host() {
    let (mut net, a, b) = two_hosts(11, NetConfig::default());
    let l = net.socket(a, Domain::Inet6, Kind::Stream);
    net.bind(l, addr("[::1]:7000")).unwrap();
    net.listen(l, 4).unwrap();
    assert_eq!(net.local_addr(l).unwrap(), addr("[::ffff:127.0.0.1]:7000"));

    let (c, s, now) = connected(&mut net, a, "127.0.0.1:7000", l, 0);
    assert_eq!(net.local_addr(c).unwrap(), addr("127.0.0.1:40000"));
    net.send(c, b"self", now).unwrap();
    settle(&mut net, now);
    assert_eq!(read_all(&mut net, s), b"self");

    // Host b's 127.0.0.1 is b itself, where nothing listens; a's own
    // address does not reach a loopback-only listener either.
    for (host, target) in [(b, "127.0.0.1:7000"), (a, "127.77.0.1:7000")] {
        let c = net.socket(host, Domain::Inet, Kind::Stream);
        net.connect(c, addr(target), now).unwrap();
        settle(&mut net, now);
        assert_eq!(net.pending_error(c).unwrap(), Some(NetError::ConnRefused));
    }
}

#[test]
fn ipv6_sockets_talk_to_ipv4_mapped_hosts() {
    let (mut net, a, b) = two_hosts(12, NetConfig::default());
    let l = net.socket(b, Domain::Inet6, Kind::Stream);
    net.bind(l, addr("[::]:443")).unwrap();
    net.listen(l, 4).unwrap();
    let c = net.socket(a, Domain::Inet6, Kind::Stream);
    net.connect(c, addr("[::ffff:127.77.0.2]:443"), 0).unwrap();
    settle(&mut net, 0);
    let (_, peer) = net.accept(l).unwrap();
    assert_eq!(peer, addr("[::ffff:127.77.0.1]:40000"));
    assert_eq!(net.peer_addr(c).unwrap(), addr("[::ffff:127.77.0.2]:443"));
}

#[test]
fn connect_states_report_kernel_errors() {
    let (mut net, a, b) = two_hosts(13, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let c = net.socket(a, Domain::Inet, Kind::Stream);
    assert_eq!(net.send(c, b"x", 0), Err(NetError::BrokenPipe));
    assert_eq!(net.recv(c, 1, false), Err(NetError::NotConnected));
    assert_eq!(net.peer_addr(c), Err(NetError::NotConnected));
    net.connect(c, addr("127.77.0.2:80"), 0).unwrap();
    assert_eq!(
        net.connect(c, addr("127.77.0.2:80"), 0),
        Err(NetError::Already)
    );
    assert_eq!(net.send(c, b"x", 0), Err(NetError::WouldBlock));
    assert_eq!(net.recv(c, 1, false), Err(NetError::WouldBlock));
    settle(&mut net, 0);
    assert_eq!(
        net.connect(c, addr("127.77.0.2:80"), 0),
        Err(NetError::IsConnected)
    );
    assert_eq!(net.accept(c), Err(NetError::Invalid));
    assert_eq!(net.pending_bytes(l), Err(NetError::Invalid));
}

#[test]
fn listener_close_resets_unaccepted_connections() {
    let (mut net, a, b) = two_hosts(14, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let c = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(c, addr("127.77.0.2:80"), 0).unwrap();
    let now = settle(&mut net, 0);
    net.close(l, now).unwrap();
    settle(&mut net, now);
    assert_eq!(net.pending_error(c).unwrap(), Some(NetError::ConnReset));
    let again = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(again, addr("127.77.0.2:80"), now).unwrap();
    settle(&mut net, now);
    assert_eq!(
        net.pending_error(again).unwrap(),
        Some(NetError::ConnRefused)
    );
}

#[test]
fn large_writes_are_partial_and_split_into_segments() {
    let (mut net, a, b) = two_hosts(15, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    net.drain_events();
    let big = vec![7u8; 1 << 20];
    assert_eq!(net.send(c, &big, now), Ok(256 * 1024));
    assert_eq!(net.send(c, &big, now), Err(NetError::WouldBlock));
    settle(&mut net, now);
    let events = net.drain_events();
    assert_eq!(events.len(), 4);
    assert!(events
        .iter()
        .all(|e| e.kind == MessageKind::Data { len: 64 * 1024 }));
    assert_eq!(read_all(&mut net, s).len(), 256 * 1024);
}

#[test]
fn full_accept_queue_holds_syns_until_there_is_room() {
    let (mut net, a, b) = two_hosts(16, NetConfig::default());
    let l = net.socket(b, Domain::Inet, Kind::Stream);
    net.bind(l, addr("0.0.0.0:80")).unwrap();
    net.listen(l, 0).unwrap();
    let c1 = net.socket(a, Domain::Inet, Kind::Stream);
    let c2 = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(c1, addr("127.77.0.2:80"), 0).unwrap();
    net.connect(c2, addr("127.77.0.2:80"), 0).unwrap();
    net.advance(100 * MS);
    assert!(net.readiness(c1).unwrap().writable);
    assert!(
        !net.readiness(c2).unwrap().writable,
        "its SYN waits for room"
    );
    net.accept(l).unwrap();
    net.advance(400 * MS);
    assert!(net.readiness(c2).unwrap().writable);
    assert_eq!(net.pending_error(c2).unwrap(), None);
    assert!(net.accept(l).is_ok());
}

/// `recv_would_block` says, without receiving, what a `recv` would do:
/// block while connecting or while nothing has arrived, not once data,
/// the peer's FIN or a reset is there.
#[test]
fn recv_would_block_tells_a_read_that_would_block_before_it_is_made() {
    let (mut net, a, b) = two_hosts(5, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let c = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(c, addr("127.77.0.2:80"), 0).unwrap();
    assert!(net.recv_would_block(c), "connecting");
    assert_eq!(net.recv(c, 10, false), Err(NetError::WouldBlock));
    let now = settle(&mut net, 0);
    let (s, _) = net.accept(l).unwrap();
    assert!(net.recv_would_block(s), "connected, nothing sent");
    assert_eq!(net.recv(s, 10, false), Err(NetError::WouldBlock));
    net.send(c, b"ab", now).unwrap();
    let now = settle(&mut net, now);
    assert!(!net.recv_would_block(s), "data buffered");
    assert_eq!(net.recv(s, 10, false).unwrap().data, b"ab");
    assert!(net.recv_would_block(s), "drained");
    net.shutdown(c, Shutdown::Write, now).unwrap();
    settle(&mut net, now);
    assert!(!net.recv_would_block(s), "the peer's FIN: end of stream");
    assert_eq!(net.recv(s, 10, false).unwrap().data, b"");
    assert!(
        !net.recv_would_block(l),
        "a listener's read fails otherwise"
    );
}
