//! The simulation state of one run: what the syscall handlers read and
//! change (threads and processes, the virtual clock and CPU ledger, timers,
//! the network and disks, file identities, the trace), apart from the host
//! machinery that drives the tracees (ptrace waits, the watchdog, vDSO
//! pages, breakpoints, the fast path's channel, the pidfds that answer
//! `HostProbe`), which stays in `engine::Supervisor`. Handlers on `Sim` can
//! be unit-tested with a fake tracee memory, a fake host and no process.

use crate::hashing::HashMap;
use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::sim::diagnostics::{DiagKind, Diagnostics};
use crate::sim::diskstate::Disks;
use crate::sim::netstate::NetState;
use crate::sim::scheduler::{SchedulePolicy, Scheduler};
use crate::sim::seeds::Streams;
use crate::sim::trace::TraceLog;
use crate::sim::vclock::VClock;
use crate::sim::world::{Process, SignalTimer, Thread, Vtid};

/// The simulated world of a run, which the syscall handlers act on.
pub struct Sim {
    /// CPUs the programs are told they have.
    pub(crate) cpus: u32,
    /// Virtual time, as each host sees it.
    pub(crate) clock: VClock,
    /// Virtual CPU time per thread and process.
    pub(crate) cpu: crate::sim::cputime::CpuLedger,
    /// The programs' POSIX timers.
    pub(crate) posix_timers: crate::sim::timers::PosixTimers,
    /// The timerfds of every process.
    pub(crate) timer_fds: crate::sim::timers::TimerFds,
    /// The node of every thread there was (see `Outcome::thread_nodes`).
    pub(crate) thread_nodes: BTreeMap<Vtid, String>,
    /// Reads of host state that is not simulated, per (call kind, node).
    pub(crate) host_state: BTreeMap<(String, String), u64>,
    /// The file identities `stat` shows.
    pub(crate) file_ids: crate::sim::fileids::FileIds,
    /// Which thread runs next; the futex queues.
    pub(crate) sched: Scheduler,
    /// The seeded stream of getrandom and AT_RANDOM bytes.
    pub(crate) data_rng: ChaCha8Rng,
    /// Every live thread, by virtual thread id.
    pub(crate) threads: BTreeMap<Vtid, Thread>,
    /// Virtual thread ids by host thread id.
    pub(crate) by_tid: HashMap<i32, Vtid>,
    /// Every live process, by host pid.
    pub(crate) procs: HashMap<i32, Process>,
    /// The event trace and its hash.
    pub(crate) trace: TraceLog,
    /// The simulated network.
    pub(crate) net: NetState,
    /// The nodes' simulated disks.
    pub(crate) disks: Disks,
    /// Signals due at virtual times: alarm/setitimer, and `--signal-at`.
    pub(crate) signal_timers: Vec<SignalTimer>,
    /// What faultline reports besides the verdict.
    pub(crate) diagnostics: Diagnostics,
    /// The nodes' captured output files, and when they were written.
    pub(crate) outputs: crate::sim::output::OutputLog,
    /// Disk calls vfs failed since the engine last logged them.
    pub(crate) failed_disk_calls: Vec<crate::sim::diskstate::FailedDiskCall>,
    /// Signals passed to the kernel since the engine last looked: it
    /// watches their targets.
    pub(crate) signals_let_go: Vec<Kill>,
    /// Signals a handler raised itself (a SIGPIPE for a write to a closed
    /// simulated socket) since the engine last looked: they count as sent
    /// (`Supervisor::signal_generation`).
    pub(crate) signals_raised: u64,
    /// Set by [`Sim::descriptors_changed`], taken by the engine.
    pub(crate) descriptors_touched: bool,
    /// Waits on the network begun so far: a thread parked anew has not
    /// been looked at by a wake scan.
    pub(crate) net_parks: u64,
    /// The last wake scan of the network waiters that found none ready.
    pub(crate) quiet_net_scan: crate::sim::quiet_scan::QuietNetScan,
    /// How much later than asked a timed wait ends (`--timer-slack`; see
    /// `sys::slack`). 0 until the engine sets it.
    pub(crate) timer_slack_ns: u64,
}

