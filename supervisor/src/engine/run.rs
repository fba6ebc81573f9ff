//! The run loop: between two steps, faults and timers fire, the network
//! moves, parked threads whose condition holds wake, and the scheduler picks
//! the next thread or moves virtual time; when nothing can ever run again,
//! the deadlock report.

use super::*;
use crate::host::fdprobe;
use crate::host::tracee;
use crate::sim::scheduler::{self, Decision};
use crate::sim::world::*;

impl Supervisor {
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
            if self.cfg.until_ns.is_some_and(|u| self.sim.clock.now() >= u) {
                break Ending::TimeLimit;
            }
            if let Some(sig) = crate::host::interrupt::received() {
                break Ending::Interrupted(sig);
            }
            if let Some(line) = self.progress.as_mut().and_then(|p| {
                p.line(
                    self.sim.clock.now(),
                    self.cfg.until_ns,
                    self.sim.trace.count(),
                )
            }) {
                eprintln!("{line}");
            }
            if self
                .cfg
                .wall_deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
            {
                break Ending::Stuck;
            }
            if let Err(e) = self.settle_doomed() {
                break Ending::Internal(e.to_string());
            }
            if let Err(e) = self.apply_faults() {
                break Ending::Internal(e.to_string());
            }
            if let Err(e) = self.tend_probes() {
                eprintln!("faultline: internal error: invariant probe: {e}");
                break Ending::Exited(125);
            }
            if self.probes.failed() {
                break Ending::Invariant;
            }
            self.sim.net.advance(self.sim.clock.now());
            self.fire_signal_timers();
            if let Err(e) = self.settle_doomed() {
                break Ending::Internal(e.to_string());
            }
            self.sim.fire_timerfds();
            self.check_signals();
            let kept = self.answer_ahead();
            // The pick, when a thread can run already, is made before this
            // point's wakes (the threads they wake can run from the next
            // decision on), and on the fast path answered before them too.
            let early = kept.is_none().then(|| self.decide_before_wakes()).flatten();
            let answered = kept.or_else(|| early.and_then(|pick| self.answer_pick_ahead(pick)));
            // Answering changes no parked thread: the scan is made after it.
            let parked = scheduler::parked(&self.sim.threads, self.sim.clock.now());
            self.wake_due(&parked.due);
            self.tell_descriptor_changes();
            if let Some(vtid) = answered {
                self.wake_while_running(vtid, &parked.on_fds, &parked.on_net);
                if let Err(e) = self.run_to_next_point(vtid) {
                    break Ending::Internal(e.to_string());
                }
                continue;
            }
            self.sim.wake_ready_fds(&self.host_fds, &parked.on_fds);
            self.sim.wake_net_waiters(&self.host_fds, &parked.on_net);
            let decision = early.map_or_else(|| self.decide(), Decision::Run);
            let pick = match decision {
                Decision::Run(pick) => pick,
                Decision::AdvanceTo(t) => {
                    self.sim
                        .clock
                        .advance_to(self.cfg.until_ns.map_or(t, |u| t.min(u)));
                    continue;
                }
                Decision::Stuck if self.wait_outside() => continue,
                Decision::Stuck => break Ending::Deadlock(self.deadlock_report()),
            };
            self.charge_step(pick, self.cfg.step_cost_ns);
            if let Err(e) = self.step(pick) {
                break Ending::Internal(e.to_string());
            }
        };
        self.finish(ending)
    }

    pub(super) fn finish(mut self, ending: Ending) -> Outcome {
        self.log_unreached();
        self.watchdog.shutdown();
        self.kill_all();
        let _ = self.sim.trace.finish();
        Outcome {
            roots: self.roots.clone(),
            faults: std::mem::take(&mut self.fault_log),
            messages: self.sim.net.net_mut().drain_events(),
            probe_runs: self.probes.take_runs(),
            diagnostics: std::mem::take(&mut self.sim.diagnostics).into_list(),
            output: std::mem::take(&mut self.sim.outputs).into_marks(),
            ending,
            vtime: self.sim.clock.now(),
            events: self.sim.trace.count(),
            stops: self.stops,
            fast_calls: self.fast_calls,
            handoffs: self.channel.as_ref().map_or(0, |c| c.handoffs()),
            noted_wakes: self.channel.as_ref().map_or(0, |c| c.noted_wakes()),
            quiet_polls: self.quiet_polls,
            quiet_polls_in_stub: self.quiet_polls_in_stub,
            empty_reads: self.empty_reads,
            empty_reads_in_stub: self.empty_reads_in_stub,
            hash: self.sim.trace.hash(),
            preemptions: self.preemptions,
            host_state: std::mem::take(&mut self.sim.host_state)
                .into_iter()
                .map(
                    |((call, node), count)| crate::sys::host_state::HostStateRead {
                        call,
                        node,
                        count,
                    },
                )
                .collect(),
            lines: self.sim.trace.lines().to_vec(),
            thread_nodes: std::mem::take(&mut self.sim.thread_nodes),
        }
    }

    /// Kills every process still traced (by pid, never by name) and reaps them,
    /// and the spawner once it has reaped their inits.
    pub(super) fn kill_all(&mut self) {
        for &pid in self.sim.procs.keys() {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.spawner.stop();
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

    /// Sends the signals whose time has come, in (time, process) order, at
    /// this scheduling point; the targets' parked threads are then woken.
    pub(super) fn fire_signal_timers(&mut self) {
        let now = self.sim.clock.now();
        let mut due: Vec<usize> = (0..self.sim.signal_timers.len())
            .filter(|&i| self.sim.signal_timers[i].at <= now)
            .collect();
        due.sort_by_key(|&i| (self.sim.signal_timers[i].at, self.sim.signal_timers[i].pid));
        if !due.is_empty() {
            self.sim.descriptors_changed();
        }
        for &i in &due {
            let t = &mut self.sim.signal_timers[i];
            match t.owner {
                TimerOwner::Posix { id, tid, value } => {
                    crate::sys::timers::queue_timer_signal(t.pid, tid, t.sig, id, value)
                }
                _ => unsafe {
                    libc::kill(t.pid, t.sig);
                },
            }
            let (pid, sig) = (t.pid, t.sig);
            if t.interval > 0 {
                t.at = (t.at + t.interval).max(now + 1);
            }
            let vpid = self.sim.procs.get(&pid).map_or(0, |p| p.vpid as i64);
            self.sim
                .trace
                .record(now, 0, "signal_timer", &[vpid, sig as i64], "sent");
            self.signal_sent(pid, sig, None);
        }
        self.sim.signal_timers.retain(|t| t.at > now);
    }

    /// Moves the parked threads `due` (their deadline has passed) to Ready.
    pub(super) fn wake_due(&mut self, due: &[Vtid]) {
        for &vtid in due {
            let ThreadState::Parked(w) = self.sim.threads[&vtid].state.clone() else {
                continue;
            };
            self.sim.unpark(vtid, &w.kind);
            self.sim
                .record(vtid, "timeout", &[], resume_label(&w.on_timeout));
            let t = self.sim.threads.get_mut(&vtid).expect("thread");
            if matches!(w.kind, WaitKind::Net { .. }) {
                t.restart_deadline = w.deadline;
            }
            t.state = ThreadState::Ready(w.on_timeout);
        }
    }

    /// When every thread waits on descriptors fed from outside the simulation
    /// (stdin, a pipe from the test harness), wait for them in wall time.
    pub(super) fn wait_outside(&mut self) -> bool {
        let mut targets = Vec::new();
        for t in self.sim.threads.values() {
            if let ThreadState::Parked(Wait {
                kind: WaitKind::Fds { fds, .. },
                ..
            }) = &t.state
            {
                if let Some(pidfd) = self.host_fds.pidfd(t.pid) {
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
            self.sim.descriptors_changed();
            self.preemptions += 1; // outside input makes the run depend on timing
        }
        woke
    }

    pub(super) fn deadlock_report(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for t in self.sim.threads.values() {
            let p = &self.sim.procs[&t.pid];
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
}

pub(super) fn status_ending(status: i32) -> Ending {
    if libc::WIFSIGNALED(status) {
        Ending::Signaled(libc::WTERMSIG(status))
    } else {
        Ending::Exited(libc::WEXITSTATUS(status))
    }
}

/// The earliest event that is not a parked thread's deadline: a signal
/// timer, a timerfd's expiry, a network delivery, a planned fault, an
/// invariant probe's start or timeout.
pub(super) fn other_deadline(
    (signal_timers, timer_fds, net): (
        &[SignalTimer],
        &crate::sim::timers::TimerFds,
        &crate::sim::netstate::NetState,
    ),
    plan: &[Scheduled],
    probes: &super::probes::Probes,
) -> Option<u64> {
    signal_timers
        .iter()
        .map(|t| t.at)
        .chain(timer_fds.next_deadline())
        .chain(net.net().next_event_time())
        .chain(plan.first().map(|f| f.t))
        .chain(probes.next_time())
        .min()
}
