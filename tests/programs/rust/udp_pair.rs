//! std::net UDP on one host: two UdpSockets on 127.0.0.1:0. A sends ROUNDS
//! "ping I" datagrams to B with send_to; B's thread answers each with
//! "pong I" to the sender address it got from recv_from. Then both connect()
//! to each other and exchange with send/recv, B peeks a datagram before
//! reading it, a datagram larger than the buffer is truncated, and a recv
//! with a 200 ms read timeout on an idle socket times out.
//!
//! ```text
//! ports distinct: yes
//! a got pong 1 from b
//! ...
//! b saw 3 of 3 pings from a
//! b got hello from a (connected)
//! a got world from b (connected)
//! b peeked 5 bytes: peek!, then read 5 bytes: peek!
//! b read 4 of 1000 bytes
//! a recv timeout after 0.2s: WouldBlock
//! ```
//!
//! Usage: udp_pair [ROUNDS=3]

use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

fn name(addr: SocketAddr, a: SocketAddr, b: SocketAddr) -> String {
    if addr == a {
        "a".into()
    } else if addr == b {
        "b".into()
    } else {
        addr.to_string()
    }
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(3, |a| a.parse().expect("ROUNDS is a number"));
    let a = UdpSocket::bind("127.0.0.1:0").expect("bind a");
    let b = UdpSocket::bind("127.0.0.1:0").expect("bind b");
    let (a_addr, b_addr) = (
        a.local_addr().expect("a addr"),
        b.local_addr().expect("b addr"),
    );
    for s in [&a, &b] {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("read timeout");
    }
    println!(
        "ports distinct: {}",
        if a_addr.port() != b_addr.port() && a_addr.port() != 0 {
            "yes"
        } else {
            "no"
        }
    );

    let b_thread = b.try_clone().expect("clone b");
    let echo = thread::spawn(move || {
        let mut buf = [0u8; 64];
        let mut from_a = 0;
        for _ in 0..rounds {
            let (n, src) = b_thread.recv_from(&mut buf).expect("b recv_from");
            from_a += usize::from(src == a_addr);
            let text = String::from_utf8_lossy(&buf[..n]).replace("ping", "pong");
            b_thread.send_to(text.as_bytes(), src).expect("b send_to");
        }
        from_a
    });
    let mut buf = [0u8; 2048];
    for i in 1..=rounds {
        a.send_to(format!("ping {i}").as_bytes(), b_addr)
            .expect("a send_to");
        let (n, src) = a.recv_from(&mut buf).expect("a recv_from");
        println!(
            "a got {} from {}",
            String::from_utf8_lossy(&buf[..n]),
            name(src, a_addr, b_addr)
        );
    }
    let from_a = echo.join().expect("echo thread");
    println!("b saw {from_a} of {rounds} pings from a");

    a.connect(b_addr).expect("a connect");
    b.connect(a_addr).expect("b connect");
    a.send(b"hello").expect("a send");
    let n = b.recv(&mut buf).expect("b recv");
    println!(
        "b got {} from a (connected)",
        String::from_utf8_lossy(&buf[..n])
    );
    b.send(b"world").expect("b send");
    let n = a.recv(&mut buf).expect("a recv");
    println!(
        "a got {} from b (connected)",
        String::from_utf8_lossy(&buf[..n])
    );

    a.send(b"peek!").expect("a send peek");
    let peeked = b.peek(&mut buf).expect("b peek");
    let peeked_text = String::from_utf8_lossy(&buf[..peeked]).into_owned();
    let n = b.recv(&mut buf).expect("b recv after peek");
    println!(
        "b peeked {peeked} bytes: {peeked_text}, then read {n} bytes: {}",
        String::from_utf8_lossy(&buf[..n])
    );

    a.send(&[b'x'; 1000]).expect("a send big");
    let mut small = [0u8; 4];
    let n = b.recv(&mut small).expect("b recv small");
    println!("b read {n} of 1000 bytes");

    a.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("short timeout");
    let start = Instant::now();
    let err = a.recv(&mut buf).expect_err("nothing was sent to a");
    println!(
        "a recv timeout after {:.1}s: {:?}",
        start.elapsed().as_secs_f64(),
        err.kind()
    );
}
