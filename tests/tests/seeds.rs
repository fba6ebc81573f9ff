//! Seed sets users pass around (issue 20): `--seed-list FILE`, `--explore`
//! with its printed replay line, `--results FILE`, and the shard index
//! `--shard-count` takes from Kubernetes' or Slurm's environment.

use std::path::Path;

use faultline_e2e::exec::run_command;
use faultline_e2e::kv::KvScenario;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::shards::{recorded, results_lines, summary_files, Verdicts};
use faultline_e2e::{RunScenario, ScenarioFile, ScenarioRun};

/// A one-node scenario that exits 0 or 1 depending on its random bytes, so
/// seeds differ in verdict and trace.
fn coin(tag: &str) -> ScenarioFile {
    let dir = scratch_dir(&format!("seeds-{tag}"));
    let text = format!(
        "name = \"seeds-{tag}\"\nduration = \"2s\"\n\n[[node]]\nname = \"n\"\ncommand = [\"/bin/sh\", \"-c\", \"test $(od -An -N1 -tu1 /dev/urandom) -lt 128\"]\n"
    );
    ScenarioFile::raw(&dir, "s.toml", &text)
}

/// The kv scenario with its bug on: some seeds fail.
fn kv(tag: &str) -> ScenarioFile {
    let dir = scratch_dir(&format!("seeds-{tag}"));
    let text = KvScenario {
        duration: "30s",
        bug: Some("no-dir-fsync"),
        puts: 60,
        ..KvScenario::rust(&format!("seeds-{tag}"))
    }
    .toml(&dir);
    ScenarioFile::raw(&dir, "kv.toml", &text)
}

/// (seed, pass, trace hash) of each verdict line, in order.
fn verdicts(run: &ScenarioRun) -> Vec<(u64, bool, u64)> {
    run.reports()
        .iter()
        .map(|r| (r.seed, r.pass, r.trace_hash))
        .collect()
}

fn with(runner: RunScenario, args: &[&str]) -> ScenarioRun {
    args.iter().fold(runner, |r, a| r.flag(a)).run()
}

#[test]
fn seed_list_runs_exactly_its_seeds_and_shards_split_it() {
    let file = coin("list");
    let dir = file.path.parent().unwrap();
    let list = dir.join("hunt.txt");
    std::fs::write(&list, "# from last night\n0x2a\n7   # seven\n\n42\n0x10\n").unwrap();
    let list_arg = list.to_str().unwrap();
    let run = with(file.runner(), &["--seed-list", list_arg, "--keep-going"]);
    let seeds: Vec<u64> = verdicts(&run).iter().map(|v| v.0).collect();
    assert_eq!(seeds, [0x2a, 7, 0x10], "42 is 0x2a again\n{run}");
    // The second of two shards runs the list's second seed; the same trace.
    let shard = with(
        file.runner().artifacts(dir.join("shard")),
        &["--seed-list", list_arg, "--shard", "1/2"],
    );
    assert_eq!(verdicts(&shard), verdicts(&run)[1..2], "\n{shard}");
}

#[test]
fn bad_seed_lists_are_bad_input_naming_file_and_line() {
    let file = coin("bad-list");
    let dir = file.path.parent().unwrap();
    let cases: [(&str, Option<&str>, &str); 3] = [
        (
            "bad.txt",
            Some("12\n# ok\n0xzz\n"),
            "bad.txt:3: \"0xzz\" is not a seed",
        ),
        ("empty.txt", Some("# nothing\n\n"), "no seeds in it"),
        ("missing.txt", None, "missing.txt: No such file"),
    ];
    for (name, text, want) in cases {
        let path = dir.join(name);
        if let Some(text) = text {
            std::fs::write(&path, text).unwrap();
        }
        let artifacts = dir.join(format!("artifacts-{name}"));
        let run = with(
            file.runner().artifacts(&artifacts),
            &["--seed-list", path.to_str().unwrap()],
        );
        run.expect_code(2);
        assert!(run.run.stderr.contains(want), "want {want:?}\n{run}");
        assert!(!artifacts.exists(), "nothing ran\n{run}");
    }
    // --seed-list with --seeds is refused by the command line.
    with(
        file.runner().seeds(3),
        &["--seed-list", dir.join("bad.txt").to_str().unwrap()],
    )
    .expect_code(2);
}

