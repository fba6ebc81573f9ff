//! `run --junit FILE`: the seeds as JUnit XML test cases, so CI systems list
//! each seed as a test (failed ones with their check and message; seeds not
//! run after the first failure as skipped).

use std::fmt::Write as _;

use crate::report::artifacts::Verdict;
use crate::report::summary::SeedResult;

/// The XML document for scenario `name`: `results` in order, then `not_run`.
pub fn document(name: &str, results: &[SeedResult], not_run: &[u64]) -> String {
    let failures = results
        .iter()
        .filter(|r| {
            matches!(
                r.verdict(),
                Verdict::Fail | Verdict::Stuck | Verdict::Nondeterministic
            )
        })
        .count();
    let errors = results
        .iter()
        .filter(|r| matches!(r.verdict(), Verdict::Error | Verdict::Interrupted))
        .count();
    let secs: f64 = results.iter().map(|r| r.wall_ms as f64 / 1e3).sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    let _ = writeln!(
        x,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{}\" time=\"{secs:.3}\">",
        escape(name),
        results.len() + not_run.len(),
        not_run.len()
    );
    for r in results {
        let _ = write!(
            x,
            "    <testcase classname=\"{}\" name=\"seed 0x{:016x}\" time=\"{:.3}\"",
            escape(name),
            r.seed,
            r.wall_ms as f64 / 1e3
        );
        let check = escape(r.check.as_deref().unwrap_or(r.verdict().word()));
        let message = escape(r.message.as_deref().unwrap_or(""));
        let first_line = message.lines().next().unwrap_or("");
        match r.verdict() {
            Verdict::Pass => x.push_str("/>\n"),
            Verdict::Fail | Verdict::Stuck | Verdict::Nondeterministic => {
                let _ = write!(
                    x,
                    ">\n      <failure type=\"{check}\" message=\"{first_line}\">{message}</failure>\n    </testcase>\n"
                );
            }
            Verdict::Error | Verdict::Interrupted => {
                let _ = write!(
                    x,
                    ">\n      <error type=\"{check}\" message=\"{first_line}\">{message}</error>\n    </testcase>\n"
                );
            }
        }
    }
    for seed in not_run {
        let _ = writeln!(
            x,
            "    <testcase classname=\"{}\" name=\"seed 0x{seed:016x}\" time=\"0\">\n      <skipped message=\"not run: stopped after the first failure (use --keep-going)\"/>\n    </testcase>",
            escape(name)
        );
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// Text as XML character data or attribute value.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}
