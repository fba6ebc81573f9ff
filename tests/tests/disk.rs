//! Simulated disks and crashes (issue 4): the kvserver test service writes a
//! write-ahead log on its node's `data_dir`, the fault plan crashes and
//! restarts it, vfs takes back what was never made durable, and kvclient
//! fails (exit 2, `LOST k..`) when an acknowledged put is gone. Without a
//! bug switch every seed passes; each bug switch is caught on the first few
//! seeds. Every run happens twice and must agree exactly.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use std::time::Duration;

use faultline_e2e::checks::run_scenario_twice;
use faultline_e2e::kv::KvScenario;
use faultline_e2e::paths::{scratch_dir, workspace_root};
use faultline_e2e::{NodeOutcome, Program, ScenarioFile, ScenarioRun};

/// Wall-clock limit of one `faultline run` here: several seeds of a
/// multi-node cluster on a loaded 2-core machine.
const SLOW: Duration = Duration::from_secs(600);

/// A Rust or Go build of the kvserver service.
enum Server {
    Rust,
    Go,
}

impl Server {
    fn path(&self) -> PathBuf {
        match self {
            Server::Rust => workspace_root().join("target/release/kvserver"),
            Server::Go => Program::go("kvserver").path(),
        }
    }
}

/// Writes the kv scenario (see `faultline_e2e::kv`) with `server`, `bug`,
/// `puts` and fsync EIO and write ENOSPC each with probability `eio`.
fn kv_scenario(tag: &str, server: Server, bug: Option<&str>, puts: u32, eio: f64) -> ScenarioFile {
    let dir = scratch_dir(&format!("disk-{tag}"));
    let name = format!("kv-{tag}");
    let text = KvScenario {
        server: server.path(),
        bug,
        puts,
        eio,
        ..KvScenario::rust(&name)
    }
    .toml(&dir);
    ScenarioFile::raw(&dir, "kv.toml", &text)
}

/// The run's first failing seed must be the client losing a put.
#[track_caller]
fn assert_lost_put(run: &ScenarioRun) {
    run.expect_code(1);
    let failed = run.first_failure("no FAIL verdict");
    assert_eq!(
        failed.node("client"),
        Some(&NodeOutcome::Exit(2)),
        "\n{run}"
    );
    let out = run
        .node_output(failed.seed, "client", "stdout")
        .unwrap_or_else(|| panic!("no client stdout artifact\n{run}"));
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.lines()
            .any(|l| l.starts_with("LOST k") && l.contains("acknowledged")),
        "the client did not report a lost acknowledged put:\n{out}\n{run}"
    );
}

#[test]
fn rust_kvserver_without_bugs_survives_crashes_and_fsync_errors() {
    let file = kv_scenario("rust-ok", Server::Rust, None, 40, 0.05);
    let run = run_scenario_twice(&file.runner().seeds(20).timeout(SLOW));
    run.expect_pass();
    let reports = run.reports();
    assert_eq!(reports.len(), 20, "\n{run}");
    // The plan really crashed the server: some seed names its crashes.
    assert!(
        run.run.faultline_line_with("crashed").is_some(),
        "no node line mentions a crash\n{run}"
    );
}

#[test]
fn ack_before_fsync_is_caught() {
    assert_lost_put(&run_scenario_twice(
        &kv_scenario("rust-ack", Server::Rust, Some("ack-before-fsync"), 200, 0.0)
            .runner()
            .seeds(5)
            .timeout(SLOW),
    ));
}

#[test]
fn no_dir_fsync_is_caught() {
    assert_lost_put(&run_scenario_twice(
        &kv_scenario("rust-dir", Server::Rust, Some("no-dir-fsync"), 100, 0.0)
            .runner()
            .seeds(5)
            .timeout(SLOW),
    ));
}

#[test]
fn ignore_fsync_error_is_caught() {
    assert_lost_put(&run_scenario_twice(
        &kv_scenario(
            "rust-eio",
            Server::Rust,
            Some("ignore-fsync-error"),
            100,
            0.05,
        )
        .runner()
        .seeds(5)
        .timeout(SLOW),
    ));
}

