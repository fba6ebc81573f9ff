//! Real servers and tools from Debian packages, which nobody here wrote,
//! give the same run for the same seed. memcached's `stats` answer carries its pid, uptime,
//! clock and CPU time (getrusage); before CPU time was virtual it differed on
//! every run.

use faultline_e2e::checks::{assert_same_scenario_outcome, run_scenario_twice};
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::ScenarioFile;

/// memcached with two worker threads, and a bash client that stores a key,
/// reads it back and asks for `stats` over the simulated network.
const MEMCACHED: &str = r#"name = "memcached-pair"
duration = "5s"

[[node]]
name = "cache"
command = ["memcached", "-u", "root", "-p", "11211", "-U", "0", "-t", "2", "-l", "0.0.0.0"]

[[node]]
name = "client"
command = ["bash", "-c", "sleep 1; exec 3<>/dev/tcp/cache/11211; printf 'set k 0 0 5\r\nhello\r\nget k\r\nstats\r\nquit\r\n' >&3; cat <&3"]
"#;

#[test]
fn memcached_stats_are_the_same_on_every_run() {
    let dir = scratch_dir("memcached");
    let file = ScenarioFile::raw(&dir, "memcached.toml", MEMCACHED);
    let run = run_scenario_twice(&file.runner().seed(1).artifacts(dir.join("runs")));
    run.expect_code(0);
    let out = run
        .node_output(1, "client", "stdout")
        .expect("client stdout");
    let out = String::from_utf8_lossy(&out);
    assert!(
        out.contains("STORED\r\nVALUE k 0 5\r\nhello\r\nEND\r\n"),
        "{out}"
    );
    let stat = |key: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("STAT {key} ")))
            .unwrap_or_else(|| panic!("no STAT {key}\n{out}"))
            .trim()
            .to_string()
    };
    assert_eq!(stat("pid"), "2", "{out}");
    // Started at the epoch, asked about 1 s later.
    assert_eq!(stat("time"), "1735689601", "{out}");
    // CPU time is the step time charged to the server: well under a
    // millisecond, all of it user time.
    let user: f64 = stat("rusage_user").parse().unwrap();
    assert!(user > 0.0 && user < 0.001, "{out}");
    assert_eq!(stat("rusage_system"), "0.000000", "{out}");
}

/// redis with an append-only file fsynced on every write, and redis-cli
/// asking for INFO: its server section carries the kernel (`uname`), pid,
/// run id (from /dev/urandom), clock and uptime; persistence and CPU carry
/// file sizes, save times and getrusage.
const REDIS: &str = r#"name = "redis-pair"
duration = "4s"

[[node]]
name = "db"
data_dir = "/tmp/faultline-redis-test/db"
command = ["redis-server", "--port", "6379", "--bind", "0.0.0.0", "--dir", "/tmp/faultline-redis-test/db",
  "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "no"]

[[node]]
name = "client"
command = ["bash", "-c", "sleep 1; redis-cli -h db set k hello && redis-cli -h db get k && redis-cli -h db incr n && redis-cli -h db info server && redis-cli -h db info persistence && redis-cli -h db info cpu"]
"#;

/// The same seed gives the same run wherever the scenario, the artifacts and
/// faultline's working directory are: the second run's scenario sits in a
/// deeper folder with a longer name and runs from elsewhere, so any host
/// path leaking into the trace would change its hash. Its artifacts path is
/// relative to faultline's directory, not the node's (the scenario's): the
/// client still finds `db` in the simulated /etc/hosts written there.
#[test]
fn redis_info_is_the_same_on_every_run_and_from_any_directory() {
    let dir = scratch_dir("redis");
    let near = dir.join("a");
    let far = dir.join("somewhere/much/deeper/with-a-longer-name");
    for d in [&near, &far] {
        std::fs::create_dir_all(d).unwrap();
    }
    let first = ScenarioFile::raw(&near, "redis.toml", REDIS)
        .runner()
        .seed(1)
        .artifacts(near.join("runs"))
        .run();
    let second = ScenarioFile::raw(&far, "redis.toml", REDIS)
        .runner()
        .seed(1)
        .artifacts("artifacts-elsewhere")
        .cwd(&dir)
        .run();
    first.expect_code(0);
    assert_same_scenario_outcome(&first, &second);
    let out = first.node_stdout(1, "client");
    assert!(out.starts_with("OK\nhello\n1\n"), "{out}");
    let info = |key: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}:")))
            .unwrap_or_else(|| panic!("no {key} in INFO\n{out}"))
            .trim()
            .to_string()
    };
    assert_eq!(info("os"), "Linux 6.1.0-faultline x86_64", "{out}");
    assert_eq!(info("process_id"), "2", "{out}");
    assert_eq!(info("uptime_in_seconds"), "1", "{out}");
    let now: u64 = info("server_time_usec").parse().unwrap();
    assert!(
        (1_735_689_601_000_000..1_735_689_602_000_000).contains(&now),
        "{out}"
    );
    assert_eq!(info("aof_last_write_status"), "ok", "{out}");
    assert_eq!(info("used_cpu_sys"), "0.000000", "{out}");
}

/// Debian's git committing into a node's data_dir while the node crashes
/// about every 2 s (its disk losing what was not synced) and restarts. git
/// stores file identities (stat's inode, device and times) in its index,
/// lists directories (getdents) and names lock files after nothing
/// host-specific: every seed must replay exactly, and the crashes must leave
/// the damage git's defaults allow (loose objects are not fsynced: an
/// object file left empty by a crash).
const GIT_UNDER_CRASHES: &str = r#"name = "git-crashes"
duration = "20s"

[[node]]
name = "n1"
data_dir = "/data/repo"
command = ["/bin/sh", "-c", "cd /data/repo && export HOME=/data/repo GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b && /usr/bin/git init -q . && i=0; while [ $i -lt 15 ]; do i=$((i+1)); echo $i > f$i; /usr/bin/git add -A && /usr/bin/git commit -q -m c$i; sleep 0.5; done; /usr/bin/git log --format='%H %ct %s' | head -3; /usr/bin/git fsck 2>&1 | tail -2"]

[[fault]]
kind = "crash"
every = "2s"
min_down = "100ms"
max_down = "500ms"
nodes = ["n1"]
"#;

#[test]
fn git_under_crashes_replays_exactly() {
    let dir = scratch_dir("git-crashes");
    let file = ScenarioFile::raw(&dir, "git.toml", GIT_UNDER_CRASHES);
    let run = run_scenario_twice(&file.runner().seeds(4).artifacts(dir.join("runs")));
    run.expect_code(0);
    let reports = run.reports();
    assert_eq!(reports.len(), 4, "{run}");
    let stderr_of = |seed| {
        String::from_utf8_lossy(&run.node_output(seed, "n1", "stderr").unwrap_or_default())
            .into_owned()
    };
    assert!(
        reports
            .iter()
            .any(|r| stderr_of(r.seed).contains("is empty")),
        "no crash left an empty object file\n{run}"
    );
}
