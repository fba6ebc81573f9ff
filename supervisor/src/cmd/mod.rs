//! Command-line verbs: each file is one verb of the `faultline` binary, or
//! one part of `run` (a seed, its terminal output, the -j workers).

pub mod check_history;
pub mod cli;
pub mod ddmin;
pub mod exec;
pub mod links;
pub mod merge;
pub mod parallel;
pub mod recheck;
pub mod replay;
pub mod results;
pub mod run;
pub mod seed;
pub mod seeds;
pub mod settings;
pub mod shrink;
pub mod verdict;
