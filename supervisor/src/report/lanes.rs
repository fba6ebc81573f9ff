//! What timeline.html draws on the node lanes besides messages and faults:
//! each node's log lines (its `.stdout` and `.stderr` files) and the
//! workload's client operations (history.jsonl), each stamped with the
//! virtual time of the write that put it there (output.jsonl) and placed on
//! the lane of the node that wrote it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::timeline_error::{bad_line, BadLine, TimelineError};

/// Longest log line the page embeds, in bytes; the rest is cut.
const MAX_LINE: usize = 300;

/// One line of output.jsonl: a write at virtual time `t` by `node` into
/// its `stream` ("stdout", "stderr", "history"), starting at `offset`.
#[derive(Debug, Deserialize)]
pub struct Mark {
    t: u64,
    node: String,
    stream: String,
    offset: u64,
}

/// A log line as the page gets it: `[t, lane, stream, text]`.
#[derive(Debug, PartialEq, Serialize)]
pub struct LogRow(pub u64, pub usize, pub &'static str, pub String);

/// A client operation as the page gets it: `[invoke, complete or null,
/// lane, process, what, "ok"|"fail"|"unknown", history index]`.
#[derive(Debug, PartialEq, Serialize)]
pub struct OpRow(
    pub u64,
    pub Option<u64>,
    pub usize,
    pub u64,
    pub String,
    pub &'static str,
    pub usize,
);

/// Reads output.jsonl in `dir` (none, for artifacts written before it).
pub fn read_marks(dir: &Path) -> Result<Vec<Mark>, TimelineError> {
    let path = dir.join("output.jsonl");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(Vec::new());
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| bad_line(&path, i)(BadLine::Json(e))))
        .collect()
}

/// The non-empty lines of `text` with the byte offset each starts at.
fn lines_at(text: &str) -> impl Iterator<Item = (u64, &str)> {
    let mut at = 0u64;
    text.split_inclusive('\n').filter_map(move |raw| {
        let start = at;
        at += raw.len() as u64;
        let line = raw.trim_end_matches(['\n', '\r']);
        (!line.trim().is_empty()).then_some((start, line))
    })
}

/// The mark of the write that put byte `offset` in place: the last one
/// starting at or before it (marks of one file grow in offset).
fn stamp<'m>(marks: &[&'m Mark], offset: u64) -> Option<&'m Mark> {
    let i = marks.partition_point(|m| m.offset <= offset);
    marks.get(i.checked_sub(1)?).copied()
}

/// The log lines of every node (`nodes` in lane order), time-stamped.
pub fn log_lines(dir: &Path, nodes: &[&str], marks: &[Mark]) -> Vec<LogRow> {
    let mut rows = Vec::new();
    for (lane, node) in nodes.iter().enumerate() {
        for stream in ["stdout", "stderr"] {
            let Ok(text) = std::fs::read(dir.join(format!("{node}.{stream}"))) else {
                continue;
            };
            let text = String::from_utf8_lossy(&text);
            let mine: Vec<&Mark> = marks
                .iter()
                .filter(|m| m.stream == stream && m.node == *node)
                .collect();
            for (offset, line) in lines_at(&text) {
                if let Some(m) = stamp(&mine, offset) {
                    rows.push(LogRow(m.t, lane, stream, cut(line)));
                }
            }
        }
    }
    rows.sort_by_key(|r| r.0);
    rows
}

/// `line`, at most [`MAX_LINE`] bytes of it.
fn cut(line: &str) -> String {
    if line.len() <= MAX_LINE {
        return line.to_owned();
    }
    let mut end = MAX_LINE;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

/// The client operations of history.jsonl in `dir`, each on the lane of
/// the node that wrote it. Lines that do not parse are left out: the
/// linearizability check reports a malformed history.
pub fn operations(dir: &Path, nodes: &[&str], marks: &[Mark]) -> Vec<OpRow> {
    let Ok(text) = std::fs::read_to_string(dir.join("history.jsonl")) else {
        return Vec::new();
    };
    let writes: Vec<&Mark> = marks.iter().filter(|m| m.stream == "history").collect();
    let base = crate::sim::vclock::MONOTONIC_BASE_NS;
    let mut rows = Vec::new();
    for (index, (offset, line)) in lines_at(&text).enumerate() {
        let lane = stamp(&writes, offset).and_then(|m| nodes.iter().position(|n| *n == m.node));
        let op = history::parse_history(line)
            .ok()
            .and_then(|ops| ops.into_iter().next());
        let (Some(lane), Some(op)) = (lane, op) else {
            continue;
        };
        let outcome = match op.outcome {
            history::Outcome::Ok => "ok",
            // A cas that found another value had no effect, as a failure.
            history::Outcome::Fail | history::Outcome::CasMismatch => "fail",
            history::Outcome::Unknown => "unknown",
        };
        rows.push(OpRow(
            op.invoke.saturating_sub(base),
            op.complete.map(|c| c.saturating_sub(base)),
            lane,
            op.process,
            op.to_string(),
            outcome,
            index,
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(t: u64, node: &str, stream: &str, offset: u64) -> Mark {
        Mark {
            t,
            node: node.into(),
            stream: stream.into(),
            offset,
        }
    }

    #[test]
    fn stamps_each_line_with_the_write_that_put_it_there() {
        let dir = std::env::temp_dir().join(format!("lanes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // "a\nb\n" in one write at t=5, "c\n" at t=9; stderr never written.
        std::fs::write(dir.join("n.stdout"), "a\nb\n\nc\n").unwrap();
        std::fs::write(dir.join("n.stderr"), "").unwrap();
        let marks = [
            mark(5, "n", "stdout", 0),
            mark(9, "n", "stdout", 5),
            mark(7, "m", "stdout", 0),
        ];
        assert_eq!(
            log_lines(&dir, &["m", "n"], &marks),
            [
                LogRow(5, 1, "stdout", "a".into()),
                LogRow(5, 1, "stdout", "b".into()),
                LogRow(9, 1, "stdout", "c".into()),
            ]
        );
        let history = concat!(
            r#"{"process":3,"op":"put","key":"k1","value":"v1","invoke":100000000100,"complete":100000000200,"outcome":"ok"}"#,
            "\n",
            r#"{"process":3,"op":"get","key":"k1","value":null,"invoke":100000000300,"complete":null,"outcome":"unknown"}"#,
            "\n"
        );
        std::fs::write(dir.join("history.jsonl"), history).unwrap();
        let first = history.find('\n').unwrap() as u64 + 1;
        let marks = [mark(1, "c", "history", 0), mark(2, "c", "history", first)];
        let ops = operations(&dir, &["s", "c"], &marks);
        assert_eq!(
            ops,
            [
                OpRow(100, Some(200), 1, 3, "put k1=\"v1\"".into(), "ok", 0),
                OpRow(300, None, 1, 3, "get k1 -> nothing".into(), "unknown", 1),
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn cuts_long_lines_on_a_character_boundary() {
        let long = "é".repeat(MAX_LINE);
        let c = cut(&long);
        assert!(c.len() <= MAX_LINE + '…'.len_utf8(), "{}", c.len());
        assert!(c.ends_with('…'));
        assert_eq!(cut("short"), "short");
    }
}
