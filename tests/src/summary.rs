//! The `faultline: summary ...` line printed at the end of every
//! `faultline exec` run, and the per-seed verdict lines of `faultline run`.

use std::collections::HashMap;

/// Prefix of the summary line.
pub const SUMMARY_PREFIX: &str = "faultline: summary ";

/// Parsed `faultline: summary seed=0x<16 hex> exit=<code> vtime=<secs>s
/// events=<n> stops=<n> fast=<n> trace-hash=0x<16 hex>`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The run's seed.
    pub seed: u64,
    /// The exit code faultline reports for the run.
    pub exit: i32,
    /// Virtual time at the end of the run, in seconds.
    pub vtime_secs: f64,
    /// Number of events in the trace.
    pub events: u64,
    /// Number of ptrace stops.
    pub stops: u64,
    /// Number of calls that came over the LD_PRELOAD fast path instead.
    pub fast: u64,
    /// Number of calls a Go program's patched runtime answered itself.
    pub in_stub: u64,
    /// Hash of the event trace.
    pub trace_hash: u64,
}

impl Summary {
    /// Parses one summary line (with or without the trailing newline).
    pub fn parse(line: &str) -> Result<Self, String> {
        let rest = line
            .trim_end()
            .strip_prefix(SUMMARY_PREFIX)
            .ok_or_else(|| format!("not a summary line: {line:?}"))?;
        let mut fields = HashMap::new();
        for word in rest.split(' ') {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| format!("summary field without '=': {word:?} in {line:?}"))?;
            if fields.insert(key, value).is_some() {
                return Err(format!("summary field {key} repeated in {line:?}"));
            }
        }
        let get = |key: &str| {
            fields
                .get(key)
                .copied()
                .ok_or_else(|| format!("summary lacks {key}= in {line:?}"))
        };
        let number = |key: &str| -> Result<u64, String> {
            let value = get(key)?;
            value
                .parse()
                .map_err(|_| format!("summary {key}={value} is not a number in {line:?}"))
        };
        let vtime = get("vtime")?;
        let summary = Self {
            seed: hex64(get("seed")?).map_err(|e| format!("seed: {e} in {line:?}"))?,
            exit: get("exit")?
                .parse()
                .map_err(|_| format!("summary exit is not an integer in {line:?}"))?,
            vtime_secs: vtime
                .strip_suffix('s')
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("summary vtime={vtime} is not <secs>s in {line:?}"))?,
            events: number("events")?,
            stops: number("stops")?,
            fast: number("fast")?,
            in_stub: number("in-stub")?,
            trace_hash: hex64(get("trace-hash")?)
                .map_err(|e| format!("trace-hash: {e} in {line:?}"))?,
        };
        if fields.len() != 8 {
            return Err(format!("summary has unexpected fields in {line:?}"));
        }
        Ok(summary)
    }

    /// Finds and parses the one summary line in faultline's stderr.
    pub fn from_stderr(stderr: &str) -> Result<Self, String> {
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with(SUMMARY_PREFIX))
            .collect();
        match lines.as_slice() {
            [line] => Self::parse(line),
            [] => Err("no `faultline: summary` line on stderr".to_owned()),
            _ => Err(format!(
                "{} summary lines on stderr, expected exactly one",
                lines.len()
            )),
        }
    }
}

/// Prefix of the verdict line `faultline run` prints for each seed.
pub const SEED_PREFIX: &str = "faultline: seed=";

/// Prefix of the lines under a verdict line, one per node.
pub const NODE_PREFIX: &str = "faultline:   node ";

/// How one node of a scenario ended, as its `faultline:   node NAME: ...`
/// line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeOutcome {
    /// `exit N`: the node's process exited with code N.
    Exit(i32),
    /// `killed by SIGNAME`: a signal killed it (the name, e.g. `SIGSEGV`).
    Killed(String),
    /// `running at end`: still running when the scenario's duration ended.
    RunningAtEnd,
    /// `down at end`: crashed (or exited and awaiting its restart) when the
    /// scenario's duration ended.
    DownAtEnd,
}

impl NodeOutcome {
    /// Parses the text after `node NAME: `.
    pub fn parse(text: &str) -> Result<Self, String> {
        // Notes such as "(crashed 3 time(s) by the fault plan)" follow the outcome.
        let text = text.split(" (").next().unwrap_or(text);
        if text == "running at end" {
            return Ok(Self::RunningAtEnd);
        }
        if text == "down at end" {
            return Ok(Self::DownAtEnd);
        }
        if let Some(code) = text.strip_prefix("exit ") {
            return code
                .parse()
                .map(Self::Exit)
                .map_err(|_| format!("node exit code {code:?} is not an integer"));
        }
        if let Some(signal) = text.strip_prefix("killed by ") {
            if signal.starts_with("SIG") && signal.len() > 3 && !signal.contains(' ') {
                return Ok(Self::Killed(signal.to_owned()));
            }
        }
        Err(format!("unknown node outcome {text:?}"))
    }

