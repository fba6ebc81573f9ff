//! timeline.html: one self-contained page per seed (inline CSS and JS, no
//! network fetches) drawn from the seed's artifacts (format 1): a lane per
//! node, the messages of net.jsonl as arrows between lanes, the faults of
//! faults.json (with their paths) and the node exits of timeline.txt marked
//! on the lanes, each node's log lines and the client operations of
//! history.jsonl on the lane of the node that wrote them (see
//! [`super::lanes`]), and the failing check of report.json at its virtual
//! time, with the operations a linearizability violation names
//! highlighted. The page itself (timeline_page.html) draws the SVG; this
//! module reads and checks the artifacts and embeds them in it as JSON.

use std::fs;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::artifacts::FORMAT;
use super::lanes::{self, LogRow, OpRow};
use super::timeline_error::{bad_line, BadLine, TimelineError};

/// Most messages one page embeds; past that it keeps those nearest the
/// failure (or the end of the run) and says so. Likewise for log lines and
/// client operations.
const MAX_MESSAGES: usize = 20_000;
const MAX_LOG_LINES: usize = 5_000;
const MAX_OPERATIONS: usize = 10_000;

/// The page, with [`DATA_SLOT`] where the artifacts go.
const PAGE: &str = include_str!("timeline_page.html");

/// Marks the place of the JSON data in [`PAGE`].
const DATA_SLOT: &str = "__FAULTLINE_TIMELINE_DATA__";

/// report.json, as the page shows it.
#[derive(Debug, Deserialize, Serialize)]
struct Report {
    format: u32,
    scenario: String,
    file: String,
    seed: String,
    pass: bool,
    vtime_ns: u64,
    events: u64,
    trace_hash: String,
    nodes: Vec<Node>,
    /// Absent in artifacts written before invariant probes existed.
    #[serde(default)]
    invariants: Vec<Invariant>,
    failure: Option<Failure>,
    replay: String,
}

/// One invariant probe of report.json: a lane of its own, after the nodes'.
#[derive(Debug, Deserialize, Serialize)]
struct Invariant {
    name: String,
    host: String,
    address: String,
    runs: usize,
    failed: usize,
}

/// One node of report.json (node i is host i).
#[derive(Debug, Deserialize, Serialize)]
struct Node {
    name: String,
    address: String,
    outcome: String,
    crashes: u32,
    restarts: u32,
}

/// report.json's failing check.
#[derive(Debug, Deserialize, Serialize)]
struct Failure {
    check: String,
    message: String,
    t_ns: u64,
    event: u64,
    unit: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    operations: Vec<usize>,
}

/// One entry of faults.json.
#[derive(Debug, Deserialize, Serialize)]
struct Fault {
    t: u64,
    event: u64,
    kind: String,
    node: String,
    detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    errno: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    lost: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    torn: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    reverted: Vec<String>,
}

/// A node exit, from an `exit` row of timeline.txt.
#[derive(Debug, PartialEq, Serialize)]
struct Exit {
    t: u64,
    event: u64,
    node: String,
    outcome: String,
}

/// One line of net.jsonl.
#[derive(Debug, Deserialize)]
struct Message {
    sent_at: u64,
    at: u64,
    from: usize,
    to: usize,
    kind: Kind,
    dropped: Option<String>,
}

/// What a message was.
#[derive(Debug, Deserialize)]
enum Kind {
    Syn,
    SynAck,
    Fin,
    Rst,
    Data { len: u64 },
    Datagram { len: u64 },
}

/// A message as the page gets it:
/// `[sent_at, at, from, to, kind, len or null, drop reason or null]`.
#[derive(Serialize)]
struct Row<'a>(
    u64,
    u64,
    usize,
    usize,
    &'static str,
    Option<u64>,
    Option<&'a str>,
);

/// Everything the page embeds.
#[derive(Serialize)]
struct PageData<'a> {
    report: &'a Report,
    faults: &'a [Fault],
    exits: &'a [Exit],
    messages: Vec<Row<'a>>,
    /// Messages in net.jsonl (more than `messages` holds when cut).
    total_messages: usize,
    /// The nodes' log lines, time-stamped.
    logs: Vec<LogRow>,
    /// Log lines in the nodes' output (more than `logs` holds when cut).
    total_logs: usize,
    /// The client operations of history.jsonl.
    ops: Vec<OpRow>,
    /// Operations in history.jsonl (more than `ops` holds when cut).
    total_ops: usize,
}

