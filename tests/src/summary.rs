//! The `faultline: summary ...` line printed at the end of every run.

use std::collections::HashMap;

/// Prefix of the summary line.
pub const SUMMARY_PREFIX: &str = "faultline: summary ";

/// Parsed `faultline: summary seed=0x<16 hex> exit=<code> vtime=<secs>s
/// events=<n> stops=<n> trace-hash=0x<16 hex>`.
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
            trace_hash: hex64(get("trace-hash")?)
                .map_err(|e| format!("trace-hash: {e} in {line:?}"))?,
        };
        if fields.len() != 6 {
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
                        events=812 stops=1033 trace-hash=0x9f86d081884c7d65";

    #[test]
    fn parses_a_summary_line() {
        let s = Summary::parse(LINE).unwrap();
        assert_eq!(s.seed, 7);
        assert_eq!(s.exit, 0);
        assert!((s.vtime_secs - 3600.000125).abs() < 1e-9);
        assert_eq!((s.events, s.stops), (812, 1033));
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
        assert!(Summary::parse(&format!("{LINE} extra=1")).is_err());
        assert!(Summary::from_stderr(&format!("{LINE}\n{LINE}\n")).is_err());
        assert!(Summary::from_stderr("faultline: no summary here\n").is_err());
    }
}