#[test]
fn go_kvserver_without_bugs_passes_and_its_dir_fsync_bug_is_caught() {
    let ok = run_scenario_twice(
        &kv_scenario("go-ok", Server::Go, None, 40, 0.05)
            .runner()
            .seeds(5)
            .timeout(SLOW),
    );
    ok.expect_pass();
    assert_lost_put(&run_scenario_twice(
        &kv_scenario("go-dir", Server::Go, Some("no-dir-fsync"), 100, 0.0)
            .runner()
            .seeds(5)
            .timeout(SLOW),
    ));
}

/// fallocate on a simulated disk: the program sees the sizes and zeros the
/// kernel would give, a crash takes back the growth that was never synced
/// and keeps the synced one, and the host keeps the preallocated range
/// sparse (etcd preallocates 64 MiB per WAL segment per node per seed).
#[test]
fn preallocated_segments_keep_their_synced_size_and_stay_sparse_on_the_host() {
    let dir = scratch_dir("disk-prealloc");
    let data = dir.join("mnt").join("log");
    let text = format!(
        r#"name = "prealloc"
duration = "3s"

[[node]]
name = "log"
data_dir = "{data}"
command = ["{program}", "{data}"]

[[fault]]
kind = "crash"
at = "1s"
node = "log"
down = "100ms"
"#,
        data = data.display(),
        program = Program::c("prealloc").path().display(),
    );
    let file = ScenarioFile::raw(&dir, "prealloc.toml", &text);
    let run = run_scenario_twice(&file.runner().seed(1));
    run.expect_pass();
    let seed = run.report().seed;
    let out = run.node_stdout(seed, "log");
    const MIB: u64 = 1 << 20;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            format!("fresh size={} tail_zero=1", 64 * MIB),
            format!("inside size={}", 64 * MIB),
            "zero_length rc=-1 errno=Invalid argument".to_string(),
            format!(
                "read_only rc=-1 errno=Bad file descriptor size={}",
                64 * MIB
            ),
            format!("grown size={}", 128 * MIB),
            format!("restarted size={} head=REC1 tail_zero=1", 64 * MIB),
            format!("next size={} tail_zero=1", 64 * MIB),
        ],
        "\n{run}"
    );
    let segment = run.seed_dir(seed).join("log.disk").join("segment2");
    let meta =
        std::fs::metadata(&segment).unwrap_or_else(|e| panic!("{}: {e}\n{run}", segment.display()));
    assert_eq!(meta.len(), 64 * MIB, "{}", segment.display());
    assert!(
        meta.blocks() * 512 < MIB,
        "{} holds {} bytes on the host: the preallocation was not kept sparse",
        segment.display(),
        meta.blocks() * 512
    );
}

