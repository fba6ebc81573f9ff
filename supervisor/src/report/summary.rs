//! summary.json: one run's (or one shard's) verdicts, which `faultline merge`
//! combines. Seeds and hashes are 0x-hex strings, as in report.json (jq and
//! JavaScript round decimal u64s); older summaries with numbers still read.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::report::artifacts::{Report, Verdict};
use crate::sim::seeds::{parse_seed, SeedTextError};

/// One shard's (or one run's) verdicts, for `faultline merge`.
#[derive(Serialize, Deserialize)]
pub struct Summary {
    /// Artifact format version.
    pub format: u32,
    /// The scenario.
    pub scenario: String,
    /// Every seed run, in order.
    pub seeds: Vec<SeedResult>,
}

/// What one seed gave.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeedResult {
    /// The seed.
    #[serde(with = "hex64")]
    pub seed: u64,
    /// Every check passed.
    pub pass: bool,
    /// The trace hash.
    #[serde(with = "hex64")]
    pub hash: u64,
    /// pass, fail, stuck, interrupted or error (older summaries: from `pass`).
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// The failing check, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
    /// Its message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Wall-clock milliseconds the seed took.
    #[serde(default)]
    pub wall_ms: u64,
    /// The verdict lines for the terminal.
    #[serde(skip)]
    pub text: String,
}

impl SeedResult {
    /// The result a seed's report.json records (`text` left empty).
    pub fn from_report(r: &Report) -> Result<SeedResult, SeedTextError> {
        Ok(SeedResult {
            seed: parse_seed(&r.seed)?,
            pass: r.pass,
            hash: parse_seed(&r.trace_hash)?,
            verdict: Some(r.verdict),
            check: r.failure.as_ref().map(|f| f.check.clone()),
            message: r.failure.as_ref().map(|f| f.message.clone()),
            wall_ms: r.wall_ms,
            text: String::new(),
        })
    }

    /// The verdict, also for summaries older than the field.
    pub fn verdict(&self) -> Verdict {
        self.verdict.unwrap_or(if self.pass {
            Verdict::Pass
        } else {
            Verdict::Fail
        })
    }
}

/// u64 as "0x" and 16 hex digits; reads that, or a JSON number.
mod hex64 {
    use super::*;

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("0x{v:016x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Number(u64),
            Text(String),
        }
        match Either::deserialize(d)? {
            Either::Number(n) => Ok(n),
            Either::Text(t) => crate::sim::seeds::parse_seed(&t).map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_hex_and_reads_hex_or_numbers() {
        let r: SeedResult =
            serde_json::from_str(r#"{"seed":18446744073709551615,"pass":false,"hash":5}"#).unwrap();
        assert_eq!((r.seed, r.hash), (u64::MAX, 5));
        assert_eq!(r.verdict(), Verdict::Fail);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""seed":"0xffffffffffffffff""#), "{text}");
        let back: SeedResult = serde_json::from_str(&text).unwrap();
        assert_eq!((back.seed, back.hash), (u64::MAX, 5));
    }
}
