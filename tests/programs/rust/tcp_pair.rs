//! std::net TCP on one host: a TcpListener on 127.0.0.1:0 (an ephemeral
//! port) and CLIENTS client threads that each connect, send three lines,
//! read each echo, half-close and read the server's EOF. The server thread
//! accepts CLIENTS connections and serves each on its own thread. A connect to
//! a port nobody listens on must be refused first.
//!
//! Only the main thread prints, after joining everything, so the output does
//! not depend on the interleaving (beyond the port, which must still be the
//! same on every run of a seed):
//!
//! ```text
//! port <ephemeral port>
//! refused: ConnectionRefused
//! client 0: echo client 0 says 1
//! ...
//! client 0: eof
//! ...
//! server: 3 connections 9 lines, peers match clients: yes
//! ```
//!
//! Usage: tcp_pair [CLIENTS=3]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::thread;

const LINES: usize = 3;

fn serve(stream: TcpStream) -> usize {
    let mut writer = stream.try_clone().expect("clone accepted stream");
    let mut lines = 0;
    for line in BufReader::new(stream).lines() {
        let line = line.expect("server read");
        writer
            .write_all(format!("echo {line}\n").as_bytes())
            .expect("server write");
        lines += 1;
    }
    lines
}

fn client(id: usize, server: SocketAddr) -> (SocketAddr, Vec<String>) {
    let stream = TcpStream::connect(server).expect("connect");
    stream.set_nodelay(true).expect("TCP_NODELAY");
    assert_eq!(stream.peer_addr().expect("peer_addr"), server);
    let local = stream.local_addr().expect("local_addr");
    let mut writer = stream.try_clone().expect("clone client stream");
    let mut reader = BufReader::new(stream);
    let mut out = Vec::new();
    for n in 1..=LINES {
        writer
            .write_all(format!("client {id} says {n}\n").as_bytes())
            .expect("client write");
        let mut reply = String::new();
        reader.read_line(&mut reply).expect("client read");
        out.push(reply.trim_end().to_owned());
    }
    writer.shutdown(Shutdown::Write).expect("shutdown(Write)");
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).expect("read to EOF");
    out.push(if rest.is_empty() {
        "eof".into()
    } else {
        format!("{} stray bytes", rest.len())
    });
    (local, out)
}

fn main() {
    let clients: usize = std::env::args()
        .nth(1)
        .map_or(3, |a| a.parse().expect("CLIENTS is a number"));

    let closed = TcpListener::bind("127.0.0.1:0").expect("bind probe");
    let closed_addr = closed.local_addr().expect("probe addr");
    drop(closed);

    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let server_addr = listener.local_addr().expect("local_addr");
    println!("port {}", server_addr.port());
    match TcpStream::connect(closed_addr) {
        Ok(_) => println!("refused: connected"),
        Err(e) => println!("refused: {:?}", e.kind()),
    }

    let server = thread::spawn(move || {
        let mut peers = BTreeSet::new();
        let mut handlers = Vec::new();
        for _ in 0..clients {
            let (stream, peer) = listener.accept().expect("accept");
            assert_eq!(stream.peer_addr().expect("accepted peer_addr"), peer);
            peers.insert(peer);
            handlers.push(thread::spawn(move || serve(stream)));
        }
        let lines: usize = handlers
            .into_iter()
            .map(|h| h.join().expect("handler"))
            .sum();
        (peers, lines)
    });
    let workers: Vec<_> = (0..clients)
        .map(|id| thread::spawn(move || client(id, server_addr)))
        .collect();
    let results: Vec<_> = workers
        .into_iter()
        .map(|w| w.join().expect("client"))
        .collect();
    let (peers, lines) = server.join().expect("server");

    let locals: BTreeSet<SocketAddr> = results.iter().map(|(local, _)| *local).collect();
    for (id, (_, out)) in results.iter().enumerate() {
        for line in out {
            println!("client {id}: {line}");
        }
    }
    println!(
        "server: {} connections {lines} lines, peers match clients: {}",
        peers.len(),
        if peers == locals { "yes" } else { "no" }
    );
}
