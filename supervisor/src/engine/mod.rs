//! The supervisor loop: all traced threads are stopped except the one the
//! seeded scheduler picked; it runs until its next trapped syscall, which is
//! then emulated, passed to the kernel, or parked. Virtual time moves only
//! when nobody can run (to the next deadline) and by a fixed cost per step.

pub mod clock_reads;
pub mod scheduler;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use rand::{Rng, SeedableRng};

use rand_chacha::ChaCha8Rng;
use scheduler::{Decision, SchedulePolicy, Scheduler};

use crate::host::fdprobe;
use crate::host::launch::{self, LaunchSpec};
use crate::host::tracee;
use crate::host::watchdog::Watchdog;
use crate::scenario::plan::FaultEvent;
use crate::sim::diskstate::{Disks, NodeDisk};
use crate::sim::netstate::NetState;
use crate::sim::seeds::Streams;
use crate::sim::trace::TraceLog;
use crate::sim::vclock::VClock;
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
    /// CPU time a thread may use without a trapped syscall.
    pub spin_limit: Duration,
    /// Wall time to wait for input from outside the simulation before a run
    /// where every thread waits on a descriptor counts as deadlocked.
    pub idle_limit: Duration,
    /// Pin the supervisor and its tracees to one host CPU. Only one thread
    /// runs at a time anyway, and a ptrace stop that stays on one core costs
    /// about a third of one that bounces between cores.
    pub pin_cpu: bool,
    /// Stop the run when virtual time passes this (ns), if set.
    pub until_ns: Option<u64>,
    /// Signals faultline sends the program: (virtual ns, signal number).
    pub signals_at: Vec<(u64, i32)>,
    /// Put faultline's vDSO in every process, so clock reads need no stop.
    pub vdso: bool,
    /// Every N-th clock read of an address space is a scheduling point that
    /// charges `step_cost_ns` for each of the N; the others are answered in
    /// place.
    pub clock_step_every: u32,
    /// Load the LD_PRELOAD library into dynamic programs, so their socket
    /// reads and writes and their sleeps need no ptrace stop.
    pub preload: bool,
    /// How the next thread is chosen (`--schedule-policy`).
    pub schedule: SchedulePolicy,
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
    /// Calls that came over the fast path's channel instead.
    pub fast_calls: u64,
    /// The trace hash.
    pub hash: u64,
    /// Times the watchdog had to preempt a thread.
    pub preemptions: u64,
    /// The trace lines, when kept for a determinism check.
    pub lines: Vec<String>,
    /// Every launched program and how it ended (`None`: still running).
    pub roots: Vec<Root>,
    /// The faults that happened.
    pub faults: Vec<FaultRecord>,
    /// Every network message (for the timeline).
    pub messages: Vec<vnet::NetEvent>,
}

/// The state of one run.
pub struct Supervisor {
    pub(crate) cfg: Config,
    pub(crate) clock: VClock,
    /// Which thread runs next; the futex queues.
    pub(crate) sched: Scheduler,
    pub(crate) data_rng: ChaCha8Rng,
    pub(crate) threads: BTreeMap<Vtid, Thread>,
    pub(crate) by_tid: HashMap<i32, Vtid>,
    pub(crate) procs: HashMap<i32, Process>,
    next_vtid: Vtid,
    next_vpid: u32,
    next_mm: u32,
    pub(crate) trace: TraceLog,
    pub(crate) stops: u64,
    /// Calls answered over the fast path's channel.
    pub(crate) fast_calls: u64,
    /// The fast path's channel, when it is on.
    pub(crate) channel: Option<crate::fast_path::channel::Channel>,
    /// The LD_PRELOAD library's path, when the fast path is on.
    pub(crate) preload_lib: Option<String>,
    /// The launched programs (one per node), in launch order.
    roots: Vec<Root>,
    /// The simulated network.
    pub(crate) net: NetState,
    /// The nodes' simulated disks.
    pub(crate) disks: Disks,
    /// The fault plan: events at virtual times, in time order.
    plan: Vec<(u64, FaultEvent)>,
    /// The faults that happened, for faults.json and the timeline.
    fault_log: Vec<FaultRecord>,
    early_stops: HashSet<i32>,
    pub(crate) signal_checks: BTreeSet<i32>,
    /// Signals due at virtual times: alarm/setitimer, and `--signal-at`.
    pub(crate) signal_timers: Vec<SignalTimer>,
    pub(crate) watchdog: Arc<Watchdog>,
    preemptions: u64,
    /// Threads with a watchdog SIGSTOP still pending from a step that
    /// ended before it arrived.
    stale_stops: HashSet<i32>,
    reported: HashSet<String>,
    pub(crate) exit_hook: Option<ExitHook>,
    /// A planned crash is killing a node: its deaths are not reported as errors.
    crashing: bool,
    /// A process whose threads are all exiting: the step ends when it is gone,
    /// so its exit is observed at the same point of every run.
    group_exit: Option<i32>,
    /// The faultline vDSO of each address space that has one.
    pub(crate) vdso_pages: HashMap<u32, crate::host::vdso::VdsoPage>,
    /// Clock reads since the last scheduling one, per address space without
    /// the vDSO (the vDSO counts in its page).
    pub(crate) clock_reads: HashMap<u32, u32>,
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
    /// crash, restart, disk_crash, partition, heal.
    pub kind: String,
    /// The node (or the isolated nodes, comma-separated).
    pub node: String,
    /// What happened, in words.
    pub detail: String,
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
    pub fn new(
        cfg: Config,
        trace: TraceLog,
        net: NetState,
        plan: Vec<(u64, FaultEvent)>,
    ) -> Supervisor {
        if cfg.pin_cpu {
            pin_to_one_cpu();
        }
        // Before the watchdog thread: it inherits the channel's signal mask.
        let (channel, preload_lib) = match cfg.preload.then(crate::fast_path::open) {
            Some(Ok((chan, lib))) => (Some(chan), Some(lib)),
            Some(Err(why)) => {
                eprintln!("faultline: warning: the LD_PRELOAD fast path is off: {why}");
                (None, None)
            }
            None => (None, None),
        };
        let watchdog = Watchdog::start(cfg.spin_limit);
        let seeds = Streams::split(cfg.seed);
        Supervisor {
            clock: VClock::new(cfg.epoch_secs),
            sched: Scheduler::new(seeds.schedule, cfg.schedule),
            data_rng: ChaCha8Rng::seed_from_u64(seeds.data),
            cfg,
            threads: BTreeMap::new(),
            by_tid: HashMap::new(),
            procs: HashMap::new(),
            next_vtid: 1,
            next_vpid: 1,
            next_mm: 1,
            trace,
            stops: 0,
            fast_calls: 0,
            channel,
            preload_lib,
            roots: Vec::new(),
            net,
            disks: Disks::default(),
            plan,
            fault_log: Vec::new(),
            early_stops: HashSet::new(),
            signal_checks: BTreeSet::new(),
            signal_timers: Vec::new(),
            watchdog,
            preemptions: 0,
            stale_stops: HashSet::new(),
            reported: HashSet::new(),
            exit_hook: None,
            group_exit: None,
            crashing: false,
            vdso_pages: HashMap::new(),
            clock_reads: HashMap::new(),
        }
    }

