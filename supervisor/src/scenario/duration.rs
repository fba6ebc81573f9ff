//! Human durations for flags and scenario files: `1h`, `20s`, `5ms`, `1us`,
//! `250ns`, or a bare `0`.

/// Parses a duration into nanoseconds.
pub fn parse_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    if s == "0" {
        return Ok(0);
    }
    let split = s
        .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
        .ok_or_else(|| format!("duration {s:?} needs a unit (ns, us, ms, s, m, h)"))?;
    let (num, unit) = s.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("duration {s:?}: {num:?} is not a number"))?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(format!(
                "duration {s:?}: unknown unit {unit:?} (ns, us, ms, s, m, h)"
            ))
        }
    };
    Ok((value * scale).round() as u64)
}

/// Parses a duration that may start with `-` (a clock step backwards).
pub fn parse_signed_ns(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let (neg, text) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    let ns = i64::try_from(parse_ns(text)?).map_err(|_| format!("duration {s:?} is too long"))?;
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
        assert!(parse_ns("10").is_err());
        assert!(parse_ns("10 parsecs").is_err());
        assert_eq!(parse_signed_ns("-1.5s").unwrap(), -1_500_000_000);
        assert_eq!(parse_signed_ns("2s").unwrap(), 2_000_000_000);
    }
}
