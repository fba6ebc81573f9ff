//! The scenario runner's bug-report loop (issues 5 and 16): checks beyond
//! node exits (stderr patterns, the linearizability of a recorded history, a
//! checker command), the artifact files, `faultline replay` (into a new
//! directory, from anywhere, with the recorded settings, naming changed
//! binaries and the first divergent event), `faultline pin` and the
//! fix-check loop, parallel seeds, and shards merged with `faultline merge`.

use std::path::Path;

use faultline_e2e::exec::{run_command, DEFAULT_TIMEOUT};
use faultline_e2e::kv::KvScenario;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::runner::{
    any_line, command_scenario, failing_dir, faultline, faultline_in, report_json, sh_scenario,
};
use faultline_e2e::ScenarioFile;

/// The kv scenario (see `faultline_e2e::kv`) with the no-dir-fsync bug or without.
fn kv_text(name: &str, dir: &Path, bug: bool) -> String {
    let bug = bug.then_some("no-dir-fsync");
    KvScenario {
        duration: "30s",
        bug,
        puts: 60,
        ..KvScenario::rust(name)
    }
    .toml(dir)
}

#[test]
fn stderr_pattern_fails_the_seed_and_names_it() {
    let run = sh_scenario("panic", "echo 'panic: boom' >&2; exit 0", "")
        .runner()
        .seed(1)
        .run();
    run.expect_code(1);
    let line = any_line(&run.run, "check \"stderr pattern\"").unwrap_or_else(|| panic!("\n{run}"));
    assert!(
        line.contains("FAIL seed=0x0000000000000001"),
        "{line}\n{run}"
    );
    assert!(any_line(&run.run, "panic: boom").is_some(), "\n{run}");
}

/// `[check] stderr_ignore`: a line with an ignored substring is no failure
/// (a program's expected answer to an injected fault), but a later line
/// with a pattern still is.
#[test]
fn stderr_ignore_clears_its_lines_and_no_others() {
    let ignore = "\n[check]\nstderr_ignore = [\"panic: injected EIO\"]\n";
    sh_scenario(
        "ignored",
        "echo 'panic: injected EIO' >&2; echo recovered; exit 0",
        ignore,
    )
    .runner()
    .seed(1)
    .run()
    .expect_pass();
    let run = sh_scenario(
        "ignored-then-not",
        "echo 'panic: injected EIO' >&2; echo 'panic: lost the log' >&2; exit 0",
        ignore,
    )
    .runner()
    .seed(1)
    .run();
    run.expect_code(1);
    let line = any_line(&run.run, "check \"stderr pattern\"").unwrap_or_else(|| panic!("\n{run}"));
    assert!(line.contains("FAIL seed="), "{line}\n{run}");
    let report = report_json(&failing_dir(&run));
    let message = report["failure"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("panic: lost the log"), "{report}");
}

#[test]
fn non_linearizable_history_fails_with_the_explanation() {
    // A put acknowledged at 1 s, then a get at 2 s that does not see it
    // (times are CLOCK_MONOTONIC readings: the simulation's starts at 100 s).
    let script = r#"printf '%s\n' '{"process":1,"op":"put","key":"k1","value":"v1","invoke":100000001000,"complete":101000000000,"outcome":"ok"}' '{"process":2,"op":"get","key":"k1","value":null,"invoke":102000000000,"complete":102000000100,"outcome":"ok"}' >> "$FAULTLINE_HISTORY""#;
    let run = sh_scenario("lin", script, "").runner().seed(2).run();
    run.expect_code(1);
    let line = any_line(&run.run, "check \"linearizable\"").unwrap_or_else(|| panic!("\n{run}"));
    assert!(line.contains("at t="), "{line}");
    assert!(
        any_line(&run.run, "k1").is_some(),
        "the explanation names the key\n{run}"
    );
    let report = report_json(&failing_dir(&run));
    assert_eq!(report["failure"]["check"], "linearizable", "{report}");
    assert_eq!(report["format"], 1);
}

