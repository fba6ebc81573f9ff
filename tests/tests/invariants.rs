//! Invariant probes (`[[invariant]]`): programs run inside the simulation,
//! on hosts of their own, while the nodes run. `lease_pair` is a two-node
//! leader lease whose `--bug` makes the follower take over a partitioned
//! leader's term instead of the next one: two leaders share a term until
//! the partition heals, and nothing at the end shows it.

use std::fs;
use std::path::Path;

use faultline_e2e::browser::{chromium, lane_tags};
use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::program::Program;
use faultline_e2e::scenario::{ScenarioFile, ScenarioRun};

/// The lease pair (with `--bug` if `bug`), a partition of `a` from 1 s to
/// 2.5 s, and `invariant` (TOML) appended.
fn lease_scenario(dir: &Path, bug: bool, invariant: &str) -> ScenarioFile {
    let program = Program::c("lease_pair").path();
    let program = program.display();
    let bug = if bug { ", \"--bug\"" } else { "" };
    let text = format!(
        "name = \"lease\"\nduration = \"4s\"\nseeds = 2\n\n\
         [[node]]\nname = \"a\"\ncommand = [\"{program}\", \"node\", \"a\", \"b\", \"--leader\"{bug}]\n\n\
         [[node]]\nname = \"b\"\ncommand = [\"{program}\", \"node\", \"b\", \"a\"{bug}]\n\n\
         [[fault]]\nkind = \"partition\"\nat = \"1s\"\nuntil = \"2500ms\"\nisolate = [\"a\"]\n\n\
         {invariant}"
    );
    ScenarioFile::raw(dir, "lease.toml", &text)
}

/// The election-safety probe: the same program in its probe mode.
fn leader_probe(extra: &str) -> String {
    let program = Program::c("lease_pair").path();
    format!(
        "[[invariant]]\nname = \"one leader per term\"\nevery = \"250ms\"\n\
         after = [\"partition\", \"heal\"]\ncommand = [\"{}\", \"probe\"]\ntimeout = \"1s\"\n{extra}",
        program.display()
    )
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first seed's artifact directory.
fn first_seed_dir(run: &ScenarioRun) -> std::path::PathBuf {
    run.seed_dir(run.reports()[0].seed)
}

#[test]
fn a_probe_catches_two_leaders_that_heal_before_the_end() {
    let dir = scratch_dir("invariant-caught");
    let file = lease_scenario(&dir, true, &leader_probe(""));
    let run = run_scenario_twice(&file.runner().flag("--keep-going"));
    run.expect_code(1);
    let stderr = &run.run.stderr;
    for report in run.reports() {
        assert!(!report.pass, "seed {:#x} passed\n{run}", report.seed);
        // The follower takes over 500 ms after the partition at 1 s; the
        // next probe (every 250 ms) sees it; the run stops there.
        assert!(
            (1.5..1.8).contains(&report.vtime_secs),
            "the run did not stop at the failing probe\n{run}"
        );
    }
    assert!(
        stderr.contains("check \"one leader per term\" at t=1."),
        "no failing check named after the invariant\n{run}"
    );
    assert!(
        stderr.contains("| two leaders of term 1: a and b"),
        "the probe's output is not quoted\n{run}"
    );
    assert!(stderr.contains("replay:    faultline replay"), "{run}");

    let seed_dir = first_seed_dir(&run);
    let report = json(&seed_dir.join("report.json"));
    assert_eq!(
        report["failure"]["check"], "one leader per term",
        "{report}"
    );
    assert_eq!(report["invariants"][0]["host"], "inv-1", "{report}");
    assert_eq!(report["invariants"][0]["address"], "127.77.0.3", "{report}");
    assert_eq!(report["invariants"][0]["failed"], 1, "{report}");
    // The probe's runs: every 250 ms and right after the partition, each
    // with the environment faultline promises.
    let out = read(&seed_dir.join("inv-1.stdout"));
    let vtimes: Vec<u64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("vtime="))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        vtimes,
        [250, 500, 750, 1000, 1250, 1500].map(|ms| ms * 1_000_000),
        "{out}"
    );
    assert!(
        out.contains("nodes=a=127.77.0.1,b=127.77.0.2: a=leader/1 b=follower/1"),
        "{out}"
    );
    let faults = json(&seed_dir.join("faults.json"));
    let kinds: Vec<&str> = faults
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["node"] == "inv-1")
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.len(), 12, "{faults}");
    assert_eq!(kinds.last(), Some(&"probe_fail"), "{faults}");
    assert_eq!(kinds.iter().filter(|k| **k == "probe_pass").count(), 5);
    let timeline = read(&seed_dir.join("timeline.txt"));
    assert!(
        timeline.contains("inv-1      probe_fail   one leader per term: exit 1"),
        "{timeline}"
    );
    let trace = faultline_e2e::trace::trace_text(&seed_dir.join("trace.jsonl.zst"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        trace.contains("\"call\":\"probe_fail\""),
        "the trace lacks the probe"
    );
    // The page, as Chromium draws it: a lane for the probe's host after
    // the nodes', with its runs' pass marks and the failing run's mark.
    let dom = chromium(&seed_dir.join("timeline.html"), &["--dump-dom".into()]);
    let dom = String::from_utf8_lossy(&dom);
    let lanes = lane_tags(&dom);
    let names: Vec<bool> = ["a", "b", "inv-1"]
        .iter()
        .map(|n| {
            lanes
                .iter()
                .any(|l| l.contains(&format!("data-node=\"{n}\"")))
        })
        .collect();
    assert_eq!((lanes.len(), names), (3, vec![true; 3]), "{lanes:?}");
    // The table lists every run; the chart opens on the failure, drawing
    // the marks in view.
    assert_eq!(dom.matches("<td>invariant held</td>").count(), 5);
    assert_eq!(dom.matches("<td>invariant failed</td>").count(), 1);
    assert!(
        dom.contains("data-kind=\"probe_pass\""),
        "no pass mark drawn"
    );
    assert_eq!(dom.matches("data-kind=\"probe_fail\"").count(), 1);
    assert!(dom.contains("class=\"probing\""), "no run drawn as a band");
}

