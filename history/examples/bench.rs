//! Times the checker on generated histories of 10k and 100k operations by
//! 10 and 50 clients (the tests never assert on wall time). Run with
//! `cargo run --release -p faultline-history --example bench`; `scripts/bench`
//! runs it first.

use std::time::Instant;

use history::generate::{generate, Workload};
use history::{check, parse_history, to_json_lines, Verdict};

fn main() {
    for (clients, keys, operations) in [
        (10, 10, 10_000),
        (50, 10, 10_000),
        (10, 10, 100_000),
        (50, 10, 100_000),
        (10, 1, 10_000),
        (10, 100, 100_000),
    ] {
        let workload = Workload {
            seed: 1,
            clients,
            keys,
            operations,
        };
        let ops = generate(&workload);
        let text = to_json_lines(&ops);
        let start = Instant::now();
        let parsed = parse_history(&text).expect("generated histories parse");
        let parse_time = start.elapsed();
        let start = Instant::now();
        let verdict = check(&parsed);
        let check_time = start.elapsed();
        assert_eq!(verdict, Verdict::Linearizable, "{verdict:?}");
        println!(
            "{operations} ops, {clients} clients, {keys} keys: parse {parse_time:?}, check {check_time:?}"
        );
    }
}
