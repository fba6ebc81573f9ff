//! Durations on the command line (`12s`, `1.5s`, `500ms`), the way the
//! scenario files write them.

use std::time::Duration;

/// A command-line duration that is not a number of seconds or milliseconds.
#[derive(Debug, thiserror::Error)]
#[error("bad duration {0:?}: a number of seconds or milliseconds such as 12s, 1.5s or 500ms")]
pub struct BadDuration(String);

/// Parses `12s`, `1.5s`, `500ms` (a bare number is seconds).
pub fn parse(text: &str) -> Result<Duration, BadDuration> {
    let (number, unit) = match text.strip_suffix("ms") {
        Some(n) => (n, 1e-3),
        None => (text.strip_suffix('s').unwrap_or(text), 1.0),
    };
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .map(|n| Duration::from_secs_f64(n * unit))
        .ok_or_else(|| BadDuration(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_milliseconds() {
        assert_eq!(parse("12s").unwrap(), Duration::from_secs(12));
        assert_eq!(parse("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse("3").unwrap(), Duration::from_secs(3));
        assert!(parse("soon").is_err());
        assert!(parse("-1s").is_err());
    }
}
