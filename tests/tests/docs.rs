//! The docs cannot rot: every `$ command    # exit N` line in the console
//! blocks of docs/tutorial.md runs, in order, from a copy of `docs/` beside
//! the workspace's `target/`, and must exit with N. `$FIRST_FAILING_SEED` is
//! the first failing seed of the tutorial's scenario once a run has failed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use faultline_e2e::exec::run_command;
use faultline_e2e::paths::{scratch_dir, target_dir, workspace_root};

/// Where the tutorial's runs keep their artifacts (it says so).
const RUNS: &str = "/tmp/faultline-tutorial/runs/tutorial-kv";

/// The `$` lines of a markdown file's console blocks with their expected exit codes.
fn console_commands(markdown: &str) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    let mut in_console = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_console = line.trim() == "```console";
            continue;
        }
        let Some(cmd) = line.strip_prefix("$ ").filter(|_| in_console) else {
            continue;
        };
        let (cmd, code) = cmd
            .rsplit_once("# exit ")
            .unwrap_or_else(|| panic!("console line without `# exit N`: {line}"));
        out.push((
            cmd.trim().to_string(),
            code.trim().parse().expect("exit code"),
        ));
    }
    out
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

/// The first seed that failed, from the run's summary.json.
fn first_failing_seed() -> Option<String> {
    let text = std::fs::read_to_string(Path::new(RUNS).join("summary.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let seed = v["seeds"].as_array()?.iter().find(|s| s["pass"] == false)?["seed"].as_u64()?;
    Some(format!("{seed:016x}"))
}

#[test]
fn every_tutorial_command_runs_and_exits_as_documented() {
    let root: PathBuf = scratch_dir("docs");
    copy_dir(&workspace_root().join("docs"), &root.join("docs"));
    std::os::unix::fs::symlink(target_dir(), root.join("target")).unwrap();
    let tutorial = std::fs::read_to_string(root.join("docs/tutorial.md")).unwrap();
    let commands = console_commands(&tutorial);
    assert!(
        commands.len() >= 8,
        "the tutorial lost its commands: {commands:?}"
    );
    let mut seed = String::new();
    for (cmd, expected) in commands {
        let mut c = Command::new("/bin/sh");
        c.arg("-c")
            .arg(&cmd)
            .current_dir(&root)
            .env("FIRST_FAILING_SEED", &seed);
        let run = run_command(c, Duration::from_secs(600));
        assert_eq!(
            run.status.code(),
            Some(expected),
            "`{cmd}` exited wrongly\n{run}"
        );
        if seed.is_empty() {
            seed = first_failing_seed().unwrap_or_default();
        }
    }
    assert!(!seed.is_empty(), "the tutorial's first run did not fail");
}
