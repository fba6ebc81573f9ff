//! One step: resume the picked thread the way its state says (continue,
//! return a value, restart the call, pass it to the kernel) and handle ptrace
//! stops until it reaches its next scheduling point.

use super::*;
use crate::host::launch::{self};
use crate::host::tracee;
use crate::sim::peek::Peek;
use crate::sim::world::*;

impl Supervisor {
    /// Resumes `vtid` and runs it until its next scheduling point.
    pub(super) fn step(&mut self, vtid: Vtid) -> std::io::Result<()> {
        let resume = self.begin_step(vtid);
        let th = self.sim.threads.get_mut(&vtid).expect("picked thread");
        if let Some(req) = th.channel_wait.take() {
            if matches!(resume, Resume::Restart) && req.signal_generation == self.signal_generation
            {
                // No signal can have come for the thread to take first (see
                // `signal_generation`): what its call does when asked again
                // is decided here and now, as at the ptrace stop below,
                // without waking it to ask.
                let (pid, tid) = (th.pid, th.tid);
                self.about_to_run(pid, tid);
                if let StepEnd::Done = self.redecide_request(vtid, req) {
                    self.step_ended();
                    return Ok(());
                }
            } else {
                self.answer_request(vtid, req, resume, 0);
            }
            return self.run_to_next_point(vtid);
        }
        if let Some(id) = th.notified.take() {
            if !self.answer_notified(vtid, id, resume) {
                self.step_ended();
                return Ok(());
            }
            return self.run_to_next_point(vtid);
        }
        if !th.started {
            self.wait_initial_stop(vtid)?;
        }
        self.give_go_slot(vtid);
        let th = self.sim.threads.get_mut(&vtid).expect("picked thread");
        let (tid, pid, mut regs) = (th.tid, th.pid, th.regs);
        let arrived = th
            .step_over
            .take()
            .and_then(|addr| self.step_over_yield(tid, pid, addr));
        match resume {
            Resume::Continue | Resume::Pass => self.go(pid, tid, arrived.unwrap_or(0), false),
            Resume::Signal(sig) => self.go(pid, tid, sig, false),
            Resume::Return(v) => {
                regs.orig_rax = u64::MAX;
                regs.rax = v as u64;
                self.set_regs_or_dead(tid, &regs);
                self.go(pid, tid, 0, false)
            }
            Resume::Restart if !tracee::signal_queued(tid).unwrap_or(true) => {
                // No signal queued for the kernel to deliver first: what the call
                // would do when re-executed is decided here and now, as at
                // the seccomp stop it would reach, without the round trip.
                // (A call answered in place resumes the thread at once.)
                self.about_to_run(pid, tid);
                if self.dispatch(vtid, regs, Peek::default(), None) && !self.group_exiting() {
                    self.step_ended();
                    return Ok(());
                }
            }
            Resume::Restart => {
                regs.rax = regs.orig_rax;
                regs.orig_rax = u64::MAX;
                regs.rip = self.rewound_call_at(pid, regs.rip - 2);
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
        self.run_to_next_point(vtid)
    }

    /// The resumed thread `vtid`, and the threads its step wakes, on to
    /// its next scheduling point.
    pub(super) fn run_to_next_point(&mut self, vtid: Vtid) -> std::io::Result<()> {
        self.run_until_stopped(vtid)
            .map_err(|e| std::io::Error::other(e.to_string()))
    }

    /// The picked thread's step begins: it leaves the ready threads, and
    /// what its resumption sets off (signals it sent, a call passed to the
    /// kernel) is noted. Returns how it resumes.
    pub(super) fn begin_step(&mut self, vtid: Vtid) -> Resume {
        let th = self.sim.threads.get_mut(&vtid).expect("picked thread");
        let ThreadState::Ready(resume) = std::mem::replace(&mut th.state, ThreadState::Dying)
        else {
            unreachable!("picked a thread that is not ready");
        };
        let tid = th.tid;
        self.sender_runs(tid);
        let th = &self.sim.threads[&vtid];
        let passing = matches!(resume, Resume::Pass | Resume::PassThenExit(..)).then_some(&th.regs);
        self.waits.step_starts(th.pid, th.tid, passing);
        let procs = &self.sim.procs;
        self.waits.forget(|p| procs.contains_key(&p));
        if matches!(
            resume,
            Resume::Pass | Resume::PassThenExit(..) | Resume::Signal(_)
        ) {
            self.sim.descriptors_changed();
        }
        resume
    }

    /// A process whose threads are all exiting is still there: the step
    /// goes on until it is gone.
    fn group_exiting(&self) -> bool {
        self.group_exit
            .is_some_and(|pid| self.sim.procs.contains_key(&pid))
    }

    pub(super) fn set_regs_or_dead(&mut self, tid: i32, regs: &crate::sim::memory::Regs) {
        // A thread killed meanwhile reports its exit next; nothing to do here.
        let _ = tracee::set_regs(tid, regs);
    }

    /// `tid` of `pid` is about to run: its time page is current and the
    /// watchdog watches it.
    pub(crate) fn about_to_run(&mut self, pid: i32, tid: i32) {
        self.runs_ahead(pid, tid, 0);
    }

    /// `tid` of `pid` is about to run at `ahead` ns after the current
    /// time: its time page shows that time and the watchdog watches it.
    pub(crate) fn runs_ahead(&mut self, pid: i32, tid: i32, ahead: u64) {
        self.publish_readiness(tid);
        self.refresh_vdso(pid, ahead);
        self.watchdog.running(pid, tid);
    }

    pub(super) fn go(&mut self, pid: i32, tid: i32, sig: i32, to_exit: bool) {
        self.about_to_run(pid, tid);
        if let Some(chan) = &self.channel {
            chan.give_way();
        }
        let _ = if to_exit {
            tracee::cont_to_syscall_exit(tid)
        } else {
            tracee::cont(tid, sig)
        };
    }

    pub(super) fn wait_initial_stop(&mut self, vtid: Vtid) -> std::io::Result<()> {
        let tid = self.sim.threads[&vtid].tid;
        while !self.sim.threads.get(&vtid).is_some_and(|t| t.started) {
            let (who, status) = self.wait_on(self.wait_target(vtid))?;
            if who == tid && is_event(status, libc::PTRACE_EVENT_STOP) {
                self.sim.threads.get_mut(&vtid).expect("thread").started = true;
            } else {
                self.handle_other(who, status);
            }
        }
        Ok(())
    }

    /// Handles stops until the thread `vtid` reaches its next scheduling point.
    pub(super) fn run_until_stopped(&mut self, vtid: Vtid) -> Result<(), launch::LaunchError> {
        loop {
            let event = self.next_event(vtid)?;
            self.unsettle_readiness();
            if self.is_own_event(vtid, &event) {
                if self.later_wakes.is_some() {
                    self.finish_later_wakes();
                }
                self.take_noted_wakes(vtid);
                self.take_stub_quiet_calls(vtid);
                if matches!(event, crate::fast_path::channel::Event::Stop(..)) {
                    self.give_back_held_mask(vtid);
                }
            }
            let (who, status) = match event {
                crate::fast_path::channel::Event::Stop(who, status) => (who, status),
                crate::fast_path::channel::Event::Request(req) => {
                    if let StepEnd::Done = self.on_request(vtid, req) {
                        self.step_ended();
                        return Ok(());
                    }
                    continue;
                }
                crate::fast_path::channel::Event::Notified(n) => {
                    if let StepEnd::Done = self.on_notification(vtid, n) {
                        self.step_ended();
                        return Ok(());
                    }
                    continue;
                }
            };
            let running_tid = self.sim.threads.get(&vtid).map(|t| t.tid);
            let end = if Some(who) == running_tid {
                self.handle_running(vtid, who, status)
            } else {
                self.handle_other(who, status);
                if self.sim.threads.contains_key(&vtid) {
                    StepEnd::Running
                } else {
                    StepEnd::Done
                }
            };
            if let StepEnd::Done = end {
                if self.group_exiting() {
                    continue;
                }
                self.group_exit = None;
                self.step_ended();
                return Ok(());
            }
        }
    }

    /// The running thread reached its scheduling point: wakes left from
    /// its answer ahead are made now at the latest, the watchdog stops
    /// watching it, and a SIGSTOP it sent too late is remembered, to be
    /// swallowed when it arrives.
    pub(super) fn step_ended(&mut self) {
        self.finish_later_wakes();
        if let Some(tid) = self.watchdog.idle() {
            self.stale_stops.insert(tid);
        }
    }

    /// Handles a stop of the running thread.
    pub(super) fn handle_running(&mut self, vtid: Vtid, tid: i32, status: i32) -> StepEnd {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.reap(tid, status);
            return StepEnd::Done;
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        match event {
            libc::PTRACE_EVENT_SECCOMP => self.decide_at_stop(vtid, tid),
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
            libc::PTRACE_EVENT_STOP if self.take_notified_redo(vtid) => {
                // The stop a notified call of a thread with held signals
                // asked for: the call, about to be made again, is decided
                // here as at its seccomp stop (rip past the syscall
                // instruction, the number in orig_rax).
                self.decide_at_stop(vtid, tid)
            }
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

    /// Decides the call the running thread is stopped at (its seccomp stop).
    fn decide_at_stop(&mut self, vtid: Vtid, tid: i32) -> StepEnd {
        match tracee::get_regs(tid) {
            Ok(regs) => {
                self.sim.threads.get_mut(&vtid).expect("thread").regs = regs;
                let args = crate::sim::memory::syscall_args(&regs);
                if let Some(v) = self.answer_quiet_call(vtid, regs.orig_rax as i64, &args) {
                    super::dispatch::return_in_place(tid, regs, v);
                    return StepEnd::Running;
                }
                if !self.dispatch(vtid, regs, Peek::default(), None) {
                    return StepEnd::Running;
                }
                self.patch_libc_site(vtid, &regs, false);
            }
            Err(_) => self.mark_dying(vtid),
        }
        StepEnd::Done
    }

    /// Handles a stop of a thread other than the running one: new threads'
    /// first stops, and threads dying because their process is exiting.
    pub(super) fn handle_other(&mut self, tid: i32, status: i32) {
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            self.reap(tid, status);
            return;
        }
        let Some(&vtid) = self.sim.by_tid.get(&tid) else {
            if is_event(status, libc::PTRACE_EVENT_STOP) {
                self.early_stops.insert(tid);
            } else {
                let _ = tracee::cont(tid, 0);
            }
            return;
        };
        if is_event(status, libc::PTRACE_EVENT_STOP) && !self.sim.threads[&vtid].started {
            self.sim.threads.get_mut(&vtid).expect("thread").started = true;
        } else if is_event(status, libc::PTRACE_EVENT_EXIT) {
            self.mark_dying(vtid);
            let _ = tracee::cont(tid, 0);
        } else {
            // Anything else from a thread we did not resume: let it go on dying.
            let _ = tracee::cont(tid, 0);
        }
    }
}

pub(super) fn is_event(status: i32, event: i32) -> bool {
    libc::WIFSTOPPED(status) && (status >> 16) & 0xff == event
}