/// A signal the kernel is let to send: the processes it goes to, which
/// the engine watches for the threads it wakes (and, for SIGKILL, dies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kill {
    /// The signal number.
    pub sig: i32,
    /// The host pids it goes to.
    pub targets: Vec<i32>,
}

impl Sim {
    /// An empty world: no threads yet, the clock at `epoch_secs`, the
    /// scheduling and data streams split from `seed`.
    pub fn new(
        seed: u64,
        epoch_secs: i64,
        cpus: u32,
        schedule: SchedulePolicy,
        trace: TraceLog,
        net: NetState,
    ) -> Sim {
        let seeds = Streams::split(seed);
        Sim {
            cpus,
            clock: VClock::new(epoch_secs),
            cpu: Default::default(),
            posix_timers: Default::default(),
            timer_fds: Default::default(),
            thread_nodes: BTreeMap::new(),
            host_state: BTreeMap::new(),
            file_ids: Default::default(),
            sched: Scheduler::new(seeds.schedule, schedule),
            data_rng: ChaCha8Rng::seed_from_u64(seeds.data),
            threads: BTreeMap::new(),
            by_tid: HashMap::default(),
            procs: HashMap::default(),
            trace,
            net,
            disks: Disks::default(),
            signal_timers: Vec::new(),
            diagnostics: Diagnostics::default(),
            outputs: Default::default(),
            failed_disk_calls: Vec::new(),
            signals_let_go: Vec::new(),
            signals_raised: 0,
            descriptors_touched: false,
            net_parks: 0,
            quiet_net_scan: Default::default(),
            timer_slack_ns: 0,
        }
    }

    /// The name of the simulated host process `pid` runs on ("" if the
    /// process is unknown).
    pub(crate) fn node_of(&self, pid: i32) -> String {
        self.procs
            .get(&pid)
            .map(|p| self.net.net().host_name(p.host).to_string())
            .unwrap_or_default()
    }

    /// Records one trace event at the current virtual time.
    pub(crate) fn record(
        &mut self,
        vtid: Vtid,
        call: &'static str,
        args: &[i64],
        ret: impl Into<String>,
    ) {
        self.trace.record(self.clock.now(), vtid, call, args, ret);
    }

    /// Prints a report line once per distinct message (unsupported calls).
    pub(crate) fn report_once(&mut self, kind: DiagKind, msg: String) {
        let (t, event) = (self.clock.now(), self.trace.count());
        if self.diagnostics.note(t, event, kind, msg.clone()) {
            eprintln!("faultline: {msg}");
        }
    }

    /// The other threads of process `pid` than `vtid`.
    pub(crate) fn siblings(&self, vtid: Vtid, pid: i32) -> Vec<Vtid> {
        self.threads
            .values()
            .filter(|t| t.pid == pid && t.vtid != vtid)
            .map(|t| t.vtid)
            .collect()
    }

    /// The kernel did something that may have made a host descriptor of any
    /// process ready (a call passed to it, a signal, an exec, a process's
    /// end, a timerfd's counter written): the engine tells the host side
    /// before the next probe, which then polls again instead of trusting
    /// what it last found.
    pub(crate) fn descriptors_changed(&mut self) {
        self.descriptors_touched = true;
    }

    /// The process a thread belongs to.
    pub(crate) fn proc_of(&self, vtid: Vtid) -> &Process {
        let pid = self.threads[&vtid].pid;
        &self.procs[&pid]
    }

    /// The clock index of process `pid`'s host (an index no host has, so
    /// the run's own clock, for a process faultline does not know).
    pub(crate) fn clock_host(&self, pid: i32) -> usize {
        self.procs.get(&pid).map_or(usize::MAX, |p| p.host.index())
    }
}
