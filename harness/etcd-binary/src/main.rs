//! The etcd-binary harness's workload: a few client threads that put and get
//! keys through etcd's v3 JSON gateway (`/v3/kv/put`, `/v3/kv/range`) on any
//! node, with timeouts and retries, and append every operation to a
//! key-value history (JSON lines) for faultline's linearizability check.
//!
//! `--serializable-reads` is a bug switch: reads are served by any member
//! without a quorum (they may be stale) but recorded as linearizable ones.

mod args;
mod b64;
mod clock;
mod http;

use std::io::Write;
use std::sync::{Arc, Mutex};

use args::Args;

/// What one operation ended as, in the history's terms.
enum Outcome {
    /// It took effect (put) / it read this value (get).
    Ok(Option<String>),
    /// It certainly did not take effect.
    Fail,
    /// It may or may not have taken effect.
    Unknown,
}

fn main() {
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("etcd-workload: {e}");
            eprintln!("usage: etcd-workload --endpoints h1:p,h2:p [--duration 20s] [--clients 3] [--keys 5] [--history FILE] [--serializable-reads]");
            std::process::exit(2);
        }
    };
    let history = Arc::new(Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&args.history)
            .unwrap_or_else(|e| {
                eprintln!("etcd-workload: cannot open history {}: {e}", args.history);
                std::process::exit(2);
            }),
    ));
    let deadline = clock::now_ns() + args.duration_ns;
    let workers: Vec<_> = (0..args.clients)
        .map(|id| {
            let (args, history) = (args.clone(), Arc::clone(&history));
            std::thread::spawn(move || worker(id, &args, &history, deadline))
        })
        .collect();
    let mut counts = [0usize; 3];
    for w in workers {
        let c = w.join().expect("worker thread");
        for (total, n) in counts.iter_mut().zip(c) {
            *total += n;
        }
    }
    println!(
        "done: {} ok, {} failed, {} unknown",
        counts[0], counts[1], counts[2]
    );
}

/// One client: alternates puts and gets of random keys on random nodes.
fn worker(id: usize, args: &Args, history: &Mutex<std::fs::File>, deadline: u64) -> [usize; 3] {
    let mut rng = clock::now_ns() ^ (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut counts = [0usize; 3];
    let mut seq = 0;
    while clock::now_ns() < deadline {
        let endpoint = &args.endpoints[next(args.endpoints.len())];
        let key = format!("k{}", next(args.keys));
        let is_put = next(2) == 0;
        seq += 1;
        let value = format!("v{id}-{seq}");
        let invoke = clock::now_ns();
        let outcome = if is_put {
            put(endpoint, &key, &value)
        } else {
            get(endpoint, &key, args.serializable_reads)
        };
        let complete = clock::now_ns();
        let (outcome_name, recorded) = match &outcome {
            Outcome::Ok(read) => (
                "ok",
                if is_put {
                    Some(value.clone())
                } else {
                    read.clone()
                },
            ),
            Outcome::Fail => ("fail", is_put.then(|| value.clone())),
            Outcome::Unknown => ("unknown", is_put.then(|| value.clone())),
        };
        counts[match outcome {
            Outcome::Ok(_) => 0,
            Outcome::Fail => 1,
            Outcome::Unknown => 2,
        }] += 1;
        let line = serde_json::json!({
            "process": id + 1,
            "op": if is_put { "put" } else { "get" },
            "key": key,
            "value": recorded,
            "invoke": invoke,
            "complete": if matches!(outcome, Outcome::Unknown) { None } else { Some(complete) },
            "outcome": outcome_name,
        });
        let mut h = history.lock().expect("history lock");
        let _ = writeln!(h, "{line}");
        drop(h);
        if !matches!(outcome, Outcome::Ok(_)) {
            // Back off a little before retrying elsewhere.
            std::thread::sleep(std::time::Duration::from_millis(50 + next(100) as u64));
        }
    }
    counts
}

fn put(endpoint: &str, key: &str, value: &str) -> Outcome {
    let body = serde_json::json!({"key": b64::encode(key.as_bytes()), "value": b64::encode(value.as_bytes())});
    match http::post(endpoint, "/v3/kv/put", &body.to_string()) {
        Ok((200, text)) if !text.contains("\"error\"") => Outcome::Ok(None),
        // Refused before the request went out: it cannot have happened.
        Err(http::Error::Connect) => Outcome::Fail,
        // Sent, but no clear answer: it may have been applied.
        _ => Outcome::Unknown,
    }
}

fn get(endpoint: &str, key: &str, serializable: bool) -> Outcome {
    let body =
        serde_json::json!({"key": b64::encode(key.as_bytes()), "serializable": serializable});
    let Ok((200, text)) = http::post(endpoint, "/v3/kv/range", &body.to_string()) else {
        return Outcome::Fail;
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Outcome::Fail;
    };
    if v.get("error").is_some() {
        return Outcome::Fail;
    }
    let value = v["kvs"][0]["value"]
        .as_str()
        .and_then(b64::decode)
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    Outcome::Ok(value)
}
