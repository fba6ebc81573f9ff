//! The checker's answer.

use std::fmt;

use serde::Serialize;

use crate::op::time;

/// Whether a history is linearizable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    /// Every key's operations can be put in one order, consistent with
    /// their real-time order, that explains every result.
    Linearizable,
    /// Some key's cannot; the earliest such violation.
    Violation(Box<Violation>),
    /// The search budget ran out before an answer (and no key was found
    /// non-linearizable), so the run neither passes nor fails this check.
    Unknown {
        /// Which keys were undecided and why, for the report.
        reason: String,
    },
}

/// A point from which a key's history cannot be linearized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The key whose sub-history is not linearizable.
    pub key: String,
    /// Virtual time (ns) at which the violation is detected: the completion
    /// of [`Violation::op_index`], the earliest instant by which the
    /// operations seen so far admit no linearization.
    pub at: u64,
    /// Index in the history (the n-th record) of the operation that could
    /// not be placed; the runner maps it to its event number.
    pub op_index: usize,
    /// What went wrong, in terms of the operations, their values and times.
    pub explanation: String,
    /// History indices of the operations the explanation names (the
    /// smallest set shown to be unlinearizable), so a timeline can mark them.
    pub operations: Vec<usize>,
    /// Other keys whose sub-histories are not linearizable either.
    pub other_keys: Vec<String>,
}

impl fmt::Display for Violation {
    /// `at t=5.873034010s (operation 1455): get k169 returned ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at {} (operation {}): {}",
            time(self.at),
            self.op_index,
            self.explanation
        )?;
        if !self.other_keys.is_empty() {
            write!(
                f,
                " (also not linearizable: {})",
                self.other_keys.join(", ")
            )?;
        }
        Ok(())
    }
}
