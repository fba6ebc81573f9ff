//! What a seed's artifacts and failure block say besides the verdict
//! (issue 16): the diagnostics faultline prints (refused calls, blocked
//! connects, ...) are also in the seed's faultline.log and counted in
//! report.json, and the failure block quotes a failed node's last stderr
//! lines and keeps every line of a checker's output indented inside it.

use std::path::Path;

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{Program, ScenarioFile, ScenarioRun};

/// A one-node scenario running `command`, plus `extra` TOML.
fn scenario(tag: &str, command: &[String], extra: &str) -> ScenarioFile {
    let dir = scratch_dir(&format!("artifacts-{tag}"));
    let text = format!(
        "name = \"artifacts-{tag}\"\nduration = \"5s\"\n\n[[node]]\nname = \"n\"\ncommand = {command:?}\n{extra}"
    );
    ScenarioFile::raw(&dir, "s.toml", &text)
}

/// `/bin/sh -c script` as a node command.
fn sh(script: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), script.into()]
}

/// A text artifact of a seed directory.
#[track_caller]
fn artifact(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.join(name).display()))
}

/// The lines of the failure block: from `FAIL seed=` to the `replay:` line.
#[track_caller]
fn failure_block(run: &ScenarioRun) -> Vec<&str> {
    let lines: Vec<&str> = run.run.stderr.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("FAIL seed="))
        .unwrap_or_else(|| panic!("no failure block\n{run}"));
    let end = start
        + lines[start..]
            .iter()
            .position(|l| l.starts_with("  replay:"))
            .unwrap_or_else(|| panic!("the failure block has no replay line\n{run}"));
    lines[start..end].to_vec()
}

/// net_escape reaches for the host network: a connect and a datagram to a
/// host that is not simulated are blocked and a raw socket is refused. Each
/// line faultline prints is also in faultline.log, with its kind, and
/// report.json counts them by kind.
#[test]
fn diagnostics_are_in_faultline_log_and_counted_in_report_json() {
    let program = Program::c("net_escape").path().display().to_string();
    let file = scenario("diag", &[program, "9".into()], "");
    let run = run_scenario_twice(&file.runner().seed(5));
    run.expect_pass();
    let dir = run.seed_dir(5);
    let report: serde_json::Value = serde_json::from_str(&artifact(&dir, "report.json")).unwrap();
    assert_eq!(
        report["diagnostics"],
        serde_json::json!({"blocked_connect": 2, "refused_call": 1}),
        "{report}"
    );
    let log = artifact(&dir, "faultline.log");
    for (kind, words) in [
        ("blocked_connect", "blocked connect to 127.0.0.2"),
        ("blocked_connect", "blocked datagram"),
        ("refused_call", "returning EPROTONOSUPPORT"),
    ] {
        let line = log
            .lines()
            .find(|l| l.contains(words))
            .unwrap_or_else(|| panic!("faultline.log lacks {words:?}:\n{log}"));
        assert!(line.contains(kind), "{line:?} is not marked {kind}");
        assert!(line.starts_with("t="), "{line:?} has no virtual time");
        assert!(
            run.run.stderr.contains(words),
            "the terminal lacks {words:?}\n{run}"
        );
    }
}

/// A node that fails has its last stderr lines quoted (not its stdout), and
/// a checker's multi-line output stays indented inside the failure block.
#[test]
fn the_failure_block_quotes_stderr_and_indents_checker_output() {
    let script =
        "echo 'out: the last stdout line'; echo 'err: first' >&2; echo 'err: second' >&2; exit 3";
    let run = run_scenario_twice(&scenario("stderr", &sh(script), "").runner().seed(1));
    run.expect_code(1);
    let block = failure_block(&run);
    let text = block.join("\n");
    assert!(text.contains("node n exited with code 3"), "{text}\n{run}");
    let first = block.iter().position(|l| l.contains("err: first"));
    let second = block.iter().position(|l| l.contains("err: second"));
    assert!(
        matches!((first, second), (Some(a), Some(b)) if a < b),
        "the block does not quote both stderr lines in order:\n{text}"
    );
    assert!(
        !text.contains("the last stdout line"),
        "the block quotes stdout:\n{text}"
    );
    assert!(
        block[1..].iter().all(|l| l.starts_with("  ")),
        "a line of the block is not indented:\n{text}"
    );

    let checker = "\n[check]\ncommand = [\"/bin/sh\", \"-c\", \"echo 'bad: one'; echo 'bad: two'; exit 1\"]\n";
    let run = run_scenario_twice(
        &scenario("checker", &sh("echo fine"), checker)
            .runner()
            .seed(1),
    );
    run.expect_code(1);
    let block = failure_block(&run);
    let text = block.join("\n");
    for wanted in ["  bad: one", "  bad: two"] {
        assert!(
            block.iter().any(|l| l.starts_with(wanted)),
            "the block lacks {wanted:?}:\n{text}"
        );
    }
    assert!(
        block[1..].iter().all(|l| l.starts_with("  ")),
        "a line of the checker's output is not indented:\n{text}"
    );
}
