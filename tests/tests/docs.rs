//! The docs cannot rot.
//!
//! Every `$ command    # exit N` line in a ```console block of README.md,
//! docs/tutorial.md and docs/agents.md runs, in file order, and must exit
//! with N (see `faultline_e2e::console` for how). Text after the number
//! (`# exit 124: stopped by --timeout`) is commentary. The other lines of a
//! console block are the output the command prints; they are not compared
//! (trace hashes move whenever the supervisor changes).
//! `$FIRST_FAILING_SEED` is the first failing seed (16 hex digits) of the
//! file's runs of docs/examples/kv.toml, once one has failed.
//!
//! Commands that cannot run in a test (`scripts/setup` installs packages;
//! `cargo build` and `scripts/test` build and run the whole workspace) go
//! in ```sh blocks, and templates with placeholders (`faultline run <file>`)
//! in plain blocks or inline code: neither is run, and a `$ ` line in any
//! block but a console block is an error, so no prompt goes unrun. Console
//! commands use only loopback and write only under /tmp.
//!
//! docs/limitations.md is checked against the supervisor's source: it names
//! every call `handle` (supervisor/src/sys/mod.rs) refuses outright and every
//! errno a handler refuses with, and its table of calls faultline does not
//! trap names none that supervisor/src/sys/table.rs traps.

use std::sync::{Mutex, PoisonError};

use faultline_e2e::console::ConsoleSession;
use faultline_e2e::paths::workspace_root;

/// The files run one at a time: the README and the tutorial share
/// /tmp/faultline-tutorial, and the tutorial starts by removing it.
static ONE_FILE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs every console command of `doc` (relative to the workspace root) and
/// checks its exit code; `runs` is the artifacts directory its runs of
/// docs/examples/kv.toml use. Returns how many commands ran.
fn run_console_commands(doc: &str, runs: &str, at_least: usize) -> usize {
    let _one = ONE_FILE_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let text = std::fs::read_to_string(workspace_root().join(doc)).unwrap();
    ConsoleSession::new("docs", runs).run_markdown(doc, &text, at_least)
}

#[test]
fn every_readme_command_runs_and_exits_as_documented() {
    run_console_commands("README.md", "/tmp/faultline-tutorial/runs", 10);
}

#[test]
fn every_tutorial_command_runs_and_exits_as_documented() {
    run_console_commands("docs/tutorial.md", "/tmp/faultline-tutorial/runs", 8);
}

#[test]
fn every_agent_guide_command_runs_and_exits_as_documented() {
    run_console_commands("docs/agents.md", "/tmp/faultline-agents/runs", 10);
}

fn source(path: &str) -> String {
    std::fs::read_to_string(workspace_root().join(path))
        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The calls (without `SYS_`) of the match arms of `handle` in
/// supervisor/src/sys/mod.rs that refuse them outright: an arm's body is
/// `self.unsupported(..)` or `err(E..)`. Arms start on a line that starts
/// with `SYS_`; `| SYS_..` lines continue their pattern.
fn refused_outright(mod_rs: &str) -> Vec<String> {
    let body = mod_rs
        .split_once("fn handle(")
        .expect("sys/mod.rs has fn handle")
        .1;
    let body = body.split_once("\n    }\n").expect("the end of handle").0;
    let mut arms: Vec<String> = Vec::new();
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("SYS_") || t.starts_with("_ =>") || arms.is_empty() {
            arms.push(String::new());
        }
        arms.last_mut().unwrap().push_str(t);
        arms.last_mut().unwrap().push('\n');
    }
    let mut refused = Vec::new();
    for arm in arms {
        let Some((pattern, action)) = arm.split_once("=>") else {
            continue;
        };
        if !(action.contains("self.unsupported(") || action.contains("err(E")) {
            continue;
        }
        refused.extend(
            pattern
                .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .filter_map(|w| w.strip_prefix("SYS_"))
                .map(str::to_string),
        );
    }
    refused
}

/// The errnos of every `self.unsupported(c, why, errno)` call in `src`.
fn unsupported_errnos(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in src.match_indices("self.unsupported(") {
        let args = &src[at + "self.unsupported(".len()..];
        let mut depth = 1;
        let end = args
            .char_indices()
            .find(|&(_, ch)| {
                depth += match ch {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .expect("a closed call")
            .0;
        let errno = args[..end]
            .rsplit(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .find(|w| w.starts_with('E') && w.len() > 2)
            .unwrap_or_else(|| panic!("no errno in unsupported({})", &args[..end]));
        out.push(errno.to_string());
    }
    out
}

/// The names in supervisor/src/sys/table.rs's TRAPPED table.
fn trapped_names(syscalls_rs: &str) -> Vec<String> {
    syscalls_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("(SYS_"))
        .filter_map(|l| l.split('"').nth(1))
        .map(str::to_string)
        .collect()
}

/// The backquoted words of the first column of the table in the section of
/// `markdown` whose heading starts with `heading`.
fn first_column_names(markdown: &str, heading: &str) -> Vec<String> {
    let section = markdown
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("no section `## {heading}`"));
    section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| call"))
        .filter_map(|l| l.split('|').nth(1))
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn limitations_name_every_refused_call_and_no_trapped_one_as_untrapped() {
    let limitations = source("docs/limitations.md");
    let refused = refused_outright(&source("supervisor/src/sys/mod.rs"));
    assert!(
        refused.len() >= 5,
        "the parser lost handle's arms: {refused:?}"
    );
    for name in &refused {
        assert!(
            limitations.contains(&format!("`{name}`")),
            "docs/limitations.md does not name `{name}`, which the supervisor refuses"
        );
    }

    let sys = workspace_root().join("supervisor/src/sys");
    let mut errnos = Vec::new();
    for entry in std::fs::read_dir(&sys).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        errnos.extend(unsupported_errnos(&text));
    }
    assert!(errnos.len() >= 10, "the parser lost the unsupported calls");
    for errno in &errnos {
        assert!(
            limitations.contains(errno.as_str()),
            "docs/limitations.md does not mention {errno}, which a handler refuses with"
        );
    }

    let trapped = trapped_names(&source("supervisor/src/sys/table.rs"));
    assert!(trapped.len() >= 50, "the parser lost the TRAPPED table");
    let untrapped = first_column_names(&limitations, "Calls faultline does not trap");
    assert!(untrapped.len() >= 50, "the untrapped table lost its calls");
    for name in &untrapped {
        assert!(
            !trapped.contains(name),
            "docs/limitations.md says `{name}` is not trapped, but syscalls.rs traps it"
        );
    }
}