#[test]
fn explore_prints_a_base_that_runs_the_same_seeds_again() {
    let file = coin("explore");
    let dir = file.path.parent().unwrap();
    let first = with(file.runner().seeds(3), &["--explore", "--keep-going"]);
    let line = first
        .run
        .stderr
        .lines()
        .find(|l| l.contains("the same seeds again: faultline run"))
        .unwrap_or_else(|| panic!("no replay line\n{first}"));
    let again_args: Vec<&str> = line
        .split("faultline run ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(again_args[0], file.path.to_str().unwrap(), "{line}");
    assert!(again_args[1].starts_with("--explore=0x"), "{line}");
    let again = with(
        file.runner().artifacts(dir.join("again")),
        &[&again_args[1..], &["--keep-going"][..]].concat(),
    );
    assert_eq!(verdicts(&again), verdicts(&first), "\n{first}\n{again}");
    assert_eq!(verdicts(&first).len(), 3);
    // Another exploration and the scenario's own seeds are other seeds.
    let second = with(
        file.runner().seeds(3).artifacts(dir.join("second")),
        &["--explore", "--keep-going"],
    );
    let own = with(
        file.runner().seeds(3).artifacts(dir.join("own")),
        &["--keep-going"],
    );
    let seeds = |r: &ScenarioRun| -> Vec<u64> { verdicts(r).iter().map(|v| v.0).collect() };
    for other in [&second, &own] {
        assert!(
            seeds(other).iter().all(|s| !seeds(&first).contains(s)),
            "\n{first}\n{other}"
        );
    }
    // A fresh base per shard would not split one seed set.
    let sharded = with(file.runner(), &["--explore", "--shard", "0/2"]);
    sharded.expect_code(2);
    assert!(sharded.run.stderr.contains("--explore=0xBASE"), "{sharded}");
}

#[test]
fn results_append_one_line_per_seed_also_from_parallel_children() {
    let file = kv("results");
    let dir = file.path.parent().unwrap().to_owned();
    let results = dir.join("out/hunt.jsonl");
    let results_arg = results.to_str().unwrap();
    let parallel = with(
        file.runner().seeds(4),
        &["--keep-going", "-j", "2", "--results", results_arg],
    );
    let summary: Verdicts = recorded(&dir.join("artifacts"));
    assert_eq!(summary.len(), 4);
    assert_eq!(
        results_lines(std::slice::from_ref(&results)),
        summary,
        "\n{parallel}"
    );
    // A later run appends; its seed's line repeats the first run's hash.
    let (&seed, &verdict) = summary.iter().next().unwrap();
    let one = with(
        file.runner()
            .seed_text(&format!("0x{seed:x}"))
            .artifacts(dir.join("one")),
        &["--results", results_arg],
    );
    let text = std::fs::read_to_string(&results).unwrap();
    assert_eq!(text.lines().count(), 5, "\n{one}");
    let last: Verdicts = results_lines(&[write_tmp(&dir, text.lines().last().unwrap())]);
    assert_eq!(last, Verdicts::from([(seed, verdict)]), "\n{one}");
    // A results file that cannot be written is bad input; no seed runs.
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, "").unwrap();
    let bad = with(
        file.runner().seeds(1).artifacts(dir.join("bad")),
        &["--results", blocked.join("r.jsonl").to_str().unwrap()],
    );
    bad.expect_code(2);
    assert!(bad.run.stderr.contains("results file"), "{bad}");
    assert!(!dir.join("bad").exists(), "{bad}");
}

fn write_tmp(dir: &Path, line: &str) -> std::path::PathBuf {
    let p = dir.join("last.jsonl");
    std::fs::write(&p, format!("{line}\n")).unwrap();
    p
}

/// The summary file a `--shard-count 2` run writes with `env` set.
fn shard_summary(
    file: &ScenarioFile,
    tag: &str,
    env: &[(&str, &str)],
) -> (i32, Vec<String>, String) {
    let artifacts = file.path.parent().unwrap().join(tag);
    let mut c = file
        .runner()
        .seeds(4)
        .artifacts(&artifacts)
        .flag("--keep-going")
        .flag("--shard-count")
        .flag("2")
        .command();
    for var in [
        "JOB_COMPLETION_INDEX",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_COUNT",
    ] {
        c.env_remove(var);
    }
    c.envs(env.iter().copied());
    let run = run_command(c, faultline_e2e::exec::DEFAULT_TIMEOUT);
    let names = if artifacts.exists() {
        summary_files(&artifacts)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    } else {
        Vec::new()
    };
    (run.code(), names, run.stderr)
}

#[test]
fn shard_count_takes_the_index_from_kubernetes_then_slurm() {
    let file = coin("index");
    let cases: [(&[(&str, &str)], &str); 4] = [
        (
            &[("JOB_COMPLETION_INDEX", "1")],
            "summary-shard-1-of-2.json",
        ),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
            "summary-shard-1-of-2.json",
        ),
        // An array numbered from 1 (sbatch --array=1-2).
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
            ],
            "summary-shard-0-of-2.json",
        ),
        // Kubernetes' index wins over Slurm's.
        (
            &[("JOB_COMPLETION_INDEX", "0"), ("SLURM_ARRAY_TASK_ID", "1")],
            "summary-shard-0-of-2.json",
        ),
    ];
    for (n, (env, want)) in cases.iter().enumerate() {
        let (code, names, stderr) = shard_summary(&file, &format!("case-{n}"), env);
        assert!(matches!(code, 0 | 1), "{env:?}\n{stderr}");
        assert_eq!(names, [*want], "{env:?}\n{stderr}");
    }
    let refused: [(&[(&str, &str)], &str); 4] = [
        (&[], "--shard-count needs $JOB_COMPLETION_INDEX"),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "0"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
            ],
            "the Slurm array has 3 tasks",
        ),
        (
            &[("SLURM_ARRAY_TASK_ID", "x")],
            "$SLURM_ARRAY_TASK_ID is \"x\"",
        ),
        (
            &[("JOB_COMPLETION_INDEX", "2")],
            "$JOB_COMPLETION_INDEX is 2, not below --shard-count 2",
        ),
    ];
    for (n, (env, want)) in refused.iter().enumerate() {
        let (code, names, stderr) = shard_summary(&file, &format!("refused-{n}"), env);
        assert_eq!(code, 2, "{env:?}\n{stderr}");
        assert!(stderr.contains(want), "want {want:?}\n{stderr}");
        assert!(names.is_empty(), "nothing ran");
    }
}
