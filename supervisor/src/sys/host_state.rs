//! Reads of host state faultline does not simulate. They must never pass
//! silently: each is passed to the kernel, counted per call kind and node
//! (report.json's `host_state`), reported once per kind and node, and the
//! run is flagged possibly non-deterministic, as the watchdog's preemptions
//! are.

use super::{pass, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;

/// `/proc/<pid>/...` files that read the same in every run: set up by the
/// program itself or by faultline (with ASLR off, the maps are the same too).
const STEADY_PROC_FILES: &[&str] = &[
    "",
    "maps",
    "cmdline",
    "environ",
    "auxv",
    "mountinfo",
    "mounts",
    "cgroup",
    "comm",
    "fd",
    "fdinfo",
    "task",
    "oom_score_adj",
    "loginuid",
    "ns",
    "attr",
    "setgroups",
    "uid_map",
    "gid_map",
];

/// Machine-wide `/proc` files that read the same in every run on a machine:
/// kernel settings and tables.
const STEADY_MACHINE_FILES: &[&str] = &["sys", "filesystems", "mounts"];

/// One kind of unsimulated host-state read on one node, for report.json.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct HostStateRead {
    /// The call, or `open <path>` for a /proc file.
    pub call: String,
    /// The node (host name).
    pub node: String,
    /// How many times.
    pub count: u64,
}

/// The unsimulated host-state reads of a run, in words: "host state read:
/// sysinfo on host n1 (3 time(s)), ...". One wording for `exec`'s warning,
/// a seed's verdict block and the cause of a divergence.
pub(crate) fn host_state_words(reads: &[HostStateRead]) -> String {
    let each: Vec<String> = reads
        .iter()
        .map(|r| format!("{} on host {} ({} time(s))", r.call, r.node, r.count))
        .collect();
    format!("host state read: {}", each.join(", "))
}

impl Sim {
    /// A call that returns host state: passed, counted and reported.
    pub(super) fn sys_host_state(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        targs.push(c.a[0] as i64);
        let kind = super::table::name(c.nr).to_string();
        self.note_host_state(c.pid, kind);
        pass()
    }

    /// Counts one read of host state of `kind` by process `pid`, reporting
    /// the first of each kind on each node.
    pub(crate) fn note_host_state(&mut self, pid: i32, kind: String) {
        let node = self.node_of(pid);
        let n = self
            .host_state
            .entry((kind.clone(), node.clone()))
            .or_insert(0);
        *n += 1;
        if *n == 1 {
            self.report_once(
                crate::sim::diagnostics::DiagKind::HostState,
                format!("warning: {kind} on host {node} reads the host's state, which faultline does not simulate; this run is possibly non-deterministic"),
            );
        }
    }

    /// At an open of a /proc path faultline does not simulate: reported
    /// unless the file reads the same in every run.
    pub(super) fn note_proc_open(&mut self, c: &Call<impl Memory>, path: &[u8]) {
        let Some(rest) = path.strip_prefix(b"/proc/") else {
            return;
        };
        let rest = String::from_utf8_lossy(rest);
        let (first, file) = rest.split_once('/').unwrap_or((&rest, ""));
        let per_process =
            first == "self" || first == "thread-self" || first.bytes().all(|b| b.is_ascii_digit());
        let file = file.split('/').next().unwrap_or("");
        let steady = if per_process {
            STEADY_PROC_FILES.contains(&file)
        } else {
            STEADY_MACHINE_FILES.contains(&first)
        };
        if !steady {
            let shown = if per_process {
                format!("open /proc/<pid>/{file}")
            } else {
                format!("open /proc/{first}")
            };
            self.note_host_state(c.pid, shown);
        }
    }

