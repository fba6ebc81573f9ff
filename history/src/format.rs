//! The history formats the checker reads, and telling them apart.

use std::path::Path;
use std::str::FromStr;

use crate::error::HistoryError;
use crate::jepsen::{self, Dialect};
use crate::op::Operation;
use crate::parse::parse_history;

/// A history file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// faultline's JSON lines (format 1).
    Json,
    /// Jepsen's `history.edn` of a register or cas-register workload.
    Edn,
    /// Porcupine's key-value logs (`{:process 0, :type :invoke, :f :get, :key "6", ...}`).
    Porcupine,
}

impl Format {
    /// The format of `text`: JSON objects start `{"`, EDN maps `{:`; an EDN
    /// map naming a `:key` is Porcupine's.
    pub fn detect(text: &str) -> Format {
        let mut chars = text.chars().filter(|c| !c.is_whitespace());
        match (chars.next(), chars.next()) {
            (None, _) | (Some('{'), Some('"' | '}')) => Format::Json,
            _ if jepsen::looks_like_porcupine(text) => Format::Porcupine,
            _ => Format::Edn,
        }
    }

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Edn => "edn",
            Format::Porcupine => "porcupine",
        }
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "json" => Ok(Format::Json),
            "edn" => Ok(Format::Edn),
            "porcupine" => Ok(Format::Porcupine),
            other => Err(format!(
                "unknown history format {other:?} (json, edn or porcupine)"
            )),
        }
    }
}

/// Parses a history in `format`, or the detected one; returns which.
pub fn parse_as(
    text: &str,
    format: Option<Format>,
) -> Result<(Format, Vec<Operation>), HistoryError> {
    let format = format.unwrap_or_else(|| Format::detect(text));
    let ops = match format {
        Format::Json => parse_history(text)?,
        Format::Edn => jepsen::parse(text, Dialect::Jepsen)?,
        Format::Porcupine => jepsen::parse(text, Dialect::Porcupine)?,
    };
    Ok((format, ops))
}

/// Reads a history file in `format`, or the detected one (see [`parse_as`]).
pub fn read_history_as(
    path: impl AsRef<Path>,
    format: Option<Format>,
) -> Result<(Format, Vec<Operation>), HistoryError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_as(&text, format)
}
