//! `faultline run --results FILE`: one JSON line per seed appended to FILE
//! (seed, verdict, check, wall time, trace hash), so hunts on many machines
//! and over many days collect into files that `jq`, `grep` or a spreadsheet
//! read, and whose failing seeds make a `--seed-list`.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a result line could not be written; faultline's own failure (or bad
/// input, when the file cannot be opened before the run).
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The results file cannot be opened or written.
    #[error("results file {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A seed's report.json is missing or cannot be read.
    #[error("{path}: {source}")]
    ReadReport {
        /// The report.json.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// A seed's report.json is not the JSON faultline writes.
    #[error("{path}: {source}")]
    ParseReport {
        /// The report.json.
        path: PathBuf,
        /// What serde_json said.
        source: serde_json::Error,
    },
}

/// The fields of a seed's report.json a result line repeats.
#[derive(serde::Deserialize)]
pub struct Recorded {
    /// The scenario's name.
    pub scenario: String,
    /// The seed, as 0x-hex.
    pub seed: String,
    /// Every check passed.
    pub pass: bool,
    /// The trace hash, as 0x-hex.
    pub trace_hash: String,
    /// The failing check, if any.
    pub failure: Option<RecordedFailure>,
}

/// The failing check of a report.json.
#[derive(serde::Deserialize)]
pub struct RecordedFailure {
    /// The check's name, e.g. "node exit" or "linearizable".
    pub check: String,
}

impl Recorded {
    /// Reads `<dir>/report.json`.
    pub fn read(dir: &Path) -> Result<Self, ResultsError> {
        let path = dir.join("report.json");
        let text = std::fs::read_to_string(&path).map_err(|source| ResultsError::ReadReport {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ResultsError::ParseReport { path, source })
    }
}

/// One line of a results file.
#[derive(serde::Serialize)]
struct Line<'a> {
    scenario: &'a str,
    seed: &'a str,
    verdict: &'static str,
    check: Option<&'a str>,
    wall_s: f64,
    trace_hash: &'a str,
}

/// Opens (creating it and its directory, as `--artifacts` is) the results
/// file for appending, before any seed runs, so a path that cannot be
/// written is bad input and not a lost hunt.
pub fn check_writable(path: &Path) -> Result<(), ResultsError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| ResultsError::Write {
            path: path.to_owned(),
            source,
        })?;
    }
    open(path).map(drop)
}

fn open(path: &Path) -> Result<std::fs::File, ResultsError> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|source| ResultsError::Write {
            path: path.to_owned(),
            source,
        })
}

/// Appends the line of the seed whose artifacts are in `dir`, which took
/// `wall` of wall-clock time. One write per line: seeds run by `-j` children
/// append to the same file without interleaving.
pub fn append(path: &Path, dir: &Path, wall: Duration) -> Result<(), ResultsError> {
    let r = Recorded::read(dir)?;
    let line = Line {
        scenario: &r.scenario,
        seed: &r.seed,
        verdict: if r.pass { "pass" } else { "fail" },
        check: r.failure.as_ref().map(|f| f.check.as_str()),
        wall_s: (wall.as_secs_f64() * 1000.0).round() / 1000.0,
        trace_hash: &r.trace_hash,
    };
    let mut text = serde_json::to_string(&line).expect("a results line serializes");
    text.push('\n');
    open(path)?
        .write_all(text.as_bytes())
        .map_err(|source| ResultsError::Write {
            path: path.to_owned(),
            source,
        })
}
