//! Host state a program can read is simulated: CPU time (the CPU-time
//! clocks, getrusage, times, /proc/self/stat) is the step time charged to
//! the thread or process, and the machine (sysinfo, /proc/uptime, loadavg,
//! meminfo, stat, /proc/self/status, /proc/<pid>/..., the online CPUs) is
//! the simulated one, consistent with the virtual clock; statfs of a
//! data_dir is the simulated disk (`[disk] size`). Each program prints
//! what it read; the host's values would differ between runs, so a run
//! twice with one seed proves they are gone.

use faultline_e2e::checks::{assert_same_on_both_paths, run_scenario_twice, run_twice};
use faultline_e2e::output::value;
use faultline_e2e::paths::scratch_dir;
use faultline_e2e::{per_linkage, Exec, Program, ScenarioFile, DEFAULT_EPOCH};

/// `--step-cost` by default: every CPU time is a multiple of it.
const STEP_NS: i64 = 1_000;

fn cpu_time_is_the_step_time(program: Program) {
    let run = run_twice(&Exec::program(program).seed(5));
    run.expect_success();
    let out = run.out();
    let ns = |key: &str| -> i64 { value(out, key) };
    for key in [
        "start_process_cputime",
        "after_burn_process_cputime",
        "after_burn_thread_cputime",
        "worker_thread_cputime",
        "process_via_clockid",
        "rusage_self",
        "rusage_thread",
        "rusage_children",
        "end_process_cputime",
    ] {
        assert_eq!(
            ns(key) % STEP_NS,
            0,
            "{key} is no multiple of the step cost\n{run}"
        );
    }
    // A burst of tens of milliseconds of host computation with no system
    // call is one step (the printf between the reads adds a few more).
    let burst = ns("after_burn_process_cputime") - ns("start_process_cputime");
    assert!(
        burst <= 10 * STEP_NS,
        "the burst cost {burst} ns of CPU time\n{run}"
    );
    // Every yield of the worker and of the child is a step of its own.
    assert!(ns("worker_thread_cputime") >= 50 * STEP_NS, "worker\n{run}");
    assert!(ns("rusage_children") >= 100 * STEP_NS, "children\n{run}");
    assert_eq!(value::<i32>(out, "worker_clock_negative"), 1, "{run}");
    // The process's time includes its threads'; a thread's is its own.
    assert!(
        ns("process_via_clockid") >= ns("worker_thread_cputime"),
        "{run}"
    );
    assert!(ns("rusage_self") >= ns("process_via_clockid"), "{run}");
    assert!(ns("rusage_thread") < ns("rusage_self"), "{run}");
    assert!(ns("end_process_cputime") >= ns("rusage_self"), "{run}");
    // times and /proc/self/stat count the same time in 10 ms ticks.
    let ticks = ns("end_process_cputime") / 10_000_000;
    assert_eq!(ns("times_utime"), ticks, "{run}");
    assert_eq!(ns("proc_stat_utime"), ticks, "{run}");
    assert_eq!(ns("proc_stat_stime"), 0, "{run}");
    // times' return value counts ticks of the virtual boot-time clock.
    let elapsed = (100.0 + run.summary().vtime_secs) * 100.0;
    assert!((ns("times_elapsed") as f64 - elapsed).abs() <= 1.0, "{run}");
}
per_linkage!(
    c_cpu_time_is_the_step_time,
    Program::c("cputime"),
    cpu_time_is_the_step_time
);

#[test]
fn cpu_clocks_read_the_same_with_and_without_the_vdso() {
    let exec = Exec::program(Program::c("cputime")).seed(5);
    let with = exec.run();
    let without = exec.clone().flag("--no-vdso").run();
    assert_same_on_both_paths(&with, &without, "faultline's vDSO");
}