    /// getitimer: ITIMER_REAL is faultline's own timer (alarm, setitimer),
    /// answered from it; the CPU-time timers are the host's.
    pub(super) fn sys_getitimer(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        if c.a[0] != libc::ITIMER_REAL as u64 {
            return self.sys_host_state(c, targs);
        }
        targs.push(c.a[0] as i64);
        let now = self.clock.now();
        let (left, interval) = self
            .signal_timers
            .iter()
            .find(|t| t.pid == c.pid && t.owner == crate::sim::world::TimerOwner::RealTimer)
            .map_or((0, 0), |t| (t.at.saturating_sub(now), t.interval));
        let tv = |ns: u64| {
            [
                (ns / 1_000_000_000) as i64,
                ((ns % 1_000_000_000) / 1000) as i64,
            ]
        };
        let [a, b] = tv(interval);
        let [d, e] = tv(left);
        if c.mem().write_val(c.a[1], &[a, b, d, e]).is_err() {
            return super::err(libc::EFAULT);
        }
        super::ret(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, PID};
    use super::super::Action;
    use crate::sim::memory::Memory;
    use crate::sim::vclock::NS;
    use crate::sim::world::{Resume, SignalTimer, TimerOwner};

    const BUF: u64 = 0x1000;

    fn passed(action: Action) -> bool {
        matches!(action, Action::Now(Resume::Pass))
    }

    /// The (call, node) → count log of unsimulated reads.
    fn log(sim: &crate::sim::state::Sim) -> Vec<(String, String, u64)> {
        let entries = sim.host_state.iter();
        entries
            .map(|((k, n), c)| (k.clone(), n.clone(), *c))
            .collect()
    }

    #[test]
    fn a_host_state_call_passes_is_counted_and_reported_once() {
        let mut sim = world();
        for _ in 0..2 {
            let c = call(libc::SYS_adjtimex, [BUF, 0, 0, 0, 0, 0], zeroed(BUF, 8));
            assert!(passed(sim.sys_host_state(&c, &mut vec![])));
        }
        assert_eq!(log(&sim), [("adjtimex".into(), "n1".into(), 2)]);
        let diags = std::mem::take(&mut sim.diagnostics).into_list();
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0].message.contains("adjtimex on host n1"),
            "{}",
            diags[0].message
        );
    }

    #[test]
    fn only_proc_files_that_differ_between_runs_count() {
        let mut sim = world();
        let c = call(libc::SYS_openat, [0; 6], zeroed(BUF, 8));
        for steady in [
            "/proc/self/maps",
            "/proc/42/cmdline",
            "/proc/sys/kernel/x",
            "/etc/hosts",
        ] {
            sim.note_proc_open(&c, steady.as_bytes());
        }
        assert!(sim.host_state.is_empty(), "{:?}", log(&sim));
        sim.note_proc_open(&c, b"/proc/self/io");
        sim.note_proc_open(&c, b"/proc/7/io");
        sim.note_proc_open(&c, b"/proc/diskstats");
        assert_eq!(
            log(&sim),
            [
                ("open /proc/<pid>/io".into(), "n1".into(), 2),
                ("open /proc/diskstats".into(), "n1".into(), 1)
            ]
        );
    }

    #[test]
    fn getitimer_reads_the_alarm_and_passes_the_cpu_timers() {
        let mut sim = world();
        sim.clock.advance_to(NS);
        sim.signal_timers.push(SignalTimer {
            pid: PID,
            sig: libc::SIGALRM,
            at: 3 * NS + 500_000,
            interval: NS / 4,
            owner: TimerOwner::RealTimer,
        });
        let c = call(
            libc::SYS_getitimer,
            [libc::ITIMER_REAL as u64, BUF, 0, 0, 0, 0],
            zeroed(BUF, 32),
        );
        assert_eq!(returned(sim.sys_getitimer(&c, &mut vec![])), 0);
        let itv: [i64; 4] = c.mem().read_val(BUF).unwrap();
        assert_eq!(itv, [0, 250_000, 2, 500], "interval, then time left");
        let c = call(
            libc::SYS_getitimer,
            [libc::ITIMER_PROF as u64, BUF, 0, 0, 0, 0],
            zeroed(BUF, 32),
        );
        assert!(passed(sim.sys_getitimer(&c, &mut vec![])));
        assert_eq!(log(&sim), [("getitimer".into(), "n1".into(), 1)]);
    }
}
