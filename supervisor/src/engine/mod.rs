//! The supervisor loop: all traced threads are stopped except the one the
//! seeded scheduler picked; it runs until its next trapped syscall, which is
//! then emulated, passed to the kernel, or parked. Virtual time moves only
//! when nobody can run (to the next deadline) and by a fixed cost per step.

mod ahead;
mod clock_faults;
pub mod clock_reads;
mod dispatch;
pub mod fault_log;
mod faults;
mod go_wakes;
mod go_yields;
mod lifecycle;
mod net_disk_faults;
mod notified;
mod pause;
pub mod probes;
mod progress;
mod quiet_polls;
mod run;
mod signals;
mod step;
pub(crate) mod syscall_exit;
mod waits;

pub(crate) use dispatch::return_in_place;
pub(crate) use signals::{signal_name, HOLD_ALL};

use crate::hashing::{HashMap, HashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::sim::scheduler::SchedulePolicy;

use crate::host::launch::LaunchSpec;
use crate::host::watchdog::Watchdog;
use crate::scenario::plan::Scheduled;
use crate::sim::netstate::NetState;
use crate::sim::state::Sim;
use crate::sim::trace::TraceLog;
use crate::sim::world::*;

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The seed every random choice derives from.
    pub seed: u64,
    /// REALTIME at the start of the run, in seconds since 1970.
    pub epoch_secs: i64,
    /// CPUs the program is told it has (sched_getaffinity).
    pub cpus: u32,
    /// Virtual nanoseconds each scheduling step costs, so busy-polling loops
    /// that wait for a clock to move still make progress.
    pub step_cost_ns: u64,
    /// How much later than asked a timed wait ends (`--timer-slack`).
    pub timer_slack_ns: u64,
    /// CPU time a thread may use without a trapped syscall.
    pub spin_limit: Duration,
    /// Wall time to wait for input from outside the simulation before a run
    /// where every thread waits on a descriptor counts as deadlocked.
    pub idle_limit: Duration,
    /// Pin the supervisor and its tracees to one host CPU. Only one thread
    /// runs at a time anyway, and a ptrace stop that stays on one core costs
    /// about a third of one that bounces between cores.
    pub pin_cpu: bool,
    /// The CPUs to pin to, for a `run -j` worker; None: picked by pid.
    pub cpu_slot: Option<crate::host::placement::CpuSlot>,
    /// Wall time between two progress lines on stderr (None: none).
    pub progress: Option<Duration>,
    /// Stop the run when virtual time passes this (ns), if set.
    pub until_ns: Option<u64>,
    /// Signals faultline sends the program: (virtual ns, signal number).
    pub signals_at: Vec<(u64, i32)>,
    /// Put faultline's vDSO in every process, so clock reads need no stop.
    pub vdso: bool,
    /// Send the hottest calls as seccomp notifications instead of ptrace
    /// stops (`host::notify`); off with the preload channel.
    pub notify: bool,
    /// Make the Go runtime's yield a scheduling point in Go programs.
    pub go_yields: bool,
    /// Every N-th clock read of an address space is a scheduling point that
    /// charges `step_cost_ns` for each of the N; the others are answered in
    /// place.
    pub clock_step_every: u32,
    /// Load the LD_PRELOAD library into dynamic programs, so their socket
    /// reads and writes and their sleeps need no ptrace stop.
    pub preload: bool,
    /// How the next thread is chosen (`--schedule-policy`).
    pub schedule: SchedulePolicy,
    /// Give up at this wall-clock instant (`run --seed-timeout`): a spin
    /// without syscalls never lets virtual time reach `until_ns`.
    pub wall_deadline: Option<std::time::Instant>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The root process exited with this code.
    Exited(i32),
    /// The root process was killed by this signal.
    Signaled(i32),
    /// No thread could ever run again; the report names what each waits on.
    Deadlock(Vec<String>),
    /// The virtual time limit was reached with the program still running.
    TimeLimit,
    /// An invariant probe failed; the run stopped there.
    Invariant,
    /// The wall-clock deadline passed first (`Config::wall_deadline`).
    Stuck,
    /// faultline was asked to stop (SIGINT or SIGTERM, this signal).
    Interrupted(i32),
    /// faultline itself failed (e.g. it could not restart a node).
    Internal(String),
}

