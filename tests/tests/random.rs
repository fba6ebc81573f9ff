//! Randomness comes from the seed: getrandom, /dev/urandom, /dev/random,
//! AT_RANDOM, and what runtimes build on them (Rust's RandomState).

use faultline_e2e::checks::{assert_all_distinct, assert_seeds_vary, per_seed, run_twice, SEEDS};
use faultline_e2e::output::{value, words};
use faultline_e2e::{per_linkage, Exec, Program};

/// The lines of the C random program, one per source of randomness.
const SOURCES: [&str; 5] = [
    "getrandom",
    "getrandom_nonblock",
    "urandom",
    "random",
    "at_random",
];

fn c_random_is_seeded(program: Program) {
    let exec = Exec::program(program);
    let run = run_twice(&exec.clone().seed(5));
    run.expect_success();
    let values: Vec<String> = SOURCES.iter().map(|key| value(run.out(), key)).collect();
    for (key, hex) in SOURCES.iter().zip(&values) {
        assert!(
            hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{key} printed {hex:?}\n{run}"
        );
        assert_ne!(hex, &"0".repeat(32), "{key} gave all-zero bytes\n{run}");
    }
    assert_all_distinct(&values, "bytes from the different sources");

    let outputs = per_seed(&exec, str::to_owned);
    for key in SOURCES {
        let per_seed_values: Vec<String> = outputs.iter().map(|out| value(out, key)).collect();
        assert_all_distinct(&per_seed_values, &format!("{key} bytes of seeds {SEEDS:?}"));
    }
}
per_linkage!(c_random_is_seeded, Program::c("random"), c_random_is_seeded);

fn rust_hashmap_order_follows_seed(program: Program) {
    let exec = Exec::program(program);
    let run = run_twice(&exec.clone().seed(5));
    run.expect_success();
    let mut keys = words(run.out(), "map");
    keys.sort_unstable();
    let expected: Vec<String> = (0..16).map(|i| format!("key{i:02}")).collect();
    assert_eq!(
        keys, expected,
        "HashMap iteration lost or invented keys\n{run}"
    );
    assert_seeds_vary(&exec, |out| words(out, "map").join(" "));
}
per_linkage!(
    rust_hashmap_order_follows_seed,
    Program::rust("hashmap"),
    rust_hashmap_order_follows_seed
);
