//! The history the workload appends to: faultline's JSON-lines format 1
//! (`history/README.md`), one line per operation, which the linearizability
//! check reads.

use std::io::Write;
use std::sync::Mutex;

/// What one operation ended as, in the history's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It took effect (put) / it read this value (get).
    Ok(Option<String>),
    /// It certainly did not take effect.
    Fail,
    /// It may or may not have taken effect.
    Unknown,
}

impl Outcome {
    /// The history's name for it.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Ok(_) => "ok",
            Outcome::Fail => "fail",
            Outcome::Unknown => "unknown",
        }
    }
}

/// One finished operation.
pub struct Record<'a> {
    /// The client (1-based).
    pub process: u32,
    /// A put of this value, or a get (`None`).
    pub put: Option<&'a str>,
    /// The key.
    pub key: &'a str,
    /// When it was sent (monotonic ns).
    pub invoke: u64,
    /// When its answer came (monotonic ns).
    pub complete: u64,
    /// How it ended.
    pub outcome: &'a Outcome,
}

/// The history file, shared by the clients.
pub struct History(Mutex<std::fs::File>);

impl History {
    /// Opens `path` for appending (a probe may read it as it grows).
    pub fn open(path: &str) -> std::io::Result<History> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(History(Mutex::new(file)))
    }

    /// Appends one operation: a put records its value whatever the outcome;
    /// a get the value it read; an unknown outcome has no completion time.
    pub fn record(&self, r: &Record) {
        let value = match (r.put, r.outcome) {
            (Some(v), _) => Some(v.to_string()),
            (None, Outcome::Ok(read)) => read.clone(),
            (None, _) => None,
        };
        let line = serde_json::json!({
            "process": r.process,
            "op": if r.put.is_some() { "put" } else { "get" },
            "key": r.key,
            "value": value,
            "invoke": r.invoke,
            "complete": (*r.outcome != Outcome::Unknown).then_some(r.complete),
            "outcome": r.outcome.name(),
        });
        // One write per line: formatting straight into the file would make
        // a system call per JSON token (about 20 per line), each a
        // scheduling point under faultline.
        let line = format!("{line}\n");
        let mut file = self.0.lock().expect("history lock");
        // A lost line would show up as a check failure; nothing to do here.
        let _ = file.write_all(line.as_bytes());
    }
}
