//! A seed's fault log (`faults.json`): every fault that happened, in order,
//! read back so tests can assert on what the plan did and when.

use serde::Deserialize;

use crate::scenario::ScenarioRun;

/// One entry of faults.json.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct FaultEntry {
    /// Virtual ns it happened at.
    pub t: u64,
    /// Its kind: crash, restart, pause, resume, link, link_normal, ...
    pub kind: String,
    /// The node (or group label) it concerns.
    pub node: String,
    /// What it did, in words.
    pub detail: String,
}

impl ScenarioRun {
    /// The fault log of `seed` (panics with context if it is missing or malformed).
    #[track_caller]
    pub fn faults(&self, seed: u64) -> Vec<FaultEntry> {
        let path = self.seed_dir(seed).join("faults.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}\n{self}", path.display()));
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not a fault log: {e}\n{self}", path.display()))
    }

    /// The entries of `seed`'s fault log of one `kind`.
    #[track_caller]
    pub fn faults_of(&self, seed: u64, kind: &str) -> Vec<FaultEntry> {
        self.faults(seed)
            .into_iter()
            .filter(|f| f.kind == kind)
            .collect()
    }
}

/// How many nodes were down (crashed, killed or paused) at once at most,
/// replaying the log's starts and ends of outages in order.
pub fn most_down_at_once(faults: &[FaultEntry]) -> usize {
    let mut down: Vec<&str> = Vec::new();
    let mut most = 0;
    for f in faults {
        match f.kind.as_str() {
            "crash" | "kill" | "pause" if !down.contains(&f.node.as_str()) => down.push(&f.node),
            "restart" | "resume" => down.retain(|n| *n != f.node),
            _ => {}
        }
        most = most.max(down.len());
    }
    most
}
