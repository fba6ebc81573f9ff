//! One run's seed split into independent streams, one per component, in
//! this one place: a component that draws more or fewer numbers (a new
//! fault kind, a new scheduling policy) leaves every other stream as it
//! was, so runs stay comparable across such changes.

/// A seed written as text (a flag, report.json, a scenario's pinned
/// seeds) that is not a decimal or 0x-hex u64.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("seed {text:?} is not a decimal or 0x-hex 64-bit number")]
pub struct SeedTextError {
    /// The seed as written.
    pub text: String,
}

/// Parses a seed: decimal, or hexadecimal with a 0x prefix.
pub fn parse_seed(s: &str) -> Result<u64, SeedTextError> {
    let parsed = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| SeedTextError { text: s.into() })
}

/// The seeds of a run's random streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streams {
    /// Scheduling decisions (the policy's random choices).
    pub schedule: u64,
    /// Bytes the programs read: getrandom, /dev/urandom, AT_RANDOM.
    pub data: u64,
    /// The fault plan: crash times, down times.
    pub faults: u64,
    /// The network: message delays and losses.
    pub net: u64,
    run: u64,
}

impl Streams {
    /// Splits `seed`.
    pub fn split(seed: u64) -> Streams {
        Streams {
            schedule: seed,
            data: seed ^ 0x5eed_da7a_0000_0001,
            faults: seed ^ 0xfa17_9a1a_0000_0003,
            net: seed ^ 0x6e65_7477_6f72_6b00,
            run: seed,
        }
    }

    /// The stream of `[[fault]]` entry `index` (every random planner but
    /// the crash one, which keeps `faults`): by position, so an entry's plan
    /// does not change when another entry draws more.
    pub fn fault_entry(&self, index: usize) -> u64 {
        self.faults ^ crate::sim::trace::hash_bytes(format!("fault-entry-{index}").as_bytes())
    }

    /// The stream that picks which entries a seed enables (`swarm`).
    pub fn swarm(&self) -> u64 {
        self.faults ^ 0x5a4a_7d00_0000_0005
    }

    /// The stream of node `name`'s disk (torn writes, lost changes,
    /// injected errors): by name, so adding a node leaves the others' alone.
    pub fn disk(&self, name: &str) -> u64 {
        self.run ^ crate::sim::trace::hash_bytes(name.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_from_each_other_and_by_seed() {
        let s = Streams::split(7);
        let all = [
            s.schedule,
            s.data,
            s.faults,
            s.net,
            s.disk("a"),
            s.disk("b"),
        ];
        for (i, x) in all.iter().enumerate() {
            for y in &all[i + 1..] {
                assert_ne!(x, y);
            }
        }
        assert_ne!(Streams::split(8).data, s.data);
        assert_eq!(Streams::split(7), s);
    }
}
