//! Command-line verbs: each file is one verb of the `faultline` binary.

pub mod check_history;
pub mod cli;
pub mod exec;
pub mod merge;
pub mod parallel;
pub mod replay;
pub mod results;
pub mod run;
pub mod seeds;