/// The result of one run.
#[derive(Clone)]
pub struct Outcome {
    /// How the run ended.
    pub ending: Ending,
    /// Virtual nanoseconds elapsed.
    pub vtime: u64,
    /// Trace events recorded.
    pub events: u64,
    /// ptrace stops handled.
    pub stops: u64,
    /// Calls answered without a ptrace stop (the fast path's channel, or
    /// seccomp notifications).
    pub fast_calls: u64,
    /// Turns handed from one thread to the next by the thread that gave
    /// way, in the programs' CPU (the fast path's spinning mode).
    pub handoffs: u64,
    /// Futex wakes a patched Go runtime made without a round trip (among
    /// `fast_calls`).
    pub noted_wakes: u64,
    /// Zero-timeout epoll waits of Go programs that found nothing, answered
    /// in place (by the supervisor, or by a patched runtime's stub without
    /// a round trip): not scheduling points, no trace events.
    pub quiet_polls: u64,
    /// Of `quiet_polls`, those a patched runtime's stub answered itself.
    pub quiet_polls_in_stub: u64,
    /// Reads of Go programs that failed with EAGAIN on an empty
    /// non-blocking simulated socket, answered in place as quiet polls are.
    pub empty_reads: u64,
    /// Of `empty_reads`, those a patched runtime's stub answered itself.
    pub empty_reads_in_stub: u64,
    /// The trace hash.
    pub hash: u64,
    /// Times the watchdog had to preempt a thread.
    pub preemptions: u64,
    /// Reads of host state faultline does not simulate: if any, the run is
    /// possibly non-deterministic.
    pub host_state: Vec<crate::sys::host_state::HostStateRead>,
    /// The trace lines, when kept for a determinism check.
    pub lines: Vec<String>,
    /// The node (host name) of every thread, by virtual thread id: names
    /// the node of a trace event when two runs are compared.
    pub thread_nodes: BTreeMap<Vtid, String>,
    /// Every launched program and how it ended (`None`: still running).
    pub roots: Vec<Root>,
    /// The faults that happened.
    pub faults: Vec<FaultRecord>,
    /// Every network message (for the timeline).
    pub messages: Vec<vnet::NetEvent>,
    /// Every finished run of an invariant probe.
    pub probe_runs: Vec<probes::ProbeRun>,
    /// What faultline reported besides the verdict (faultline.log).
    pub diagnostics: Vec<crate::sim::diagnostics::Diagnostic>,
    /// When the nodes wrote their output and history (output.jsonl).
    pub output: Vec<crate::sim::output::OutputMark>,
}

