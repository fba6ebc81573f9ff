//! Documented commands that cannot rot: the `$ command    # exit N` lines of
//! a markdown file's ```console blocks, run in file order with `/bin/sh -c`
//! and checked against the exit code written after them.
//!
//! A [`ConsoleSession`] runs them from a scratch copy of the workspace's
//! `docs/` beside a link to its `target/`, so `docs/examples/kv.toml` and
//! `target/release/faultline` resolve as from the workspace root, and the
//! commands may edit the copy. Text after the number (`# exit 1: a seed
//! failed`) is commentary. The lines after a command, up to the next, are
//! what it prints (stdout and stderr): they must appear in its output, in
//! order, each run of them between `...` lines contiguous (`...` stands for
//! any number of lines). Only indentation and wall-clock times
//! (`wall=0.6s`) are normalized: the seeds, hashes, event numbers and paths
//! shown must be true. Once a run of docs/examples/kv.toml has failed, the
//! commands see its first failing seed (16 hex digits) as
//! `$FIRST_FAILING_SEED` and its artifact directory as `$DIR`.
//!
//! A `$ ` line in any block but a console block is an error, so no prompt
//! goes unrun; templates with placeholders go in plain blocks or inline code.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::exec::run_command;
use crate::paths::{scratch_dir, target_dir, workspace_root};

/// How long one documented command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

/// One `$` line of a console block: the command, its exit code, and the
/// output lines shown after it.
#[derive(Debug)]
pub struct Console {
    /// The command line.
    pub cmd: String,
    /// The exit code written after it.
    pub code: i32,
    /// The output lines shown after it.
    pub shown: Vec<String>,
}

/// The `$` lines of a markdown file's console blocks with their expected
/// exit codes and shown output.
pub fn console_commands(markdown: &str) -> Vec<Console> {
    let mut out: Vec<Console> = Vec::new();
    let mut block: Option<&str> = None;
    for line in markdown.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            block = if block.is_some() {
                None
            } else {
                Some(fence.trim())
            };
            continue;
        }
        let Some(kind) = block else {
            continue;
        };
        let Some(cmd) = line.trim_start().strip_prefix("$ ") else {
            if let (Some(last), "console") = (out.last_mut(), kind) {
                last.shown.push(line.to_string());
            }
            continue;
        };
        assert_eq!(
            kind, "console",
            "a `$` command outside a ```console block would never run: {line}"
        );
        let (cmd, code) = cmd
            .rsplit_once("# exit ")
            .unwrap_or_else(|| panic!("console line without `# exit N`: {line}"));
        let digits: String = code.chars().take_while(char::is_ascii_digit).collect();
        let code = digits
            .parse()
            .unwrap_or_else(|_| panic!("no exit code after `# exit`: {line}"));
        out.push(Console {
            cmd: cmd.trim().to_string(),
            code,
            shown: Vec::new(),
        });
    }
    assert!(block.is_none(), "a code block is never closed");
    out
}

/// A line without its indentation (a list item's block indents its lines)
/// and with its wall-clock times (`wall=1.2s`) blanked.
fn normalize(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line.trim();
    while let Some(at) = rest.find("wall=") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        out.push('*');
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Checks that `output` shows the `shown` lines: each run of lines between
/// `...` lines appears in it, contiguous, the runs in order.
pub fn check_shown(output: &str, shown: &[String]) -> Result<(), String> {
    let out: Vec<String> = output.lines().map(normalize).collect();
    let mut at = 0;
    for chunk in shown.split(|l| l.trim() == "...") {
        let want: Vec<String> = chunk.iter().map(|l| normalize(l)).collect();
        if want.is_empty() {
            continue;
        }
        let last = out.len().checked_sub(want.len());
        let found = last.and_then(|last| (at..=last).find(|&i| out[i..i + want.len()] == want[..]));
        match found {
            Some(i) => at = i + want.len(),
            None => {
                return Err(format!(
                    "the output does not show, in order:\n{}",
                    want.join("\n")
                ))
            }
        }
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).unwrap();
        }
    }
}

