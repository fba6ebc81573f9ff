//! One client of the workload: until the deadline, a put or a get of a
//! random key on a random member, one at a time, each recorded.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::args::Args;
use crate::clock;
use crate::history::{History, Outcome, Record};
use crate::ops::Members;

/// How a client's operations ended.
#[derive(Default, Debug)]
pub struct Counts {
    /// Took effect / read a value.
    pub ok: usize,
    /// Certainly did not take effect.
    pub fail: usize,
    /// May have taken effect.
    pub unknown: usize,
}

impl Counts {
    /// Adds another client's counts.
    pub fn add(&mut self, other: &Counts) {
        self.ok += other.ok;
        self.fail += other.fail;
        self.unknown += other.unknown;
    }
}

/// The operations the clients may still start (`--ops`), shared by them.
pub struct Budget(AtomicU64);

impl Budget {
    /// `ops` operations in all; 0 for no limit.
    pub fn new(ops: u64) -> Budget {
        Budget(AtomicU64::new(if ops == 0 { u64::MAX } else { ops }))
    }

    /// Takes one operation; false when none is left.
    fn take(&self) -> bool {
        self.0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }
}

/// Runs client `process` (1-based) until `deadline` (monotonic ns) or
/// until `budget` runs out.
pub async fn run(
    process: u32,
    args: &Args,
    history: &History,
    budget: &Budget,
    deadline: u64,
) -> Counts {
    let mut rng =
        Rng::new(clock::now_ns() ^ u64::from(process).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut members = Members::new(&args.endpoints);
    let mut counts = Counts::default();
    let mut seq = 0;
    while clock::now_ns() < deadline && budget.take() {
        let member = rng.below(members.len());
        let key = format!("k{}", rng.below(args.keys as usize));
        let is_put = rng.below(2) == 0;
        seq += 1;
        let value = format!("v{}-{seq}", process - 1);
        let invoke = clock::now_ns();
        let outcome = if is_put {
            members.put(member, &key, &value).await
        } else {
            members.get(member, &key, args.serializable_reads).await
        };
        history.record(&Record {
            process,
            put: is_put.then_some(value.as_str()),
            key: &key,
            invoke,
            complete: clock::now_ns(),
            outcome: &outcome,
        });
        match outcome {
            Outcome::Ok(_) => counts.ok += 1,
            Outcome::Fail => counts.fail += 1,
            Outcome::Unknown => counts.unknown += 1,
        }
        if !matches!(outcome, Outcome::Ok(_)) {
            // Back off a little before retrying elsewhere.
            let pause = 50 + rng.below(100) as u64;
            tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        }
    }
    counts
}

/// xorshift64: the client's choices, seeded from the (virtual) clock, so a
/// seed's run makes the same choices.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// Uniform-ish in [0, n).
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}