fn machine_is_the_simulated_one(program: Program) {
    let run = run_twice(&Exec::program(program).seed(2).cpus(3));
    run.expect_success();
    let out = run.out();
    let line = |key: &str| -> String {
        out.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {key}\n{run}"))
            .trim()
            .to_string()
    };
    // The program slept 5 s; the machine booted 100 s before the run.
    assert_eq!(line("sysinfo_uptime"), "105", "{run}");
    assert!(line("proc_uptime").starts_with("105.00 "), "{run}");
    assert_eq!(
        line("stat_btime"),
        (DEFAULT_EPOCH - 100).to_string(),
        "{run}"
    );
    assert_eq!(line("sysinfo_totalram"), (8u64 << 30).to_string(), "{run}");
    assert_eq!(line("meminfo_total"), "8388608 kB", "{run}");
    assert_eq!(line("sysinfo_procs"), "1", "{run}");
    assert!(line("proc_loadavg").starts_with("0.00 0.00 0.00 "), "{run}");
    assert!(line("stat_cpu").starts_with("0 0 0 "), "{run}");
    // Its own pid, in /proc/self and in /proc/<getpid()>, and no tracer.
    // (comm is the first 15 bytes of the binary's name.)
    assert!(line("self_stat").starts_with("2 (machine_state"), "{run}");
    assert!(line("self_stat").contains(") S 1 2 2 "), "{run}");
    assert_eq!(line("pid_stat"), line("self_stat"), "{run}");
    assert_eq!(line("self_pid"), "2", "{run}");
    assert_eq!(line("self_tracer"), "0", "{run}");
    assert!(line("pid_cmdline").starts_with("machine_state"), "{run}");
    assert_eq!(line("cpus_online"), "0-2", "{run}");
    assert_eq!(line("nprocs"), "3", "{run}");
}
per_linkage!(
    c_machine_is_the_simulated_one,
    Program::c("machine_state"),
    machine_is_the_simulated_one
);

/// The line of `out` that starts with `label `.
fn labelled_line<'a>(out: &'a str, label: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{label} ")))
        .unwrap_or_else(|| panic!("no {label} line in\n{out}"))
}

/// The `key=value` word of the line of `out` that starts with `label `.
fn field(out: &str, label: &str, key: &str) -> u64 {
    let line = labelled_line(out, label);
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| {
            v.strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
        })
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

/// Runs `program DIR` twice as node n1 of a scenario whose data_dir (a
/// simulated disk of 1 GiB) is DIR; returns what it printed.
fn on_a_data_dir(tag: &str, program: Program) -> String {
    let dir = scratch_dir(tag);
    let data_dir = format!("/data/{tag}");
    let text = format!(
        "name = \"{tag}\"\nduration = \"10s\"\n\n[disk]\nsize = \"1GiB\"\n\n[[node]]\nname = \"n1\"\ndata_dir = {data_dir:?}\ncommand = [{:?}, {data_dir:?}]\n",
        program.path().display().to_string()
    );
    let file = ScenarioFile::raw(&dir, "scenario.toml", &text);
    let run = run_scenario_twice(&file.runner().artifacts(dir.join("runs")));
    run.expect_code(0);
    let seed = run.reports()[0].seed;
    String::from_utf8(run.node_output(seed, "n1", "stdout").expect("stdout")).unwrap()
}

#[test]
fn statfs_of_a_data_dir_reports_the_simulated_disk() {
    let out = on_a_data_dir("statfs-disk", Program::c("statfs"));
    let blocks = (1u64 << 30) / 4096;
    assert_eq!(field(&out, "before", "type"), 0xef53, "{out}");
    assert_eq!(field(&out, "before", "bsize"), 4096, "{out}");
    assert_eq!(field(&out, "before", "blocks"), blocks, "{out}");
    assert_eq!(
        field(&out, "before", "bfree"),
        blocks,
        "an empty disk\n{out}"
    );
    // 1 MiB written: 256 blocks fewer free, one more inode used, seen from
    // the descriptor and from the path.
    for label in ["after_fstatfs", "after"] {
        assert_eq!(field(&out, label, "bfree"), blocks - 256, "{label}\n{out}");
        assert_eq!(field(&out, label, "bavail"), blocks - 256, "{label}\n{out}");
        assert_eq!(
            field(&out, label, "ffree"),
            field(&out, "before", "ffree") - 1,
            "{label}\n{out}"
        );
    }
    assert_statfs_elsewhere_is_fixed(&out);
}

