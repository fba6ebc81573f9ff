//! What `faultline run` prints and writes for a CI user (issue 16): a start
//! line, one line per seed with its wall time, a closing table of the
//! failing seeds with check and message, the seeds a stop left unrun,
//! `--junit` XML, and summary.json with hex seeds that `merge` reads (and
//! older summaries with numbers).

use faultline_e2e::exec::{run_command, DEFAULT_TIMEOUT};
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::runner::{any_line, faultline, sh_scenario};

#[test]
fn start_line_seed_lines_failure_table_and_junit() {
    // Every seed fails; the run stops after the first.
    let file = sh_scenario("ci", "echo 'boom: the disk ate it' >&2; exit 4", "");
    let dir = file.path.parent().unwrap().to_path_buf();
    let junit = dir.join("results.xml");
    let mut cmd = file.runner().seeds(3).command();
    cmd.arg("--junit").arg(&junit);
    let run = run_command(cmd, DEFAULT_TIMEOUT);
    run.expect_code(1);
    let start = format!(
        "faultline: run {}: scenario \"runner-ci\", 3 seed(s), 1 job(s), artifacts in {}/",
        file.path.display(),
        dir.join("artifacts").join("runner-ci").display()
    );
    assert_eq!(run.stderr.lines().next(), Some(start.as_str()), "\n{run}");
    let seed_line = any_line(&run, "faultline: seed=").unwrap_or_else(|| panic!("\n{run}"));
    assert!(
        seed_line.contains(" FAIL ") && seed_line.contains(" wall="),
        "{seed_line}"
    );
    let header = any_line(&run, "  seed ").unwrap_or_else(|| panic!("\n{run}"));
    assert!(
        header.contains("check") && header.contains("message"),
        "{header}"
    );
    let row = run
        .stderr
        .lines()
        .skip_while(|l| !l.starts_with("  seed "))
        .nth(1)
        .unwrap_or_else(|| panic!("\n{run}"));
    assert!(
        row.contains("fail")
            && row.contains("node exit")
            && row.contains("node n exited with code 4"),
        "{row}"
    );
    assert!(
        any_line(
            &run,
            "faultline: stopped after the first failure: 2 seed(s) not run (use --keep-going)"
        )
        .is_some(),
        "\n{run}"
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .expect("testsuite");
    assert_eq!(suite.attribute("name"), Some("runner-ci"));
    assert_eq!(suite.attribute("tests"), Some("3"));
    assert_eq!(suite.attribute("failures"), Some("1"));
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 3, "{xml}");
    let failure = cases[0]
        .children()
        .find(|n| n.has_tag_name("failure"))
        .expect("failure");
    assert_eq!(failure.attribute("type"), Some("node exit"));
    assert!(
        failure.text().unwrap_or("").contains("exited with code 4"),
        "{xml}"
    );
    assert!(cases[0].attribute("name").unwrap().starts_with("seed 0x"));
    assert!(
        cases[1..]
            .iter()
            .all(|c| c.children().any(|n| n.has_tag_name("skipped"))),
        "{xml}"
    );
}

#[test]
fn summary_json_has_hex_seeds_and_merge_reads_old_and_new() {
    let file = sh_scenario("hex", "exit 0", "");
    let run = file.runner().seeds(2).run();
    run.expect_pass();
    let artifacts = file.path.parent().unwrap().join("artifacts");
    let text = std::fs::read_to_string(artifacts.join("runner-hex/summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    for s in summary["seeds"].as_array().unwrap() {
        for key in ["seed", "hash"] {
            let v = s[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key} not a string: {s}"));
            assert!(v.starts_with("0x") && v.len() == 18, "{s}");
        }
    }
    // An older summary, with decimal numbers, next to the new one.
    let old = scratch_dir("runner-old-summary");
    std::fs::create_dir_all(old.join("kv")).unwrap();
    std::fs::write(
        old.join("kv/summary.json"),
        r#"{"format":1,"scenario":"kv","seeds":[{"seed":18446744073709551615,"pass":false,"hash":7}]}"#,
    )
    .unwrap();
    let merged = faultline(&["merge", artifacts.to_str().unwrap(), old.to_str().unwrap()]);
    merged.expect_code(1);
    assert!(
        any_line(&merged, "3 seed(s), 1 failed").is_some(),
        "\n{merged}"
    );
    assert!(
        any_line(&merged, "0xffffffffffffffff").is_some(),
        "\n{merged}"
    );
}
