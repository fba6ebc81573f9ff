//! The disk fault kinds (`disk_full`, `corrupt`), each with a small program
//! whose bug only that fault exposes, and the `[disk] unsynced` choices of
//! what a crash keeps of unsynced writes. Every run is made twice and must
//! give the same verdicts and trace hashes.

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{NodeOutcome, Program, ScenarioFile, ScenarioRun};

const SEED: u64 = 0xd15c;

/// One node `w` running `records ARGS...` on its simulated disk, plus
/// `extra` (faults, a `[disk]` section), run with `runner_flags`.
fn records_scenario(dir_name: &str, args: &[&str], extra: &str, seeds: u32) -> ScenarioRun {
    let dir = scratch_dir(dir_name);
    let data = dir.join("mnt").join("w");
    let mut command = vec![
        Program::c("records").path().display().to_string(),
        args[0].to_string(),
        data.display().to_string(),
    ];
    command.extend(args[1..].iter().map(|a| a.to_string()));
    let command: Vec<String> = command.iter().map(|w| format!("{w:?}")).collect();
    let text = format!(
        r#"name = "records"
duration = "3s"

[[node]]
name = "w"
data_dir = "{data}"
command = [{command}]
{extra}"#,
        data = data.display(),
        command = command.join(", "),
    );
    let file = ScenarioFile::raw(&dir, "records.toml", &text);
    let runner = file.runner();
    let runner = if seeds == 1 {
        runner.seed(SEED)
    } else {
        runner.seeds(seeds).flag("--keep-going")
    };
    run_scenario_twice(&runner)
}

/// Node `w` failed with `what` at the start of its stderr.
#[track_caller]
fn assert_writer_failed(run: &ScenarioRun, what: &str) {
    run.expect_code(1);
    assert_eq!(run.report().node("w"), Some(&NodeOutcome::Exit(1)), "\n{run}");
    let err = run.node_stderr(SEED, "w");
    assert!(err.starts_with(what), "w stderr: {err:?}\n{run}");
}

const DISK_FULL: &str = r#"
[[fault]]
kind = "disk_full"
node = "w"
at = "300ms"
until = "600ms"
"#;

/// A writer that ignores write's result loses the records written while
/// the disk was full; one that retries on ENOSPC keeps them all (and sees
/// statfs report no free space meanwhile); without the fault the careless
/// writer is fine.
#[test]
fn disk_full_exposes_a_writer_ignoring_enospc() {
    let run = records_scenario("disk-full", &["append", "40", "ignore"], DISK_FULL, 1);
    assert_writer_failed(&run, "LOST RECORDS: wrote 40, the log holds ");
    // The window opens and closes; every write in it is a write_error.
    let kinds: Vec<String> = run.faults(SEED).into_iter().map(|f| f.kind).collect();
    assert_eq!(kinds.first().map(String::as_str), Some("disk_full"), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("disk_space"), "{kinds:?}");
    let errors = &kinds[1..kinds.len() - 1];
    assert!(
        !errors.is_empty() && errors.iter().all(|k| k == "write_error"),
        "{kinds:?}"
    );

    let run = records_scenario("disk-full-retry", &["append", "40", "retry"], DISK_FULL, 1);
    run.expect_pass();
    let out = run.node_stdout(SEED, "w");
    assert!(
        out.contains(": ENOSPC, statfs bavail=0; retrying\n")
            && out.ends_with("append: 40 records written and held\n"),
        "w stdout: {out:?}\n{run}"
    );

    let run = records_scenario("disk-full-none", &["append", "40", "ignore"], "", 1);
    run.expect_pass();
}

const ROT: &str = r#"
[[fault]]
kind = "corrupt"
node = "w"
at = "500ms"
path = "table"
bytes = 3
"#;

/// Bit rot in a synced table: a reader that trusts its bytes serves a
/// wrong value; one that checks each record's checksum detects the rot and
/// drops the record; without the fault the trusting reader is fine.
#[test]
fn corrupt_exposes_a_reader_without_checksums() {
    let run = records_scenario("disk-rot", &["rot", "100", "plain"], ROT, 1);
    assert_writer_failed(&run, "WRONG DATA: record ");
    let rot = run.faults_of(SEED, "corrupt");
    assert_eq!(rot.len(), 1, "{rot:?}\n{run}");
    assert!(rot[0].detail.contains("table byte "), "{rot:?}");

    let run = records_scenario("disk-rot-crc", &["rot", "100", "crc"], ROT, 1);
    run.expect_pass();
    let out = run.node_stdout(SEED, "w");
    assert!(
        out.contains("detected by its checksum; dropped\n"),
        "w stdout: {out:?}\n{run}"
    );

    records_scenario("disk-rot-none", &["rot", "100", "plain"], "", 1).expect_pass();
}
