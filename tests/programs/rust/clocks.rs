//! SystemTime and Instant readings around long thread::sleep calls: three
//! threads sleep 3, 1 and 2 units (default unit: one hour) and report when
//! they wake; the main thread prints the wake order and elapsed times.
//! Usage: clocks [unit_ms=3600000]

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn main() {
    let unit_ms: u64 = std::env::args()
        .nth(1)
        .map_or(3_600_000, |a| a.parse().expect("unit_ms must be an integer"));
    let unit = Duration::from_millis(unit_ms);

    let wall0 = SystemTime::now();
    let mono0 = Instant::now();
    let since_epoch = wall0.duration_since(UNIX_EPOCH).expect("clock before 1970");
    println!("systemtime {}.{:09}", since_epoch.as_secs(), since_epoch.subsec_nanos());

    let (tx, rx) = mpsc::channel();
    let sleepers: Vec<_> = [3u32, 1, 2]
        .into_iter()
        .map(|units| {
            let tx = tx.clone();
            thread::spawn(move || {
                thread::sleep(unit * units);
                tx.send(units).unwrap();
            })
        })
        .collect();
    drop(tx);
    for units in rx {
        println!("woke {units} at {:.3}", mono0.elapsed().as_secs_f64() / unit.as_secs_f64());
    }
    for sleeper in sleepers {
        sleeper.join().unwrap();
    }

    let wall1 = SystemTime::now();
    println!("instant_elapsed {:.6}", mono0.elapsed().as_secs_f64());
    let wall_elapsed = wall1.duration_since(wall0).expect("SystemTime went backwards");
    println!("systemtime_elapsed {:.6}", wall_elapsed.as_secs_f64());
}