/// The state of one run.
pub struct Supervisor {
    pub(crate) cfg: Config,
    /// The simulated world the syscall handlers act on.
    pub(crate) sim: Sim,
    /// The pidfds and kept descriptors that answer the handlers' host probes.
    pub(crate) host_fds: crate::host::procfds::ProcFds,
    next_vtid: Vtid,
    next_vpid: u32,
    next_mm: u32,
    pub(crate) stops: u64,
    /// Calls answered without a ptrace stop (the fast path's channel, or
    /// seccomp notifications).
    pub(crate) fast_calls: u64,
    /// The fast path's channel, when it is on.
    pub(crate) channel: Option<crate::fast_path::channel::Channel>,
    /// The LD_PRELOAD library's path, when the fast path is on.
    pub(crate) preload_lib: Option<String>,
    /// The listeners of the notified calls, when that path is on.
    pub(crate) notify: Option<crate::host::notify::Notifier>,
    /// The host CPUs of the supervisor and its programs.
    pub(crate) placement: crate::host::placement::Placement,
    /// The small process that forks the run's programs.
    pub(crate) spawner: crate::host::spawner::Spawner,
    /// Channel requests and ptrace stops since the placement was last
    /// reconsidered.
    pub(crate) placement_window: (u64, u64),
    /// When the next progress line is due (`--progress`).
    progress: Option<progress::Progress>,
    /// The launched programs (one per node), in launch order.
    roots: Vec<Root>,
    /// The fault plan: events at virtual times, in time order.
    plan: Vec<Scheduled>,
    /// The faults that happened, for faults.json and the timeline.
    fault_log: Vec<FaultRecord>,
    /// Hosts whose threads are not scheduled (`pause` faults).
    paused: BTreeSet<vnet::HostId>,
    /// The invariant probes and their runs.
    probes: probes::Probes,
    early_stops: HashSet<i32>,
    pub(crate) signal_checks: BTreeSet<i32>,
    /// Bumped wherever the kernel may have been made to send a simulated
    /// process a signal (a kill when its sender runs, a timer's signal, a
    /// process's end, a signal seen delivered). A thread waiting on the channel whose wait
    /// is re-decided while this is what it was at its post can have no
    /// signal to take first, so its call is decided again in place, without
    /// the round trip (`Supervisor::step`).
    pub(crate) signal_generation: u64,
    /// Threads whose call the kernel is let to send signals with when they
    /// next run (a kill passed to it), and the processes they go to.
    signal_senders: HashMap<i32, Vec<i32>>,
    /// The wakes left from a decision whose thread was let run ahead.
    later_wakes: Option<ahead::LaterWakes>,
    /// Quiet zero-timeout epoll waits answered in place so far, and of
    /// them those a stub answered itself.
    quiet_polls: u64,
    quiet_polls_in_stub: u64,
    /// The same for reads of empty sockets.
    empty_reads: u64,
    empty_reads_in_stub: u64,
    /// Versions of what epoll waits would find, for the stubs that answer
    /// quiet ones themselves.
    readiness: quiet_polls::ReadinessVersions,
    pub(crate) watchdog: Arc<Watchdog>,
    preemptions: u64,
    /// Threads with a watchdog SIGSTOP still pending from a step that
    /// ended before it arrived.
    stale_stops: HashSet<i32>,
    pub(crate) exit_hook: Option<ExitHook>,
    /// A planned crash is killing a node: its deaths are not reported as errors.
    crashing: bool,
    /// A process whose threads are all exiting: the step ends when it is gone,
    /// so its exit is observed at the same point of every run.
    group_exit: Option<i32>,
    /// Whether the engine waits for the running thread alone or any tracee.
    pub(crate) waits: waits::WaitScope,
    /// The faultline vDSO of each address space that has one.
    pub(crate) vdso_pages: HashMap<u32, crate::host::vdso::VdsoPage>,
    /// Clock reads since the last scheduling one, per address space without
    /// the vDSO (the vDSO counts in its page).
    pub(crate) clock_reads: HashMap<u32, u32>,
    /// Breakpoints on the Go runtime's yield, per address space.
    go_yields: go_yields::GoYields,
    /// A wait status collected out of turn (a death during a breakpoint
    /// step), handed out by the next wait.
    early_status: Option<(i32, i32)>,
}

/// A program faultline launched (a node of a scenario, or `exec`'s program).
#[derive(Clone)]
pub struct Root {
    /// The node name (the host it runs on).
    pub name: String,
    /// Host pid of its current incarnation.
    pub pid: i32,
    /// Its wait status once it has exited.
    pub status: Option<i32>,
    /// How to start it again after a crash.
    spec: LaunchSpec,
    /// Crashed by the fault plan and not restarted yet.
    pub down: bool,
    /// How often the fault plan crashed it.
    pub crashes: u32,
    /// Restart it this long after it exits by itself (`restart_on_exit`).
    pub restart_on_exit: Option<u64>,
    /// Reboot its machine (apply the disk's crash model) before that restart.
    pub reboot_on_exit: bool,
    /// How often it exited by itself and was restarted.
    pub restarts: u32,
    /// When (virtual ns, trace event) its last incarnation exited.
    pub exited_at: Option<(u64, u64)>,
}

