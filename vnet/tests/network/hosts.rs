//! Host naming and addressing.

use vnet::{HostError, NetConfig, Network};

#[test]
fn hosts_get_consecutive_addresses_and_names() {
    let mut net = Network::new(0, NetConfig::default());
    let n1 = net.add_host("n1").unwrap();
    let n2 = net.add_host("etcd-2").unwrap();
    assert_eq!(net.host_addr(n1).to_string(), "127.77.0.1");
    assert_eq!(net.host_addr(n2).to_string(), "127.77.0.2");
    assert_eq!((n1.index(), net.host_name(n2)), (0, "etcd-2"));
    assert_eq!(net.resolve("ETCD-2."), Some(net.host_addr(n2)));
    assert_eq!(
        net.resolve("localhost").map(|ip| ip.is_loopback()),
        Some(true)
    );
    assert_eq!(net.resolve("example.com"), None);
    assert_eq!(
        net.hosts_file(),
        "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n\
         127.77.0.1\tn1\n127.77.0.2\tetcd-2\n"
    );
    assert_eq!(
        net.add_host("N1"),
        Err(HostError::DuplicateName("N1".into()))
    );
    for bad in ["", "two words", "localhost"] {
        assert_eq!(net.add_host(bad), Err(HostError::InvalidName(bad.into())));
    }
}