impl Kind {
    /// The kind's name, as net.jsonl spells it.
    fn name(&self) -> &'static str {
        match self {
            Kind::Syn => "Syn",
            Kind::SynAck => "SynAck",
            Kind::Fin => "Fin",
            Kind::Rst => "Rst",
            Kind::Data { .. } => "Data",
            Kind::Datagram { .. } => "Datagram",
        }
    }

    /// The payload length, for data and datagrams.
    fn len(&self) -> Option<u64> {
        match self {
            Kind::Data { len } | Kind::Datagram { len } => Some(*len),
            _ => None,
        }
    }
}

impl Message {
    /// Virtual ns between the message's flight and `t` (0 if in flight then).
    fn distance(&self, t: u64) -> u64 {
        t.saturating_sub(self.at) + self.sent_at.saturating_sub(t)
    }

    /// The message as the page gets it.
    fn row(&self) -> Row<'_> {
        Row(
            self.sent_at,
            self.at,
            self.from,
            self.to,
            self.kind.name(),
            self.kind.len(),
            self.dropped.as_deref(),
        )
    }
}

/// Reads the artifacts in the seed directory `dir` (report.json,
/// faults.json, net.jsonl, timeline.txt), writes `dir/timeline.html` and
/// returns its path. Errors name the file that is missing or malformed.
pub fn render(dir: &Path) -> Result<PathBuf, TimelineError> {
    let report: Report = read_json(&dir.join("report.json"))?;
    if report.format != FORMAT {
        return Err(TimelineError::Format {
            path: dir.join("report.json"),
            found: report.format,
        });
    }
    let mut faults: Vec<Fault> = read_json(&dir.join("faults.json"))?;
    faults.retain(|f| f.kind != crate::engine::fault_log::UNAPPLIED);
    let exits = read_exits(&dir.join("timeline.txt"))?;
    let hosts = report.nodes.len() + report.invariants.len();
    let messages = read_messages(&dir.join("net.jsonl"), hosts)?;
    let total_messages = messages.len();
    let focus = report.failure.as_ref().map_or(report.vtime_ns, |f| f.t_ns);
    let kept = nearest(messages, MAX_MESSAGES, |m| m.distance(focus));
    let marks = lanes::read_marks(dir)?;
    let names: Vec<&str> = report.nodes.iter().map(|n| n.name.as_str()).collect();
    let logs = lanes::log_lines(dir, &names, &marks);
    let total_logs = logs.len();
    let logs = nearest(logs, MAX_LOG_LINES, |l| l.0.abs_diff(focus));
    let ops = lanes::operations(dir, &names, &marks);
    let total_ops = ops.len();
    let named = report
        .failure
        .as_ref()
        .map_or(&[][..], |f| &f.operations[..]);
    // The operations a violation names are kept whatever their distance.
    let ops = nearest(ops, MAX_OPERATIONS, |o| {
        if named.contains(&o.6) {
            0
        } else {
            o.0.abs_diff(focus)
        }
    });
    let data = PageData {
        report: &report,
        faults: &faults,
        exits: &exits,
        messages: kept.iter().map(Message::row).collect(),
        total_messages,
        logs,
        total_logs,
        ops,
        total_ops,
    };
    let out = dir.join("timeline.html");
    fs::write(&out, page(&data)?).map_err(|source| TimelineError::Write {
        path: out.clone(),
        source,
    })?;
    Ok(out)
}

