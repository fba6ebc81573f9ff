//! Datagram sockets: addressing, truncation, reordering, loss.

use vnet::{
    ConnectProgress, Domain, DropReason, Kind, LinkParams, NetConfig, NetError, Network, Shutdown,
    SocketId,
};

use crate::common::{addr, settle, two_hosts, MS};

/// A datagram socket on `host` bound to `0.0.0.0:port`.
fn udp(net: &mut Network, host: vnet::HostId, port: u16) -> SocketId {
    let u = net.socket(host, Domain::Inet, Kind::Dgram);
    net.bind(u, addr(&format!("0.0.0.0:{port}"))).unwrap();
    u
}

/// The payloads queued on `sock`, in arrival order.
fn received(net: &mut Network, sock: SocketId) -> Vec<Vec<u8>> {
    std::iter::from_fn(|| net.recv(sock, 1500, false).ok().map(|r| r.data)).collect()
}

#[test]
fn datagrams_carry_their_source_and_truncate() {
    let (mut net, a, b) = two_hosts(20, NetConfig::default());
    let server = udp(&mut net, b, 53);
    let client = net.socket(a, Domain::Inet, Kind::Dgram);
    assert_eq!(
        net.send_to(client, b"question", Some(addr("127.77.0.2:53")), 0),
        Ok(8)
    );
    assert_eq!(net.local_addr(client).unwrap(), addr("0.0.0.0:40000"));
    assert_eq!(net.recv(server, 100, false), Err(NetError::WouldBlock));
    let now = settle(&mut net, 0);
    assert!(net.readiness(server).unwrap().readable);
    assert_eq!(net.pending_bytes(server), Ok(8));
    let peeked = net.recv(server, 100, true).unwrap();
    let got = net.recv(server, 4, false).unwrap();
    assert_eq!(peeked.data, b"question");
    assert_eq!((got.data.as_slice(), got.full_len), (&b"ques"[..], 8));
    assert_eq!(got.from, Some(addr("127.77.0.1:40000")));

    net.send_to(server, b"answer", got.from, now).unwrap();
    settle(&mut net, now);
    assert_eq!(received(&mut net, client), [b"answer".to_vec()]);
    assert_eq!(net.send(client, b"x", now), Err(NetError::DestAddrRequired));
    let huge = vec![0u8; 70_000];
    assert_eq!(
        net.send_to(client, &huge, Some(addr("127.77.0.2:53")), now),
        Err(NetError::MessageTooLong)
    );
}

#[test]
fn datagrams_reorder_for_some_seed() {
    let reordered = (0..10).any(|seed| {
        let (mut net, a, b) = two_hosts(seed, NetConfig::default());
        let server = udp(&mut net, b, 9000);
        let client = net.socket(a, Domain::Inet, Kind::Dgram);
        for i in 0..10u8 {
            net.send_to(client, &[i], Some(addr("127.77.0.2:9000")), 0)
                .unwrap();
        }
        settle(&mut net, 0);
        let order: Vec<u8> = received(&mut net, server).concat();
        assert_eq!(order.len(), 10, "no loss configured");
        order.windows(2).any(|w| w[0] > w[1])
    });
    assert!(reordered);
}

#[test]
fn lossy_links_drop_some_datagrams() {
    let config = NetConfig {
        link: LinkParams {
            loss: 0.5,
            ..LinkParams::default()
        },
        ..NetConfig::default()
    };
    let (mut net, a, b) = two_hosts(21, config);
    let server = udp(&mut net, b, 9000);
    let client = net.socket(a, Domain::Inet, Kind::Dgram);
    for i in 0..200u8 {
        net.send_to(client, &[i], Some(addr("127.77.0.2:9000")), 0)
            .unwrap();
    }
    settle(&mut net, 0);
    let delivered = received(&mut net, server).len();
    let events = net.drain_events();
    let lost = events
        .iter()
        .filter(|e| e.dropped == Some(DropReason::Loss))
        .count();
    assert!(
        delivered > 50 && lost > 50,
        "{delivered} delivered, {lost} lost"
    );
    assert_eq!(delivered + lost, 200);
}

#[test]
fn per_link_parameters_override_the_default() {
    let (mut net, a, b) = two_hosts(22, NetConfig::default());
    let slow = LinkParams {
        delay_min: 40 * MS,
        delay_max: 40 * MS,
        ..LinkParams::default()
    };
    net.set_link(a, b, slow).unwrap();
    assert!(net
        .set_link(a, b, LinkParams { loss: 2.0, ..slow })
        .is_err());
    let server = udp(&mut net, b, 1);
    let client = net.socket(a, Domain::Inet, Kind::Dgram);
    net.send_to(client, b"x", Some(addr("127.77.0.2:1")), 0)
        .unwrap();
    assert_eq!(net.next_event_time(), Some(40 * MS));
    settle(&mut net, 0);
    assert_eq!(received(&mut net, server).len(), 1);
}

#[test]
fn connected_datagram_socket_learns_the_port_is_unreachable() {
    let (mut net, a, _) = two_hosts(23, NetConfig::default());
    let client = net.socket(a, Domain::Inet, Kind::Dgram);
    assert_eq!(
        net.connect(client, addr("127.77.0.2:4242"), 0),
        Ok(ConnectProgress::Connected)
    );
    assert_eq!(net.local_addr(client).unwrap(), addr("127.77.0.1:40000"));
    assert_eq!(net.peer_addr(client).unwrap(), addr("127.77.0.2:4242"));
    net.send(client, b"anyone?", 0).unwrap();
    settle(&mut net, 0);
    assert!(net.readiness(client).unwrap().err);
    assert_eq!(net.recv(client, 10, false), Err(NetError::ConnRefused));
    assert_eq!(net.recv(client, 10, false), Err(NetError::WouldBlock));
}

#[test]
fn shutdown_read_wakes_a_datagram_reader() {
    let (mut net, a, _) = two_hosts(24, NetConfig::default());
    let u = udp(&mut net, a, 5);
    assert!(!net.readiness(u).unwrap().readable);
    assert_eq!(
        net.shutdown(u, Shutdown::Read, 0),
        Err(NetError::NotConnected)
    );
    let changes = net.advance(0);
    assert!(changes
        .iter()
        .any(|c| c.socket == u && c.readiness.readable));
    assert_eq!(net.recv(u, 10, false).unwrap().data, b"");
}

#[test]
fn duplicating_links_deliver_some_datagrams_twice() {
    let config = NetConfig {
        link: LinkParams {
            duplicate: 0.5,
            ..LinkParams::default()
        },
        ..NetConfig::default()
    };
    let (mut net, a, b) = two_hosts(23, config);
    let server = udp(&mut net, b, 9000);
    let client = net.socket(a, Domain::Inet, Kind::Dgram);
    for i in 0..100u8 {
        net.send_to(client, &[i], Some(addr("127.77.0.2:9000")), 0)
            .unwrap();
    }
    settle(&mut net, 0);
    let mut got: Vec<u8> = received(&mut net, server).concat();
    got.sort_unstable();
    let twice = got.windows(2).filter(|w| w[0] == w[1]).count();
    got.dedup();
    assert_eq!(got, (0..100).collect::<Vec<u8>>(), "every datagram arrives");
    assert!((25..75).contains(&twice), "{twice} of 100 arrived twice");
}
