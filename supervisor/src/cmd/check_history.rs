//! `faultline check-history FILE`: the linearizability checker on a history
//! recorded anywhere (faultline's JSON lines, Jepsen's history.edn,
//! Porcupine's key-value logs), outside any scenario.

use std::path::Path;

use history::{check_with, read_history_as, Budget, HistoryError, Verdict};

use crate::cmd::cli::CheckHistoryArgs;
use crate::report::history_page;

/// Exit code: the history is linearizable.
const LINEARIZABLE: i32 = 0;
/// Exit code: it is not.
const VIOLATION: i32 = 1;
/// Exit code: the file could not be read or parsed, or --html not written.
const BAD_INPUT: i32 = 2;
/// Exit code: the search budget ran out before an answer.
const GAVE_UP: i32 = 3;

/// Checks the file, prints the verdict, writes the page if asked.
pub fn run(args: &CheckHistoryArgs) -> i32 {
    let (format, ops) = match read_history_as(&args.file, args.format) {
        Ok(read) => read,
        Err(e) => {
            eprintln!("faultline: error: {}", located(&args.file, &e));
            return BAD_INPUT;
        }
    };
    let budget = Budget {
        max_states: args.budget,
    };
    let verdict = check_with(&ops, budget);
    let keys = ops
        .iter()
        .map(|o| o.key.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let code = match &verdict {
        Verdict::Linearizable => {
            println!(
                "linearizable: {} operations on {keys} key(s) ({} format)",
                ops.len(),
                format.name()
            );
            LINEARIZABLE
        }
        Verdict::Violation(v) => {
            println!("not linearizable: key {:?} {v}", v.key);
            println!("operations involved:");
            for &i in &v.operations {
                println!("  operation {i}: {}", ops[i].describe());
            }
            VIOLATION
        }
        Verdict::Unknown { reason } => {
            println!("gave up: {reason} (raise --budget)");
            GAVE_UP
        }
    };
    if let Some(out) = &args.html {
        let page = history_page::render(&args.file.display().to_string(), &ops, &verdict);
        if let Err(e) = std::fs::write(out, page) {
            eprintln!("faultline: error: cannot write {}: {e}", out.display());
            return BAD_INPUT;
        }
        eprintln!("faultline: wrote {}", out.display());
    }
    code
}

/// The error as `FILE:LINE: message` when it is about a line.
fn located(file: &Path, e: &HistoryError) -> String {
    match e.line() {
        Some(line) => format!("{}:{line}: {e}", file.display()),
        None => e.to_string(),
    }
}
