//! The runner survives what users do (issue 16): a node that spins forever
//! (`--seed-timeout`, verdict `stuck`), `kill -9` of `run -j` (workers and
//! programs die with it), Ctrl-C and SIGTERM (partial reports, exit 130 and
//! 143), counts of zero, a data_dir mount point that vanished, and the
//! folder nodes run in.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::exec::{collect, drain, kill_group, wait_until, DEFAULT_TIMEOUT};
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::procs::{descendants, ProcInfo};
use faultline_e2e::runner::{any_line, command_scenario, failing_dir, report_json, sh_scenario};
use faultline_e2e::{Program, ScenarioFile};

/// A scenario whose node spins without a syscall for ever (as far as a test goes).
fn spinning(tag: &str) -> ScenarioFile {
    let spin = Program::c("spin").path();
    command_scenario(
        tag,
        &[spin.to_str().unwrap(), "0", "4000000000000000000"],
        "",
    )
}

/// Polls `cond` every 50 ms for up to `limit`.
fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

#[test]
fn a_seed_that_spins_for_ever_is_stuck_after_the_seed_timeout() {
    let file = spinning("stuck");
    let started = Instant::now();
    let run = file
        .runner()
        .seed(1)
        .flag("--seed-timeout")
        .flag("3s")
        .run();
    let wall = started.elapsed();
    run.expect_code(1);
    assert!(wall < Duration::from_secs(30), "took {wall:?}\n{run}");
    let report = run.report();
    assert_eq!(report.verdict, "STUCK", "\n{run}");
    assert!(
        any_line(&run.run, "STUCK seed=0x0000000000000001  check \"stuck\"").is_some(),
        "\n{run}"
    );
    let dir = failing_dir(&run);
    let json = report_json(&dir);
    assert_eq!(json["verdict"], "stuck", "{json}");
    for f in [
        "trace.jsonl.zst",
        "timeline.html",
        "n.stdout",
        "scenario.toml",
    ] {
        assert!(dir.join(f).is_file(), "{f} not kept\n{run}");
    }
    assert!(
        any_line(&run.run, "not run").is_none(),
        "one seed, none left\n{run}"
    );
}

/// Starts `run` on the spinning scenario (its own process group, output
/// drained) and waits until `programs` nodes spin.
fn start_spinning(
    tag: &str,
    extra: &[&str],
    programs: usize,
) -> (Child, ScenarioFile, std::sync::mpsc::Receiver<Vec<u8>>) {
    let spin = Program::c("spin").path();
    start(spinning(tag), extra, programs, &spin)
}

/// Starts `run` on `file` (its own process group, output drained) and
/// waits until `programs` of its descendants run the program `exe`.
fn start(
    file: ScenarioFile,
    extra: &[&str],
    programs: usize,
    exe: &std::path::Path,
) -> (Child, ScenarioFile, std::sync::mpsc::Receiver<Vec<u8>>) {
    let mut cmd = file.runner().seeds(4).command();
    cmd.args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().expect("spawn faultline");
    let err = drain(child.stderr.take().unwrap());
    let running = |pid: u32| {
        descendants(pid)
            .iter()
            .filter(|p| std::fs::read_link(format!("/proc/{}/exe", p.pid)).is_ok_and(|e| e == exe))
            .count()
    };
    let pid = child.id();
    if !eventually(Duration::from_secs(30), || running(pid) >= programs) {
        kill_group(&child);
        panic!(
            "{programs} nodes running {} never showed up under {pid}",
            exe.display()
        );
    }
    (child, file, err)
}

#[test]
fn kill_9_of_run_j_takes_its_workers_and_programs_with_it() {
    // Nodes that keep busy in virtual time for a very long while, quietly
    // (a worker writing to its dead parent's pipe would die of SIGPIPE).
    let file = sh_scenario("kill9", "while :; do sleep 1; done", "");
    let text = std::fs::read_to_string(&file.path).unwrap();
    std::fs::write(&file.path, text.replace("\"5s\"", "\"100000h\"")).unwrap();
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    let (mut child, _file, _err) = start(file, &["-j", "2"], 2, &sh);
    let pid = child.id();
    let before: Vec<ProcInfo> = descendants(pid);
    assert!(before.len() >= 4, "workers, inits and programs: {before:?}");
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let _ = child.wait();
    let gone = eventually(Duration::from_secs(10), || {
        before.iter().all(|p| !p.is_alive())
    });
    let survivors: Vec<&ProcInfo> = before.iter().filter(|p| p.is_alive()).collect();
    for p in &survivors {
        // Clean up what this test started, by pid.
        unsafe { libc::kill(p.pid as i32, libc::SIGKILL) };
    }
    assert!(
        gone,
        "still running after faultline was killed: {survivors:?}"
    );
}

