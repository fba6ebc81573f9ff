//! Whom the engine waits for. `waitpid(-1)` makes the kernel scan every
//! tracee on each stop; `waitpid(tid)` finds the one thread at once. Only
//! the running thread changes state while the others sit in ptrace stops,
//! except when a SIGKILL wakes them: an exit or exec of a whole process, or
//! a signal call. Around those the engine waits on any tracee; their stops
//! are handled by `handle_other` when they come. Processes sent a SIGKILL
//! are waited for before the next decision (`settle_doomed`), so their
//! deaths come at the same point of every run.

use std::collections::{BTreeMap, BTreeSet};

use super::Supervisor;
use crate::host::fdprobe;
use crate::sim::memory::Regs;
use crate::sim::world::Vtid;

/// What may change state besides the running thread.
#[derive(Debug, Default)]
pub(crate) struct WaitScope {
    /// The running step may stop or kill other threads: it exits or execs,
    /// or it passes a signal call to the kernel.
    wide_step: bool,
    /// Processes sent a SIGKILL and not yet reaped (host pids).
    doomed: BTreeSet<i32>,
    /// Processes a thread's call will send a SIGKILL to when that thread
    /// next runs (by the caller's host tid): the call was decided, not yet
    /// made.
    to_doom: BTreeMap<i32, Vec<i32>>,
}

impl WaitScope {
    /// A new step of thread `tid` of `pid` starts; `passing` holds the
    /// registers of the call it passes to the kernel, if any.
    pub(crate) fn step_starts(&mut self, pid: i32, tid: i32, passing: Option<&Regs>) {
        let decided = self.to_doom.remove(&tid).unwrap_or_default();
        // A SIGKILL only to other processes leaves this step narrow: their
        // deaths wait in the kernel until the next decision settles them
        // (`settle_doomed`), so they come at the same point of every run.
        // Reaped during the step, a death would reach its parent (SIGCHLD)
        // before or after the killer's next call, as wall time had it.
        let kills_others_only = !decided.is_empty() && !decided.contains(&pid);
        if passing.is_some() {
            self.doomed.extend(decided);
        }
        let nr = passing.map_or(-1, |r| r.orig_rax as i64);
        if nr == libc::SYS_pidfd_send_signal {
            let regs = passing.expect("passed call");
            if regs.rsi as i32 == libc::SIGKILL {
                // The step waits wide anyway; the target's later stops
                // need the next steps to, until it is reaped.
                if let Some(target) = fdprobe::pidfd_target(pid, regs.rdi as i32) {
                    self.doom(target);
                }
            }
        }
        self.wide_step = !kills_others_only
            && matches!(
                nr,
                libc::SYS_execve
                    | libc::SYS_execveat
                    | libc::SYS_kill
                    | libc::SYS_tkill
                    | libc::SYS_tgkill
                    | libc::SYS_rt_sigqueueinfo
                    | libc::SYS_rt_tgsigqueueinfo
                    | libc::SYS_pidfd_send_signal
            );
    }

    /// The running thread is exiting: its process's other threads may be
    /// dying too, and a leader is reaped only after them.
    pub(crate) fn running_exits(&mut self) {
        self.wide_step = true;
    }

    /// `pid` was sent a SIGKILL: the next steps wait wide until it is reaped.
    pub(crate) fn doom(&mut self, pid: i32) {
        self.doomed.insert(pid);
    }

    /// The call of thread `tid` will send `pid` a SIGKILL when the thread
    /// next runs: `pid` is doomed from then on.
    pub(crate) fn will_doom(&mut self, tid: i32, pid: i32) {
        self.to_doom.entry(tid).or_default().push(pid);
    }

    /// Drops the doomed processes that `alive` says are gone.
    pub(crate) fn forget(&mut self, alive: impl Fn(i32) -> bool) {
        self.doomed.retain(|&p| alive(p));
    }

    fn wide(&self) -> bool {
        self.wide_step
    }

    /// Whether a process was sent a SIGKILL and is not reaped yet.
    pub(super) fn any_doomed(&self) -> bool {
        !self.doomed.is_empty()
    }
}

impl Supervisor {
    /// The `waitpid` target while `vtid` runs: its tid, or -1 (any tracee)
    /// while other threads may change state by themselves.
    pub(crate) fn wait_target(&self, vtid: Vtid) -> i32 {
        match self.sim.threads.get(&vtid) {
            Some(t) if self.group_exit.is_none() && !self.waits.wide() => t.tid,
            _ => -1,
        }
    }

    /// Waits until every process sent a SIGKILL is gone. The kernel kills
    /// it on its own time, so without this its end (and the wake-up of a
    /// parent waiting for it) would come at whichever scheduling point wall
    /// time put it at: a `kill(child, SIGKILL); waitpid(child)` could find
    /// the child still there, and the run would deadlock or let virtual
    /// time jump, differently from run to run. Called before every decision:
    /// a trapped call's and the run loop's.
    pub(crate) fn settle_doomed(&mut self) -> std::io::Result<()> {
        loop {
            let procs = &self.sim.procs;
            self.waits.forget(|p| procs.contains_key(&p));
            if !self.waits.any_doomed() {
                return Ok(());
            }
            let (who, status) = self.wait_on(-1)?;
            self.handle_other(who, status);
        }
    }

    /// waitpid(`who`, __WALL); counts the stop.
    pub(crate) fn wait_on(&mut self, who: i32) -> std::io::Result<(i32, i32)> {
        if let Some(early) = self.early_status.take() {
            return Ok(early);
        }
        loop {
            let mut status = 0;
            let r = unsafe { libc::waitpid(who, &mut status, libc::__WALL) };
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
}