#[test]
fn linearizable_history_passes() {
    let script = r#"printf '%s\n' '{"process":1,"op":"put","key":"k1","value":"v1","invoke":100000001000,"complete":101000000000,"outcome":"ok"}' '{"process":2,"op":"get","key":"k1","value":"v1","invoke":102000000000,"complete":102000000100,"outcome":"ok"}' >> "$FAULTLINE_HISTORY""#;
    sh_scenario("lin-ok", script, "")
        .runner()
        .seed(3)
        .run()
        .expect_pass();
}

#[test]
fn checker_command_fails_the_seed_with_its_output() {
    let extra = "\n[check]\ncommand = [\"/bin/sh\", \"-c\", \"grep -q expected \\\"$FAULTLINE_ARTIFACTS/n.stdout\\\" || { echo 'n did not print expected'; exit 1; }\"]\n";
    let bad = sh_scenario("checker-bad", "echo other", extra)
        .runner()
        .seed(4)
        .run();
    bad.expect_code(1);
    assert!(
        any_line(&bad.run, "n did not print expected").is_some(),
        "\n{bad}"
    );
    sh_scenario("checker-ok", "echo expected", extra)
        .runner()
        .seed(4)
        .run()
        .expect_pass();
}

#[test]
fn artifacts_hold_report_faults_net_and_timeline() {
    let dir = scratch_dir("runner-artifacts");
    let file = ScenarioFile::raw(&dir, "kv.toml", &kv_text("runner-artifacts", &dir, true));
    let run = file.runner().seeds(5).run();
    let seed_dir = failing_dir(&run);
    for f in [
        "report.json",
        "faults.json",
        "net.jsonl",
        "timeline.txt",
        "trace.jsonl.zst",
        "scenario.toml",
        "client.stdout",
        "kv.stderr",
    ] {
        assert!(
            seed_dir.join(f).is_file(),
            "missing {f} in {}",
            seed_dir.display()
        );
    }
    // The trace is zstd-compressed (its frame's magic number).
    let trace = std::fs::read(seed_dir.join("trace.jsonl.zst")).unwrap();
    assert_eq!(trace[..4], [0x28, 0xb5, 0x2f, 0xfd], "not a zstd frame");
    let faults: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(seed_dir.join("faults.json")).unwrap())
            .unwrap();
    assert!(
        faults
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x["kind"] == "crash")),
        "{faults}"
    );
    let timeline = std::fs::read_to_string(seed_dir.join("timeline.txt")).unwrap();
    assert!(
        timeline.contains("crash") && timeline.contains("FAIL"),
        "{timeline}"
    );
    let net = std::fs::read_to_string(seed_dir.join("net.jsonl")).unwrap();
    let first: serde_json::Value =
        serde_json::from_str(net.lines().next().expect("messages")).unwrap();
    assert!(
        first.get("sent_at").is_some() && first.get("kind").is_some(),
        "{first}"
    );
}

