//! The simulated machine a node runs on, as `sysinfo` and the machine-wide
//! `/proc` files describe it: fixed memory, no load, an uptime that is the
//! virtual boot-time clock, CPU time from the virtual CPU ledger. The host's
//! versions of these change from run to run (and programs size caches or
//! pick timeouts from them), so every value here is a function of the run's
//! own state only.

use std::fmt::Write as _;

/// Memory of every simulated machine, in bytes.
pub const MEM_TOTAL: u64 = 8 << 30;
/// Free memory (constant: allocations do not show).
pub const MEM_FREE: u64 = 6 << 30;
/// The page cache.
pub const MEM_CACHED: u64 = 1 << 30;
/// What the kernel would call available (free plus reclaimable cache).
pub const MEM_AVAILABLE: u64 = MEM_FREE + MEM_CACHED;
/// Resident set size every simulated process reports.
pub const PROCESS_RSS: u64 = 16 << 20;
/// Virtual memory size every simulated process reports.
pub const PROCESS_VSIZE: u64 = 256 << 20;
/// Page size (for rss in pages).
pub const PAGE_SIZE: u64 = 4096;

/// The kernel every simulated machine runs (`uname`, `/proc/version`,
/// `/proc/sys/kernel/osrelease`): the host's would make a seed pinned on one
/// machine replay differently on another (servers print it, e.g. redis's
/// INFO). A real release number, so version checks take their usual path.
pub const KERNEL_RELEASE: &str = "6.1.0-faultline";
/// The kernel's build string (`uname -v`).
pub const KERNEL_VERSION: &str = "#1 SMP PREEMPT_DYNAMIC faultline";

/// The `struct utsname` of host `node_name`: six 65-byte NUL-padded fields
/// (sysname, nodename, release, version, machine, domainname).
pub fn utsname(node_name: &str) -> [u8; 6 * 65] {
    let mut out = [0u8; 6 * 65];
    let fields = [
        "Linux",
        node_name,
        KERNEL_RELEASE,
        KERNEL_VERSION,
        "x86_64",
        "(none)",
    ];
    for (i, field) in fields.iter().enumerate() {
        let n = field.len().min(64);
        out[i * 65..i * 65 + n].copy_from_slice(&field.as_bytes()[..n]);
    }
    out
}

/// `/proc/version`.
pub fn proc_version() -> String {
    format!("Linux version {KERNEL_RELEASE} (faultline) {KERNEL_VERSION}\n")
}

/// The state of one simulated host at the moment a file is read.
#[derive(Debug, Clone)]
pub struct HostView {
    /// Virtual time since boot (CLOCK_BOOTTIME), ns.
    pub uptime_ns: u64,
    /// Wall-clock time of boot, seconds since the Unix epoch.
    pub boot_secs: i64,
    /// CPUs the machine has (`--cpus`).
    pub cpus: u32,
    /// CPU time all its processes used, ns.
    pub busy_ns: u64,
    /// Processes on the host.
    pub procs: u32,
    /// Threads on the host.
    pub threads: u32,
    /// The highest pid handed out in its namespace.
    pub last_pid: i32,
}

/// One process as `/proc/<pid>/stat` and `status` describe it.
#[derive(Debug, Clone)]
pub struct ProcView {
    /// Its pid (as the program sees it).
    pub pid: i32,
    /// Its parent's pid (1, the namespace's init, for a node's program).
    pub ppid: i32,
    /// The command name (at most 15 bytes, as the kernel keeps it).
    pub comm: String,
    /// Its threads.
    pub threads: u32,
    /// User CPU time, ns.
    pub cpu_ns: u64,
    /// CPU time of its children that are gone, ns.
    pub children_ns: u64,
    /// When it started, ns since boot.
    pub start_ns: u64,
}

/// Clock ticks (USER_HZ) of `ns`.
fn ticks(ns: u64) -> u64 {
    ns / (1_000_000_000 / 100)
}

