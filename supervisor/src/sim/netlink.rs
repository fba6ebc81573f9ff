//! A minimal rtnetlink responder: the answers to RTM_GETLINK and RTM_GETADDR
//! dumps that runtimes send to list network interfaces (Go's net.Interfaces,
//! glibc's getifaddrs). A simulated host has `lo` (127.0.0.1/8) and `eth0`
//! (its 127.77.0.N/16 address); nothing about the real host leaks.

use std::net::Ipv4Addr;

const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_MULTI: u16 = 2;
const RTM_NEWLINK: u16 = 16;
const RTM_GETLINK: u16 = 18;
const RTM_NEWADDR: u16 = 20;
const RTM_GETADDR: u16 = 22;
const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
const IFLA_MTU: u16 = 4;
const IFA_ADDRESS: u16 = 1;
const IFA_LOCAL: u16 = 2;
const IFA_LABEL: u16 = 3;
const IFF_UP: u32 = 0x1;
const IFF_BROADCAST: u32 = 0x2;
const IFF_LOOPBACK: u32 = 0x8;
const IFF_RUNNING: u32 = 0x40;
const IFF_MULTICAST: u32 = 0x1000;
const ARPHRD_ETHER: u16 = 1;
const ARPHRD_LOOPBACK: u16 = 772;
const RT_SCOPE_HOST: u8 = 254;

/// One interface of a simulated host.
struct Iface {
    index: i32,
    name: &'static str,
    kind: u16,
    flags: u32,
    mtu: u32,
    mac: [u8; 6],
    addr: Ipv4Addr,
    prefix: u8,
    scope: u8,
}

fn interfaces(host_addr: Ipv4Addr) -> [Iface; 2] {
    let o = host_addr.octets();
    [
        Iface {
            index: 1,
            name: "lo",
            kind: ARPHRD_LOOPBACK,
            flags: IFF_UP | IFF_LOOPBACK | IFF_RUNNING,
            mtu: 65536,
            mac: [0; 6],
            addr: Ipv4Addr::LOCALHOST,
            prefix: 8,
            scope: RT_SCOPE_HOST,
        },
        Iface {
            index: 2,
            name: "eth0",
            kind: ARPHRD_ETHER,
            flags: IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST,
            mtu: 1500,
            mac: [0x02, 0x00, o[0], o[1], o[2], o[3]],
            addr: host_addr,
            prefix: 16,
            scope: 0,
        },
    ]
}

fn pad4(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
}

fn attr(out: &mut Vec<u8>, kind: u16, data: &[u8]) {
    out.extend_from_slice(&((4 + data.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(data);
    pad4(out);
}

fn message(kind: u16, flags: u16, seq: u32, pid: u32, body: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(16 + body.len());
    m.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&pid.to_ne_bytes());
    m.extend_from_slice(body);
    pad4(&mut m);
    m
}

fn link(i: &Iface) -> Vec<u8> {
    let mut b = vec![0u8, 0];
    b.extend_from_slice(&i.kind.to_ne_bytes());
    b.extend_from_slice(&i.index.to_ne_bytes());
    b.extend_from_slice(&i.flags.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    attr(&mut b, IFLA_IFNAME, format!("{}\0", i.name).as_bytes());
    attr(&mut b, IFLA_MTU, &i.mtu.to_ne_bytes());
    attr(&mut b, IFLA_ADDRESS, &i.mac);
    b
}

fn address(i: &Iface) -> Vec<u8> {
    let mut b = vec![libc::AF_INET as u8, i.prefix, 0, i.scope];
    b.extend_from_slice(&(i.index as u32).to_ne_bytes());
    attr(&mut b, IFA_ADDRESS, &i.addr.octets());
    attr(&mut b, IFA_LOCAL, &i.addr.octets());
    attr(&mut b, IFA_LABEL, format!("{}\0", i.name).as_bytes());
    b
}

/// The reply to one request message (`request` starts with its nlmsghdr),
/// as the kernel would send it to port id `pid`; `None` if it is not a
/// netlink message at all.
pub fn reply(request: &[u8], host_addr: Ipv4Addr, pid: u32) -> Option<Vec<u8>> {
    if request.len() < 16 {
        return None;
    }
    let kind = u16::from_ne_bytes([request[4], request[5]]);
    let seq = u32::from_ne_bytes(request[8..12].try_into().ok()?);
    let ifaces = interfaces(host_addr);
    let mut out = Vec::new();
    match kind {
        RTM_GETLINK | RTM_GETADDR => {
            for i in &ifaces {
                let (k, body) = if kind == RTM_GETLINK {
                    (RTM_NEWLINK, link(i))
                } else {
                    (RTM_NEWADDR, address(i))
                };
                out.extend(message(k, NLM_F_MULTI, seq, pid, &body));
            }
            out.extend(message(
                NLMSG_DONE,
                NLM_F_MULTI,
                seq,
                pid,
                &0i32.to_ne_bytes(),
            ));
        }
        _ => {
            // Anything else is refused, quoting the request as the kernel does.
            let mut body = (-libc::EOPNOTSUPP).to_ne_bytes().to_vec();
            body.extend_from_slice(&request[..16]);
            out.extend(message(NLMSG_ERROR, 0, seq, pid, &body));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(mut b: &[u8]) -> Vec<(u16, usize)> {
        let mut out = Vec::new();
        while b.len() >= 16 {
            let len = u32::from_ne_bytes(b[0..4].try_into().unwrap()) as usize;
            out.push((u16::from_ne_bytes([b[4], b[5]]), len));
            b = &b[len.div_ceil(4) * 4..];
        }
        out
    }

    #[test]
    fn getlink_lists_lo_and_eth0_then_done() {
        let mut req = message(RTM_GETLINK, 0x301, 1, 0, &[0u8; 16]);
        req.truncate(32);
        let r = reply(&req, Ipv4Addr::new(127, 77, 0, 2), 7).unwrap();
        let kinds: Vec<u16> = messages(&r).iter().map(|m| m.0).collect();
        assert_eq!(kinds, vec![RTM_NEWLINK, RTM_NEWLINK, NLMSG_DONE]);
        assert!(r.windows(5).any(|w| w == b"eth0\0"));
        let addrs = reply(
            &message(RTM_GETADDR, 0x301, 1, 0, &[0u8; 8]),
            Ipv4Addr::new(127, 77, 0, 2),
            7,
        )
        .unwrap();
        assert!(addrs.windows(4).any(|w| w == [127, 77, 0, 2]));
        let other = reply(&message(99, 0, 1, 0, &[]), Ipv4Addr::LOCALHOST, 7).unwrap();
        assert_eq!(messages(&other)[0].0, NLMSG_ERROR);
    }
}