/// Outside a data_dir: fixed figures (100 GiB, half free), the host's file
/// system type, and none for a pseudo file system.
fn assert_statfs_elsewhere_is_fixed(out: &str) {
    assert_eq!(field(out, "root", "blocks"), (100u64 << 30) / 4096, "{out}");
    assert_eq!(field(out, "root", "bfree"), (50u64 << 30) / 4096, "{out}");
    assert_eq!(
        field(out, "proc", "type"),
        0x9fa0,
        "procfs stays procfs\n{out}"
    );
    assert_eq!(field(out, "proc", "blocks"), 0, "{out}");
    assert!(out.contains("missing 1"), "a missing path fails\n{out}");
}

#[test]
fn statfs_outside_a_data_dir_is_fixed() {
    let dir = scratch_dir("statfs-exec");
    let run = run_twice(&Exec::program(Program::c("statfs")).arg(&dir).seed(1));
    run.expect_success();
    let out = run.out();
    assert_statfs_elsewhere_is_fixed(out);
    assert_eq!(
        field(out, "after", "bfree"),
        field(out, "before", "bfree"),
        "{run}"
    );
}

/// The seconds (with fraction) of a `key=S.N` word.
fn time_of(out: &str, label: &str, key: &str) -> f64 {
    let line = labelled_line(out, label);
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {line:?}"))
}

/// 2024-01-01T00:00:00Z: the time of every file not changed on a disk.
const FIXED_FILE_TIME: f64 = 1_704_067_200.0;

/// A read-only host file: a fixed time, the same identity from stat and lstat.
fn assert_host_file_is_fixed(out: &str) {
    for key in ["atime", "mtime", "ctime"] {
        assert_eq!(
            time_of(out, "host_stat", key),
            FIXED_FILE_TIME,
            "{key}\n{out}"
        );
    }
    for key in ["dev", "ino"] {
        assert_eq!(
            field(out, "host_stat", key),
            field(out, "host_lstat", key),
            "{out}"
        );
    }
}

#[test]
fn stat_on_a_data_dir_shows_virtual_change_times_and_disk_inodes() {
    let out = on_a_data_dir("stat-disk", Program::c("stat"));
    assert_host_file_is_fixed(&out);
    // vfs numbers the disk's root 0 and the first file 1: shown as 2 and 3.
    assert_eq!(field(&out, "dir_stat", "ino"), 2, "{out}");
    for label in ["new_fstat", "new_stat", "changed_fstatat", "changed_statx"] {
        assert_eq!(field(&out, label, "ino"), 3, "{label}\n{out}");
        assert_eq!(
            field(&out, label, "dev"),
            field(&out, "dir_stat", "dev"),
            "{label}\n{out}"
        );
    }
    assert_ne!(
        field(&out, "dir_stat", "dev"),
        field(&out, "host_stat", "dev"),
        "{out}"
    );
    // Times are the virtual time of the change: at creation, then 2 s later.
    let created: f64 = value(&out, "created_at");
    let first = time_of(&out, "new_fstat", "mtime");
    assert!((created..created + 0.01).contains(&first), "{out}");
    assert_eq!(time_of(&out, "new_stat", "mtime"), first, "{out}");
    let second = time_of(&out, "changed_fstatat", "mtime");
    assert!((2.0..2.01).contains(&(second - first)), "{out}");
    assert_eq!(time_of(&out, "changed_statx", "mtime"), second, "{out}");
    assert_eq!(time_of(&out, "changed_fstatat", "ctime"), second, "{out}");
}