    /// Starts a program on simulated host `host` and runs it to its first
    /// trapped call. `--signal-at` signals are armed for the first program.
    pub fn launch(&mut self, spec: &LaunchSpec, host: &str) -> Result<(), launch::LaunchError> {
        if !self.net.hosts.contains_key(host) {
            return Err(launch::LaunchError::NoHost(host.to_string()));
        }
        self.roots.push(Root {
            name: host.to_string(),
            pid: 0,
            status: None,
            spec: spec.clone(),
            down: false,
            crashes: 0,
            restart_on_exit: None,
            reboot_on_exit: false,
            restarts: 0,
            exited_at: None,
        });
        self.start_root(self.roots.len() - 1)?;
        if self.roots.len() == 1 {
            let pid = self.roots[0].pid;
            for &(at, sig) in &self.cfg.signals_at.clone() {
                self.signal_timers.push(SignalTimer {
                    pid,
                    sig,
                    at,
                    interval: 0,
                    owner: TimerOwner::Faultline,
                });
            }
        }
        Ok(())
    }

    /// Restarts the last launched node this long after it exits by itself,
    /// rebooting its machine first if `reboot`.
    pub fn restart_last_on_exit(&mut self, delay: u64, reboot: bool) {
        if let Some(root) = self.roots.last_mut() {
            root.restart_on_exit = Some(delay);
            root.reboot_on_exit = reboot;
        }
    }

    /// Gives node `host` a simulated disk, which the node sees at `visible`.
    pub fn add_disk(
        &mut self,
        host: &str,
        visible: std::path::PathBuf,
        disk: vfs::Disk,
    ) -> Result<(), launch::LaunchError> {
        let host = *self
            .net
            .hosts
            .get(host)
            .ok_or_else(|| launch::LaunchError::NoHost(host.to_string()))?;
        self.disks.add(NodeDisk {
            host,
            visible,
            disk,
        });
        Ok(())
    }

    /// Spawns root `i` (again) on its host.
    fn start_root(&mut self, i: usize) -> Result<(), launch::LaunchError> {
        let host_id = self.net.hosts[&self.roots[i].name];
        let pid = launch::spawn(&self.launch_spec(&self.roots[i].spec))?;
        let mm = self.new_mm();
        self.add_process(pid, None, mm);
        self.procs.get_mut(&pid).expect("new root").host = host_id;
        let root = &mut self.roots[i];
        root.pid = pid;
        root.status = None;
        let vtid = self.add_thread(pid, pid);
        // A root's first stop is its exec event; it is "started" already.
        self.threads.get_mut(&vtid).expect("root thread").started = true;
        self.run_until_stopped(vtid)
    }