#[test]
fn sigint_and_sigterm_keep_a_partial_report_and_exit_128_plus_n() {
    for (signal, name, code, jobs) in [
        (libc::SIGINT, "SIGINT", 130, "1"),
        (libc::SIGTERM, "SIGTERM", 143, "2"),
    ] {
        let programs = if jobs == "1" { 1 } else { 2 };
        let (mut child, file, err) = start_spinning(&format!("sig{code}"), &["-j", jobs], programs);
        unsafe { libc::kill(child.id() as i32, signal) };
        let status = wait_until(&mut child, Instant::now() + DEFAULT_TIMEOUT);
        let Some(status) = status else {
            kill_group(&child);
            panic!("faultline did not stop on {name}");
        };
        let stderr =
            String::from_utf8_lossy(&collect(&err, Duration::from_secs(5)).unwrap_or_default())
                .into_owned();
        assert_eq!(status.code(), Some(code), "{name}\n{stderr}");
        assert!(
            stderr.contains(&format!("interrupted by {name}")),
            "{stderr}"
        );
        let dir = file
            .path
            .parent()
            .unwrap()
            .join("artifacts")
            .join(format!("runner-sig{code}"));
        let interrupted: Vec<serde_json::Value> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("report.json").is_file())
            .map(|e| report_json(&e.path()))
            .filter(|r| r["interrupted"] == true)
            .collect();
        assert_eq!(
            interrupted.len(),
            programs,
            "{name}: partial reports\n{stderr}"
        );
        assert!(interrupted.iter().all(|r| r["verdict"] == "interrupted"));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(
            summary["seeds"].as_array().map(Vec::len),
            Some(programs),
            "{summary}"
        );
    }
}

#[test]
fn zero_seeds_jobs_or_duration_are_bad_input() {
    let file = sh_scenario("zero", "exit 0", "");
    for (flags, says) in [
        (&["--seeds", "0"][..], "--seeds 0 runs nothing"),
        (&["-j", "0"][..], "-j 0 runs nothing"),
    ] {
        let mut cmd = file.runner().command();
        cmd.args(flags);
        let run = faultline_e2e::exec::run_command(cmd, DEFAULT_TIMEOUT);
        run.expect_code(2);
        assert!(run.stderr.contains(says), "{flags:?}\n{run}");
    }
    let dir = scratch_dir("runner-zero-duration");
    let zero = ScenarioFile::raw(
        &dir,
        "z.toml",
        "name = \"z\"\nduration = \"0s\"\n\n[[node]]\nname = \"n\"\ncommand = [\"/bin/true\"]\n",
    );
    let run = zero.runner().run();
    run.expect_code(2);
    assert!(
        any_line(
            &run.run,
            "z.toml:2:12: field `duration`: a seed of 0s runs nothing"
        )
        .is_some(),
        "\n{run}"
    );
}

/// A crash-and-restart scenario: node `a` has a data_dir under
/// `<dir>/mnt` and is crashed at 3 s; node `b` runs `script` on the host
/// side meanwhile.
fn mount_scenario(tag: &str, script: &str) -> (ScenarioFile, std::path::PathBuf) {
    let dir = scratch_dir(&format!("runner-{tag}"));
    let mnt = dir.join("mnt");
    let text = format!(
        r#"name = "runner-{tag}"
duration = "6s"

[[node]]
name = "a"
data_dir = "{mnt}/a"
command = ["/bin/sleep", "100"]

[[node]]
name = "b"
command = ["/bin/sh", "-c", "sleep 1; {script}"]

[[fault]]
kind = "crash"
at = "3s"
node = "a"
down = "100ms"
"#,
        mnt = mnt.display(),
        script = script.replace("MNT", &mnt.display().to_string()),
    );
    (ScenarioFile::raw(&dir, "m.toml", &text), mnt)
}

#[test]
fn a_vanished_data_dir_mount_point_is_made_again_at_restart() {
    let (file, mnt) = mount_scenario("remount", "rm -rf MNT");
    let run = run_scenario_twice(&file.runner().seed(5));
    run.expect_pass();
    assert!(
        any_line(&run.run, "node a: running at end (crashed 1 time(s)").is_some(),
        "\n{run}"
    );
    assert!(mnt.join("a").is_dir(), "the mount point was not made again");
}

#[test]
fn a_launch_faultline_cannot_do_is_faultlines_error_not_the_programs() {
    let (file, mnt) = mount_scenario("no-mount", "rm -rf MNT; echo x > MNT");
    let run = file.runner().seed(5).run();
    run.expect_code(125);
    let want = format!(
        "cannot create the mount point {}/a of a node's data_dir: Not a directory (os error 20)",
        mnt.display()
    );
    assert!(any_line(&run.run, &want).is_some(), "\n{run}");
    assert!(
        any_line(&run.run, "check \"faultline\"").is_some(),
        "\n{run}"
    );
    assert!(
        any_line(&run.run, "killed by").is_none(),
        "the program is blamed\n{run}"
    );
    assert_eq!(report_json(&run.seed_dir(5))["verdict"], "error");
}

#[test]
fn nodes_run_in_the_scenario_files_folder() {
    let file = sh_scenario("cwd", "pwd", "");
    let mut runner = file.runner().seed(2);
    runner = runner.artifacts(file.path.parent().unwrap().join("artifacts"));
    let mut cmd = runner.command();
    cmd.current_dir("/");
    let run = faultline_e2e::exec::run_command(cmd, DEFAULT_TIMEOUT);
    run.expect_code(0);
    let out = std::fs::read_to_string(
        file.path
            .parent()
            .unwrap()
            .join("artifacts/runner-cwd/0000000000000002/n.stdout"),
    )
    .unwrap();
    assert_eq!(
        out.trim(),
        file.path.parent().unwrap().to_str().unwrap(),
        "\n{run}"
    );
    run_scenario_twice(&runner);
}
