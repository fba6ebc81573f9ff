//! `kvclient --server HOST:PORT --puts N [--history FILE]`: puts `k<i>=v<i>`
//! for i in 0..N, retrying each until the server acknowledges it, and every
//! 10 puts and at the end reads back every acknowledged key. The crash-test
//! oracle: a key that was acknowledged but reads back as `NONE` (or another
//! value) was lost by the server.
//!
//! Exit status: 0 all acknowledged puts present, 2 a put was lost, 1 any
//! other failure (usage, server unreachable for 30 s, history file).

mod clock;
mod conn;
mod history;

use std::process::exit;

use kvserver::args::Flags;

use clock::monotonic_ns;
use conn::{Conn, GaveUp};
use history::History;

const USAGE: &str = "usage: kvclient --server HOST:PORT --puts N [--history FILE]";

/// Acknowledged puts are read back after every this many puts.
const VERIFY_EVERY: usize = 10;

/// Why the client stopped early.
enum Failure {
    /// An acknowledged put is gone: the message to print.
    Lost(String),
    /// Anything else.
    Other(String),
}

impl From<GaveUp> for Failure {
    fn from(GaveUp(e): GaveUp) -> Failure {
        Failure::Other(format!("server unreachable for 30 s, giving up: {e}"))
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::Other(format!("history: {e}"))
    }
}

fn main() {
    let result = parse_args().map_err(|e| Failure::Other(format!("{e}\n{USAGE}")));
    match result.and_then(|(server, puts, history)| run(&server, puts, history.as_deref())) {
        Ok(puts) => println!("done: {puts} acknowledged, all present"),
        Err(Failure::Lost(message)) => {
            println!("{message}");
            eprintln!("kvclient: {message}");
            exit(2);
        }
        Err(Failure::Other(message)) => {
            eprintln!("kvclient: {message}");
            exit(1);
        }
    }
}

fn parse_args() -> Result<(String, usize, Option<String>), String> {
    let flags = Flags::parse(
        std::env::args().skip(1),
        &["--server", "--puts", "--history"],
    )?;
    let server = flags.required("--server")?.to_owned();
    let puts = flags.required("--puts")?;
    let puts = puts.parse().map_err(|e| format!("--puts {puts:?}: {e}"))?;
    Ok((server, puts, flags.get("--history").map(str::to_owned)))
}

/// Runs the workload; returns the number of acknowledged puts.
fn run(server: &str, puts: usize, history: Option<&str>) -> Result<usize, Failure> {
    let mut conn = Conn::new(server);
    let mut history = History::open(history)?;
    let mut acked = Vec::with_capacity(puts);
    for i in 0..puts {
        let (key, value) = (format!("k{i}"), format!("v{i}"));
        let invoke = monotonic_ns();
        let reply = conn.call(&format!("PUT {key} {value}"))?;
        if reply != "OK" {
            return Err(Failure::Other(format!(
                "PUT {key}: unexpected reply {reply:?}"
            )));
        }
        history.put(&key, &value, invoke, monotonic_ns())?;
        println!("acked {key}");
        acked.push(i);
        if (i + 1) % VERIFY_EVERY == 0 || i + 1 == puts {
            verify(&mut conn, &mut history, &acked)?;
        }
    }
    Ok(acked.len())
}

/// Reads back every acknowledged put.
fn verify(conn: &mut Conn, history: &mut History, acked: &[usize]) -> Result<(), Failure> {
    for i in acked {
        let key = format!("k{i}");
        let invoke = monotonic_ns();
        let reply = conn.call(&format!("GET {key}"))?;
        let read = match reply.as_str() {
            "NONE" => None,
            _ => match reply.strip_prefix("VALUE ") {
                Some(value) => Some(value),
                None => {
                    return Err(Failure::Other(format!(
                        "GET {key}: unexpected reply {reply:?}"
                    )))
                }
            },
        };
        history.get(&key, read, invoke, monotonic_ns())?;
        if read != Some(format!("v{i}").as_str()) {
            return Err(Failure::Lost(format!(
                "LOST {key}: acknowledged but server returned {reply}"
            )));
        }
    }
    Ok(())
}
