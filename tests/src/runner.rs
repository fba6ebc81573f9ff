//! Small helpers for tests of `faultline run`, `replay` and `pin` as a user
//! drives them: a one-node `sh -c` scenario, a faultline verb, a line of
//! its output, a seed's report.json.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::exec::{run_command, Run, DEFAULT_TIMEOUT};
use crate::paths::{faultline_bin, scratch_dir};
use crate::scenario::{ScenarioFile, ScenarioRun};

/// The first stderr line of `run` containing `needle`, if any.
pub fn any_line<'a>(run: &'a Run, needle: &str) -> Option<&'a str> {
    run.stderr.lines().find(|l| l.contains(needle))
}

/// Runs a faultline verb with arguments (in this process's directory).
pub fn faultline(args: &[&str]) -> Run {
    faultline_in(None, args)
}

/// Runs a faultline verb with arguments in directory `cwd`, if given.
pub fn faultline_in(cwd: Option<&Path>, args: &[&str]) -> Run {
    let mut c = Command::new(faultline_bin());
    c.args(args);
    if let Some(dir) = cwd {
        c.current_dir(dir);
    }
    run_command(c, DEFAULT_TIMEOUT)
}

/// A one-node scenario `runner-<tag>` (5 s) running `sh -c SCRIPT`, plus
/// extra TOML, in a fresh scratch directory.
pub fn sh_scenario(tag: &str, script: &str, extra: &str) -> ScenarioFile {
    command_scenario(tag, &["/bin/sh", "-c", script], extra)
}

/// A one-node scenario `runner-<tag>` (5 s) whose node `n` runs `command`.
pub fn command_scenario(tag: &str, command: &[&str], extra: &str) -> ScenarioFile {
    let dir = scratch_dir(&format!("runner-{tag}"));
    let text = format!(
        "name = \"runner-{tag}\"\nduration = \"5s\"\n\n[[node]]\nname = \"n\"\ncommand = {command:?}\n{extra}"
    );
    ScenarioFile::raw(&dir, "s.toml", &text)
}

/// A seed directory's report.json.
#[track_caller]
pub fn report_json(seed_dir: &Path) -> serde_json::Value {
    let path = seed_dir.join("report.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The artifact directory of the first seed of a run whose verdict is not PASS.
#[track_caller]
pub fn failing_dir(run: &ScenarioRun) -> PathBuf {
    let failed = run
        .reports()
        .into_iter()
        .find(|r| !r.pass)
        .unwrap_or_else(|| panic!("no failing verdict\n{run}"));
    run.seed_dir(failed.seed)
}
