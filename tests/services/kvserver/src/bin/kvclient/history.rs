//! The optional `--history FILE`: faultline's history format 1 (see
//! history/README.md), one JSON object per line, appended so several client
//! runs build one history. Every acknowledged put and every verifying get is
//! recorded with outcome `ok`, so the linearizability checker reports a lost
//! put the same way the client does.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};

/// The `process` field: this client's id in the history.
const PROCESS: u64 = 1;

/// Where records go; `None` without `--history`.
#[derive(Debug)]
pub struct History {
    file: Option<File>,
}

impl History {
    /// Appends to `path` (created if missing), or records nothing.
    pub fn open(path: Option<&str>) -> io::Result<History> {
        let file = match path {
            Some(path) => Some(OpenOptions::new().create(true).append(true).open(path)?),
            None => None,
        };
        Ok(History { file })
    }

    /// An acknowledged put, invoked and completed at these ns.
    pub fn put(&mut self, key: &str, value: &str, invoke: u64, complete: u64) -> io::Result<()> {
        self.record("put", key, &json_string(value), invoke, complete)
    }

    /// A completed get that read `value` (`None`: the key was absent).
    pub fn get(
        &mut self,
        key: &str,
        value: Option<&str>,
        invoke: u64,
        complete: u64,
    ) -> io::Result<()> {
        let value = value.map_or("null".to_owned(), json_string);
        self.record("get", key, &value, invoke, complete)
    }

    fn record(
        &mut self,
        op: &str,
        key: &str,
        value: &str,
        invoke: u64,
        complete: u64,
    ) -> io::Result<()> {
        let Some(file) = &mut self.file else {
            return Ok(());
        };
        let line = format!(
            "{{\"process\":{PROCESS},\"op\":\"{op}\",\"key\":{},\"value\":{value},\
             \"invoke\":{invoke},\"complete\":{complete},\"outcome\":\"ok\"}}\n",
            json_string(key)
        );
        file.write_all(line.as_bytes())
    }
}

/// A JSON string literal. Protocol tokens are printable ASCII, so only `"`
/// and `\` need escaping.
fn json_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_quotes_and_backslashes() {
        assert_eq!(json_string(r#"a"b\c"#), r#""a\"b\\c""#);
    }
}