    /// Crashes a node: SIGKILL for every process on its host, its sockets
    /// vanish (peers get RST), and the run waits until all are reaped, so the
    /// crash lands at the same point of every run.
    /// `planned`: a crash of the fault plan (counted as such); otherwise the
    /// reboot that follows a program's own exit (`reboot_on_exit`).
    fn crash_node(&mut self, name: &str, planned: bool) -> std::io::Result<()> {
        let Some(i) = self
            .roots
            .iter()
            .position(|r| r.name == name && r.down != planned)
        else {
            return Ok(());
        };
        let host = self.net.hosts[name];
        let mut victims: Vec<i32> = self
            .procs
            .values()
            .filter(|p| p.host == host)
            .map(|p| p.pid)
            .collect();
        victims.sort_unstable();
        let killed = format!("{} process(es) killed", victims.len());
        if planned {
            self.fault("crash", name, &[victims.len() as i64], killed);
            self.roots[i].down = true;
            self.roots[i].crashes += 1;
        } else {
            self.fault(
                "reboot",
                name,
                &[victims.len() as i64],
                format!("after its program exited; {killed}"),
            );
        }
        self.net.net.crash_host(host, self.clock.now());
        for &pid in &victims {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.crashing = true;
        while victims.iter().any(|p| self.procs.contains_key(p)) {
            let (who, status) = self.wait_any()?;
            self.handle_other(who, status);
        }
        self.crashing = false;
        if let Some(d) = self.disks.of_host(host) {
            match self.disks.get_mut(d).disk.crash() {
                Ok(report) => {
                    let lost: usize = report
                        .files
                        .iter()
                        .map(|f| f.lost_changes + f.dropped_changes)
                        .sum();
                    let torn = report.files.iter().filter(|f| f.torn.is_some()).count();
                    let reverted = report.dir_ops.iter().filter(|o| !o.survived).count();
                    let args = [lost as i64, torn as i64, reverted as i64];
                    let detail = format!("{lost} unsynced change(s) lost, {torn} torn write(s), {reverted} directory operation(s) reverted");
                    self.fault("disk_crash", name, &args, detail);
                }
                Err(e) => eprintln!("faultline: internal error: crash of {name}'s disk: {e}"),
            }
        }
        Ok(())
    }

    /// Restarts a crashed node's command.
    fn restart_node(&mut self, name: &str) -> Result<(), launch::LaunchError> {
        let Some(i) = self.roots.iter().position(|r| r.name == name && r.down) else {
            return Ok(());
        };
        self.roots[i].down = false;
        self.fault("restart", name, &[], String::new());
        self.start_root(i)
    }

    fn new_mm(&mut self) -> u32 {
        self.next_mm += 1;
        self.next_mm - 1
    }

    fn add_process(&mut self, pid: i32, parent: Option<i32>, mm: u32) {
        let (fds, restart_mask, name, host) = parent
            .and_then(|p| self.procs.get(&p))
            .map(|p| (p.fds.clone(), p.restart_mask, p.name.clone(), p.host))
            .unwrap_or((BTreeMap::new(), 0, String::new(), vnet::HostId::default()));
        let ns_root = parent
            .and_then(|p| self.procs.get(&p))
            .map_or(pid, |p| p.ns_root);
        for kind in fds.values() {
            if let fdprobe::FdKind::Socket(vs) = kind {
                self.net.add_ref(*vs);
            }
        }
        if let Some(parent) = parent {
            self.net.fork_epolls(parent, pid);
            let parent_mm = self.procs[&parent].mm;
            if parent_mm != mm {
                self.inherit_clock_state(parent_mm, mm);
            }
        }
        let vpid = self.next_vpid;
        self.next_vpid += 1;
        self.procs.insert(
            pid,
            Process {
                pid,
                ns_pid: ns_id(pid, pid),
                ns_root,
                vpid,
                parent,
                mm,
                pidfd: fdprobe::pidfd_open(pid).ok(),
                fds,
                restart_mask,
                name,
                host,
                vfork_parent: None,
                channel_user: parent
                    .and_then(|p| self.procs.get(&p))
                    .is_some_and(|p| p.channel_user),
                loader_fd: None,
                interp: parent
                    .and_then(|p| self.procs.get(&p))
                    .and_then(|p| p.interp),
            },
        );
    }

    fn add_thread(&mut self, pid: i32, tid: i32) -> Vtid {
        let vtid = self.next_vtid;
        self.next_vtid += 1;
        let started = self.early_stops.remove(&tid);
        self.threads.insert(
            vtid,
            Thread {
                tid,
                ns_tid: ns_id(pid, tid),
                vtid,
                pid,
                state: ThreadState::Ready(Resume::Continue),
                // SAFETY: plain old data, filled at the first seccomp stop.
                regs: unsafe { std::mem::zeroed() },
                clear_tid: 0,
                pending_clone: None,
                exit_kind: None,
                started,
                last_signal: None,
                restart_deadline: None,
                connect_pending: None,
                channel_wait: None,
                channel_slot: None,
                held_mask: None,
            },
        );
        self.by_tid.insert(tid, vtid);
        vtid
    }

    /// Records one trace event at the current virtual time.
    pub(crate) fn record(&mut self, vtid: Vtid, call: &str, args: &[i64], ret: &str) {
        self.trace.record(self.clock.now(), vtid, call, args, ret);
    }

    /// Prints a report line once per distinct message (unsupported calls).
    pub(crate) fn report_once(&mut self, msg: String) {
        if self.reported.insert(msg.clone()) {
            eprintln!("faultline: {msg}");
        }
    }

    /// The process a thread belongs to.
    pub(crate) fn proc_of(&self, vtid: Vtid) -> &Process {
        let pid = self.threads[&vtid].pid;
        &self.procs[&pid]
    }

    /// Runs the program to its end.
    pub fn run(mut self) -> Outcome {
        let ending = loop {
            if self.roots.iter().all(|r| r.status.is_some() && !r.down) {
                break self
                    .roots
                    .first()
                    .and_then(|r| r.status)
                    .map_or(Ending::Exited(0), status_ending);
            }
            if self.cfg.until_ns.is_some_and(|u| self.clock.now() >= u) {
                break Ending::TimeLimit;
            }
            if let Err(e) = self.apply_faults() {
                eprintln!("faultline: internal error: {e}");
                break Ending::Exited(125);
            }
            self.net.advance(self.clock.now());
            self.fire_signal_timers();
            self.check_signals();
            self.wake_due();
            self.wake_ready_fds();
            self.wake_net_waiters();
            let pick = match self.sched.decide(&self.threads, self.other_deadline()) {
                Decision::Run(pick) => pick,
                Decision::AdvanceTo(t) => {
                    self.clock
                        .advance_to(self.cfg.until_ns.map_or(t, |u| t.min(u)));
                    continue;
                }
                Decision::Stuck if self.wait_outside() => continue,
                Decision::Stuck => break Ending::Deadlock(self.deadlock_report()),
            };
            self.clock.advance_by(self.cfg.step_cost_ns);
            if let Err(e) = self.step(pick) {
                eprintln!("faultline: internal error: {e}");
                break Ending::Exited(125);
            }
        };
        self.finish(ending)
    }

    fn finish(mut self, ending: Ending) -> Outcome {
        self.watchdog.shutdown();
        self.kill_all();
        let _ = self.trace.finish();
        Outcome {
            roots: self.roots.clone(),
            faults: std::mem::take(&mut self.fault_log),
            messages: self.net.net.drain_events(),
            ending,
            vtime: self.clock.now(),
            events: self.trace.count(),
            stops: self.stops,
            fast_calls: self.fast_calls,
            hash: self.trace.hash(),
            preemptions: self.preemptions,
            lines: self.trace.lines().to_vec(),
        }
    }

    /// Kills every process still traced (by pid, never by name) and reaps them.
    fn kill_all(&mut self) {
        for &pid in self.procs.keys() {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        loop {
            let mut status = 0;
            let r = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
            if r < 0 {
                if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                break;
            }
            if libc::WIFSTOPPED(status) {
                let _ = tracee::cont(r, 0);
            }
        }
    }

    /// The earliest event that is not a parked thread's deadline: a signal
    /// timer, a network delivery, a planned fault.
    fn other_deadline(&self) -> Option<u64> {
        self.signal_timers
            .iter()
            .map(|t| t.at)
            .chain(self.net.net.next_event_time())
            .chain(self.plan.first().map(|f| f.0))
            .min()
    }

    /// Records a fault in the trace and in the fault log (faults.json).
    fn fault(&mut self, kind: &str, node: &str, args: &[i64], detail: String) {
        let t = self.clock.now();
        self.trace.record(t, 0, kind, args, node);
        self.fault_log.push(FaultRecord {
            t,
            event: self.trace.count(),
            kind: kind.to_string(),
            node: node.to_string(),
            detail,
        });
    }

    /// Applies the planned faults whose time has come.
    fn apply_faults(&mut self) -> Result<(), launch::LaunchError> {
        let now = self.clock.now();
        while self.plan.first().is_some_and(|f| f.0 <= now) {
            let (_, event) = self.plan.remove(0);
            match event {
                FaultEvent::Partition {
                    isolate,
                    from,
                    one_way,
                } => {
                    let ids = |keep: &dyn Fn(&String) -> bool| -> Vec<vnet::HostId> {
                        self.net
                            .hosts
                            .iter()
                            .filter(|(n, _)| keep(n))
                            .map(|(_, id)| *id)
                            .collect()
                    };
                    let cut = ids(&|n| isolate.contains(n));
                    let rest = match &from {
                        Some(from) => ids(&|n| from.contains(n)),
                        None => ids(&|n| !isolate.contains(n)),
                    };
                    self.net.net.partition(&cut, &rest, one_way);
                    let how = if one_way { "one way" } else { "both ways" };
                    self.fault(
                        "partition",
                        &isolate.join(","),
                        &[cut.len() as i64],
                        match &from {
                            Some(f) => format!("cut off from {}, {how}", f.join(",")),
                            None => format!("cut off from the rest, {how}"),
                        },
                    );
                }
                FaultEvent::Heal => {
                    self.net.net.heal();
                    self.fault("heal", "", &[], "every link restored".into());
                }
                FaultEvent::Crash(node) => self.crash_node(&node, true)?,
                FaultEvent::Reboot(node) => self.crash_node(&node, false)?,
                FaultEvent::Restart(node) => self.restart_node(&node)?,
            }
        }
        Ok(())
    }

    /// Wakes threads waiting on network readiness whose condition may hold;
    /// their calls re-execute and decide for themselves.
    fn wake_net_waiters(&mut self) {
        let waiting: Vec<(Vtid, i32, Wait)> = self
            .threads
            .values()
            .filter_map(|t| match &t.state {
                ThreadState::Parked(w) if matches!(w.kind, WaitKind::Net { .. }) => {
                    Some((t.vtid, t.pid, w.clone()))
                }
                _ => None,
            })
            .collect();
        for (vtid, pid, wait) in waiting {
            let WaitKind::Net { real, virt, epoll } = &wait.kind else {
                continue;
            };
            let ready = (!real.is_empty() && self.fds_ready(pid, real, false))
                || virt.iter().any(|&(vs, mask)| {
                    crate::sim::netstate::event_bits(self.net.readiness(vs)) & (mask | 0x18) != 0
                })
                || epoll.is_some_and(|key| !self.net.epoll_ready(key, 1, false).is_empty());
            if ready {
                self.record(vtid, "ready", &[], "restart");
                let t = self.threads.get_mut(&vtid).expect("thread");
                t.restart_deadline = wait.deadline;
                t.state = ThreadState::Ready(Resume::Restart);
            }
        }
    }

    /// Sends the signals whose time has come, in (time, process) order, at
    /// this scheduling point; the targets' parked threads are then woken.
    fn fire_signal_timers(&mut self) {
        let now = self.clock.now();
        let mut due: Vec<usize> = (0..self.signal_timers.len())
            .filter(|&i| self.signal_timers[i].at <= now)
            .collect();
        due.sort_by_key(|&i| (self.signal_timers[i].at, self.signal_timers[i].pid));
        for &i in &due {
            let t = &mut self.signal_timers[i];
            unsafe { libc::kill(t.pid, t.sig) };
            let (pid, sig) = (t.pid, t.sig);
            if t.interval > 0 {
                t.at = (t.at + t.interval).max(now + 1);
            }
            let vpid = self.procs.get(&pid).map_or(0, |p| p.vpid as i64);
            self.trace
                .record(now, 0, "signal_timer", &[vpid, sig as i64], "sent");
            self.signal_checks.insert(pid);
        }
        self.signal_timers.retain(|t| t.at > now);
    }

    /// Moves every parked thread whose deadline has passed to Ready.
    fn wake_due(&mut self) {
        let now = self.clock.now();
        let due = scheduler::due(&self.threads, now);
        for vtid in due {
            let ThreadState::Parked(w) = self.threads[&vtid].state.clone() else {
                continue;
            };
            self.unpark(vtid, &w.kind);
            self.record(vtid, "timeout", &[], &resume_label(&w.on_timeout));
            let t = self.threads.get_mut(&vtid).expect("thread");
            if matches!(w.kind, WaitKind::Net { .. }) {
                t.restart_deadline = w.deadline;
            }
            t.state = ThreadState::Ready(w.on_timeout);
        }
    }

    /// Removes a parked thread from the queue its wait kind keeps.
    pub(crate) fn unpark(&mut self, vtid: Vtid, kind: &WaitKind) {
        if let WaitKind::Futex { key, .. } = kind {
            self.sched.futex_cancel(*key, vtid);
        }
    }

    /// Process `pid`'s pidfd, through which faultline borrows its
    /// descriptors (absent for a process that is gone).
    pub(crate) fn pidfd(&self, pid: i32) -> Option<&std::os::fd::OwnedFd> {
        self.procs.get(&pid)?.pidfd.as_ref()
    }

    /// True if the kernel would not block a call on any of `fds` of process
    /// `pid` now: one is ready, invalid (the call fails at once), or — when
    /// `nonblocking_counts` — opened O_NONBLOCK.
    pub(crate) fn fds_ready(&self, pid: i32, fds: &[(i32, i16)], nonblocking_counts: bool) -> bool {
        let Some(pidfd) = self.pidfd(pid) else {
            return true;
        };
        fds.iter().any(|&(fd, ev)| {
            fdprobe::probe(pidfd, fd, ev)
                .is_none_or(|p| p.revents != 0 || (nonblocking_counts && p.nonblocking))
        })
    }

    /// Wakes threads parked on descriptors that have become ready.
    fn wake_ready_fds(&mut self) {
        let waiting: Vec<(Vtid, i32, WaitKind)> = self
            .threads
            .values()
            .filter_map(|t| match &t.state {
                ThreadState::Parked(w) if matches!(w.kind, WaitKind::Fds { .. }) => {
                    Some((t.vtid, t.pid, w.kind.clone()))
                }
                _ => None,
            })
            .collect();
        for (vtid, pid, kind) in waiting {
            let WaitKind::Fds { fds, on_ready } = kind else {
                continue;
            };
            if self.fds_ready(pid, &fds, false) {
                self.record(vtid, "ready", &[], &resume_label(&on_ready));
                self.threads.get_mut(&vtid).expect("thread").state = ThreadState::Ready(on_ready);
            }
        }
    }

    /// When every thread waits on descriptors fed from outside the simulation
    /// (stdin, a pipe from the test harness), wait for them in wall time.
    fn wait_outside(&mut self) -> bool {
        let mut targets = Vec::new();
        for t in self.threads.values() {
            if let ThreadState::Parked(Wait {
                kind: WaitKind::Fds { fds, .. },
                ..
            }) = &t.state
            {
                if let Some(pidfd) = self.pidfd(t.pid) {
                    targets.extend(fds.iter().map(|&(fd, ev)| (pidfd, fd, ev)));
                }
            }
        }
        if targets.is_empty() {
            return false;
        }
        let ms = self.cfg.idle_limit.as_millis().min(i32::MAX as u128) as i32;
        let woke = fdprobe::wait_any(&targets, ms);
        if woke {
            self.preemptions += 1; // outside input makes the run depend on timing
        }
        woke
    }

    fn deadlock_report(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for t in self.threads.values() {
            let p = &self.procs[&t.pid];
            let what = match &t.state {
                ThreadState::Parked(w) => w.kind.describe(),
                ThreadState::Ready(_) => "nothing (runnable)".into(),
                ThreadState::Dying => continue,
            };
            lines.push(format!(
                "thread {} (process {} {:?}, tid {} as the program sees it) waits on {} with no timeout",
                t.vtid, p.vpid, p.name, t.ns_tid, what
            ));
        }
        lines
    }

    /// Resumes `vtid` and runs it until its next scheduling point.
    fn step(&mut self, vtid: Vtid) -> std::io::Result<()> {
        let th = self.threads.get_mut(&vtid).expect("picked thread");
        let ThreadState::Ready(resume) = std::mem::replace(&mut th.state, ThreadState::Dying)
        else {
            unreachable!("picked a thread that is not ready");
        };
        if let Some(req) = th.channel_wait.take() {
            self.answer_request(vtid, req, resume);
            return self
                .run_until_stopped(vtid)
                .map_err(|e| std::io::Error::other(e.to_string()));
        }
        if !th.started {
            self.wait_initial_stop(vtid)?;
        }
        let th = &self.threads[&vtid];
        let (tid, pid, mut regs) = (th.tid, th.pid, th.regs);
        match resume {
            Resume::Continue | Resume::Pass => self.go(pid, tid, 0, false),
            Resume::Signal(sig) => self.go(pid, tid, sig, false),
            Resume::Return(v) => {
                regs.orig_rax = u64::MAX;
                regs.rax = v as u64;
                self.set_regs_or_dead(tid, &regs);
                self.go(pid, tid, 0, false)
            }
            Resume::Restart => {
                regs.rax = regs.orig_rax;
                regs.orig_rax = u64::MAX;
                regs.rip -= 2;
                self.set_regs_or_dead(tid, &regs);
                self.go(pid, tid, 0, false)
            }
            Resume::PassThenExit(new_regs, hook) => {
                if let Some(r) = new_regs {
                    self.set_regs_or_dead(tid, &r);
                }
                self.exit_hook = Some(hook);
                self.go(pid, tid, 0, true)
            }
        }
        self.run_until_stopped(vtid)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    fn set_regs_or_dead(&mut self, tid: i32, regs: &tracee::Regs) {
        // A thread killed meanwhile reports its exit next; nothing to do here.
        let _ = tracee::set_regs(tid, regs);
    }

    fn go(&mut self, pid: i32, tid: i32, sig: i32, to_exit: bool) {
        self.refresh_vdso(pid);
        self.watchdog.running(pid, tid);
        let _ = if to_exit {
            tracee::cont_to_syscall_exit(tid)
        } else {
            tracee::cont(tid, sig)
        };
    }

    fn wait_initial_stop(&mut self, vtid: Vtid) -> std::io::Result<()> {
        let tid = self.threads[&vtid].tid;
        while !self.threads.get(&vtid).is_some_and(|t| t.started) {
            let (who, status) = self.wait_any()?;
            if who == tid && is_event(status, libc::PTRACE_EVENT_STOP) {
                self.threads.get_mut(&vtid).expect("thread").started = true;
            } else {
                self.handle_other(who, status);
            }
        }
        Ok(())
    }

    /// waitpid(-1) for any traced thread; counts the stop.
    pub(crate) fn wait_any(&mut self) -> std::io::Result<(i32, i32)> {
        loop {
            let mut status = 0;
            let r = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
            if r >= 0 {
                self.stops += 1;
                return Ok((r, status));
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }

    /// Handles stops until the thread `vtid` reaches its next scheduling point.
    fn run_until_stopped(&mut self, vtid: Vtid) -> Result<(), launch::LaunchError> {
        loop {
            let (who, status) = match self.next_event(vtid)? {
                crate::fast_path::channel::Event::Stop(who, status) => (who, status),
                crate::fast_path::channel::Event::Request(req) => {
                    if let StepEnd::Done = self.on_request(vtid, req) {
                        self.step_ended();
                        return Ok(());
                    }
                    continue;
                }
            };
            let running_tid = self.threads.get(&vtid).map(|t| t.tid);
            let end = if Some(who) == running_tid {
                self.handle_running(vtid, who, status)
            } else {
                self.handle_other(who, status);
                if self.threads.contains_key(&vtid) {
                    StepEnd::Running
                } else {
                    StepEnd::Done
                }
            };
            if let StepEnd::Done = end {
                if self
                    .group_exit
                    .is_some_and(|pid| self.procs.contains_key(&pid))
                {
                    continue;
                }
                self.group_exit = None;
                self.step_ended();
                return Ok(());
            }
        }
    }

    /// The running thread reached its scheduling point: the watchdog stops
    /// watching it, and a SIGSTOP it sent too late is remembered, to be
    /// swallowed when it arrives.
    fn step_ended(&mut self) {
        if let Some(tid) = self.watchdog.idle() {
            self.stale_stops.insert(tid);
        }
    }

    /// Handles a stop of the running thread.
    fn handle_running(&mut self, vtid: Vtid, tid: i32, status: i32) -> StepEnd {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.reap(tid, status);
            return StepEnd::Done;
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        match event {
            libc::PTRACE_EVENT_SECCOMP => {
                match tracee::get_regs(tid) {
                    Ok(regs) => {
                        self.threads.get_mut(&vtid).expect("thread").regs = regs;
                        if !self.dispatch(vtid, regs) {
                            return StepEnd::Running;
                        }
                    }
                    Err(_) => self.mark_dying(vtid),
                }
                StepEnd::Done
            }
            libc::PTRACE_EVENT_CLONE | libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                self.on_clone_event(vtid, event)
            }
            libc::PTRACE_EVENT_EXEC => {
                self.release_signals(vtid, tid);
                self.on_exec(vtid);
                let _ = tracee::cont(tid, 0);
                StepEnd::Running
            }
            libc::PTRACE_EVENT_EXIT => self.on_exit_event(vtid),
            libc::PTRACE_EVENT_STOP => {
                // A group-stop; faultline does not model job control.
                let _ = tracee::cont(tid, 0);
                StepEnd::Running
            }
            0 if sig == (libc::SIGTRAP | 0x80) => self.on_syscall_exit(vtid),
            0 => self.on_signal(vtid, sig),
            _ => {
                let _ = tracee::cont(tid, 0);
                StepEnd::Running
            }
        }
    }

    /// Handles a stop of a thread other than the running one: new threads'
    /// first stops, and threads dying because their process is exiting.
    fn handle_other(&mut self, tid: i32, status: i32) {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.reap(tid, status);
            return;
        }
        let Some(&vtid) = self.by_tid.get(&tid) else {
            if is_event(status, libc::PTRACE_EVENT_STOP) {
                self.early_stops.insert(tid);
            } else {
                let _ = tracee::cont(tid, 0);
            }
            return;
        };
        if is_event(status, libc::PTRACE_EVENT_STOP) && !self.threads[&vtid].started {
            self.threads.get_mut(&vtid).expect("thread").started = true;
        } else if is_event(status, libc::PTRACE_EVENT_EXIT) {
            self.mark_dying(vtid);
            let _ = tracee::cont(tid, 0);
        } else {
            // Anything else from a thread we did not resume: let it go on dying.
            let _ = tracee::cont(tid, 0);
        }
    }

    /// Forgets a thread that is gone, and frees its channel slot.
    fn remove_thread(&mut self, vtid: Vtid) -> Option<Thread> {
        let t = self.threads.remove(&vtid)?;
        self.by_tid.remove(&t.tid);
        self.sched.forget(vtid);
        self.release_slot(t.channel_slot);
        Some(t)
    }

    pub(crate) fn mark_dying(&mut self, vtid: Vtid) {
        if let Some(t) = self.threads.get(&vtid) {
            if let ThreadState::Parked(w) = t.state.clone() {
                self.unpark(vtid, &w.kind);
            }
        }
        if let Some(t) = self.threads.get_mut(&vtid) {
            t.state = ThreadState::Dying;
        }
    }

    /// A thread (or, for a leader, its whole process) has been reaped.
    fn reap(&mut self, tid: i32, status: i32) {
        let Some(&vtid) = self.by_tid.get(&tid) else {
            return;
        };
        let th = self.remove_thread(vtid).expect("thread of tid");
        if let ThreadState::Parked(w) = &th.state {
            self.unpark(vtid, &w.kind);
        }
        if th.tid != th.pid {
            // A non-leader thread: wake joiners the way the kernel's
            // CLONE_CHILD_CLEARTID does, but on the emulated futex.
            if th.clear_tid != 0 {
                if let Some(mm) = self.procs.get(&th.pid).map(|p| p.mm) {
                    self.futex_wake((mm, th.clear_tid), 1, u32::MAX);
                }
            }
            return;
        }
        self.process_ended(th, status);
    }

    fn process_ended(&mut self, leader: Thread, status: i32) {
        let pid = leader.pid;
        // Threads the kernel reaped silently with their leader.
        let rest: Vec<Vtid> = self
            .threads
            .values()
            .filter(|t| t.pid == pid)
            .map(|t| t.vtid)
            .collect();
        for v in rest {
            self.mark_dying(v);
            self.remove_thread(v);
        }
        let Some(p) = self.procs.remove(&pid) else {
            return;
        };
        self.forget_mm(p.mm);
        self.signal_timers.retain(|t| t.pid != pid);
        // Its descriptors close: peers of its sockets see FIN or RST.
        let now = self.clock.now();
        for (&fd, kind) in &p.fds {
            if let fdprobe::FdKind::Socket(vs) = kind {
                self.net.drop_ref(pid, fd, *vs, now);
            }
            self.net.drop_epoll(pid, fd);
        }
        let desc = describe_status(status);
        self.trace.record(
            self.clock.now(),
            leader.vtid,
            "process_exit",
            &[p.vpid as i64],
            &desc,
        );
        if libc::WIFSIGNALED(status) && !self.crashing {
            let sig = libc::WTERMSIG(status);
            let detail = leader.last_signal.clone().unwrap_or_default();
            let msg = format!(
                "process {} {:?} killed by {}{}",
                p.vpid,
                p.name,
                signal_name(sig),
                detail
            );
            eprintln!("faultline: {msg}");
        }
        if let Some(parent_tid) = p.vfork_parent {
            self.wake_vfork_parent(parent_tid);
        }
        let when = (self.clock.now(), self.trace.count());
        if let Some(root) = self.roots.iter_mut().find(|r| r.pid == pid) {
            root.status = Some(status);
            root.exited_at = Some(when);
            if let (Some(delay), false) = (root.restart_on_exit, root.down) {
                // Like a service manager: bring it back on the same disk.
                root.down = true;
                root.restarts += 1;
                let now = self.clock.now();
                let mut events = vec![(now + delay, FaultEvent::Restart(root.name.clone()))];
                if root.reboot_on_exit {
                    events.push((now, FaultEvent::Reboot(root.name.clone())));
                }
                for (at, event) in events {
                    let i = self.plan.partition_point(|(t, _)| *t <= at);
                    self.plan.insert(i, (at, event));
                }
            }
            return;
        }
        if let Some(parent) = p.parent {
            self.wake_child_waiters(parent);
            self.signal_checks.insert(parent);
        }
    }

    fn wake_child_waiters(&mut self, parent: i32) {
        for t in self.threads.values_mut() {
            if t.pid == parent
                && matches!(&t.state, ThreadState::Parked(w) if matches!(w.kind, WaitKind::Child))
            {
                t.state = ThreadState::Ready(Resume::Continue);
            }
        }
    }

    pub(crate) fn wake_vfork_parent(&mut self, parent_tid: i32) {
        if let Some(&v) = self.by_tid.get(&parent_tid) {
            let t = self.threads.get_mut(&v).expect("thread");
            if matches!(&t.state, ThreadState::Parked(w) if matches!(w.kind, WaitKind::Vfork { .. }))
            {
                t.state = ThreadState::Ready(Resume::Continue);
            }
        }
    }

    fn on_clone_event(&mut self, vtid: Vtid, event: i32) -> StepEnd {
        let th = &self.threads[&vtid];
        let (tid, pid) = (th.tid, th.pid);
        let Ok(new_tid) = tracee::event_msg(tid).map(|m| m as i32) else {
            return StepEnd::Running;
        };
        let (flags, ctid) = self.threads[&vtid].pending_clone.unwrap_or(match event {
            libc::PTRACE_EVENT_VFORK => ((libc::CLONE_VM | libc::CLONE_VFORK) as u64, 0),
            _ => (libc::SIGCHLD as u64, 0),
        });
        let new_pid = if flags & libc::CLONE_THREAD as u64 != 0 {
            pid
        } else {
            let mm = if flags & libc::CLONE_VM as u64 != 0 {
                self.procs[&pid].mm
            } else {
                self.new_mm()
            };
            self.add_process(new_tid, Some(pid), mm);
            new_tid
        };
        let new_vtid = self.add_thread(new_pid, new_tid);
        if flags & libc::CLONE_CHILD_CLEARTID as u64 != 0 {
            self.threads
                .get_mut(&new_vtid)
                .expect("new thread")
                .clear_tid = ctid;
        }
        let label = if new_pid == pid { "thread" } else { "process" };
        self.record(vtid, "spawn", &[new_vtid as i64], label);
        if event == libc::PTRACE_EVENT_VFORK {
            self.procs
                .get_mut(&new_pid)
                .expect("vfork child")
                .vfork_parent = Some(tid);
            self.threads.get_mut(&vtid).expect("thread").state = ThreadState::Parked(Wait {
                kind: WaitKind::Vfork { child: new_tid },
                deadline: None,
                on_timeout: Resume::Continue,
                restartable: false,
            });
            return StepEnd::Done;
        }
        self.threads.get_mut(&vtid).expect("thread").pending_clone = None;
        let _ = tracee::cont(tid, 0);
        StepEnd::Running
    }

    fn on_exec(&mut self, vtid: Vtid) {
        let th = &self.threads[&vtid];
        let (tid, pid) = (th.tid, th.pid);
        // Other threads of the process were killed by the exec.
        let others: Vec<Vtid> = self
            .threads
            .values()
            .filter(|t| t.pid == pid && t.vtid != vtid)
            .map(|t| t.vtid)
            .collect();
        for v in others {
            self.mark_dying(v);
            self.remove_thread(v);
        }
        if tid != pid {
            // A non-leader exec'd: it takes over the leader's tid.
            self.by_tid.remove(&tid);
            self.by_tid.insert(pid, vtid);
            self.threads.get_mut(&vtid).expect("thread").tid = pid;
        }
        let mut random = [0u8; 16];
        self.data_rng.fill(&mut random);
        let mm = self.new_mm();
        let rsp = tracee::get_regs(pid).map(|r| r.rsp).unwrap_or(0);
        let mut install = |base: u64| self.install_vdso(pid, mm, base);
        let (name, interp_base) =
            crate::host::auxv::rewrite(pid, rsp, random, &mut install).unwrap_or_default();
        self.forget_closed_on_exec(pid);
        let interp = crate::host::auxv::mapping_of_file_at(pid, interp_base);
        let p = self.procs.get_mut(&pid).expect("exec'ing process");
        p.interp = interp;
        let old_mm = std::mem::replace(&mut p.mm, mm);
        p.restart_mask = 0;
        // The new image's loader opens the library again, if it is dynamic.
        p.channel_user = false;
        p.loader_fd = None;
        p.name = name.clone();
        let vfork_parent = p.vfork_parent.take();
        self.forget_mm(old_mm);
        let t = self.threads.get_mut(&vtid).expect("thread");
        t.clear_tid = 0;
        let old_slot = t.channel_slot.take();
        self.release_slot(old_slot);
        self.record(vtid, "exec", &[], &name);
        if let Some(parent) = vfork_parent {
            self.wake_vfork_parent(parent);
        }
    }

    /// After an exec the kernel has closed the O_CLOEXEC descriptors: keep
    /// only virtual sockets that are still open, forget everything else.
    fn forget_closed_on_exec(&mut self, pid: i32) {
        let now = self.clock.now();
        let Some(p) = self.procs.get_mut(&pid) else {
            return;
        };
        let old = std::mem::take(&mut p.fds);
        for (fd, kind) in old {
            let fdprobe::FdKind::Socket(vs) = kind else {
                continue;
            };
            let p = &self.procs[&pid];
            let open = p
                .pidfd
                .as_ref()
                .is_some_and(|pf| fdprobe::classify(pf, fd).is_some());
            if open {
                self.procs
                    .get_mut(&pid)
                    .expect("process")
                    .fds
                    .insert(fd, kind);
            } else {
                self.net.drop_ref(pid, fd, vs, now);
            }
            self.net.drop_epoll(pid, fd);
        }
    }

    fn on_exit_event(&mut self, vtid: Vtid) -> StepEnd {
        let th = &self.threads[&vtid];
        let (tid, pid, kind) = (th.tid, th.pid, th.exit_kind);
        let group = kind != Some(ExitKind::Thread);
        self.mark_dying(vtid);
        let _ = tracee::cont(tid, 0);
        if group {
            for t in self.threads.values_mut().filter(|t| t.pid == pid) {
                t.state = ThreadState::Dying;
            }
            self.group_exit = Some(pid);
            // Wait (inside run_until_stopped) until the leader is reaped.
            return StepEnd::Running;
        }
        let others_alive = self
            .threads
            .values()
            .any(|t| t.pid == pid && t.vtid != vtid && !matches!(t.state, ThreadState::Dying));
        if tid == pid && others_alive {
            // The leader left with pthread_exit; its reap comes with the last thread.
            return StepEnd::Done;
        }
        StepEnd::Running
    }

    fn on_syscall_exit(&mut self, vtid: Vtid) -> StepEnd {
        let tid = self.threads[&vtid].tid;
        let pid = self.threads[&vtid].pid;
        let hook = self.exit_hook.take();
        let Ok(regs) = tracee::get_regs(tid) else {
            return StepEnd::Running;
        };
        match hook {
            Some(ExitHook::LoaderOpen) => self.loader_opened(pid, regs.rax as i64),
            Some(ExitHook::RestoreArgs(saved)) => {
                let _ = tracee::put_back_regs(tid, &saved, regs.rax);
            }
            Some(ExitHook::Mark(kind)) if (regs.rax as i64) >= 0 => {
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.fds.insert(regs.rax as i32, kind);
                }
            }
            Some(ExitHook::NewSocket {
                net,
                nonblocking,
                peer,
                restore,
            }) => {
                let fd = regs.rax as i64;
                if fd >= 0 {
                    let vs = self.net.add(net, nonblocking);
                    if let Some(p) = self.procs.get_mut(&pid) {
                        p.fds
                            .insert(fd as i32, crate::host::fdprobe::FdKind::Socket(vs));
                    }
                    if let Some((addr, lenp, sa)) = peer {
                        let inet6 = self
                            .net
                            .get(vs)
                            .is_some_and(|s| s.domain == vnet::Domain::Inet6);
                        let _ = crate::sim::sockaddr::write_out(pid, addr, lenp, sa, inet6);
                    }
                } else {
                    let _ = self.net.net.close(net, self.clock.now());
                }
                let _ = tracee::put_back_regs(tid, &restore, fd as u64);
            }
            Some(ExitHook::NewNetlink(restore)) => {
                let fd = regs.rax;
                if (fd as i64) >= 0 {
                    if let Some(p) = self.procs.get_mut(&pid) {
                        p.fds.insert(fd as i32, fdprobe::FdKind::Netlink);
                    }
                }
                let _ = tracee::put_back_regs(tid, &restore, fd);
            }
            Some(ExitHook::DupFd(kind)) if (regs.rax as i64) >= 0 => {
                if let fdprobe::FdKind::Socket(vs) = kind {
                    self.net.add_ref(vs);
                }
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.fds.insert(regs.rax as i32, kind);
                }
            }
            Some(
                hook @ (ExitHook::DiskOpen { .. }
                | ExitHook::DiskWrite { .. }
                | ExitHook::DiskChange { .. }),
            ) => {
                if let ExitHook::DiskChange {
                    restore: Some(saved),
                    ..
                } = &hook
                {
                    let _ = tracee::put_back_regs(tid, saved, regs.rax);
                }
                self.disk_exit(pid, hook, regs.rax as i64);
            }
            Some(ExitHook::AppendEpollEvents {
                buf,
                events,
                restore,
            }) => {
                let n = regs.rax as i64;
                let ret = if n >= 0 {
                    let at = buf + crate::sys::epoll_event_offset(n as u64);
                    let ok = crate::sys::write_epoll_events(pid, at, &events);
                    n + if ok { events.len() as i64 } else { 0 }
                } else {
                    n
                };
                let _ = tracee::put_back_regs(tid, &restore, ret as u64);
            }
            Some(ExitHook::PatchUname(addr)) if regs.rax == 0 => {
                // struct utsname: six 65-byte fields; nodename is the second.
                let mut field = [0u8; 65];
                let host = self.procs.get(&pid).map(|p| p.host).unwrap_or_default();
                let host_name = self.net.net.host_name(host).to_string();
                let name = host_name.as_bytes();
                let n = name.len().min(64);
                field[..n].copy_from_slice(&name[..n]);
                let _ = tracee::write_mem(pid, addr + 65, &field);
            }
            Some(ExitHook::ParkUnlessReaped(saved)) => {
                if self.nothing_reaped(pid, &saved, regs.rax as i64) {
                    let mut rewound = *saved;
                    rewound.rax = saved.orig_rax;
                    rewound.rip -= 2;
                    let _ = tracee::set_regs(tid, &rewound);
                    self.record(vtid, "wait_child", &[], "park");
                    self.threads.get_mut(&vtid).expect("thread").state =
                        ThreadState::Parked(Wait {
                            kind: WaitKind::Child,
                            deadline: None,
                            on_timeout: Resume::Continue,
                            restartable: true,
                        });
                    return StepEnd::Done;
                }
                let _ = tracee::put_back_regs(tid, &saved, regs.rax);
            }
            _ => {}
        }
        let _ = tracee::cont(tid, 0);
        StepEnd::Running
    }

    /// Whether a WNOHANG probe of wait4/waitid found no child to report.
    fn nothing_reaped(&self, pid: i32, saved: &tracee::Regs, ret: i64) -> bool {
        if saved.orig_rax as i64 == libc::SYS_waitid {
            let infop = saved.rdx;
            let si_pid = if infop != 0 && ret == 0 {
                tracee::read_val::<i32>(pid, infop + 16).unwrap_or(1)
            } else {
                1
            };
            return ret == 0 && si_pid == 0;
        }
        ret == 0
    }

    fn on_signal(&mut self, vtid: Vtid, sig: i32) -> StepEnd {
        let tid = self.threads[&vtid].tid;
        let pid = self.threads[&vtid].pid;
        if sig == libc::SIGSTOP && self.stale_stops.remove(&tid) {
            let _ = tracee::cont(tid, 0);
            return StepEnd::Running;
        }
        if sig == libc::SIGSTOP && self.watchdog.take_preemption(tid) {
            self.preemptions += 1;
            self.forget_spin_reads(pid);
            self.hold_signals(vtid, tid);
            let owed = self
                .threads
                .values()
                .filter(|t| t.pid == pid && t.vtid != vtid)
                .map(|t| t.vtid)
                .collect();
            self.sched.preempted(vtid, owed);
            self.record(vtid, "preempted", &[], "watchdog");
            let rip = tracee::get_regs(tid).map_or(0, |r| r.rip);
            let p = &self.procs[&pid];
            let msg = format!(
                "the watchdog preempted thread {vtid} (process {} {:?}) at rip {rip:#x}: it used {:?} of CPU (or three times that of wall time, blocked) without a trapped syscall (a spin loop? `addr2line -f -e PROGRAM {rip:#x}` names the function)",
                p.vpid, p.name, self.cfg.spin_limit
            );
            self.report_once(msg);
            self.threads.get_mut(&vtid).expect("thread").state =
                ThreadState::Ready(Resume::Continue);
            return StepEnd::Done;
        }
        if sig == libc::SIGSEGV {
            if let Some(end) = self.emulate_rdtsc(vtid, tid, pid) {
                return end;
            }
        }
        if matches!(
            sig,
            libc::SIGSEGV | libc::SIGBUS | libc::SIGILL | libc::SIGFPE | libc::SIGABRT
        ) {
            let detail = fault_detail(tid, sig);
            self.threads.get_mut(&vtid).expect("thread").last_signal = Some(detail);
        }
        self.record(vtid, "signal", &[sig as i64], "deliver");
        self.threads.get_mut(&vtid).expect("thread").state =
            ThreadState::Ready(Resume::Signal(sig));
        StepEnd::Done
    }

    /// Blocks every signal of a thread the watchdog stopped at an arbitrary
    /// instruction (a pending Go preemption signal, say, would otherwise
    /// run its handler there, and Go decides by that instruction what to do).
    fn hold_signals(&mut self, vtid: Vtid, tid: i32) {
        let th = self.threads.get_mut(&vtid).expect("thread");
        if th.held_mask.is_some() {
            return;
        }
        if let Ok(mask) = tracee::sigmask(tid) {
            if tracee::set_sigmask(tid, HOLD_ALL).is_ok() {
                th.held_mask = Some(mask);
            }
        }
    }

    /// At a system call of the program, a deterministic point: gives back
    /// the mask [`Self::hold_signals`] took, unless the program changed it
    /// since, and forgets the clock reads made since the preemption (how
    /// many the rest of the interrupted loop round made depends on where
    /// the watchdog stopped it).
    pub(crate) fn release_signals(&mut self, vtid: Vtid, tid: i32) {
        let Some(mask) = self.threads.get_mut(&vtid).and_then(|t| t.held_mask.take()) else {
            return;
        };
        let pid = self.threads[&vtid].pid;
        self.forget_spin_reads(pid);
        if tracee::sigmask(tid).is_ok_and(|now| now == HOLD_ALL) {
            let _ = tracee::set_sigmask(tid, mask);
        }
    }

    /// rdtsc/rdtscp trap with SIGSEGV (PR_SET_TSC); answer with virtual time.
    /// None if the fault was no rdtsc. The dynamic loader's own rdtscs (its
    /// start-up statistics timer, which the program never sees) are answered
    /// in place, unrecorded: loading the LD_PRELOAD library adds two, and
    /// the trace must be the same with the fast path on and off.
    fn emulate_rdtsc(&mut self, vtid: Vtid, tid: i32, pid: i32) -> Option<StepEnd> {
        let mut regs = tracee::get_regs(tid).ok()?;
        let mut insn = [0u8; 3];
        tracee::read_mem(pid, regs.rip, &mut insn).ok()?;
        let len = match insn {
            [0x0f, 0x31, _] => 2,
            [0x0f, 0x01, 0xf9] => 3,
            _ => return None,
        };
        let in_loader = self.procs[&pid]
            .interp
            .is_some_and(|(lo, hi)| (lo..hi).contains(&regs.rip));
        let tsc = self.clock.tsc();
        regs.rax = tsc & 0xffff_ffff;
        regs.rdx = tsc >> 32;
        if len == 3 {
            regs.rcx = 0;
        }
        regs.rip += len;
        tracee::set_regs(tid, &regs).ok()?;
        if in_loader {
            let _ = tracee::cont(tid, 0);
            return Some(StepEnd::Running);
        }
        self.record(vtid, "rdtsc", &[], &tsc.to_string());
        self.threads.get_mut(&vtid).expect("thread").state = ThreadState::Ready(Resume::Continue);
        Some(StepEnd::Done)
    }
}

/// Every signal that can be blocked (the kernel drops SIGKILL and SIGSTOP
/// from any mask).
pub(crate) const HOLD_ALL: u64 = !((1 << (libc::SIGKILL - 1)) | (1 << (libc::SIGSTOP - 1)));

/// The id a thread has in the innermost PID namespace (the last NSpid field).
fn ns_id(pid: i32, tid: i32) -> i32 {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|v| v.split_whitespace().last().and_then(|x| x.parse().ok()))
        })
        .unwrap_or(tid)
}