#[test]
fn without_the_probe_the_healed_bug_is_missed() {
    let dir = scratch_dir("invariant-missed");
    let run = run_scenario_twice(&lease_scenario(&dir, true, "").runner());
    run.expect_pass();
    let out = read(&first_seed_dir(&run).join("b.stdout"));
    // The bug happened: b led term 1 while a did, then stepped down.
    assert!(out.contains("b: leader of term 1"), "{out}");
    assert!(out.contains("b: follower in term 1 (heard a)"), "{out}");
}

#[test]
fn a_correct_pair_passes_the_probe() {
    let dir = scratch_dir("invariant-holds");
    // A second probe runs only right after the heal, on its own host.
    let program = Program::c("lease_pair").path();
    let after_heal = format!(
        "\n[[invariant]]\nname = \"after the heal\"\nafter = [\"heal\"]\ncommand = [\"{}\", \"probe\"]\n",
        program.display()
    );
    let file = lease_scenario(&dir, false, &leader_probe(&after_heal));
    let run = run_scenario_twice(&file.runner());
    run.expect_pass();
    let seed_dir = first_seed_dir(&run);
    let out = read(&seed_dir.join("inv-1.stdout"));
    // Two leaders during the partition, of different terms: allowed.
    assert!(out.contains("a=leader/1 b=leader/2"), "{out}");
    let report = json(&seed_dir.join("report.json"));
    // 16 periodic runs in 4 s (the one at 4 s is past the end); the
    // partition at 1 s falls on a periodic run, the heal at 2.5 s too.
    assert_eq!(report["invariants"][0]["runs"], 15, "{report}");
    assert_eq!(report["invariants"][0]["failed"], 0, "{report}");
    assert_eq!(report["invariants"][1]["host"], "inv-2", "{report}");
    assert_eq!(report["invariants"][1]["address"], "127.77.0.4", "{report}");
    assert_eq!(report["invariants"][1]["runs"], 1, "{report}");
    let out = read(&seed_dir.join("inv-2.stdout"));
    assert!(out.starts_with("vtime=2500000000 "), "{out}");
}

#[test]
fn a_probe_with_from_runs_only_from_then() {
    // A check of a later period (a quiet one at the end, say): no run
    // before `from`, not even right after the partition at 1 s.
    let dir = scratch_dir("invariant-from");
    let file = lease_scenario(&dir, false, &leader_probe("from = \"2s\"\n"));
    let run = run_scenario_twice(&file.runner());
    run.expect_pass();
    let seed_dir = first_seed_dir(&run);
    let out = read(&seed_dir.join("inv-1.stdout"));
    assert!(out.starts_with("vtime=2000000000 "), "{out}");
    let report = json(&seed_dir.join("report.json"));
    // At 2 s, then every 250 ms until the end at 4 s (the heal at 2.5 s
    // falls on a periodic run).
    assert_eq!(report["invariants"][0]["runs"], 8, "{report}");
}