    /// Whether this outcome lets the seed pass: exit 0, still running, or
    /// down because the fault plan crashed it.
    pub fn passes(&self) -> bool {
        matches!(self, Self::Exit(0) | Self::RunningAtEnd | Self::DownAtEnd)
    }
}

/// One seed's verdict from `faultline run`: the line
/// `faultline: seed=0x<16 hex> PASS|FAIL|STUCK|INTERRUPTED|ERROR|NONDETERMINISTIC
/// vtime=<secs>s events=<n> trace-hash=0x<16 hex> wall=<secs>s` and the
/// node lines that follow it.
#[derive(Clone, Debug)]
pub struct SeedReport {
    /// The seed.
    pub seed: u64,
    /// PASS (true) or another verdict (false).
    pub pass: bool,
    /// The verdict word: PASS, FAIL, STUCK, INTERRUPTED, ERROR or
    /// NONDETERMINISTIC.
    pub verdict: String,
    /// Wall-clock seconds the seed took.
    pub wall_secs: f64,
    /// Virtual time the seed ran, in seconds.
    pub vtime_secs: f64,
    /// Number of events in the seed's trace.
    pub events: u64,
    /// Hash of the seed's event trace.
    pub trace_hash: u64,
    /// Each node and how it ended, in the order printed.
    pub nodes: Vec<(String, NodeOutcome)>,
}

/// Two verdicts agree when all but the wall time do (identical runs of a
/// seed take different wall time).
impl PartialEq for SeedReport {
    fn eq(&self, other: &Self) -> bool {
        (
            self.seed,
            self.pass,
            &self.verdict,
            self.vtime_secs,
            self.events,
            self.trace_hash,
            &self.nodes,
        ) == (
            other.seed,
            other.pass,
            &other.verdict,
            other.vtime_secs,
            other.events,
            other.trace_hash,
            &other.nodes,
        )
    }
}

impl SeedReport {
    /// Parses one verdict line (without its node lines).
    pub fn parse(line: &str) -> Result<Self, String> {
        let rest = line
            .trim_end()
            .strip_prefix("faultline: ")
            .ok_or_else(|| format!("not a seed line: {line:?}"))?;
        let words: Vec<&str> = rest.split(' ').collect();
        let [seed, verdict, vtime, events, hash, wall] = words.as_slice() else {
            return Err(format!("seed line does not have 6 fields: {line:?}"));
        };
        let field = |word: &str, key: &str| -> Result<String, String> {
            word.strip_prefix(key)
                .and_then(|w| w.strip_prefix('='))
                .map(str::to_owned)
                .ok_or_else(|| format!("expected {key}=... but got {word:?} in {line:?}"))
        };
        let pass = match *verdict {
            "PASS" => true,
            "FAIL" | "STUCK" | "INTERRUPTED" | "ERROR" | "NONDETERMINISTIC" => false,
            other => {
                return Err(format!(
                    "verdict {other:?} is not a verdict word in {line:?}"
                ))
            }
        };
        let wall = field(wall, "wall")?;
        let vtime = field(vtime, "vtime")?;
        let events = field(events, "events")?;
        Ok(Self {
            seed: hex64(&field(seed, "seed")?).map_err(|e| format!("seed: {e} in {line:?}"))?,
            pass,
            verdict: verdict.to_string(),
            wall_secs: wall
                .strip_suffix('s')
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("wall={wall} is not <secs>s in {line:?}"))?,
            vtime_secs: vtime
                .strip_suffix('s')
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("vtime={vtime} is not <secs>s in {line:?}"))?,
            events: events
                .parse()
                .map_err(|_| format!("events={events} is not a number in {line:?}"))?,
            trace_hash: hex64(&field(hash, "trace-hash")?)
                .map_err(|e| format!("trace-hash: {e} in {line:?}"))?,
            nodes: Vec::new(),
        })
    }

    /// Every seed verdict in `faultline run`'s stderr, in order, each with
    /// the node lines that follow it. Errors on a malformed verdict or node
    /// line, or a node line before any verdict.
    pub fn all_from_stderr(stderr: &str) -> Result<Vec<Self>, String> {
        let mut reports: Vec<Self> = Vec::new();
        for line in stderr.lines() {
            if line.starts_with(SEED_PREFIX) {
                reports.push(Self::parse(line)?);
            } else if let Some(rest) = line.strip_prefix(NODE_PREFIX) {
                let (name, outcome) = rest
                    .split_once(": ")
                    .ok_or_else(|| format!("node line without ': ': {line:?}"))?;
                let report = reports
                    .last_mut()
                    .ok_or_else(|| format!("node line before any seed line: {line:?}"))?;
                report
                    .nodes
                    .push((name.to_owned(), NodeOutcome::parse(outcome)?));
            }
        }
        Ok(reports)
    }

    /// How node `name` ended, if it is listed.
    pub fn node(&self, name: &str) -> Option<&NodeOutcome> {
        self.nodes.iter().find(|(n, _)| n == name).map(|(_, o)| o)
    }
}

