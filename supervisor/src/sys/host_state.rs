//! Reads of host state faultline does not simulate. They must never pass
//! silently: each is passed to the kernel, counted per call kind and node
//! (report.json's `host_state`), reported once per kind and node, and the
//! run is flagged possibly non-deterministic, as the watchdog's preemptions
//! are.

use super::{pass, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee;
use crate::host::tracee::Memory;

/// `/proc/<pid>/...` files that read the same in every run: set up by the
/// program itself or by faultline (with ASLR off, the maps are the same too).
const STEADY_PROC_FILES: &[&str] = &[
    "",
    "maps",
    "cmdline",
    "environ",
    "auxv",
    "limits",
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

impl Supervisor {
    /// A call that returns host state: passed, counted and reported.
    pub(super) fn sys_host_state(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        targs.push(c.a[0] as i64);
        let kind = super::table::name(c.nr).to_string();
        self.note_host_state(c.pid, kind);
        pass()
    }

    /// Counts one read of host state of `kind` by process `pid`, reporting
    /// the first of each kind on each node.
    pub(crate) fn note_host_state(&mut self, pid: i32, kind: String) {
        let node = self.sim.node_of(pid);
        let n = self
            .sim
            .host_state
            .entry((kind.clone(), node.clone()))
            .or_insert(0);
        *n += 1;
        if *n == 1 {
            self.sim.report_once(
                crate::engine::diagnostics::DiagKind::HostState,
                format!("warning: {kind} on host {node} reads the host's state, which faultline does not simulate; this run is possibly non-deterministic"),
            );
        }
    }

    /// At an open of a /proc path faultline does not simulate: reported
    /// unless the file reads the same in every run.
    pub(super) fn note_proc_open(&mut self, c: &Call, path: &[u8]) {
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
    pub(super) fn sys_getitimer(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        if c.a[0] != libc::ITIMER_REAL as u64 {
            return self.sys_host_state(c, targs);
        }
        targs.push(c.a[0] as i64);
        let now = self.sim.clock.now();
        let (left, interval) = self
            .sim
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
        if tracee::Process(c.pid)
            .write_val(c.a[1], &[a, b, d, e])
            .is_err()
        {
            return super::err(libc::EFAULT);
        }
        super::ret(0)
    }
}
