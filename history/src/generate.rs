//! Seeded synthetic histories of a correct key-value store.
//!
//! Tests and benchmarks of the checker (here and in the runner) need large
//! histories that are linearizable by construction. Each simulated client
//! issues operations back to back with random latencies, so operations of
//! different clients overlap; every operation takes effect at a random
//! instant inside its interval (or, for an outcome-unknown one, possibly
//! later or never), and results are computed by applying the effects to a
//! real map in that order. Every written value is unique (`v<n>`), so a
//! test can tamper with a read and know which write it points at.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::op::{Action, Operation, Outcome};

/// Shape of a generated history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// Seed of the generator: the same seed gives the same history.
    pub seed: u64,
    /// Concurrent clients (processes `0..clients`).
    pub clients: u64,
    /// Keys `k0..k<keys>`, chosen uniformly.
    pub keys: u64,
    /// Total operations.
    pub operations: usize,
}

const MS: u64 = 1_000_000;

#[derive(Debug, Clone, Copy)]
enum Kind {
    Get,
    Put,
    Cas,
    Delete,
}

/// Planned operation before results are known.
struct Planned {
    process: u64,
    key: String,
    kind: Kind,
    invoke: u64,
    complete: Option<u64>,
    /// When it takes effect; `None` = never (refused, or unknown and lost).
    effect_at: Option<u64>,
}

/// Generates a linearizable history of `workload`, sorted by invoke time.
/// About 40% gets, 35% puts, 15% cas, 10% deletes; 2% of operations time
/// out (outcome unknown, effect at any later time or never) and 1% are
/// refused (outcome fail, no effect).
pub fn generate(workload: &Workload) -> Vec<Operation> {
    let mut rng = ChaCha8Rng::seed_from_u64(workload.seed);
    let mut planned = plan(workload, &mut rng);
    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by_key(|&i| (planned[i].effect_at.unwrap_or(u64::MAX), i));
    let mut store: HashMap<String, String> = HashMap::new();
    let mut ops: Vec<Option<Operation>> = (0..planned.len()).map(|_| None).collect();
    for i in order {
        let op = &mut planned[i];
        let applies = op.effect_at.is_some();
        let current = store.get(&op.key).cloned();
        let fresh = format!("v{i}");
        // (action, whether it succeeded, the key's value after it)
        let (action, succeeded, after) = match op.kind {
            Kind::Get => (Action::Get(current.clone()), applies, current),
            Kind::Put => (Action::Put(fresh.clone()), applies, Some(fresh)),
            Kind::Delete => (Action::Delete, applies, None),
            Kind::Cas => {
                // Usually expect the current value (the cas applies),
                // sometimes one it does not hold (the cas fails).
                let expect = if rng.gen_bool(0.7) {
                    current.clone()
                } else {
                    Some(format!("v{}", rng.gen_range(0..=i)))
                };
                let matches = expect == current;
                (
                    Action::Cas {
                        expect,
                        new: fresh.clone(),
                    },
                    applies && matches,
                    Some(fresh),
                )
            }
        };
        if succeeded && !matches!(op.kind, Kind::Get) {
            match after {
                Some(v) => store.insert(op.key.clone(), v),
                None => store.remove(&op.key),
            };
        }
        let outcome = match (op.complete, succeeded) {
            (None, _) => Outcome::Unknown,
            (Some(_), true) => Outcome::Ok,
            (Some(_), false) => Outcome::Fail,
        };
        ops[i] = Some(Operation {
            process: op.process,
            key: std::mem::take(&mut op.key),
            action,
            invoke: op.invoke,
            complete: op.complete,
            outcome,
        });
    }
    let mut ops: Vec<Operation> = ops.into_iter().flatten().collect();
    ops.sort_by_key(|o| (o.invoke, o.process));
    ops
}

/// Each client's operations back to back: their kinds, keys, intervals
/// and effect instants.
fn plan(workload: &Workload, rng: &mut ChaCha8Rng) -> Vec<Planned> {
    let timeout = 10 * MS;
    let mut clock: Vec<u64> = (0..workload.clients)
        .map(|_| rng.gen_range(0..MS))
        .collect();
    (0..workload.operations)
        .map(|n| {
            let process = n as u64 % workload.clients;
            let invoke = clock[process as usize];
            let latency = rng.gen_range(MS / 2..5 * MS);
            let (complete, effect_at) = match rng.gen_range(0..100) {
                0..=1 => {
                    let lost = rng.gen_bool(0.5);
                    (None, (!lost).then(|| invoke + rng.gen_range(0..50 * MS)))
                }
                2 => (Some(invoke + latency), None),
                _ => (
                    Some(invoke + latency),
                    Some(invoke + rng.gen_range(0..=latency)),
                ),
            };
            clock[process as usize] = complete.unwrap_or(invoke + timeout) + rng.gen_range(0..MS);
            let kind = match rng.gen_range(0..100) {
                0..=39 => Kind::Get,
                40..=74 => Kind::Put,
                75..=89 => Kind::Cas,
                _ => Kind::Delete,
            };
            Planned {
                process,
                key: format!("k{}", rng.gen_range(0..workload.keys)),
                kind,
                invoke,
                complete,
                effect_at,
            }
        })
        .collect()
}
