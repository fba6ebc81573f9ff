//! Checking a whole history: one independent search per key.
//!
//! A key-value store is a set of independent registers, and
//! linearizability is local (P-compositional): the history is linearizable
//! exactly when each key's sub-history is. Splitting by key keeps every
//! search small, and lets a violation name its key.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::HistoryError;
use crate::explain::explain;
use crate::model::KeyHistory;
use crate::op::Operation;
use crate::parse::read_history;
use crate::search::{search, SearchResult};
use crate::verdict::{Verdict, Violation};

/// How much work the search may do before answering [`Verdict::Unknown`],
/// so a pathological history (say, hundreds of overlapping operations of
/// unknown outcome on one key) cannot hang a test run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Distinct (linearized set, value) configurations visited per key.
    /// Typical histories need about one per operation.
    pub max_states: usize,
}

impl Default for Budget {
    /// A million states per key: well under a second on typical histories
    /// of any length, and enough for heavy contention on a few keys.
    fn default() -> Self {
        Budget {
            max_states: 1_000_000,
        }
    }
}

/// Checks a history with the default [`Budget`].
pub fn check(ops: &[Operation]) -> Verdict {
    check_with(ops, Budget::default())
}

/// Checks a history: indices in the verdict are positions in `ops`.
pub fn check_with(ops: &[Operation], budget: Budget) -> Verdict {
    let mut by_key: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        by_key.entry(op.key.as_str()).or_default().push(i);
    }
    let mut violations: Vec<Violation> = Vec::new();
    let mut undecided: Vec<&str> = Vec::new();
    for (key, indices) in by_key {
        let history = KeyHistory::new(key, ops, &indices);
        match search(&history, budget.max_states) {
            SearchResult::Linearizable => {}
            SearchResult::Stuck(stuck) => violations.push(explain(ops, &history, &stuck)),
            SearchResult::GaveUp => undecided.push(key),
        }
    }
    violations.sort_by_key(|v| (v.at, v.op_index));
    let mut violations = violations.into_iter();
    if let Some(mut first) = violations.next() {
        first.other_keys = violations.map(|v| v.key).collect();
        return Verdict::Violation(Box::new(first));
    }
    if undecided.is_empty() {
        return Verdict::Linearizable;
    }
    Verdict::Unknown {
        reason: format!(
            "search budget of {} states per key exhausted on key(s) {}: too many overlapping operations to decide",
            budget.max_states,
            undecided.join(", ")
        ),
    }
}

/// Reads a history file and checks it with the default [`Budget`]: the
/// one call a CLI or the scenario runner needs.
pub fn check_file(path: impl AsRef<Path>) -> Result<Verdict, HistoryError> {
    Ok(check(&read_history(path)?))
}
