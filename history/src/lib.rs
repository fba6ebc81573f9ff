//! Linearizability checker for faultline's key-value client histories.
//!
//! A workload client records every operation it issues (put, get, cas,
//! delete) with the virtual times of its request and reply and whether it
//! took effect; [`check_file`] then decides whether some single order of
//! the operations, consistent with their real-time order, explains every
//! result. If not, the [`Violation`] names the key, the operation, the
//! virtual time and the operations involved, e.g.
//!
//! ```text
//! get k169 returned nothing but put k169="v169" was acknowledged at t=5.810000000s
//! (completed before the get was invoked at t=5.873034010s)
//! ```
//!
//! The search is Wing–Gong with Lowe's memoization of (linearized set,
//! state), run per key (linearizability is compositional). The history
//! format (JSON lines, format 1) is described on [`Record`] and in the
//! crate's README.

mod check;
mod edn;
mod error;
mod explain;
mod format;
pub mod generate;
mod jepsen;
mod model;
mod op;
mod parse;
mod record;
mod search;
mod verdict;

pub use check::{check, check_file, check_with, Budget};
pub use error::HistoryError;
pub use format::{parse_as, read_history_as, Format};
pub use op::{Action, Element, Operation, Outcome, Seq};
pub use parse::{parse_history, read_history};
pub use record::{to_json_lines, CasValue, OpKind, Payload, Record, TextValue, FORMAT};
pub use verdict::{Verdict, Violation};
