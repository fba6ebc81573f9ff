//! `check-history --html`: one self-contained page (inline CSS and SVG, no
//! scripts, no network fetches) of a history's operations per key, as bars
//! from invoke to completion, with the operations of a violation in red.

use std::fmt::Write as _;

use history::{Operation, Outcome, Verdict};

/// Keys drawn at most (the violating ones first), so a 100k-operation
/// history still gives a page a browser opens.
const MAX_KEYS: usize = 50;
/// Operations drawn at most per key.
const MAX_OPS_PER_KEY: usize = 400;
const ROW: usize = 16;
const WIDTH: f64 = 1000.0;
const LABEL: f64 = 90.0;

/// Renders the page for `ops` (read from `source`) and their verdict.
pub fn render(source: &str, ops: &[Operation], verdict: &Verdict) -> String {
    let (headline, violating, key_order) = summary(ops, verdict);
    let mut keys: Vec<&str> = Vec::new();
    for k in key_order
        .iter()
        .map(String::as_str)
        .chain(ops.iter().map(|o| o.key.as_str()))
    {
        if !keys.contains(&k) && keys.len() < MAX_KEYS {
            keys.push(k);
        }
    }
    let total_keys = ops
        .iter()
        .map(|o| o.key.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let mut body = String::new();
    for key in &keys {
        section(&mut body, key, ops, &violating);
    }
    if total_keys > keys.len() {
        let _ = write!(
            body,
            "<p>{} more keys not drawn.</p>",
            total_keys - keys.len()
        );
    }
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>faultline check-history: {title}</title>\n\
<style>body{{font:14px sans-serif;margin:1em}} .bad{{color:#b00}} svg{{display:block;margin-bottom:1em}}\n\
.op rect{{stroke:#444;stroke-width:.5}} .ok rect{{fill:#8ab4e8}} .unknown rect{{fill:#ddd;stroke-dasharray:3 2}}\n\
.mismatch rect{{fill:#e8d48a}} .violating rect{{fill:#e33;stroke:#900;stroke-width:2}} text{{font:11px monospace}}</style></head>\n\
<body><h1>{title}</h1><p class=\"{class}\">{headline}</p>\n\
<p>Each bar is one operation, from its invoke to its completion (grey, dashed: outcome unknown); \
red: the operations the violation names. Hover a bar for its details.</p>\n{body}</body></html>\n",
        title = escape(source),
        class = if violating.is_empty() { "" } else { "bad" },
        headline = escape(&headline),
    )
}

/// The verdict line, the indices of the violating operations, and the keys
/// to draw first.
fn summary(ops: &[Operation], verdict: &Verdict) -> (String, Vec<usize>, Vec<String>) {
    match verdict {
        Verdict::Linearizable => (
            format!("linearizable ({} operations)", ops.len()),
            Vec::new(),
            Vec::new(),
        ),
        Verdict::Violation(v) => {
            let mut marked = v.operations.clone();
            marked.push(v.op_index);
            let mut keys = vec![v.key.clone()];
            keys.extend(v.other_keys.iter().cloned());
            (format!("not linearizable: {v}"), marked, keys)
        }
        Verdict::Unknown { reason } => (format!("gave up: {reason}"), Vec::new(), Vec::new()),
    }
}

/// One key: an SVG with a row per operation, in invoke order.
fn section(out: &mut String, key: &str, ops: &[Operation], violating: &[usize]) {
    let mut rows: Vec<usize> = (0..ops.len()).filter(|&i| ops[i].key == key).collect();
    rows.sort_by_key(|&i| (ops[i].invoke, i));
    let omitted = rows.len().saturating_sub(MAX_OPS_PER_KEY);
    if omitted > 0 {
        // Keep the violating operations in view: the window ends after them.
        let last = rows
            .iter()
            .rposition(|i| violating.contains(i))
            .map_or(MAX_OPS_PER_KEY, |p| (p + 1).max(MAX_OPS_PER_KEY));
        rows = rows[last - MAX_OPS_PER_KEY..last].to_vec();
    }
    let start = rows.iter().map(|&i| ops[i].invoke).min().unwrap_or(0);
    let end = rows
        .iter()
        .map(|&i| ops[i].complete.unwrap_or(ops[i].invoke))
        .max()
        .unwrap_or(start)
        .max(start + 1);
    let scale = (WIDTH - LABEL - 10.0) / (end - start) as f64;
    let x = |t: u64| LABEL + (t.saturating_sub(start)) as f64 * scale;
    let _ = write!(
        out,
        "<h2>key {}</h2>{}<svg width=\"{WIDTH}\" height=\"{}\">",
        escape(key),
        if omitted > 0 {
            format!("<p>{omitted} operations of this key not drawn.</p>")
        } else {
            String::new()
        },
        rows.len() * ROW + 4
    );
    for (row, &i) in rows.iter().enumerate() {
        let op = &ops[i];
        let class = if violating.contains(&i) {
            "violating"
        } else {
            match op.outcome {
                Outcome::Ok => "ok",
                Outcome::CasMismatch => "mismatch",
                Outcome::Fail | Outcome::Unknown => "unknown",
            }
        };
        let x0 = x(op.invoke);
        let x1 = match op.complete {
            Some(c) if op.outcome != Outcome::Unknown => x(c),
            _ => WIDTH - 10.0,
        };
        let y = row * ROW + 2;
        let _ = write!(
            out,
            "<g class=\"op {class}\"><title>operation {i}: {}</title>\
<text x=\"0\" y=\"{}\">p{}</text><rect x=\"{x0:.1}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\"/>\
<text x=\"{:.1}\" y=\"{}\">{}</text></g>",
            escape(&format!("{} ({:?})", op.describe(), op.outcome)),
            y + 11,
            op.process,
            (x1 - x0).max(2.0),
            ROW - 3,
            x0 + 3.0,
            y + 11,
            escape(&op.to_string()),
        );
    }
    out.push_str("</svg>\n");
}

/// Text safe inside HTML elements and attributes.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
