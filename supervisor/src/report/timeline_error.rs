//! Why a timeline page cannot be rendered, naming the artifact (and the
//! line, for the line-per-record files) that is missing or malformed.

use std::path::{Path, PathBuf};

use super::artifacts::FORMAT;

/// Why the timeline page cannot be rendered: an artifact missing or
/// malformed (named, with the line for the line-per-record files), or the
/// page not written.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    /// An artifact cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The artifact.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A JSON artifact does not parse.
    #[error("{path}: malformed: {source}")]
    Json {
        /// The artifact.
        path: PathBuf,
        /// What serde_json said.
        source: serde_json::Error,
    },
    /// report.json was written by a faultline of another artifact format.
    #[error("{path}: artifact format {found}, but this faultline reads format {FORMAT}")]
    Format {
        /// The report.json.
        path: PathBuf,
        /// Its format.
        found: u32,
    },
    /// One line of net.jsonl, timeline.txt or output.jsonl is malformed.
    #[error("{path}:{line}: malformed: {what}")]
    Line {
        /// The artifact.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        what: BadLine,
    },
    /// The page cannot be encoded.
    #[error("cannot encode the timeline: {0}")]
    Encode(serde_json::Error),
    /// The page cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// timeline.html.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// What is wrong with one line of a line-per-record artifact.
#[derive(Debug, thiserror::Error)]
pub enum BadLine {
    /// It is not the JSON record expected.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A message names a host the report does not have.
    #[error("host {host}, but report.json has {hosts} host(s)")]
    Host {
        /// The host's index.
        host: usize,
        /// How many hosts report.json has.
        hosts: usize,
    },
    /// An exit row's event number.
    #[error("event number {0:?}")]
    Event(String),
    /// An exit row's time.
    #[error("time {0:?}")]
    Time(String),
}

/// For `map_err`: line `index` (from 0) of the artifact at `path` is malformed.
pub(super) fn bad_line(path: &Path, index: usize) -> impl FnOnce(BadLine) -> TimelineError + '_ {
    move |what| TimelineError::Line {
        path: path.to_path_buf(),
        line: index + 1,
        what,
    }
}
