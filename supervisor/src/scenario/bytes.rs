//! Human sizes for scenario files: `10GiB`, `512MiB`, `4KiB`, `100GB`,
//! `4096B` (binary units are powers of 1024, decimal ones of 1000).

/// A size that does not parse.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SizeError {
    /// No unit after the number.
    #[error("size {0:?} needs a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")]
    NoUnit(String),
    /// The number is not a whole number.
    #[error("size {0:?}: {1:?} is not a whole number")]
    BadNumber(String, String),
    /// The unit is unknown.
    #[error("size {0:?}: unknown unit {1:?} (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)")]
    BadUnit(String, String),
    /// The size does not fit 64 bits.
    #[error("size {0:?} is too large")]
    TooLarge(String),
}

/// Parses a size into bytes.
pub fn parse_bytes(s: &str) -> Result<u64, SizeError> {
    let s = s.trim();
    let split = s
        .find(|ch: char| !ch.is_ascii_digit())
        .ok_or_else(|| SizeError::NoUnit(s.to_string()))?;
    let (num, unit) = s.split_at(split);
    let value: u64 = num
        .parse()
        .map_err(|_| SizeError::BadNumber(s.to_string(), num.to_string()))?;
    let scale: u64 = match unit.trim() {
        "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        other => return Err(SizeError::BadUnit(s.to_string(), other.to_string())),
    };
    value
        .checked_mul(scale)
        .ok_or_else(|| SizeError::TooLarge(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::{parse_bytes, SizeError};

    #[test]
    fn units() {
        assert_eq!(parse_bytes("10GiB"), Ok(10 << 30));
        assert_eq!(parse_bytes("512 MiB"), Ok(512 << 20));
        assert_eq!(parse_bytes("100GB"), Ok(100_000_000_000));
        assert_eq!(parse_bytes("4096B"), Ok(4096));
        assert!(matches!(parse_bytes("10"), Err(SizeError::NoUnit(_))));
        assert!(matches!(parse_bytes("1.5GiB"), Err(SizeError::BadUnit(..))));
        assert!(matches!(parse_bytes("GiB"), Err(SizeError::BadNumber(..))));
        assert!(matches!(
            parse_bytes("99999999TiB"),
            Err(SizeError::TooLarge(_))
        ));
    }
}
