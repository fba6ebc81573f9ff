//! The engine's end of the notification path (`host::notify`): a notified
//! call is dispatched exactly as the trapped call would be (the same
//! handler, trace event and scheduling point), and answered through the
//! listener when the thread is next resumed.

use super::*;
use crate::fast_path::channel::Event;
use crate::host::notify::{Answer, Next, Notification};
use crate::host::tracee;
use crate::sim::host_probe::HostProbe;
use crate::sim::peek::Peek;

impl Supervisor {
    /// The launch spec with the notifying filter, when that path is on.
    pub(crate) fn with_notify_filter(&self, mut spec: LaunchSpec) -> LaunchSpec {
        if self.notify.is_some() {
            spec.notify_filter = Some(crate::sys::table::notify_filter());
        }
        spec
    }

    /// The next event of the running thread `vtid` if its calls are
    /// notified: a ptrace stop or a notified call. None if they are not.
    pub(crate) fn next_notified_event(&mut self, vtid: Vtid) -> std::io::Result<Option<Event>> {
        let (Some(notify), Some(th)) = (&self.notify, self.sim.threads.get(&vtid)) else {
            return Ok(None);
        };
        let (pid, tid) = (th.pid, th.tid);
        let Some(listener) = notify.listener(pid) else {
            return Ok(None);
        };
        if let Some((who, status)) = self.early_status.take() {
            return Ok(Some(Event::Stop(who, status)));
        }
        let who = self.wait_target(vtid);
        let notify = self.notify.as_mut().expect("notifier");
        Ok(Some(match notify.wait(who, tid, &listener)? {
            Next::Stop(who, status) => {
                self.stops += 1;
                Event::Stop(who, status)
            }
            Next::Call(n) => {
                self.fast_calls += 1;
                Event::Notified(n)
            }
        }))
    }

    /// The running thread `vtid` made the notified call `n`: decided like
    /// the trapped call (always a scheduling point, by the notified calls'
    /// contract). A thread whose signals are held since a preemption gets
    /// them back at a system call, which needs a ptrace stop: the call is
    /// sent back to be made again, and the thread stops before it makes
    /// it, where it is decided as at its seccomp stop.
    pub(crate) fn on_notification(&mut self, vtid: Vtid, n: Notification) -> StepEnd {
        let Some(th) = self.sim.threads.get_mut(&vtid) else {
            return StepEnd::Done;
        };
        let (pid, tid) = (th.pid, th.tid);
        if let Some(v) = self.answer_go_wake(vtid, n.nr, &n.args) {
            if let Some(l) = self.notify.as_ref().and_then(|x| x.listener(pid)) {
                l.answer(n.id, Answer::Return(v));
            }
            return StepEnd::Running;
        }
        let th = self.sim.threads.get_mut(&vtid).expect("thread");
        if th.held_mask.is_some() {
            th.notified_redo = true;
            let _ = tracee::interrupt(tid);
            if let Some(l) = self.notify.as_ref().and_then(|x| x.listener(pid)) {
                l.answer(n.id, Answer::Restart);
            }
            return StepEnd::Running;
        }
        th.notified = Some(n.id);
        let regs = self.regs_for_call(vtid, n.nr, n.args);
        if !self.dispatch(vtid, regs, Peek::default(), None) {
            // Notified calls are never answered in place; if one were, it
            // must not stay unanswered.
            eprintln!(
                "faultline: internal error: notified {} answered in place",
                crate::sys::table::name(n.nr)
            );
        }
        StepEnd::Done
    }

    /// Whether `vtid` was sent back to make its notified call again at a
    /// ptrace stop (and is now at it); clears the mark.
    pub(crate) fn take_notified_redo(&mut self, vtid: Vtid) -> bool {
        self.sim
            .threads
            .get_mut(&vtid)
            .is_some_and(|t| std::mem::take(&mut t.notified_redo))
    }

    /// Whether a signal is queued for thread `tid`, which waits on its
    /// notified call, not at a ptrace stop (so /proc says, not
    /// `PTRACE_PEEKSIGINFO`); true if that cannot be read.
    fn signal_queued(&self, pid: i32, tid: i32) -> bool {
        self.host_fds
            .signals(pid, tid)
            .is_none_or(|s| s.thread_pending | s.shared_pending != 0)
    }

    /// Resumes a thread waiting on its notified call `id` with what its
    /// handler decided. A wait re-decided with no signal due is decided
    /// again here, as the trapped call is; true if that answered it and
    /// the thread runs (false: it is at a scheduling point again).
    pub(crate) fn answer_notified(&mut self, vtid: Vtid, id: u64, resume: Resume) -> bool {
        let th = &self.sim.threads[&vtid];
        let (pid, tid, regs) = (th.pid, th.tid, th.regs);
        let answer = match resume {
            Resume::Return(v) => Answer::Return(v),
            Resume::Pass => Answer::Continue,
            Resume::Restart if !self.signal_queued(pid, tid) => {
                self.about_to_run(pid, tid);
                self.sim.threads.get_mut(&vtid).expect("thread").notified = Some(id);
                return !self.dispatch(vtid, regs, Peek::default(), None);
            }
            Resume::Restart => Answer::Restart,
            other => {
                eprintln!(
                    "faultline: internal error: {} for a notified call of thread {vtid}",
                    crate::sim::world::resume_label(&other)
                );
                Answer::Continue
            }
        };
        self.about_to_run(pid, tid);
        if let Some(l) = self.notify.as_ref().and_then(|x| x.listener(pid)) {
            l.answer(id, answer);
        }
        true
    }
}
