//! Partitions, heals and crashes.

use vnet::{Domain, DropReason, Kind, MessageKind, NetConfig, NetError};

use crate::common::{addr, connected, listener, read_all, settle, two_hosts, MS, SEC};

#[test]
fn connect_across_a_partition_times_out() {
    let (mut net, a, b) = two_hosts(30, NetConfig::default());
    listener(&mut net, b, 80);
    net.partition(&[a], &[b], false);
    let c = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(c, addr("127.77.0.2:80"), SEC).unwrap();
    let end = settle(&mut net, SEC);
    assert_eq!(end, SEC + NetConfig::default().connect_timeout);
    let r = net.readiness(c).unwrap();
    assert!(r.err && r.writable);
    assert_eq!(net.pending_error(c).unwrap(), Some(NetError::TimedOut));
    let events = net.drain_events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kind, MessageKind::Syn);
    assert_eq!(events[0].dropped, Some(DropReason::TimedOut));
}

#[test]
fn established_stream_stalls_then_times_out() {
    let (mut net, a, b) = two_hosts(31, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    net.partition(&[b], &[a], false);
    net.send(c, b"lost in the void", now).unwrap();
    let first_due = net.next_event_time().unwrap();

    net.advance(first_due + 10 * SEC);
    assert_eq!(net.recv(s, 100, false), Err(NetError::WouldBlock));
    assert!(!net.readiness(c).unwrap().err);

    let timeout = NetConfig::default().retransmit_timeout;
    net.advance(first_due + timeout - 1);
    assert!(!net.readiness(c).unwrap().err);
    let changes = net.advance(first_due + timeout);
    assert!(changes.iter().any(|ch| ch.socket == c && ch.readiness.err));
    assert_eq!(
        net.send(c, b"x", first_due + timeout),
        Err(NetError::TimedOut)
    );
    assert_eq!(
        net.send(c, b"x", first_due + timeout),
        Err(NetError::BrokenPipe)
    );

    // After the heal, the server's data finds a dead end and is reset.
    let now = first_due + timeout;
    net.heal();
    net.send(s, b"hello?", now).unwrap();
    settle(&mut net, now);
    assert_eq!(net.recv(s, 10, false), Err(NetError::ConnReset));
}

#[test]
fn heal_resumes_held_segments_in_order() {
    let (mut net, a, b) = two_hosts(32, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, mut now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    net.partition(&[a], &[b], true);
    for word in ["one ", "two ", "three"] {
        net.send(c, word.as_bytes(), now).unwrap();
        now += 300 * MS;
        net.advance(now);
    }
    assert_eq!(net.recv(s, 100, false), Err(NetError::WouldBlock));
    // One-way: the other direction still works.
    net.send(s, b"back", now).unwrap();
    now += 10 * MS;
    net.advance(now);
    assert_eq!(read_all(&mut net, c), b"back");

    net.heal();
    let healed = now;
    let end = settle(&mut net, now);
    assert!(end <= healed + NetConfig::default().retransmit_interval);
    assert_eq!(read_all(&mut net, s), b"one two three");
    assert_eq!(net.pending_error(c).unwrap(), None);
}

#[test]
fn crash_resets_peers_and_removes_listeners() {
    let (mut net, a, b) = two_hosts(33, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    let pending = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(pending, addr("127.77.0.2:80"), now).unwrap();
    let now = settle(&mut net, now);

    net.crash_host(b, now);
    assert_eq!(net.readiness(s), Err(NetError::BadSocket));
    assert_eq!(net.readiness(l), Err(NetError::BadSocket));
    assert!(
        !net.readiness(c).unwrap().err,
        "the reset is still in flight"
    );
    let rst_at = net.next_event_time().unwrap();
    assert!((now + MS..=now + 5 * MS).contains(&rst_at));
    let now = settle(&mut net, now);
    for sock in [c, pending] {
        let r = net.readiness(sock).unwrap();
        assert!(r.err && r.hup && r.readable);
        assert_eq!(net.recv(sock, 10, false), Err(NetError::ConnReset));
        assert_eq!(net.send(sock, b"x", now), Err(NetError::BrokenPipe));
    }

    let again = net.socket(a, Domain::Inet, Kind::Stream);
    net.connect(again, addr("127.77.0.2:80"), now).unwrap();
    let now = settle(&mut net, now);
    assert_eq!(
        net.pending_error(again).unwrap(),
        Some(NetError::ConnRefused)
    );

    // The host itself survives: a restarted server listens again.
    let l2 = listener(&mut net, b, 80);
    let (c2, _, _) = connected(&mut net, a, "127.77.0.2:80", l2, now);
    assert!(net.readiness(c2).unwrap().writable);
}

#[test]
fn partitioned_datagrams_are_dropped() {
    let (mut net, a, b) = two_hosts(34, NetConfig::default());
    let u = net.socket(b, Domain::Inet, Kind::Dgram);
    net.bind(u, addr("0.0.0.0:9")).unwrap();
    let c = net.socket(a, Domain::Inet, Kind::Dgram);
    net.partition(&[b], &[a], true);
    net.send_to(c, b"in", Some(addr("127.77.0.2:9")), 0)
        .unwrap();
    net.send_to(u, b"out", Some(addr("127.77.0.1:40000")), 0)
        .unwrap();
    settle(&mut net, 0);
    assert_eq!(net.recv(u, 10, false).unwrap().data, b"in");
    assert_eq!(net.recv(c, 10, false), Err(NetError::WouldBlock));
    let drops: Vec<_> = net.drain_events().iter().map(|e| e.dropped).collect();
    assert!(drops.contains(&Some(DropReason::Partition)));
    assert!(drops.contains(&None));
}

/// A lossy link loses transmissions of stream segments, never the bytes:
/// they arrive in order, later (each loss costs a retransmission timeout).
#[test]
fn stream_loss_delays_segments_and_keeps_them_in_order() {
    let lossy = vnet::LinkParams {
        stream_loss: 0.5,
        ..vnet::LinkParams::default()
    };
    let (mut net, a, b) = two_hosts(32, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    net.set_link(a, b, lossy).unwrap();
    for i in 0..50u8 {
        net.send(c, &[i], now).unwrap();
    }
    let end = settle(&mut net, now);
    assert_eq!(read_all(&mut net, s), (0..50).collect::<Vec<u8>>());
    let interval = NetConfig::default().retransmit_interval;
    assert!(
        end >= now + interval,
        "some segment was resent: the last arrived {}ms after sending",
        (end - now) / MS
    );
    let events = net.drain_events();
    assert!(events.iter().all(|e| e.dropped.is_none()), "{events:?}");
}

/// With every transmission lost, the sender gives up after the retransmit
/// timeout (ETIMEDOUT), as across a partition.
#[test]
fn a_link_losing_every_segment_times_the_stream_out() {
    let (mut net, a, b) = two_hosts(33, NetConfig::default());
    let l = listener(&mut net, b, 80);
    let (c, _s, now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    let dead = vnet::LinkParams {
        stream_loss: 1.0,
        ..vnet::LinkParams::default()
    };
    net.set_link(a, b, dead).unwrap();
    net.send(c, b"never", now).unwrap();
    let end = settle(&mut net, now);
    let timeout = NetConfig::default().retransmit_timeout;
    assert!(
        end >= now + timeout && end <= now + timeout + 5 * MS,
        "{end}"
    );
    assert_eq!(net.send(c, b"x", end), Err(NetError::TimedOut));
}