/// Parses `0x` followed by exactly 16 hex digits.
fn hex64(text: &str) -> Result<u64, String> {
    let digits = text
        .strip_prefix("0x")
        .ok_or_else(|| format!("{text:?} lacks 0x"))?;
    if digits.len() != 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{text:?} is not 0x and 16 hex digits"));
    }
    u64::from_str_radix(digits, 16).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "faultline: summary seed=0x0000000000000007 exit=0 vtime=3600.000125s \
                        events=812 stops=1033 fast=17 in-stub=4 trace-hash=0x9f86d081884c7d65";

    #[test]
    fn parses_a_summary_line() {
        let s = Summary::parse(LINE).unwrap();
        assert_eq!(s.seed, 7);
        assert_eq!(s.exit, 0);
        assert!((s.vtime_secs - 3600.000125).abs() < 1e-9);
        assert_eq!((s.events, s.stops, s.fast, s.in_stub), (812, 1033, 17, 4));
        assert_eq!(s.trace_hash, 0x9f86_d081_884c_7d65);
    }

    #[test]
    fn finds_the_line_among_others() {
        let stderr = format!("program noise\nfaultline: note\n{LINE}\n");
        assert_eq!(Summary::from_stderr(&stderr).unwrap().events, 812);
    }

    #[test]
    fn rejects_malformed_lines() {
        assert!(Summary::parse(&LINE.replace("0x0000000000000007", "0x7")).is_err());
        assert!(Summary::parse(&LINE.replace("3600.000125s", "3600.000125")).is_err());
        assert!(Summary::parse(&LINE.replace(" stops=1033", "")).is_err());
        assert!(Summary::parse(&LINE.replace(" fast=17", "")).is_err());
        assert!(Summary::parse(&LINE.replace(" in-stub=4", "")).is_err());
        assert!(Summary::parse(&format!("{LINE} extra=1")).is_err());
        assert!(Summary::from_stderr(&format!("{LINE}\n{LINE}\n")).is_err());
        assert!(Summary::from_stderr("faultline: no summary here\n").is_err());
    }

    const SEED_LINES: &str =
        "faultline: seed=0x00000000000000ab FAIL vtime=20.000000s events=1234 \
                              trace-hash=0x0123456789abcdef wall=2.5s\n\
                              faultline:   node server: running at end\n\
                              faultline:   node x: exit 3\n\
                              faultline:   node crash: killed by SIGSEGV\n\
                              noise from a node\n\
                              faultline: seed=0x00000000000000cd PASS vtime=1.5s events=7 \
                              trace-hash=0xfedcba9876543210 wall=0.1s\n\
                              faultline:   node x: exit 0\n";

    #[test]
    fn parses_seed_reports_with_their_nodes() {
        let reports = SeedReport::all_from_stderr(SEED_LINES).unwrap();
        assert_eq!(reports.len(), 2);
        let (a, b) = (&reports[0], &reports[1]);
        assert_eq!((a.seed, a.pass, a.events), (0xab, false, 1234));
        assert_eq!((a.verdict.as_str(), a.wall_secs), ("FAIL", 2.5));
        assert_eq!(a.trace_hash, 0x0123_4567_89ab_cdef);
        assert!((a.vtime_secs - 20.0).abs() < 1e-9);
        assert_eq!(a.node("server"), Some(&NodeOutcome::RunningAtEnd));
        assert_eq!(a.node("x"), Some(&NodeOutcome::Exit(3)));
        assert_eq!(
            a.node("crash"),
            Some(&NodeOutcome::Killed("SIGSEGV".into()))
        );
        assert_eq!(a.node("nobody"), None);
        assert_eq!((b.seed, b.pass, b.nodes.len()), (0xcd, true, 1));
        assert!(NodeOutcome::Exit(0).passes() && NodeOutcome::RunningAtEnd.passes());
        assert!(!NodeOutcome::Exit(3).passes());
    }

    #[test]
    fn rejects_malformed_seed_reports() {
        let line = SEED_LINES.lines().next().unwrap();
        assert!(SeedReport::parse(&line.replace("FAIL", "MAYBE")).is_err());
        assert!(SeedReport::parse(&line.replace("0x00000000000000ab", "0xab")).is_err());
        assert!(SeedReport::parse(&line.replace(" events=1234", "")).is_err());
        assert!(SeedReport::parse(&line.replace(" wall=2.5s", "")).is_err());
        assert!(SeedReport::all_from_stderr("faultline:   node x: exit 0\n").is_err());
        assert!(NodeOutcome::parse("exited 3").is_err());
        assert!(NodeOutcome::parse("killed by").is_err());
    }
}