/// The text of the artifact at `path`.
fn read_text(path: &Path) -> Result<String, TimelineError> {
    fs::read_to_string(path).map_err(|source| TimelineError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The JSON artifact at `path`.
fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, TimelineError> {
    serde_json::from_str(&read_text(path)?).map_err(|source| TimelineError::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// The messages of net.jsonl at `path`, whose hosts must be below `hosts`.
fn read_messages(path: &Path, hosts: usize) -> Result<Vec<Message>, TimelineError> {
    let text = read_text(path)?;
    let mut messages = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let m: Message =
            serde_json::from_str(line).map_err(|e| bad_line(path, i)(BadLine::Json(e)))?;
        if let Some(host) = [m.from, m.to].into_iter().find(|&h| h >= hosts) {
            return Err(bad_line(path, i)(BadLine::Host { host, hosts }));
        }
        messages.push(m);
    }
    Ok(messages)
}

/// The node exits in timeline.txt at `path`.
fn read_exits(path: &Path) -> Result<Vec<Exit>, TimelineError> {
    let text = read_text(path)?;
    let mut exits = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let exit = parse_exit(line).map_err(bad_line(path, i))?;
        exits.extend(exit);
    }
    Ok(exits)
}

/// The exit in one line of timeline.txt, if it is an exit row:
/// `t=   0.549492866s  event    1164  client     exit         exit 2`.
fn parse_exit(line: &str) -> Result<Option<Exit>, BadLine> {
    let Some(row) = line.strip_prefix("t=") else {
        return Ok(None);
    };
    let words: Vec<&str> = row.split_whitespace().collect();
    let [time, "event", event, node, "exit", outcome @ ..] = words.as_slice() else {
        return Ok(None);
    };
    Ok(Some(Exit {
        t: parse_seconds(time)?,
        event: event
            .parse()
            .map_err(|_| BadLine::Event((*event).to_owned()))?,
        node: (*node).to_owned(),
        outcome: outcome.join(" "),
    }))
}

/// `0.549492866s` (at most 9 decimals) as virtual ns.
fn parse_seconds(text: &str) -> Result<u64, BadLine> {
    let bad = || BadLine::Time(text.to_owned());
    let digits = text.strip_suffix('s').ok_or_else(bad)?;
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || frac.len() > 9 || !all_digits(whole) || !all_digits(frac) {
        return Err(bad());
    }
    let secs: u64 = whole.parse().map_err(|_| bad())?;
    let nanos: u64 = format!("{frac:0<9}").parse().map_err(|_| bad())?;
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(nanos))
        .ok_or_else(bad)
}

/// At most `max` (at least 1) of `items`, those of least `distance` (from
/// the failure, say), in their original order.
fn nearest<T>(mut items: Vec<T>, max: usize, distance: impl Fn(&T) -> u64) -> Vec<T> {
    if items.len() <= max {
        return items;
    }
    let mut distances: Vec<u64> = items.iter().map(&distance).collect();
    let cutoff = *distances.select_nth_unstable(max - 1).1;
    let mut ties = max - distances.iter().filter(|&&d| d < cutoff).count();
    items.retain(|m| {
        let d = distance(m);
        let keep_tie = d == cutoff && ties > 0;
        ties -= usize::from(keep_tie);
        d < cutoff || keep_tie
    });
    items
}

/// The page with `data` embedded.
fn page(data: &PageData) -> Result<String, TimelineError> {
    let json = serde_json::to_string(data).map_err(TimelineError::Encode)?;
    // `<` only occurs inside JSON strings, where \u003c means the same; so
    // no text of the artifacts can close the <script> element early.
    Ok(PAGE.replacen(DATA_SLOT, &json.replace('<', "\\u003c"), 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::ScratchDir;

    /// A failing two-node seed directory with `net` as net.jsonl (removed
    /// when dropped).
    fn seed_dir(label: &str, net: &str) -> ScratchDir {
        let dir = ScratchDir::new(&format!("timeline-{label}"));
        let report = r#"{"format":1,"scenario":"kv-dir","file":"kv.toml","seed":"0x5b","pass":false,
            "vtime_ns":60000000000,"events":7390,"trace_hash":"0xf2",
            "nodes":[{"name":"kv","address":"127.77.0.1","outcome":"running at end","crashes":1,"restarts":0},
                     {"name":"client","address":"127.77.0.2","outcome":"exit 2","crashes":0,"restarts":0}],
            "failure":{"check":"node exit","message":"LOST k24 </script><b>","t_ns":549492866,"event":1164,"unit":"event"},
            "replay":"faultline replay /x"}"#;
        let faults = r#"[{"t":524787082,"event":1058,"kind":"crash","node":"kv","detail":"1 process(es) killed"}]"#;
        let timeline = "# faultline timeline\n\
            t=   0.524787082s  event    1058  kv         crash        1 process(es) killed\n\
            t=   0.549492866s  event    1164  client     exit         exit 2\n\
            t=   0.549492866s  event       -  -          FAIL         check \"node exit\": x\n\
            end t=60.000000000s after 7390 events\n";
        fs::write(dir.join("report.json"), report).unwrap();
        fs::write(dir.join("faults.json"), faults).unwrap();
        fs::write(dir.join("timeline.txt"), timeline).unwrap();
        fs::write(dir.join("net.jsonl"), net).unwrap();
        dir
    }

    const NET: &str = r#"{"sent_at":101000,"at":4427080,"from":1,"to":0,"kind":"Syn","dropped":null}
{"sent_at":8172932,"at":12612307,"from":1,"to":0,"kind":{"Data":{"len":10}},"dropped":"Aborted"}
"#;

    /// The JSON embedded in a rendered page.
    fn embedded(html: &str) -> serde_json::Value {
        let start = html.find("type=\"application/json\">").unwrap() + 24;
        let end = start + html[start..].find("</script>").unwrap();
        serde_json::from_str(&html[start..end]).unwrap()
    }

    #[test]
    fn renders_the_artifacts_into_the_page() {
        let dir = seed_dir("ok", NET);
        let out = render(&dir).unwrap();
        assert_eq!(out, dir.join("timeline.html"));
        let html = fs::read_to_string(&out).unwrap();
        assert!(!html.contains(DATA_SLOT));
        assert!(
            !html.contains("</script><b>"),
            "artifact text closed the script"
        );
        let data = embedded(&html);
        assert_eq!(
            data["report"]["failure"]["message"],
            "LOST k24 </script><b>"
        );
        assert_eq!(data["report"]["nodes"][1]["name"], "client");
        assert_eq!(data["faults"][0]["kind"], "crash");
        assert_eq!(data["exits"][0]["node"], "client");
        assert_eq!(data["exits"][0]["t"], 549492866);
        assert_eq!(data["total_messages"], 2);
        assert_eq!(
            data["messages"],
            serde_json::json!([
                [101000, 4427080, 1, 0, "Syn", null, null],
                [8172932, 12612307, 1, 0, "Data", 10, "Aborted"]
            ])
        );
    }

    #[test]
    fn errors_name_the_missing_or_malformed_file() {
        let dir = seed_dir("missing", NET);
        fs::remove_file(dir.join("faults.json")).unwrap();
        let err = render(&dir).unwrap_err().to_string();
        assert!(err.contains("faults.json"), "{err}");

        let dir = seed_dir("malformed", "{\"sent_at\":1}\n");
        let err = render(&dir).unwrap_err().to_string();
        assert!(err.contains("net.jsonl:1: malformed"), "{err}");

        let bad_host = r#"{"sent_at":1,"at":2,"from":0,"to":2,"kind":"Rst","dropped":null}"#;
        let err = render(&seed_dir("host", bad_host)).unwrap_err().to_string();
        assert!(err.contains("net.jsonl:1: malformed: host 2"), "{err}");
        let dir = seed_dir("probe-host", bad_host);
        let report = fs::read_to_string(dir.join("report.json")).unwrap();
        let with_probe = report.replace(
            "\"failure\"",
            r#""invariants":[{"name":"one leader","host":"inv-1","address":"127.77.0.3","runs":4,"failed":1}],"failure""#,
        );
        fs::write(dir.join("report.json"), with_probe).unwrap();
        let html = fs::read_to_string(render(&dir).unwrap()).unwrap();
        assert_eq!(embedded(&html)["report"]["invariants"][0]["host"], "inv-1");

        let dir = seed_dir("format", NET);
        let report = fs::read_to_string(dir.join("report.json")).unwrap();
        fs::write(
            dir.join("report.json"),
            report.replace("\"format\":1", "\"format\":2"),
        )
        .unwrap();
        let err = render(&dir).unwrap_err().to_string();
        assert!(err.contains("report.json: artifact format 2"), "{err}");
    }

    #[test]
    fn parses_exit_rows_only() {
        let row = "t=  12.000000100s  event      42  n1         exit         killed by SIGSEGV";
        assert_eq!(
            parse_exit(row).unwrap(),
            Some(Exit {
                t: 12_000_000_100,
                event: 42,
                node: "n1".into(),
                outcome: "killed by SIGSEGV".into()
            })
        );
        let crash = "t=   0.5s  event    1058  kv         crash        1 process(es) killed";
        assert_eq!(parse_exit(crash).unwrap(), None);
        assert_eq!(parse_exit("end t=1.0s after 3 events").unwrap(), None);
        assert!(parse_exit("t=0.5x  event 1 kv exit exit 0").is_err());
        assert!(parse_exit("t=0.5s  event - kv exit exit 0").is_err());
    }

    #[test]
    fn parses_seconds_exactly() {
        assert_eq!(parse_seconds("0.549492866s").unwrap(), 549_492_866);
        assert_eq!(parse_seconds("3.5s").unwrap(), 3_500_000_000);
        assert_eq!(parse_seconds("7s").unwrap(), 7_000_000_000);
        assert!(parse_seconds("1.0000000001s").is_err());
        assert!(parse_seconds("-1.0s").is_err());
        assert!(parse_seconds(".5s").is_err());
    }

    /// A message in flight from `sent_at` to `at`.
    fn flight(sent_at: u64, at: u64) -> Message {
        Message {
            sent_at,
            at,
            from: 0,
            to: 1,
            kind: Kind::Fin,
            dropped: None,
        }
    }

    #[test]
    fn keeps_the_messages_nearest_the_focus_in_order() {
        let messages = (0..10).map(|i| flight(i * 100, i * 100 + 10)).collect();
        let kept: Vec<u64> = nearest(messages, 3, |m| m.distance(505))
            .iter()
            .map(|m| m.sent_at)
            .collect();
        assert_eq!(kept, [400, 500, 600]);
        let ties = vec![flight(0, 10), flight(0, 10), flight(0, 10)];
        assert_eq!(nearest(ties, 2, |m| m.distance(5)).len(), 2);
        let few = vec![flight(0, 10)];
        assert_eq!(nearest(few, 5, |m| m.distance(1_000_000)).len(), 1);
    }
}
