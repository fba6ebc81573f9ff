//! std::thread with Mutex, Condvar and mpsc: four workers wait on a start
//! gate (Condvar), then append their id to a shared log under a Mutex,
//! yielding between appends, and report completion over an mpsc channel.
//! Prints the log interleaving, the completion order and per-worker counts.

use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;

const WORKERS: usize = 4;
const ITERATIONS: usize = 25;

fn main() {
    let log = Arc::new(Mutex::new(String::new()));
    let gate = Arc::new((Mutex::new(false), Condvar::new()));
    let (done_tx, done_rx) = mpsc::channel();

    let handles: Vec<_> = (0..WORKERS)
        .map(|id| {
            let (log, gate, done_tx) = (Arc::clone(&log), Arc::clone(&gate), done_tx.clone());
            thread::spawn(move || {
                let (open, opened) = &*gate;
                let mut is_open = open.lock().unwrap();
                while !*is_open {
                    is_open = opened.wait(is_open).unwrap();
                }
                drop(is_open);
                for _ in 0..ITERATIONS {
                    log.lock().unwrap().push(char::from(b'0' + id as u8));
                    thread::yield_now();
                }
                done_tx.send(id).unwrap();
            })
        })
        .collect();
    drop(done_tx);

    let (open, opened) = &*gate;
    *open.lock().unwrap() = true;
    opened.notify_all();

    let finished: Vec<String> = done_rx.iter().map(|id| id.to_string()).collect();
    for handle in handles {
        handle.join().unwrap();
    }
    let log = log.lock().unwrap();
    println!("order {log}");
    println!("finished {}", finished.join(" "));
    let counts: Vec<String> = (0..WORKERS)
        .map(|id| log.chars().filter(|&c| c == char::from(b'0' + id as u8)).count().to_string())
        .collect();
    println!("counts {}", counts.join(" "));
}