#[test]
fn stat_elsewhere_shows_fixed_times_and_first_seen_inodes() {
    let dir = scratch_dir("stat-exec");
    let run = run_twice(&Exec::program(Program::c("stat")).arg(&dir).seed(1));
    run.expect_success();
    let out = run.out();
    assert_host_file_is_fixed(out);
    for label in ["new_fstat", "changed_fstatat"] {
        assert_eq!(
            time_of(out, label, "mtime"),
            FIXED_FILE_TIME,
            "{label}\n{run}"
        );
    }
    assert_eq!(
        field(out, "new_stat", "ino"),
        field(out, "changed_statx", "ino"),
        "{run}"
    );
    assert!(field(out, "new_stat", "ino") >= 1 << 20, "{run}");
}

/// Every kind of unsimulated host-state read host_reads.c makes, as
/// faultline names it (sorted, as report.json lists them).
const HOST_READS: [&str; 5] = [
    "clock_adjtime",
    "getitimer",
    "getpriority",
    "open /proc/<pid>/io",
    "open /proc/cpuinfo",
];

#[test]
fn unsimulated_host_state_is_reported_once_per_kind() {
    let run = run_twice(&Exec::program(Program::c("host_reads")).seed(1).cpus(3));
    run.expect_success();
    // glibc counts the CPUs in /sys/devices/system/cpu: the simulated ones.
    assert_eq!(value::<u32>(run.out(), "nprocs_conf"), 3, "{run}");
    // A kernel with HZ=250, whatever the host's.
    assert_eq!(
        value::<u64>(run.out(), "coarse_resolution_ns"),
        4_000_000,
        "{run}"
    );
    let lines = run.faultline_lines();
    for kind in HOST_READS {
        let first = format!("warning: {kind} on host faultline reads the host's state");
        let n = lines.iter().filter(|l| l.contains(&first)).count();
        assert_eq!(n, 1, "one line for {kind}\n{run}");
    }
    let total = run
        .faultline_line_with("host state read:")
        .unwrap_or_else(|| panic!("no host-state summary\n{run}"));
    for kind in HOST_READS {
        assert!(
            total.contains(&format!("{kind} on host faultline (2 time(s))")),
            "{kind} counted twice\n{run}"
        );
    }
    assert!(total.ends_with("possibly non-deterministic"), "{run}");
}

#[test]
fn report_json_counts_unsimulated_host_state() {
    let dir = scratch_dir("host-reads");
    let text = format!(
        "name = \"host-reads\"\nduration = \"1s\"\n\n[[node]]\nname = \"n1\"\ncommand = [{:?}]\n",
        Program::c("host_reads").path().display().to_string()
    );
    let file = ScenarioFile::raw(&dir, "scenario.toml", &text);
    let run = run_scenario_twice(&file.runner().artifacts(dir.join("runs")));
    run.expect_code(0);
    let seed = run.reports()[0].seed;
    assert!(
        run.run
            .stderr
            .contains("this seed is possibly non-deterministic"),
        "{run}"
    );
    let path = run.seed_dir(seed).join("report.json");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let reads = report["host_state"].as_array().expect("host_state array");
    let mut kinds: Vec<&str> = reads.iter().map(|r| r["call"].as_str().unwrap()).collect();
    kinds.sort_unstable();
    assert_eq!(kinds, HOST_READS, "{report}");
    for r in reads {
        assert_eq!(
            (r["node"].as_str(), r["count"].as_u64()),
            (Some("n1"), Some(2)),
            "{report}"
        );
    }
}

