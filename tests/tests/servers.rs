//! Real servers from Debian packages, which nobody here wrote, give the same
//! run for the same seed. memcached's `stats` answer carries its pid, uptime,
//! clock and CPU time (getrusage); before CPU time was virtual it differed on
//! every run.

use faultline_e2e::checks::run_scenario_twice;
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
