//! The engine's entry to the syscall handlers: a seccomp stop becomes a
//! `Call`, its family answers (on the simulation, with the host probes it
//! needs), the answer is recorded and applied to the thread, and what the
//! call left for the engine (signals let go, failed disk calls) is acted on.

use super::*;
use crate::fast_path::channel::SlotPokes;
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::{Memory, Regs};
use crate::sim::peek::{Peek, Peeked};
use crate::sim::poke::Poked;
use crate::sys::{table, Action, Call};

impl Supervisor {
    /// Passes on to the host side that the kernel may have changed a
    /// descriptor since the last probe (see `Sim::descriptors_changed`).
    pub(crate) fn tell_descriptor_changes(&mut self) {
        if std::mem::take(&mut self.sim.descriptors_touched) {
            self.host_fds.changed();
        }
    }

    /// Handles the seccomp stop of `vtid` with registers `regs` (and, for
    /// a channel request, the memory it came with, `peek`, and where the
    /// handler's writes into the caller's memory may wait for its stub,
    /// `pokes`). Returns false if the call was answered in place and the
    /// thread runs on (the step goes on), true if the thread reached a
    /// scheduling point.
    pub(crate) fn dispatch(
        &mut self,
        vtid: Vtid,
        regs: Regs,
        peek: Peek,
        pokes: Option<SlotPokes>,
    ) -> bool {
        // What the call decides may change what epoll waits find.
        self.unsettle_readiness();
        // A SIGKILL the caller's step sent has its effect before the call
        // is decided, not whenever the kernel delivers it (a failure to
        // wait shows at the run loop's next settle, which ends the run).
        let _ = self.settle_doomed();
        self.tell_descriptor_changes();
        let th = &self.sim.threads[&vtid];
        let process = Poked::new(crate::host::tracee::CallerMemory(th.pid), pokes);
        let mem = Peeked::new(process, peek);
        let call = Call::at_stop(vtid, th.tid, th.pid, regs, mem);
        // Not the program's own calls, or not the same number of them on
        // every path: they pass without a trace event, and without giving
        // back signals held since a preemption.
        if self.library_call(&call) || self.proc_read_in_place(&call) {
            return false;
        }
        if let Some(v) = self.answer_go_wake(vtid, call.nr, &call.a) {
            return_in_place(call.tid, regs, v);
            return false;
        }
        self.release_signals(vtid, call.tid);
        let mut trace_args: Vec<i64> = Vec::new();
        let in_place = self.answers_in_place(&call);
        let action = self.sim.handle(&call, &self.host_fds, &mut trace_args);
        self.act_on_call_effects(call.tid);
        if let (true, Action::Now(Resume::Return(v))) = (in_place, &action) {
            return_in_place(call.tid, regs, *v);
            return false;
        }
        // A re-executed call's deadline is for that call only.
        self.sim
            .threads
            .get_mut(&vtid)
            .expect("thread")
            .restart_deadline = None;
        let label = match &action {
            Action::Now(r) => resume_label(r),
            Action::Park(_) => "park".to_string(),
        };
        self.sim
            .record(vtid, table::name(call.nr), &trace_args, label);
        let state = match action {
            Action::Now(r) => ThreadState::Ready(r),
            Action::Park(w) => {
                if matches!(w.kind, WaitKind::Net { .. }) {
                    self.sim.net_parks += 1;
                }
                ThreadState::Parked(w)
            }
        };
        self.sim.threads.get_mut(&vtid).expect("thread").state = state;
        true
    }

    /// Acts on what the call of thread `tid` just handled left for the
    /// engine: the disk calls vfs failed go to the fault log, and the
    /// targets of the signals it let go (sent when the thread next runs)
    /// are watched.
    fn act_on_call_effects(&mut self, tid: i32) {
        self.log_failed_disk_calls();
        self.signal_generation += std::mem::take(&mut self.sim.signals_raised);
        for kill in std::mem::take(&mut self.sim.signals_let_go) {
            for pid in kill.targets {
                self.signal_sent(pid, kill.sig, Some(tid));
            }
        }
    }

    /// A read of a /proc file (see `Sim::is_proc_read`) runs on in place.
    /// True if `c` was one.
    fn proc_read_in_place(&mut self, c: &Call<impl Memory>) -> bool {
        let on_proc = self.sim.is_proc_read(c);
        if on_proc {
            let _ = crate::host::tracee::cont(c.tid, 0);
        }
        on_proc
    }
}

impl Supervisor {
    /// The registers a call `nr(args)` made without a ptrace stop (over the
    /// channel, or notified) is dispatched with: the thread's last known
    /// ones with the call put in, kept as its registers too.
    pub(crate) fn regs_for_call(&mut self, vtid: Vtid, nr: i64, args: [u64; 6]) -> Regs {
        let th = self.sim.threads.get_mut(&vtid).expect("running thread");
        th.regs.orig_rax = nr as u64;
        [
            th.regs.rdi,
            th.regs.rsi,
            th.regs.rdx,
            th.regs.r10,
            th.regs.r8,
            th.regs.r9,
        ] = args;
        th.regs
    }
}

/// Skips the call `tid` is stopped at, makes it return `v`, and lets the
/// thread run on: a call answered without a scheduling point.
pub(crate) fn return_in_place(tid: i32, mut regs: Regs, v: i64) {
    regs.orig_rax = u64::MAX;
    regs.rax = v as u64;
    if crate::host::tracee::set_regs(tid, &regs).is_ok() {
        let _ = crate::host::tracee::cont(tid, 0);
    }
}