/// Seconds with two decimals, as /proc/uptime prints them.
fn centis(ns: u64) -> String {
    let c = ns / 10_000_000;
    format!("{}.{:02}", c / 100, c % 100)
}

/// `/proc/uptime`: uptime and idle time (every CPU's time not used).
pub fn uptime(h: &HostView) -> String {
    let idle = (h.uptime_ns.saturating_mul(u64::from(h.cpus))).saturating_sub(h.busy_ns);
    format!("{} {}\n", centis(h.uptime_ns), centis(idle))
}

/// `/proc/loadavg`: no load, the host's thread count, the last pid.
pub fn loadavg(h: &HostView) -> String {
    format!("0.00 0.00 0.00 1/{} {}\n", h.threads, h.last_pid)
}

/// `/proc/meminfo`: the fixed memory of the simulated machine.
pub fn meminfo() -> String {
    let kb = |b: u64| b >> 10;
    let mut s = String::new();
    for (key, bytes) in [
        ("MemTotal", MEM_TOTAL),
        ("MemFree", MEM_FREE),
        ("MemAvailable", MEM_AVAILABLE),
        ("Buffers", 0),
        ("Cached", MEM_CACHED),
        ("SwapCached", 0),
        ("Active", MEM_CACHED),
        ("Inactive", 0),
        ("SwapTotal", 0),
        ("SwapFree", 0),
        ("Dirty", 0),
        ("Writeback", 0),
        ("AnonPages", MEM_TOTAL - MEM_AVAILABLE),
        ("Shmem", 0),
        ("Slab", 0),
        ("CommitLimit", MEM_TOTAL / 2),
        ("Committed_AS", MEM_TOTAL - MEM_AVAILABLE),
        ("HugePages_Total", 0),
    ] {
        if key.starts_with("HugePages") {
            let _ = writeln!(s, "{key}:{:>8}", bytes);
        } else {
            let _ = writeln!(s, "{:<16}{:>8} kB", format!("{key}:"), kb(bytes));
        }
    }
    s.push_str("Hugepagesize:       2048 kB\n");
    s
}

/// `/proc/stat`: CPU time in ticks (all used time is user time), boot time,
/// and the process counts.
pub fn stat(h: &HostView) -> String {
    let cpus = u64::from(h.cpus.max(1));
    let user = ticks(h.busy_ns);
    let idle = ticks(h.uptime_ns.saturating_mul(cpus)).saturating_sub(user);
    let mut s = format!("cpu  {user} 0 0 {idle} 0 0 0 0 0 0\n");
    for i in 0..cpus {
        let _ = writeln!(s, "cpu{i} {} 0 0 {} 0 0 0 0 0 0", user / cpus, idle / cpus);
    }
    let _ = write!(
        s,
        "intr 0\nctxt 0\nbtime {}\nprocesses {}\nprocs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
        h.boot_secs, h.last_pid
    );
    s
}

/// `/proc/<pid>/stat`: the 52 fields of proc(5), with the simulated pids,
/// the virtual CPU and start times, and fixed memory figures.
pub fn proc_stat(p: &ProcView) -> String {
    let (utime, cutime, start) = (ticks(p.cpu_ns), ticks(p.children_ns), ticks(p.start_ns));
    let rss = PROCESS_RSS / PAGE_SIZE;
    format!(
        "{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 0 0 0 0 {utime} 0 {cutime} 0 20 0 {threads} 0 {start} {vsize} {rss} 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        pid = p.pid,
        comm = p.comm,
        ppid = p.ppid,
        threads = p.threads,
        vsize = PROCESS_VSIZE,
    )
}

/// `/proc/<pid>/statm`: the fixed memory figures, in pages.
pub fn proc_statm() -> String {
    let (size, rss) = (PROCESS_VSIZE / PAGE_SIZE, PROCESS_RSS / PAGE_SIZE);
    format!("{size} {rss} 0 0 0 {rss} 0\n")
}