/// The first seed that failed, from `<runs>/tutorial-kv/summary.json`.
fn first_failing_seed(runs: &Path) -> Option<String> {
    let summary = runs.join("tutorial-kv/summary.json");
    let text = std::fs::read_to_string(summary).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let seed = v["seeds"].as_array()?.iter().find(|s| s["pass"] == false)?["seed"].as_str()?;
    Some(seed.strip_prefix("0x")?.to_string())
}

/// A scratch workspace in which documented commands run one after another,
/// sharing the first failing seed of their runs of docs/examples/kv.toml.
pub struct ConsoleSession {
    root: PathBuf,
    runs: PathBuf,
    env: Vec<(String, OsString)>,
    seed: String,
}

impl ConsoleSession {
    /// A fresh scratch copy of `docs/` (and of the example histories of
    /// `tests/histories/`) beside a link to `target/`; `runs` is
    /// the artifacts directory the commands' runs of docs/examples/kv.toml
    /// use (where the failing seed is looked up), relative to the scratch
    /// directory if relative.
    pub fn new(label: &str, runs: impl AsRef<Path>) -> ConsoleSession {
        let root = scratch_dir(label);
        copy_dir(&workspace_root().join("docs"), &root.join("docs"));
        copy_dir(
            &workspace_root().join("tests/histories"),
            &root.join("tests/histories"),
        );
        std::os::unix::fs::symlink(target_dir(), root.join("target")).unwrap();
        ConsoleSession {
            runs: root.join(runs),
            root,
            env: Vec::new(),
            seed: String::new(),
        }
    }

    /// The scratch directory the commands run in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Sets an environment variable for every later command.
    pub fn env(&mut self, key: &str, value: impl Into<OsString>) -> &mut ConsoleSession {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// Runs every console command of the markdown file `doc` (a path for
    /// messages; its text is `markdown`) and checks its exit code; there
    /// must be at least `at_least`. Returns how many ran.
    pub fn run_markdown(&mut self, doc: &str, markdown: &str, at_least: usize) -> usize {
        let commands = console_commands(markdown);
        assert!(
            commands.len() >= at_least,
            "{doc} lost its commands: {commands:?}"
        );
        let count = commands.len();
        for Console {
            cmd,
            code: expected,
            shown,
        } in commands
        {
            if cmd.contains("$FIRST_FAILING_SEED") || cmd.contains("$DIR") {
                assert!(
                    !self.seed.is_empty(),
                    "{doc}: `{cmd}` before any run failed"
                );
            }
            let mut c = Command::new("/bin/sh");
            // One pipe for both streams keeps their lines in order.
            c.arg("-c")
                .arg(format!("exec 2>&1\n{cmd}"))
                .current_dir(&self.root);
            c.envs(self.env.iter().map(|(k, v)| (k, v)));
            c.env("FIRST_FAILING_SEED", &self.seed);
            c.env("DIR", self.failing_dir());
            let run = run_command(c, COMMAND_TIMEOUT);
            assert_eq!(
                run.status.code(),
                Some(expected),
                "{doc}: `{cmd}` exited wrongly\n{run}"
            );
            if let Err(e) = check_shown(&String::from_utf8_lossy(&run.stdout), &shown) {
                panic!("{doc}: `{cmd}`: {e}\n{run}");
            }
            if self.seed.is_empty() {
                self.seed = first_failing_seed(&self.runs).unwrap_or_default();
            }
        }
        count
    }

    /// The artifact directory of the first failing seed (empty before one failed).
    pub fn failing_dir(&self) -> PathBuf {
        if self.seed.is_empty() {
            PathBuf::new()
        } else {
            self.runs.join("tutorial-kv").join(&self.seed)
        }
    }
}
