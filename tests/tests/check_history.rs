//! `faultline check-history` on hand-written Jepsen-style histories in the
//! three formats it reads: verdicts, exit codes (0/1/2/3), the explanation,
//! and the --html page.

use std::path::PathBuf;
use std::process::{Command, Output};

use faultline_e2e::paths::{faultline_bin, scratch_dir, workspace_root};

fn history(name: &str) -> PathBuf {
    workspace_root().join("tests/histories").join(name)
}

fn check(args: &[&str]) -> Output {
    Command::new(faultline_bin())
        .arg("check-history")
        .args(args)
        .output()
        .expect("faultline runs")
}

fn code_and_stdout(name: &str, extra: &[&str]) -> (i32, String) {
    let path = history(name);
    let mut args = vec![path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = check(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let code = out.status.code().expect("exited");
    (code, stdout + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn linearizable_histories_exit_0_in_every_format() {
    for (name, format) in [
        ("register-ok.jsonl", "json"),
        ("append-ok.jsonl", "json"),
        ("register-ok.edn", "edn"),
        ("kv-ok.txt", "porcupine"),
    ] {
        let (code, out) = code_and_stdout(name, &[]);
        assert_eq!(code, 0, "{name}: {out}");
        assert!(out.starts_with("linearizable: "), "{name}: {out}");
        assert!(out.contains(&format!("({format} format)")), "{name}: {out}");
        // The same verdict with the format named.
        let (code, _) = code_and_stdout(name, &["--format", format]);
        assert_eq!(code, 0, "{name} --format {format}");
    }
}

#[test]
fn violations_exit_1_and_are_explained() {
    for (name, needle) in [
        // A cas that found another value although the register held its
        // expected value (one line changed from the linearizable history).
        (
            "register-cas-mismatch-bad.jsonl",
            "explains cas k1 \"v1\"->\"v2\" by process 4",
        ),
        (
            "register-cas-mismatch-bad.edn",
            "explains cas register \"4\"->\"1\" by process 4",
        ),
        // Jepsen's independent keys: key 9 reads a value overwritten before.
        (
            "independent-bad.edn",
            "get 9 returned \"1\" but cas 9 \"1\"->\"2\" was acknowledged",
        ),
        ("append-bad.jsonl", "explains read x -> [2, 1] by process 2"),
        ("kv-bad.txt", "explains read 1 -> \"x 1 0 yx 2 0 yx 1 2 y\""),
    ] {
        let (code, out) = code_and_stdout(name, &[]);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(out.starts_with("not linearizable: "), "{name}: {out}");
        assert!(out.contains(needle), "{name}: {out}");
        assert!(out.contains("operations involved:"), "{name}: {out}");
    }
}

#[test]
fn the_verdict_is_the_same_every_time() {
    let first = code_and_stdout("kv-bad.txt", &[]);
    assert_eq!(first, code_and_stdout("kv-bad.txt", &[]));
}

#[test]
fn bad_input_exits_2_naming_file_and_line() {
    let (code, out) = code_and_stdout("malformed.edn", &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("malformed.edn:3: "), "{out}");
    assert!(
        out.contains(":increment is not one of :read, :write, :cas"),
        "{out}"
    );
    // An EDN history read as JSON lines: line 1 is no JSON record.
    let (code, out) = code_and_stdout("register-ok.edn", &["--format", "json"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("register-ok.edn:1: "), "{out}");
    let (code, out) = code_and_stdout("no-such-history.jsonl", &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("cannot read history"), "{out}");
    let (code, out) = code_and_stdout("register-ok.edn", &["--format", "yaml"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("unknown history format \"yaml\""), "{out}");
}

#[test]
fn a_spent_budget_exits_3() {
    let (code, out) = code_and_stdout("register-ok.edn", &["--budget", "2"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.starts_with("gave up: search budget of 2 states"),
        "{out}"
    );
    let (code, _) = code_and_stdout("register-ok.edn", &["--budget", "1000"]);
    assert_eq!(code, 0);
}

#[test]
fn html_page_shows_the_violating_operations() {
    let dir = scratch_dir("check-history-html");
    let page = dir.join("history.html");
    let (code, out) = code_and_stdout("independent-bad.edn", &["--html", page.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    let html = std::fs::read_to_string(&page).expect("the page is written");
    let violating: Vec<&str> = html
        .split("<g class=\"op violating\"><title>")
        .skip(1)
        .map(|rest| rest.split("</title>").next().unwrap())
        .collect();
    assert_eq!(violating.len(), 2, "{html}");
    assert!(violating[0].starts_with("operation 2: cas 9 &quot;1&quot;-&gt;&quot;2&quot;"));
    assert!(violating[1].starts_with("operation 4: get 9 -&gt; &quot;1&quot;"));
    // Both keys are drawn, the violating one first; nothing is fetched.
    let key9 = html.find("<h2>key 9</h2>").expect("key 9 drawn");
    let key7 = html.find("<h2>key 7</h2>").expect("key 7 drawn");
    assert!(key9 < key7);
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    // A linearizable history's page has no violating operation.
    let (code, _) = code_and_stdout("register-ok.edn", &["--html", page.to_str().unwrap()]);
    assert_eq!(code, 0);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("class=\"op ok\"") && !html.contains("op violating"));
    std::fs::remove_dir_all(dir).ok();
}
