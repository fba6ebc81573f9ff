//! Trace files written by `--trace FILE`: JSON lines, one object per event.

use std::path::Path;

use serde_json::{Map, Value};

/// Keys every trace event must have.
pub const REQUIRED_KEYS: [&str; 5] = ["n", "t", "tid", "call", "ret"];

/// One event of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEvent {
    /// Event number.
    pub n: u64,
    /// Virtual time in nanoseconds.
    pub t: u64,
    /// Virtual thread id (1 = the first thread).
    pub tid: u64,
    /// Syscall name.
    pub call: String,
    /// Result, in whatever JSON form faultline writes it.
    pub ret: Value,
    /// The whole object, including keys beyond the required ones.
    pub raw: Map<String, Value>,
}

impl TraceEvent {
    /// Parses one JSON line into an event, checking the required keys.
    pub fn parse(line: &str) -> Result<Self, String> {
        let value: Value =
            serde_json::from_str(line).map_err(|e| format!("invalid JSON ({e}): {line}"))?;
        let Value::Object(raw) = value else {
            return Err(format!("not a JSON object: {line}"));
        };
        if let Some(missing) = REQUIRED_KEYS.iter().find(|k| !raw.contains_key(**k)) {
            return Err(format!("event lacks key {missing:?}: {line}"));
        }
        let unsigned = |key: &str| {
            raw[key]
                .as_u64()
                .ok_or_else(|| format!("event key {key:?} is not a non-negative integer: {line}"))
        };
        Ok(Self {
            n: unsigned("n")?,
            t: unsigned("t")?,
            tid: unsigned("tid")?,
            call: raw["call"]
                .as_str()
                .filter(|c| !c.is_empty())
                .ok_or_else(|| format!("event key \"call\" is not a syscall name: {line}"))?
                .to_owned(),
            ret: raw["ret"].clone(),
            raw,
        })
    }
}

/// The text of a trace file, plain or zstd-compressed (a seed's
/// `trace.jsonl.zst`; the first bytes tell).
pub fn trace_text(path: &Path) -> Result<String, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read trace {}: {e}", path.display()))?;
    let bytes = if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        zstd::decode_all(&bytes[..])
            .map_err(|e| format!("cannot decompress trace {}: {e}", path.display()))?
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|e| format!("trace {}: {e}", path.display()))
}

/// Reads a trace file: every non-empty line must be a valid event.
pub fn read_trace(path: &Path) -> Result<Vec<TraceEvent>, String> {
    let text = trace_text(path)?;
    if !text.is_empty() && !text.ends_with('\n') {
        return Err(format!(
            "trace {} does not end with a newline",
            path.display()
        ));
    }
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            TraceEvent::parse(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_an_event_with_extra_keys() {
        let e =
            TraceEvent::parse(r#"{"n":3,"t":1500,"tid":1,"call":"futex","ret":0,"args":[1,2]}"#)
                .unwrap();
        assert_eq!((e.n, e.t, e.tid, e.call.as_str()), (3, 1500, 1, "futex"));
        assert_eq!(e.ret, Value::from(0));
        assert!(e.raw.contains_key("args"));
    }

    #[test]
    fn rejects_bad_events() {
        assert!(TraceEvent::parse(r#"{"n":3,"t":1500,"tid":1,"call":"futex"}"#).is_err());
        assert!(TraceEvent::parse(r#"{"n":-1,"t":1500,"tid":1,"call":"futex","ret":0}"#).is_err());
        assert!(TraceEvent::parse(r#"[1,2]"#).is_err());
        assert!(TraceEvent::parse("not json").is_err());
    }
}