/// Fails, replays identically from another directory into a new one
/// (leaving the recorded run as it was), pins, and the pinned seed then
/// follows the fix: passes with the bug switched off, fails again with it
/// back on.
#[test]
fn replay_pin_and_the_fix_check_loop() {
    let dir = scratch_dir("runner-pin");
    let path = dir.join("kv.toml");
    let file = ScenarioFile::raw(&dir, "kv.toml", &kv_text("runner-pin", &dir, true));
    let run = file.runner().seeds(5).run();
    run.expect_code(1);
    let seed_dir = failing_dir(&run);
    let check_line = any_line(&run.run, "check \"node exit\" at t=")
        .expect("failure line")
        .to_string();
    let at = check_line
        .split("check")
        .nth(1)
        .expect("check part")
        .to_string();
    let recorded = snapshot(&seed_dir);

    // From another working directory: report.json holds absolute paths.
    let replay = faultline_in(
        Some(Path::new("/")),
        &["replay", seed_dir.to_str().unwrap()],
    );
    replay.expect_code(1);
    let said = any_line(&replay, "replay identical").unwrap_or_else(|| panic!("\n{replay}"));
    assert!(said.contains("fails at t="), "{said}");
    assert!(
        any_line(&replay, &at).is_some(),
        "the replay's failure differs from {at:?}\n{replay}"
    );
    assert!(
        seed_dir.join("replay-1").join("report.json").is_file(),
        "\n{replay}"
    );
    assert_eq!(
        snapshot(&seed_dir),
        recorded,
        "replay changed the recorded run"
    );
    // A second replay goes to replay-2; --artifacts names a directory.
    faultline(&["replay", seed_dir.to_str().unwrap()]).expect_code(1);
    assert!(seed_dir.join("replay-2").join("report.json").is_file());
    let named = dir.join("named-replay");
    let replay = faultline(&[
        "replay",
        seed_dir.to_str().unwrap(),
        "--artifacts",
        named.to_str().unwrap(),
    ]);
    replay.expect_code(1);
    assert!(named.join("report.json").is_file(), "\n{replay}");
    // ... but never one that holds something.
    let refused = faultline(&[
        "replay",
        seed_dir.to_str().unwrap(),
        "--artifacts",
        named.to_str().unwrap(),
    ]);
    refused.expect_code(2);
    assert!(
        any_line(&refused, "not an empty directory").is_some(),
        "\n{refused}"
    );

    // pin edits the recorded (absolute) file, from any directory.
    faultline_in(Some(Path::new("/")), &["pin", seed_dir.to_str().unwrap()]).expect_code(0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("[[pinned]]"), "{text}");
    let seed = seed_dir.file_name().unwrap().to_str().unwrap().to_string();

    // The fix: the same file without the bug switch; the pinned seed runs first and passes.
    std::fs::write(&path, text.replace(r#", "--bug", "no-dir-fsync""#, "")).unwrap();
    let fixed = ScenarioFile::raw(&dir, "kv.toml", &std::fs::read_to_string(&path).unwrap())
        .runner()
        .seeds(1)
        .run();
    fixed.expect_pass();
    let pinned = any_line(
        &fixed.run,
        &format!("pinned seed 0x{seed} (failed before: check \"node exit\" at t="),
    );
    assert!(pinned.is_some(), "\n{fixed}");
    // Reverting the fix: the pinned seed fails again.
    let reverted = ScenarioFile::raw(&dir, "kv.toml", &text)
        .runner()
        .seeds(1)
        .run();
    reverted.expect_code(1);
    assert_eq!(
        reverted.reports()[0].seed,
        u64::from_str_radix(&seed, 16).unwrap(),
        "\n{reverted}"
    );
}

/// Every file of a seed directory (not its replays) with its contents.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// A seed found with a non-default flag replays identically without it:
/// report.json records the settings and replay reuses them.
#[test]
fn replay_reuses_the_recorded_settings() {
    let file = sh_scenario(
        "settings",
        "for i in 1 2 3; do sleep 0.1; echo $i; done; exit 3",
        "",
    );
    let run = file
        .runner()
        .seed(7)
        .flag("--step-cost")
        .flag("2us")
        .flag("--cpus")
        .flag("3")
        .run();
    run.expect_code(1);
    let seed_dir = failing_dir(&run);
    let report = report_json(&seed_dir);
    assert_eq!(report["settings"]["step_cost"], "2us", "{report}");
    assert_eq!(report["settings"]["cpus"], 3, "{report}");
    let replay = faultline(&["replay", seed_dir.to_str().unwrap()]);
    replay.expect_code(1);
    assert!(
        any_line(&replay, "replay identical").is_some(),
        "\n{replay}"
    );
    // The flags matter: the default step cost gives another trace.
    let default = file.runner().seed(7).flag("--cpus").flag("3").run();
    assert_ne!(
        default.report().trace_hash,
        run.report().trace_hash,
        "\n{default}"
    );
}

/// A program changed since the run: replay names the file, says the run
/// DIFFERS and shows the first divergent event of both traces.
#[test]
fn replay_names_a_changed_binary_and_the_first_divergent_event() {
    let dir = scratch_dir("runner-binary");
    let prog = dir.join("prog");
    std::fs::copy("/bin/true", &prog).unwrap();
    let file = command_scenario("binary", &[prog.to_str().unwrap()], "");
    let run = file.runner().seed(3).run();
    run.expect_pass();
    let seed_dir = run.seed_dir(3);
    let sha = report_json(&seed_dir)["binaries"][prog.to_str().unwrap()].clone();
    assert_eq!(sha.as_str().map(str::len), Some(64), "{sha}");
    faultline(&["replay", seed_dir.to_str().unwrap()]).expect_code(0);

    std::fs::remove_file(&prog).unwrap();
    std::fs::copy("/bin/false", &prog).unwrap();
    let replay = faultline(&["replay", seed_dir.to_str().unwrap()]);
    replay.expect_code(3);
    let warning = format!("warning: {} changed since the recorded run", prog.display());
    assert!(any_line(&replay, &warning).is_some(), "\n{replay}");
    assert!(any_line(&replay, "replay DIFFERS").is_some(), "\n{replay}");
    let event =
        any_line(&replay, "first divergent event #").unwrap_or_else(|| panic!("\n{replay}"));
    let n: usize = event
        .split('#')
        .nth(1)
        .unwrap()
        .trim_end_matches(':')
        .parse()
        .unwrap();
    let recorded = any_line(&replay, "recorded: {").unwrap_or_else(|| panic!("\n{replay}"));
    let again = any_line(&replay, "replay  : ").unwrap_or_else(|| panic!("\n{replay}"));
    assert!(recorded.contains(&format!("\"n\":{n},")), "{recorded}");
    assert_ne!(recorded.split(": ").nth(1), again.split(": ").nth(1));
}

/// -j runs the same seeds to the same verdicts and hashes; shards cover the
/// seeds between them and merge into one verdict, whatever the artifacts
/// directory is called.
#[test]
fn parallel_seeds_and_shards_agree_with_one_run() {
    let dir = scratch_dir("runner-parallel");
    let file = ScenarioFile::raw(&dir, "kv.toml", &kv_text("runner-parallel", &dir, false));
    let serial = file.runner().seeds(4).artifacts(dir.join("serial")).run();
    serial.expect_pass();
    let mut parallel_cmd = file
        .runner()
        .seeds(4)
        .artifacts(dir.join("parallel-run"))
        .command();
    parallel_cmd.arg("-j").arg("2");
    let parallel = run_command(parallel_cmd, DEFAULT_TIMEOUT);
    parallel.expect_code(0);
    // The seed lines without their wall times.
    let verdicts = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter(|l| l.starts_with("faultline: seed="))
            .map(|l| l.split(" wall=").next().unwrap_or(l).to_owned())
            .collect()
    };
    assert_eq!(
        verdicts(&serial.run.stderr),
        verdicts(&parallel.stderr),
        "\n{serial}\n{parallel}"
    );
    // One start line, one verdict line and one summary for the whole run,
    // not one per seed.
    let totals = |stderr: &str| stderr.lines().filter(|l| l.contains("seed(s)")).count();
    assert_eq!(totals(&parallel.stderr), 2, "\n{parallel}");
    let summaries: Vec<String> =
        std::fs::read_dir(dir.join("parallel-run").join("runner-parallel"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.starts_with("summary"))
            .collect();
    assert_eq!(summaries, ["summary.json"], "\n{parallel}");

    let mut shard_seeds = Vec::new();
    let mut shard_dirs = Vec::new();
    for i in 0..2 {
        let out = dir.join(format!("shard-{i}"));
        let mut c = file.runner().seeds(4).artifacts(&out).command();
        // Each shard runs its seeds two at a time, as a CI job would.
        c.arg("--shard-count")
            .arg("2")
            .arg("-j")
            .arg("2")
            .env("JOB_COMPLETION_INDEX", i.to_string());
        let r = run_command(c, DEFAULT_TIMEOUT);
        r.expect_code(0);
        shard_seeds.extend(verdicts(&r.stderr));
        shard_dirs.push(out);
    }
    shard_seeds.sort();
    let mut all = verdicts(&serial.run.stderr);
    all.sort();
    assert_eq!(
        shard_seeds, all,
        "the shards together run exactly the seeds of one run"
    );
    let merged = faultline(&[
        "merge",
        shard_dirs[0].to_str().unwrap(),
        shard_dirs[1].to_str().unwrap(),
    ]);
    merged.expect_code(0);
    assert!(
        any_line(&merged, "4 seed(s), 0 failed").is_some(),
        "\n{merged}"
    );
}