/// The checks both listings share: every entry's `d_ino` is the inode
/// `stat` shows for it; `/proc/self` and `/proc/thread-self` name the
/// namespace's pid and tid; a pipe's and a socket's `/proc/self/fd` links
/// name the inode `fstat` shows. Returns the entries' inodes.
fn assert_listing_and_links_agree_with_stat(out: &str) -> Vec<u64> {
    let mut inodes = Vec::new();
    for name in ["alpha", "beta", "gamma"] {
        let entry = format!("entry {name}");
        let d_ino = field(out, &entry, "d_ino");
        assert_eq!(d_ino, field(out, &entry, "stat_ino"), "{name}\n{out}");
        inodes.push(d_ino);
    }
    let pid: u64 = value(out, "getpid");
    let tid: u64 = value(out, "gettid");
    assert_eq!(value::<u64>(out, "self"), pid, "{out}");
    assert_eq!(
        value::<String>(out, "thread_self"),
        format!("{pid}/task/{tid}"),
        "{out}"
    );
    for kind in ["pipe", "socket"] {
        let ino: u64 = value(out, &format!("{kind}_ino"));
        assert_eq!(
            value::<String>(out, kind),
            format!("{kind}:[{ino}]"),
            "{out}"
        );
        assert!(ino >= 1 << 20, "{kind} inode {ino} is the host's\n{out}");
    }
    inodes
}

/// A directory listing's inode numbers, the pids `/proc/self` names and the
/// inodes in `/proc/self/fd` links are the simulated ones: the same in
/// every run (on the host they change every run) and the ones `stat` and
/// `getpid` give.
#[test]
fn listings_and_proc_links_show_simulated_identities() {
    let dir = scratch_dir("dir-links-exec");
    let run = run_twice(&Exec::program(Program::c("dir_links")).arg(&dir).seed(1));
    run.expect_success();
    for ino in assert_listing_and_links_agree_with_stat(run.out()) {
        assert!(ino >= 1 << 20, "a host inode {ino}\n{run}");
    }
}

/// On a node's data_dir the listing shows the simulated disk's inodes (vfs
/// numbers the root 0, the files from 1: shown from 3 on).
#[test]
fn listing_a_data_dir_shows_disk_inodes() {
    let out = on_a_data_dir("dir-links-disk", Program::c("dir_links"));
    let mut inodes = assert_listing_and_links_agree_with_stat(&out);
    inodes.sort_unstable();
    assert_eq!(inodes, [3, 4, 5], "{out}");
}

/// Resource limits are a fixed table, not the machine's or the shell's: a
/// CI runner's open-file limit is not a laptop's. /proc/self/limits shows
/// the same table. A change is kept (and inherited by a child), and the
/// host enforces it: a limit lowered to 64
/// stops `dup` at descriptor 63.
#[test]
fn resource_limits_are_the_simulated_table() {
    let run = run_twice(&Exec::program(Program::c("rlimits")).seed(1));
    run.expect_success();
    let out = run.out();
    let line = |label| labelled_line(out, label);
    assert_eq!(line("nofile"), "nofile cur=1024 max=524288", "{run}");
    assert_eq!(
        line("stack"),
        "stack cur=8388608 max=18446744073709551615",
        "{run}"
    );
    assert_eq!(line("nproc"), "nproc cur=63704 max=63704", "{run}");
    assert_eq!(
        line("prlimit_old"),
        "prlimit_old cur=1024 max=524288",
        "{run}"
    );
    assert_eq!(line("raised"), "raised cur=4096 max=524288", "{run}");
    assert_eq!(
        line("proc_limits_nofile"),
        "proc_limits_nofile cur=4096 max=524288",
        "{run}"
    );
    assert_eq!(line("cur_above_max"), "cur_above_max EINVAL", "{run}");
    assert_eq!(line("no_such_resource"), "no_such_resource EINVAL", "{run}");
    assert_eq!(line("child"), "child cur=4096 max=524288", "{run}");
    assert_eq!(
        line("lowered_to_64"),
        "lowered_to_64 last_fd=63 EMFILE",
        "{run}"
    );
    assert!(!run.stderr.contains("host's state"), "{run}");
}