/// A fault that happened (an entry of faults.json).
#[derive(Debug, Clone, serde::Serialize)]
pub struct FaultRecord {
    /// Virtual ns.
    pub t: u64,
    /// The trace event number that records it.
    pub event: u64,
    /// crash, kill, restart, reboot, disk_crash, partition, heal, fsync_error,
    /// write_error, and the other fault kinds; probe, probe_pass, probe_fail
    /// (an invariant probe's runs).
    pub kind: String,
    /// The node (or the isolated nodes, comma-separated).
    pub node: String,
    /// What happened, in words.
    pub detail: String,
    /// The paths and errno of a disk fault.
    #[serde(flatten)]
    pub paths: fault_log::FaultPaths,
    /// The plan event this record is the first effect of (what
    /// `run --schedule` runs again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planned: Option<crate::scenario::plan::PlannedEvent>,
}

/// What the running thread did before the scheduler may pick again.
pub(crate) enum StepEnd {
    /// It stopped at a new scheduling point (or is gone).
    Done,
    /// Keep waiting for it.
    Running,
}

impl Supervisor {
    /// Prepares a run on the given network; programs are added with
    /// [`Supervisor::launch`].
    pub fn new(cfg: Config, trace: TraceLog, net: NetState, plan: Vec<Scheduled>) -> Supervisor {
        let progress = cfg.progress.map(progress::Progress::new);
        let placement = if cfg.pin_cpu {
            crate::host::placement::Placement::pin(cfg.cpu_slot)
        } else {
            Default::default()
        };
        // Before the watchdog thread: it inherits the channel's signal mask.
        let (channel, preload_lib) = match cfg.preload.then(crate::fast_path::open) {
            Some(Ok((chan, lib))) => (Some(chan), Some(lib)),
            Some(Err(why)) => {
                eprintln!("faultline: warning: the LD_PRELOAD fast path is off: {why}");
                (None, None)
            }
            None => (None, None),
        };
        // Also before the watchdog thread, which inherits the SIGCHLD block.
        let notify =
            match (cfg.notify && channel.is_none()).then(crate::host::notify::Notifier::new) {
                Some(Ok(n)) => Some(n),
                Some(Err(why)) => {
                    eprintln!("faultline: warning: seccomp notifications are off: {why}");
                    None
                }
                None => None,
            };
        let watchdog = Watchdog::start(cfg.spin_limit);
        let mut sim = Sim::new(cfg.seed, cfg.epoch_secs, cfg.cpus, cfg.schedule, trace, net);
        sim.timer_slack_ns = cfg.timer_slack_ns;
        Supervisor {
            sim,
            cfg,
            host_fds: Default::default(),
            next_vtid: 1,
            next_vpid: 1,
            next_mm: 1,
            stops: 0,
            fast_calls: 0,
            channel,
            preload_lib,
            notify,
            placement,
            spawner: Default::default(),
            placement_window: (0, 0),
            progress,
            roots: Vec::new(),
            plan,
            fault_log: Vec::new(),
            paused: BTreeSet::new(),
            probes: probes::Probes::default(),
            early_stops: HashSet::default(),
            signal_checks: BTreeSet::new(),
            signal_generation: 0,
            signal_senders: HashMap::default(),
            later_wakes: None,
            quiet_polls: 0,
            quiet_polls_in_stub: 0,
            empty_reads: 0,
            empty_reads_in_stub: 0,
            readiness: Default::default(),
            watchdog,
            preemptions: 0,
            stale_stops: HashSet::default(),
            exit_hook: None,
            group_exit: None,
            waits: Default::default(),
            crashing: false,
            vdso_pages: HashMap::default(),
            clock_reads: HashMap::default(),
            go_yields: go_yields::GoYields::default(),
            early_status: None,
        }
    }

    /// Notes when the nodes write to the file at `path` (the workload's
    /// history), for the timeline.
    pub fn watch_history(&mut self, path: std::path::PathBuf) {
        self.sim.outputs.watch_path(path, "history");
    }
}