/// A JSON artifact of a seed directory.
#[track_caller]
fn artifact_json(dir: &std::path::Path, name: &str) -> serde_json::Value {
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Injected fsync and write errors and a disk crash are named in the
/// artifacts with their node, paths and errno: node `a` makes its files
/// durable with sync(1), then rewrites `wal/seg` through a failing fsync
/// (vfs drops the data) and is crashed; node `b`'s write fails with EIO. A
/// `lose_dir_entries` bug drops `snap/x`. The trace names the paths of the
/// file calls on the data_dirs. Each node ends in `exec sleep`, one process
/// (a crash of several processes is tested in faults.rs).
#[test]
fn disk_faults_name_their_node_paths_and_errno_in_the_artifacts() {
    let dir = scratch_dir("disk-named");
    let (a, b) = (dir.join("mnt/a"), dir.join("mnt/b"));
    let (a, b) = (a.display(), b.display());
    let script_a = format!(
        "mkdir {a}/wal {a}/snap && echo one > {a}/wal/seg && echo s > {a}/snap/x && sync && \
         dd if=/dev/zero of={a}/wal/seg bs=512 count=1 conv=notrunc,fsync; exec sleep 10"
    );
    let script_b = format!("echo x > {b}/f || echo 'write failed' >&2; exec sleep 10");
    let text = format!(
        r#"name = "disk-named"
duration = "3s"

[[node]]
name = "a"
data_dir = "{a}"
command = ["/bin/sh", "-c", {script_a:?}]

[[node]]
name = "b"
data_dir = "{b}"
command = ["/bin/sh", "-c", {script_b:?}]

[[fault]]
kind = "fsync_error"
probability = 1.0
nodes = ["a"]

[[fault]]
kind = "write_error"
errno = "EIO"
probability = 1.0
nodes = ["b"]

[[fault]]
kind = "lose_dir_entries"
dir = "snap"
nodes = ["a"]

[[fault]]
kind = "crash"
at = "1s"
node = "a"
down = "5s"
"#
    );
    let file = ScenarioFile::raw(&dir, "disk.toml", &text);
    let run = run_scenario_twice(&file.runner().seed(7));
    run.expect_pass();
    let seed_dir = run.seed_dir(7);
    let faults = artifact_json(&seed_dir, "faults.json");
    let faults = faults.as_array().expect("faults.json is a list");
    let of_kind = |kind: &str| -> Vec<&serde_json::Value> {
        faults.iter().filter(|f| f["kind"] == kind).collect()
    };
    let seg = format!("{a}/wal/seg");
    let fsync = of_kind("fsync_error");
    assert_eq!(fsync.len(), 1, "{faults:?}\n{run}");
    assert_eq!(fsync[0]["node"], "a");
    assert_eq!(fsync[0]["path"], seg.as_str());
    assert_eq!(fsync[0]["errno"], "EIO");
    let write = of_kind("write_error");
    assert_eq!(write.len(), 1, "{faults:?}\n{run}");
    assert_eq!(write[0]["node"], "b");
    assert_eq!(write[0]["path"], format!("{b}/f").as_str());
    assert_eq!(write[0]["errno"], "EIO");
    let crash = of_kind("disk_crash");
    assert_eq!(crash.len(), 1, "{faults:?}\n{run}");
    assert_eq!(crash[0]["lost"], serde_json::json!([seg]), "{faults:?}");
    assert_eq!(
        crash[0]["reverted"],
        serde_json::json!([format!("lost entry {a}/snap/x")]),
        "{faults:?}"
    );

    let timeline = std::fs::read_to_string(seed_dir.join("timeline.txt")).unwrap();
    for wanted in [
        format!("fsync_error  fsync {seg}: EIO"),
        format!("write_error  write {b}/f: EIO"),
        format!("disk_crash   lost writes: {seg}; reverted: lost entry {a}/snap/x"),
    ] {
        assert!(
            timeline.lines().any(|l| l.contains(&wanted)),
            "timeline.txt lacks {wanted:?}:\n{timeline}"
        );
    }
    let page = std::fs::read_to_string(seed_dir.join("timeline.html")).unwrap();
    assert!(
        page.contains(&format!(r#""kind":"fsync_error","node":"a","detail":"fsync {seg}: EIO","path":"{seg}","errno":"EIO""#)),
        "timeline.html does not embed the fsync error with its path"
    );

    let trace = faultline_e2e::trace::trace_text(&seed_dir.join("trace.jsonl.zst"))
        .unwrap_or_else(|e| panic!("{e}"));
    // By name prefix: glibc may make mkdir and open as mkdirat and openat.
    let event = |call: &str, path: &str| {
        let paths = format!(r#""paths":["{path}"]"#);
        trace
            .lines()
            .any(|l| l.contains(&format!(r#""call":"{call}"#)) && l.contains(&paths))
    };
    for (call, path) in [
        ("mkdir", format!("{a}/wal")),
        ("open", seg.clone()),
        ("fsync", seg.clone()),
        ("write", format!("{b}/f")),
    ] {
        assert!(
            event(call, &path),
            "no {call} event names {path} in the trace"
        );
    }
}
