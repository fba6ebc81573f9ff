//! Why a scenario file cannot be used: it cannot be read, or something in
//! it is wrong at a line and column. A problem that comes from another
//! parser (a duration, a size, a seed, the network's settings, a program
//! to launch) keeps that parser's error as its source; the others carry
//! the values they name, and the words are made only when it is shown.

use std::path::PathBuf;

use crate::host::launch::LaunchError;
use crate::scenario::bytes::SizeError;
use crate::scenario::duration::DurationError;
use crate::scenario::faults::KINDS;
use crate::scenario::invariant::AFTER_KINDS;
use crate::sim::seeds::SeedTextError;

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
        /// What is wrong there (boxed: some problems hold large errors,
        /// and every `Result` of the parser carries this type).
        problem: Box<Problem>,
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
    PinnedSeed(#[source] SeedTextError),
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
    /// A field a fault of this form does not take.
    #[error("field `{field}` is not used by {form} (its fields: {})", .allowed.join(", "))]
    FieldUnused {
        /// The field.
        field: &'static str,
        /// The fault's kind and form, in words ("a \"partition\" fault").
        form: String,
        /// The fields that form takes.
        allowed: Vec<&'static str>,
    },
    /// A field this fault needs is absent.
    #[error("a {kind:?} fault needs field `{field}`")]
    FieldMissing {
        /// The fault's kind.
        kind: String,
        /// The absent field.
        field: &'static str,
    },
    /// A fault names a node the scenario does not have.
    #[error("field `{field}`: no node named {node:?}")]
    UnknownNode {
        /// The field that names it.
        field: &'static str,
        /// The name.
        node: String,
    },
    /// A disk fault, and no node has a simulated disk.
    #[error("a {kind:?} fault needs a node with a data_dir (no node has one)")]
    NoDisks {
        /// The fault's kind.
        kind: String,
    },
    /// A disk fault names a node without a simulated disk.
    #[error(
        "field `{field}`: node {node:?} has no data_dir, so a {kind:?} fault would do nothing"
    )]
    NoDataDir {
        /// The field that names it.
        field: &'static str,
        /// The node.
        node: String,
        /// The fault's kind.
        kind: String,
    },
    /// A fault that needs a probability has none.
    #[error("a {kind:?} fault needs field `probability` in [0, 1]")]
    NoProbability {
        /// The fault's kind.
        kind: String,
    },
    /// A fault kind faultline does not have.
    #[error("field `kind`: {0:?} is not supported (supported: {KINDS})")]
    FaultKind(String),
    /// `errno` of a write_error fault is neither ENOSPC nor EIO.
    #[error("field `errno`: {0:?} is not \"ENOSPC\" or \"EIO\"")]
    Errno(String),
    /// `disk.metadata` is neither posix nor ordered.
    #[error("field `disk.metadata`: {0:?} is not \"posix\" or \"ordered\"")]
    Metadata(String),
    /// `disk.unsynced` names no crash model of vfs.
    #[error("field `disk.unsynced`: {0:?} is not one of {}", crash_models())]
    Unsynced(String),
    /// Two nodes, or two invariants, of one name.
    #[error("field `name`: {what} {name:?} is defined twice")]
    Twice {
        /// "node" or "invariant".
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A node's `data_dir` is relative.
    #[error("field `data_dir` of node {0:?}: must be an absolute path")]
    DataDir(String),
    /// An invariant's probe host has a node's name.
    #[error("invariant {name:?} runs on host {host:?}, but a node has that name")]
    ProbeHost {
        /// The invariant.
        name: String,
        /// Its probe's host.
        host: String,
    },
    /// An invariant with neither `every` nor `after`.
    #[error("invariant {0:?} never runs: it needs field `every` or `after`")]
    NeverRuns(String),
    /// An invariant's `after` names something that is not a fault kind.
    #[error("field `after`: {0:?} is not a fault kind (one of {AFTER_KINDS:?})")]
    AfterKind(String),
    /// `check.progress_within` is 0 or longer than the quiet period (ns).
    #[error(
        "field `check.progress_within`: must be more than 0s and fit in the quiet period ({:.3}s)",
        *.0 as f64 / 1e9
    )]
    ProgressWithin(u64),
    /// A value that breaks one of the scenario format's rules, in words.
    #[error("{0}")]
    Rule(&'static str),
}

/// vfs's crash models, quoted, for `Problem::Unsynced`.
fn crash_models() -> String {
    let names: Vec<String> = vfs::CrashModel::ALL
        .iter()
        .map(|(n, _)| format!("{n:?}"))
        .collect();
    names.join(", ")
}
