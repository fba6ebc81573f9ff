//! Human durations for flags and scenario files: `1h`, `20s`, `5ms`, `1us`,
//! `250ns`, or a bare `0`.

/// Why a duration does not parse; each names the text as written.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DurationError {
    /// A number without its unit (only `0` may go without).
    #[error("duration {text:?} needs a unit (ns, us, ms, s, m, h)")]
    NoUnit {
        /// The duration as written.
        text: String,
    },
    /// Nothing comes before the unit (`abc`, `s`).
    #[error("duration {text:?} does not start with a number (1s, 250ms, 0)")]
    NoNumber {
        /// The duration as written.
        text: String,
    },
    /// What comes before the unit is not a number.
    #[error("duration {text:?}: {number:?} is not a number")]
    NotANumber {
        /// The duration as written.
        text: String,
        /// The part before the unit.
        number: String,
    },
    /// A unit that is none of ns, us, ms, s, m, h.
    #[error("duration {text:?}: unknown unit {unit:?} (ns, us, ms, s, m, h)")]
    UnknownUnit {
        /// The duration as written.
        text: String,
        /// The unit.
        unit: String,
    },
    /// More nanoseconds than a signed 64-bit number holds.
    #[error("duration {text:?} is too long")]
    TooLong {
        /// The duration as written.
        text: String,
    },
}

/// Parses a duration into nanoseconds.
pub fn parse_ns(s: &str) -> Result<u64, DurationError> {
    let s = s.trim();
    if s == "0" {
        return Ok(0);
    }
    let split = s
        .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
        .ok_or_else(|| DurationError::NoUnit { text: s.into() })?;
    let (num, unit) = s.split_at(split);
    if num.is_empty() {
        return Err(DurationError::NoNumber { text: s.into() });
    }
    let value: f64 = num.parse().map_err(|_| DurationError::NotANumber {
        text: s.into(),
        number: num.into(),
    })?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(DurationError::UnknownUnit {
                text: s.into(),
                unit: unit.into(),
            })
        }
    };
    Ok((value * scale).round() as u64)
}

/// Parses a duration that may start with `-` (a clock step backwards).
pub fn parse_signed_ns(s: &str) -> Result<i64, DurationError> {
    let s = s.trim();
    let (neg, text) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let ns =
        i64::try_from(parse_ns(text)?).map_err(|_| DurationError::TooLong { text: s.into() })?;
    Ok(if neg { -ns } else { ns })
}

#[cfg(test)]
mod tests {
    use super::{parse_ns, parse_signed_ns};

    #[test]
    fn units() {
        assert_eq!(parse_ns("1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_ns("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_ns("1us").unwrap(), 1_000);
        assert_eq!(parse_ns("0").unwrap(), 0);
        assert_eq!(
            parse_ns("10").unwrap_err().to_string(),
            "duration \"10\" needs a unit (ns, us, ms, s, m, h)"
        );
        assert_eq!(
            parse_ns("10 parsecs").unwrap_err().to_string(),
            "duration \"10 parsecs\": unknown unit \" parsecs\" (ns, us, ms, s, m, h)"
        );
        assert_eq!(
            parse_ns("abc").unwrap_err().to_string(),
            "duration \"abc\" does not start with a number (1s, 250ms, 0)"
        );
        assert_eq!(
            parse_ns("1.2.3s").unwrap_err().to_string(),
            "duration \"1.2.3s\": \"1.2.3\" is not a number"
        );
        assert_eq!(
            parse_signed_ns("-99999999999h").unwrap_err().to_string(),
            "duration \"-99999999999h\" is too long"
        );
        assert_eq!(parse_signed_ns("-1.5s").unwrap(), -1_500_000_000);
        assert_eq!(parse_signed_ns("2s").unwrap(), 2_000_000_000);
    }
}
