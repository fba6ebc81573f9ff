//! Reading a JSON-lines history into validated [`Operation`]s.

use std::path::Path;

use serde_json::error::Category;

use crate::error::HistoryError;
use crate::op::{Action, Element, Operation, Outcome, Seq};
use crate::record::{CasValue, OpKind, Payload, Record, TextValue, FORMAT};

/// Reads and validates a history file (see [`parse_history`]).
pub fn read_history(path: impl AsRef<Path>) -> Result<Vec<Operation>, HistoryError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_history(&text)
}

/// Parses a format-1 history: one [`Record`] per line, blank lines ignored.
/// The result keeps the order of the records, so an operation's index in it
/// is its index among the records of the file.
pub fn parse_history(text: &str) -> Result<Vec<Operation>, HistoryError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| parse_line(i + 1, line))
        .collect()
}

fn parse_line(line: usize, text: &str) -> Result<Operation, HistoryError> {
    let syntax = |e: &serde_json::Error| HistoryError::Syntax {
        line,
        message: format!("not a JSON record: {e}"),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let record: Record = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.classify() != Category::Data {
            return syntax(&inner);
        }
        let message = without_position(&inner);
        match field_of(&path, &message) {
            Some(field) => HistoryError::Field {
                line,
                field,
                message,
            },
            None => HistoryError::Syntax {
                line,
                message: format!("not a JSON record: expected a JSON object ({message})"),
            },
        }
    })?;
    de.end().map_err(|e| syntax(&e))?;
    validate(record).map_err(|(field, message)| HistoryError::Field {
        line,
        field: field.to_string(),
        message,
    })
}

/// The field a serde data error is about: its path, or for a missing field
/// (reported at the record itself) the name serde puts in the message.
fn field_of(path: &str, message: &str) -> Option<String> {
    if path != "." {
        return Some(path.to_string());
    }
    let name = message.strip_prefix("missing field `")?.strip_suffix('`')?;
    Some(name.to_string())
}

/// serde_json's message without its ` at line 1 column N` suffix: the
/// error already names the line and the field.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Checks what serde cannot: the shape of `value` for the given `op`, the
/// format number and the times. Errors name the field.
fn validate(record: Record) -> Result<Operation, (&'static str, String)> {
    if let Some(format) = record.format.filter(|&f| f != FORMAT) {
        return Err((
            "format",
            format!(
                "history format {format} is not supported (this checker reads format {FORMAT})"
            ),
        ));
    }
    let action = match (record.op, record.value) {
        (OpKind::Put, Some(Payload::Text(v))) => Action::Put(v),
        (OpKind::Get, Some(Payload::Text(v))) => Action::Get(Some(v)),
        (OpKind::Get, None) => Action::Get(None),
        (OpKind::Cas, Some(Payload::Cas(CasValue { expect, new }))) => Action::Cas { expect, new },
        (OpKind::Delete, None) => Action::Delete,
        (OpKind::Append, Some(Payload::Text(v))) => {
            Action::Append(Seq::List(vec![Element::Text(v)]))
        }
        (OpKind::Append, Some(Payload::Int(n))) => Action::Append(Seq::List(vec![Element::Int(n)])),
        (OpKind::Append, Some(Payload::List(items))) => Action::Append(Seq::List(items)),
        (OpKind::Append, Some(Payload::Chars(TextValue { text }))) => {
            Action::Append(Seq::Text(text))
        }
        (OpKind::Read, Some(Payload::List(items))) => Action::Read(Seq::List(items)),
        (OpKind::Read, None) => Action::Read(Seq::List(Vec::new())),
        (OpKind::Read, Some(Payload::Chars(TextValue { text }))) => Action::Read(Seq::Text(text)),
        (OpKind::Put, _) => return Err(("value", "a put needs a string value".into())),
        (OpKind::Get, _) => {
            return Err((
                "value",
                "a get's value is the string it read, or null".into(),
            ))
        }
        (OpKind::Cas, _) => {
            return Err((
                "value",
                "a cas needs {\"expect\": string or null, \"new\": string}".into(),
            ))
        }
        (OpKind::Delete, _) => {
            return Err((
                "value",
                "a delete has no value (omit it or use null)".into(),
            ))
        }
        (OpKind::Append, _) => {
            return Err((
                "value",
                "an append needs the element appended (a string or an integer)".into(),
            ))
        }
        (OpKind::Read, _) => {
            return Err((
                "value",
                "a read's value is the list it read (a JSON array)".into(),
            ))
        }
    };
    if record.outcome == Outcome::CasMismatch && record.op != OpKind::Cas {
        return Err((
            "outcome",
            "cas_mismatch is the outcome of a cas only".into(),
        ));
    }
    match (record.complete, record.outcome) {
        (None, Outcome::Ok | Outcome::CasMismatch) => {
            return Err((
                "complete",
                "an ok or cas_mismatch operation needs its completion time".into(),
            ))
        }
        (Some(complete), _) if complete < record.invoke => {
            return Err((
                "complete",
                format!(
                    "completes at {complete} ns, before its invoke at {} ns",
                    record.invoke
                ),
            ))
        }
        _ => {}
    }
    Ok(Operation {
        process: record.process,
        key: record.key,
        action,
        invoke: record.invoke,
        complete: record.complete,
        outcome: record.outcome,
    })
}
