//! Errors reading a history file.

use std::path::PathBuf;

use thiserror::Error;

impl HistoryError {
    /// The 1-based line the error is on, if it is about one.
    pub fn line(&self) -> Option<usize> {
        match self {
            HistoryError::Io { .. } => None,
            HistoryError::Syntax { line, .. } | HistoryError::Field { line, .. } => Some(*line),
        }
    }
}

/// Why a history could not be read. Every parse error names the line (and,
/// where there is one, the field), so a client author can fix the writer.
#[derive(Debug, Error)]
pub enum HistoryError {
    /// The file could not be read at all.
    #[error("cannot read history {}: {source}", path.display())]
    Io {
        /// The history file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line is not a JSON object (truncated write, stray text).
    #[error("history line {line}: {message}")]
    Syntax {
        /// 1-based line number.
        line: usize,
        /// What the JSON parser said, with the column.
        message: String,
    },
    /// A field is missing, unknown, of the wrong type, or inconsistent with
    /// the rest of the record.
    #[error("history line {line}, field `{field}`: {message}")]
    Field {
        /// 1-based line number.
        line: usize,
        /// The offending field, e.g. `invoke` or `value.expect`.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}