/// `/proc/<pid>/status`: identity, state and fixed memory figures.
pub fn proc_status(p: &ProcView, uid: u32, gid: u32) -> String {
    let kb = |b: u64| b >> 10;
    format!(
        "Name:\t{comm}\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t{pid}\nNgid:\t0\nPid:\t{pid}\nPPid:\t{ppid}\nTracerPid:\t0\n\
         Uid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{gid}\t{gid}\t{gid}\t{gid}\nFDSize:\t64\nGroups:\t\nNStgid:\t{pid}\nNSpid:\t{pid}\nNSpgid:\t{pid}\nNSsid:\t{pid}\n\
         VmPeak:\t{vsize:>8} kB\nVmSize:\t{vsize:>8} kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\nVmHWM:\t{rss:>8} kB\nVmRSS:\t{rss:>8} kB\n\
         RssAnon:\t{rss:>8} kB\nRssFile:\t       0 kB\nRssShmem:\t       0 kB\nVmData:\t{rss:>8} kB\nVmStk:\t     132 kB\nVmExe:\t       0 kB\nVmLib:\t       0 kB\nVmPTE:\t       0 kB\nVmSwap:\t       0 kB\n\
         Threads:\t{threads}\nSigQ:\t0/31457\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n\
         Cpus_allowed_list:\t0\nvoluntary_ctxt_switches:\t0\nnonvoluntary_ctxt_switches:\t0\n",
        comm = p.comm,
        pid = p.pid,
        ppid = p.ppid,
        threads = p.threads,
        vsize = kb(PROCESS_VSIZE),
        rss = kb(PROCESS_RSS),
    )
}

/// `/sys/devices/system/cpu/online` and `possible`: the simulated CPUs.
pub fn cpu_list(cpus: u32) -> String {
    match cpus.max(1) {
        1 => "0\n".to_string(),
        n => format!("0-{}\n", n - 1),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn utsname_fields_are_nul_padded_at_65_bytes() {
        let u = super::utsname("n1");
        let field = |i: usize| {
            let f = &u[i * 65..(i + 1) * 65];
            String::from_utf8(f[..f.iter().position(|&b| b == 0).unwrap()].to_vec()).unwrap()
        };
        assert_eq!(field(0), "Linux");
        assert_eq!(field(1), "n1");
        assert_eq!(field(2), super::KERNEL_RELEASE);
        assert_eq!(field(4), "x86_64");
    }

    use super::*;

    fn host() -> HostView {
        HostView {
            uptime_ns: 100_250_000_000,
            boot_secs: 1_735_689_500,
            cpus: 2,
            busy_ns: 1_000_000_000,
            procs: 1,
            threads: 3,
            last_pid: 4,
        }
    }

    #[test]
    fn machine_files_follow_the_virtual_clock_and_cpu_time() {
        assert_eq!(uptime(&host()), "100.25 199.50\n");
        assert_eq!(loadavg(&host()), "0.00 0.00 0.00 1/3 4\n");
        assert!(stat(&host()).starts_with("cpu  100 0 0 19950 "));
        assert!(meminfo().starts_with("MemTotal:        8388608 kB\n"));
        assert_eq!(cpu_list(1), "0\n");
        assert_eq!(cpu_list(4), "0-3\n");
    }

    #[test]
    fn proc_stat_has_52_fields_with_utime_at_14() {
        let p = ProcView {
            pid: 2,
            ppid: 1,
            comm: "a b".into(),
            threads: 2,
            cpu_ns: 2_000_000_000,
            children_ns: 0,
            start_ns: 100_000_000_000,
        };
        let s = proc_stat(&p);
        let after = &s[s.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        assert_eq!(fields.len() + 2, 52);
        assert_eq!((fields[11], fields[19]), ("200", "10000"));
    }
}
