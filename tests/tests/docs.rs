//! The docs cannot rot.
//!
//! Every `$ command    # exit N` line in a ```console block of README.md,
//! docs/tutorial.md and docs/agents.md runs, in file order, and must exit
//! with N, and the output shown under it must be what it prints (see
//! `faultline_e2e::console` for how: only indentation and wall times are
//! normalized). Text after the number (`# exit 124: stopped by --timeout`)
//! is commentary.
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
//! docs/limitations.md is checked against the syscall table
//! (supervisor/src/sys/table/, printed by the hidden `faultline
//! syscall-table`): its "Every system call" section is that output verbatim,
//! it explains every call the table refuses and every errno the table or a
//! handler refuses with, its table of calls faultline does not trap names
//! none that the table traps, and every call the table reports as host
//! state is explained.

use std::process::Command;
use std::sync::{Mutex, PoisonError};

use faultline_e2e::console::ConsoleSession;
use faultline_e2e::paths::{faultline_bin, workspace_root};

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

/// The errnos of every `self.unsupported(c, why, errno)` call in `src`
/// whose errno is a constant (`EPERM`, `libc::EINVAL`); a call that passes
/// on the variable `errno` refuses as the syscall table says, and the
/// table's errnos are checked from its output.
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
        let last = args[..end]
            .rsplit(',')
            .find(|a| !a.trim().is_empty())
            .expect("an errno argument")
            .trim();
        if last == "errno" {
            continue;
        }
        let errno = last
            .rsplit(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
            .find(|w| w.starts_with('E') && w.len() > 2)
            .unwrap_or_else(|| panic!("no errno in unsupported({})", &args[..end]));
        out.push(errno.to_string());
    }
    out
}

/// `faultline syscall-table`: the syscall table as the markdown of
/// docs/limitations.md's "Every system call" section.
fn syscall_table() -> String {
    let out = Command::new(faultline_bin())
        .arg("syscall-table")
        .output()
        .expect("run faultline syscall-table");
    assert!(
        out.status.success(),
        "faultline syscall-table failed: {out:?}"
    );
    String::from_utf8(out.stdout).expect("UTF-8 markdown")
}

/// The section of `markdown` whose heading starts with `heading`.
fn section<'a>(markdown: &'a str, heading: &str) -> &'a str {
    markdown
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("no section `## {heading}`"))
}

/// The calls of the table's support-level rows (`| level | family | calls |`)
/// whose level is one of `levels`.
fn calls_of(table: &str, levels: &[&str]) -> Vec<String> {
    table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() == 5 && levels.contains(&cells[1])).then(|| cells[3].to_string())
        })
        .flat_map(|cell| {
            cell.split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The errnos of the refusals table (`| call | number | support | errno | why |`).
fn table_errnos(table: &str) -> Vec<String> {
    table
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells.len() == 7 && cells[4].starts_with('E')).then(|| cells[4].to_string())
        })
        .collect()
}

/// The backquoted words of the first column of the table in the section of
/// `markdown` whose heading starts with `heading`.
fn first_column_names(markdown: &str, heading: &str) -> Vec<String> {
    section(markdown, heading)
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
fn limitations_match_the_syscall_table() {
    let limitations = source("docs/limitations.md");
    let table = syscall_table();

    // The section "Every system call" is the table, verbatim.
    let every: Vec<&str> = section(&limitations, "Every system call")
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect();
    let generated: Vec<&str> = table.lines().filter(|l| l.starts_with('|')).collect();
    assert!(generated.len() >= 30, "the syscall table lost its rows");
    let differ = (0..every.len().max(generated.len()))
        .find(|&i| every.get(i) != generated.get(i))
        .map(|i| (every.get(i), generated.get(i)));
    assert!(
        differ.is_none(),
        "docs/limitations.md's \"Every system call\" section is not the syscall table \
         (paste the output of `target/release/faultline syscall-table` into it): \
         the doc has {:?} where the table has {:?}",
        differ.unwrap().0,
        differ.unwrap().1
    );

    // Every call the table refuses (always, or on a data_dir or simulated
    // socket) is explained in "Calls that are refused".
    let refused_section = section(&limitations, "Calls that are refused");
    let refused = calls_of(&table, &["refused", "guarded"]);
    assert!(
        refused.len() >= 15,
        "the table lost its refusals: {refused:?}"
    );
    for name in &refused {
        assert!(
            refused_section.contains(&format!("`{name}`")),
            "docs/limitations.md's refused calls do not name `{name}`, which the table refuses"
        );
    }

    // Every errno the table or a handler refuses with is mentioned.
    let mut errnos = table_errnos(&table);
    let mut dirs = vec![workspace_root().join("supervisor/src/sys")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                errnos.extend(unsupported_errnos(&std::fs::read_to_string(path).unwrap()));
            }
        }
    }
    assert!(errnos.len() >= 20, "the parser lost the unsupported calls");
    for errno in &errnos {
        assert!(
            refused_section.contains(errno.as_str()),
            "docs/limitations.md's refused calls do not mention {errno}, which the supervisor refuses with"
        );
    }

    // The untrapped table names no trapped call, and every call whose
    // answer depends on the host.
    let trapped = calls_of(&table, &["modelled", "refused", "guarded"]);
    assert!(trapped.len() >= 100, "the table lost its trapped calls");
    let untrapped = first_column_names(&limitations, "Calls faultline does not trap");
    assert!(untrapped.len() >= 50, "the untrapped table lost its calls");
    for name in &untrapped {
        assert!(
            !trapped.contains(name),
            "docs/limitations.md says `{name}` is not trapped, but the syscall table traps it"
        );
    }
    let partly = section(&limitations, "Trapped calls that are modelled only in part");
    for name in calls_of(&table, &["reported"]) {
        assert!(
            partly.contains(&format!("`{name}`")),
            "docs/limitations.md's partly modelled calls do not say what `{name}` (reported) answers"
        );
    }
}
