//! Same seed and calls, same behaviour; another seed, other timings.

use vnet::{Domain, Kind, LinkParams, NetConfig, NetEvent, Shutdown};

use crate::common::{addr, connected, listener, read_all, settle, two_hosts, MS};

/// A little of everything: streams, lossy datagrams, a partition, a crash.
fn scenario(seed: u64) -> Vec<NetEvent> {
    let config = NetConfig {
        link: LinkParams {
            loss: 0.2,
            ..LinkParams::default()
        },
        ..NetConfig::default()
    };
    let (mut net, a, b) = two_hosts(seed, config);
    let l = listener(&mut net, b, 80);
    let (c, s, mut now) = connected(&mut net, a, "127.77.0.2:80", l, 0);
    let u = net.socket(b, Domain::Inet, Kind::Dgram);
    net.bind(u, addr("0.0.0.0:53")).unwrap();
    let q = net.socket(a, Domain::Inet, Kind::Dgram);
    for i in 0..20u8 {
        net.send(c, &[i; 100], now).unwrap();
        net.send_to(q, &[i], Some(addr("127.77.0.2:53")), now)
            .unwrap();
        if i == 10 {
            net.partition(&[a], &[b], false);
        }
        if i == 15 {
            net.heal();
        }
        now += 100 * MS;
        net.advance(now);
        read_all(&mut net, s);
    }
    net.shutdown(c, Shutdown::Write, now).unwrap();
    now = settle(&mut net, now);
    net.crash_host(b, now);
    settle(&mut net, now);
    net.drain_events()
}

#[test]
fn same_seed_gives_identical_event_logs() {
    let first = scenario(42);
    assert!(first.len() > 40);
    assert_eq!(first, scenario(42));
}

#[test]
fn different_seeds_give_different_event_logs() {
    assert_ne!(scenario(1), scenario(2));
}