/// Pins the calling thread (and so every tracee forked later) to one of the
/// CPUs it may use, picked by pid so that parallel runs spread out.
fn pin_to_one_cpu() {
    // SAFETY: cpu_set_t is plain old data manipulated by the libc macros.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return;
        }
        let allowed: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect();
        if allowed.is_empty() {
            return;
        }
        let cpu = allowed[std::process::id() as usize % allowed.len()];
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn is_event(status: i32, event: i32) -> bool {
    libc::WIFSTOPPED(status) && (status >> 16) & 0xff == event
}

fn status_ending(status: i32) -> Ending {
    if libc::WIFSIGNALED(status) {
        Ending::Signaled(libc::WTERMSIG(status))
    } else {
        Ending::Exited(libc::WEXITSTATUS(status))
    }
}

fn describe_status(status: i32) -> String {
    match status_ending(status) {
        Ending::Signaled(s) => format!("killed by {}", signal_name(s)),
        Ending::Exited(c) => format!("exit {c}"),
        _ => unreachable!(),
    }
}

/// The conventional name of a signal number.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

fn fault_detail(tid: i32, sig: i32) -> String {
    let rip = tracee::get_regs(tid).map(|r| r.rip).unwrap_or(0);
    let addr = tracee::siginfo(tid)
        .map(|si| unsafe { si.si_addr() } as u64)
        .unwrap_or(0);
    if matches!(sig, libc::SIGSEGV | libc::SIGBUS) {
        format!(" (fault address 0x{addr:x}, instruction pointer 0x{rip:x})")
    } else {
        format!(" (instruction pointer 0x{rip:x})")
    }
}

/// A short label of how a thread resumes, for the trace.
pub fn resume_label(r: &Resume) -> String {
    match r {
        Resume::Return(v) => v.to_string(),
        Resume::Continue => "continue".into(),
        Resume::Restart => "restart".into(),
        Resume::Pass | Resume::PassThenExit(..) => "pass".into(),
        Resume::Signal(s) => format!("signal {s}"),
    }
}