#[test]
fn a_probe_that_outlives_its_timeout_fails_the_seed() {
    let dir = scratch_dir("invariant-timeout");
    let invariant = "[[invariant]]\nname = \"answers in time\"\nevery = \"1s\"\n\
                     command = [\"sleep\", \"60\"]\ntimeout = \"300ms\"\n";
    let file = lease_scenario(&dir, false, invariant);
    let run = run_scenario_twice(&file.runner().seed(7));
    run.expect_code(1);
    let report = run.report();
    assert!((report.vtime_secs - 1.3).abs() < 0.001, "{run}");
    assert!(
        run.run
            .stderr
            .contains("check \"answers in time\" at t=1.3000")
            && run
                .run
                .stderr
                .contains("no verdict within its timeout of 0.3s (virtual): killed"),
        "{run}"
    );
}

/// Bad `[[invariant]]` entries: exit 2, the file, line and field named,
/// nothing run.
#[test]
fn bad_invariants_are_bad_input() {
    let dir = scratch_dir("invariant-bad");
    // (file, entry, line of the error, words the message must name)
    let cases: [(&str, &str, u32, &[&str]); 6] = [
        (
            "unknown.toml",
            "[[invariant]]\nname = \"x\"\nevery = \"1s\"\ncommand = [\"true\"]\nperiod = \"1s\"\n",
            12,
            &["period", "every", "timeout"],
        ),
        (
            "after.toml",
            "[[invariant]]\nname = \"x\"\nafter = [\"explode\"]\ncommand = [\"true\"]\n",
            10,
            &["after", "explode"],
        ),
        (
            "never.toml",
            "[[invariant]]\nname = \"x\"\ncommand = [\"true\"]\n",
            9,
            &["never runs", "every"],
        ),
        (
            "missing.toml",
            "[[invariant]]\nname = \"x\"\nevery = \"1s\"\ncommand = [\"./no-such-probe\"]\n",
            11,
            &["command", "no-such-probe"],
        ),
        (
            "timeout.toml",
            "[[invariant]]\nname = \"x\"\nevery = \"1s\"\ncommand = [\"true\"]\ntimeout = \"soon\"\n",
            12,
            &["timeout"],
        ),
        (
            "from.toml",
            "[[invariant]]\nname = \"x\"\nevery = \"1s\"\ncommand = [\"true\"]\nfrom = \"later\"\n",
            12,
            &["from"],
        ),
    ];
    for (name, invariant, line, needles) in cases {
        let text = format!(
            "name = \"bad\"\nduration = \"1s\"\n\n[[node]]\nname = \"a\"\ncommand = [\"true\"]\n\n{invariant}"
        );
        let file = ScenarioFile::raw(&dir, name, &text);
        let run = file.runner().seed(1).run();
        run.expect_code(2);
        let stderr = &run.run.stderr;
        assert!(
            stderr.contains(&format!("{name}:{line}:")),
            "the file and line {line} are not named\n{run}"
        );
        for needle in needles {
            assert!(stderr.contains(needle), "{needle:?} not named\n{run}");
        }
        assert!(run.reports().is_empty(), "bad input still ran seeds\n{run}");
    }
}

/// A probe named by a path relative to the scenario gives the same run
/// however the scenario is reached: run from its folder the file's path is
/// relative, while each `-j 2` worker is handed it absolute. The probe's
/// argv[0] is the scenario's text either way, so the traces agree.
#[test]
fn a_relative_probe_runs_alike_in_parallel_workers() {
    let dir = scratch_dir("invariant-relative");
    std::fs::copy(Program::c("lease_pair").path(), dir.join("lease_pair")).unwrap();
    let text = "name = \"lease\"\nduration = \"3s\"\nseeds = 2\n\n\
         [[node]]\nname = \"a\"\ncommand = [\"./lease_pair\", \"node\", \"a\", \"b\", \"--leader\"]\n\n\
         [[node]]\nname = \"b\"\ncommand = [\"./lease_pair\", \"node\", \"b\", \"a\"]\n\n\
         [[invariant]]\nname = \"one leader per term\"\nevery = \"500ms\"\n\
         command = [\"./lease_pair\", \"probe\"]\n";
    std::fs::write(dir.join("lease.toml"), text).unwrap();
    let run = |jobs: &str, out: &str| {
        let mut command = std::process::Command::new(faultline_e2e::paths::faultline_bin());
        command
            .current_dir(&dir)
            .args(["run", "lease.toml", "-j", jobs, "--artifacts", out]);
        let run = faultline_e2e::exec::run_command(command, faultline_e2e::exec::DEFAULT_TIMEOUT);
        let reports = faultline_e2e::SeedReport::all_from_stderr(&run.stderr)
            .unwrap_or_else(|e| panic!("{e}\n{run}"));
        assert_eq!(reports.len(), 2, "\n{run}");
        reports
    };
    assert_eq!(run("1", "serial"), run("2", "parallel"));
}
