//! Why a scenario file cannot be used: it cannot be read, or something in
//! it is wrong at a line and column. A problem that comes from another
//! parser (a duration, a size, a seed, the network's settings, a program
//! to launch) keeps that parser's error as its source.

use std::path::PathBuf;

use crate::cmd::cli::ValueError;
use crate::host::launch::LaunchError;
use crate::scenario::bytes::SizeError;
use crate::scenario::duration::DurationError;

/// Where in the file something went wrong, and what.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file cannot be read.
    #[error("{file}:0:0: cannot read: {source}")]
    Read {
        /// The scenario file.
        file: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// Something in the file is wrong.
    #[error("{file}:{line}:{column}: {problem}")]
    At {
        /// The scenario file.
        file: PathBuf,
        /// The line (from 1).
        line: usize,
        /// The column (from 1).
        column: usize,
        /// What is wrong there.
        problem: Problem,
    },
}

/// What is wrong at a place of a scenario file.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The text is not TOML, or not the fields a scenario has.
    #[error("{}", .0.message())]
    Toml(toml::de::Error),
    /// A duration field does not parse.
    #[error("field `{field}`: {source}")]
    Duration {
        /// The field, as written in the file.
        field: String,
        /// Why.
        source: DurationError,
    },
    /// The disk size does not parse.
    #[error("field `disk.size`: {0}")]
    DiskSize(#[source] SizeError),
    /// A pinned seed does not parse.
    #[error("field `seed` of [[pinned]]: {0}")]
    PinnedSeed(#[source] ValueError),
    /// A command's program cannot be found.
    #[error("field `command` of {owner}: {source}")]
    Program {
        /// The node or probe the command belongs to, in words.
        owner: String,
        /// Why.
        source: LaunchError,
    },
    /// The `[net]` settings are inconsistent.
    #[error("section [net]: {0}")]
    Net(#[source] vnet::ConfigError),
    /// A `link` fault's settings are inconsistent.
    #[error("a \"link\" fault: {0}")]
    LinkFault(#[source] vnet::ConfigError),
    /// A value that breaks one of the scenario format's rules, in words.
    #[error("{0}")]
    Invalid(String),
}
