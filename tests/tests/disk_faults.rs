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
    assert_eq!(
        run.report().node("w"),
        Some(&NodeOutcome::Exit(1)),
        "\n{run}"
    );
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
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("disk_full"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("disk_space"),
        "{kinds:?}"
    );
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

/// What survived of 20 unsynced two-sector records when the writer's node
/// crashed, per seed of 8, with `[disk] unsynced = model` (None: the key
/// left out): one character per record (1 intact, t torn, 0 lost).
fn survivors(model: Option<&str>) -> Vec<String> {
    let disk = model.map_or(String::new(), |m| format!("\n[disk]\nunsynced = \"{m}\"\n"));
    let crash = "\n[[fault]]\nkind = \"crash\"\nat = \"500ms\"\nnode = \"w\"\ndown = \"100ms\"\n";
    let label = format!("disk-unsynced-{}", model.unwrap_or("default"));
    let run = records_scenario(&label, &["crashy", "20"], &format!("{crash}{disk}"), 8);
    run.expect_pass();
    run.reports()
        .iter()
        .map(|seed| {
            let out = run.node_stdout(seed.seed, "w");
            let line = out
                .lines()
                .find_map(|l| l.strip_prefix("survived: "))
                .unwrap_or_else(|| panic!("no survivors line: {out:?}\n{run}"));
            assert_eq!(line.len(), 20, "{line:?}");
            line.to_owned()
        })
        .collect()
}

/// Whether `pattern` is some intact records, at most one torn, then lost ones.
fn is_prefix(pattern: &str, may_tear: bool) -> bool {
    let rest = pattern.trim_start_matches('1');
    let rest = match rest.strip_prefix('t') {
        Some(after) if may_tear => after,
        _ => rest,
    };
    rest.chars().all(|c| c == '0')
}

/// `[disk] unsynced` chooses what a crash keeps of unsynced writes:
/// `lose_all` nothing; `prefix` a seeded prefix of whole writes; the
/// default `prefix_torn` a prefix whose next write may keep its first
/// sector; `subset` any seeded subset (a later write survives an earlier
/// lost one). Each seed's outcome is the same on both runs.
#[test]
fn unsynced_chooses_what_a_crash_keeps() {
    assert!(
        survivors(Some("lose_all"))
            .iter()
            .all(|p| p == &"0".repeat(20)),
        "lose_all kept something"
    );
    let prefix = survivors(Some("prefix"));
    assert!(prefix.iter().all(|p| is_prefix(p, false)), "{prefix:?}");
    assert!(prefix.iter().any(|p| p.contains('1')), "{prefix:?}");
    let torn = survivors(Some("prefix_torn"));
    assert!(torn.iter().all(|p| is_prefix(p, true)), "{torn:?}");
    assert!(
        torn.iter().any(|p| p.contains('t')),
        "no write tore: {torn:?}"
    );
    assert_eq!(survivors(None), torn, "prefix_torn is the default");
    let subset = survivors(Some("subset"));
    assert!(subset.iter().all(|p| !p.contains('t')), "{subset:?}");
    assert!(
        subset.iter().any(|p| p.contains("01")),
        "no later write survived an earlier lost one: {subset:?}"
    );
}

/// An unknown `[disk] unsynced` value is an error naming the choices.
#[test]
fn an_unknown_unsynced_model_is_an_error() {
    let dir = scratch_dir("disk-unsynced-bad");
    let text = "name = \"bad\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\ncommand = [\"true\"]\n\n[disk]\nunsynced = \"some\"\n";
    let run = ScenarioFile::raw(&dir, "bad.toml", text).runner().run();
    run.expect_code(2);
    assert!(
        run.run.stderr.contains(
            "bad.toml:9:12: field `disk.unsynced`: \"some\" is not one of \"lose_all\", \"prefix\", \"prefix_torn\", \"subset\""
        ),
        "\n{run}"
    );
}

/// A disk fault aimed at a node without a `data_dir` would do nothing: the
/// scenario is an error naming the field (a `nodes` list left out means
/// every node that has a disk, and there must be one).
#[test]
fn disk_faults_need_a_node_with_a_disk() {
    let dir = scratch_dir("disk-faults-no-disk");
    for (fault, needle) in [
        (
            "kind = \"disk_full\"\nnode = \"a\"\nat = \"1s\"",
            "field `node`: node \"a\" has no data_dir, so a \"disk_full\" fault would do nothing",
        ),
        (
            "kind = \"corrupt\"\nnode = \"a\"\nat = \"1s\"\npath = \"x\"",
            "field `node`: node \"a\" has no data_dir, so a \"corrupt\" fault would do nothing",
        ),
        (
            "kind = \"write_error\"\nprobability = 0.1\nnodes = [\"a\"]",
            "field `nodes`: node \"a\" has no data_dir, so a \"write_error\" fault would do nothing",
        ),
        (
            "kind = \"fsync_error\"\nprobability = 0.1",
            "a \"fsync_error\" fault needs a node with a data_dir (no node has one)",
        ),
    ] {
        let text = format!(
            "name = \"bad\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\ncommand = [\"true\"]\n\n[[fault]]\n{fault}\n"
        );
        let run = ScenarioFile::raw(&dir, "bad.toml", &text).runner().run();
        run.expect_code(2);
        assert!(run.run.stderr.contains(needle), "{needle:?}\n{run}");
    }
}
