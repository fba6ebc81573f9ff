//! Signal stops: the watchdog's preemptions (signals held until the next
//! system call), rdtsc traps answered from virtual time, and the signals a
//! program gets, with a crash report for fatal ones.

use super::*;
use crate::host::tracee;
use crate::sim::memory::Memory;
use crate::sim::world::*;

impl Supervisor {
    /// The kernel is let to send signal `sig` to process `pid`, now or,
    /// when `by` names the thread whose call sends it, when that thread
    /// next runs: its parked threads are checked at the scheduling point
    /// after that, and a SIGKILL dooms it.
    pub(crate) fn signal_sent(&mut self, pid: i32, sig: i32, by: Option<i32>) {
        if sig == libc::SIGKILL {
            match by {
                Some(tid) => self.waits.will_doom(tid, pid),
                None => self.waits.doom(pid),
            }
        }
        match by {
            Some(tid) => self.signal_senders.entry(tid).or_default().push(pid),
            None => self.signals_may_come(pid),
        }
    }

    /// The kernel may have sent process `pid` a signal: its parked threads
    /// are checked at the next scheduling point, and no channel wait is
    /// re-decided in place until its thread has run again.
    pub(crate) fn signals_may_come(&mut self, pid: i32) {
        self.signal_checks.insert(pid);
        self.signal_generation += 1;
    }

    /// Thread `tid` is resumed: if its call sends signals, the kernel sends
    /// them now, so their targets' parked threads are checked at the next
    /// scheduling point, after this step (before it, nothing was sent).
    pub(super) fn sender_runs(&mut self, tid: i32) {
        for pid in self.signal_senders.remove(&tid).unwrap_or_default() {
            self.signals_may_come(pid);
        }
    }

    /// Wakes parked threads of processes that may have been sent a signal.
    pub(crate) fn check_signals(&mut self) {
        while let Some(pid) = self.signal_checks.pop_first() {
            let mem = tracee::Process(pid);
            self.sim.wake_signalled(&self.host_fds, &mem, pid);
        }
    }

    /// `vtid` of process `pid` spins on something another thread must do (a
    /// lock holder, the last sweeper of a Go GC), most likely one of its own
    /// process: it waits until each of those has had a step.
    pub(super) fn give_way(&mut self, vtid: Vtid, pid: i32) {
        let owed = self.sim.siblings(vtid, pid).into_iter().collect();
        self.sim.sched.preempted(vtid, owed);
    }

    pub(super) fn on_signal(&mut self, vtid: Vtid, sig: i32) -> StepEnd {
        self.signal_generation += 1;
        let tid = self.sim.threads[&vtid].tid;
        let pid = self.sim.threads[&vtid].pid;
        if sig == libc::SIGSTOP && self.stale_stops.remove(&tid) {
            let _ = tracee::cont(tid, 0);
            return StepEnd::Running;
        }
        let preemption = (sig == libc::SIGSTOP)
            .then(|| self.watchdog.take_preemption(tid))
            .flatten();
        if let Some(preemption) = preemption {
            self.preemptions += 1;
            self.forget_spin_reads(pid);
            self.hold_signals(vtid, tid);
            self.give_way(vtid, pid);
            self.sim.record(vtid, "preempted", &[], "watchdog");
            let regs = tracee::get_regs(tid).ok();
            let rip = regs.map_or(0, |r| r.rip);
            let frames = regs.map_or_else(Vec::new, |r| frame_chain(pid, r.rbp));
            let p = &self.sim.procs[&pid];
            let how = if preemption.cpu >= self.cfg.spin_limit {
                "a spin loop?"
            } else {
                "blocked in the kernel, or starved of CPU by a loaded machine?"
            };
            let msg = format!(
                "the watchdog preempted thread {vtid} (process {} {:?}) at rip {rip:#x}{}: its process used {:.3}s of CPU in {:.3}s of wall time without a trapped syscall ({how} `addr2line -f -e PROGRAM {rip:#x}` names the function)",
                p.vpid,
                p.name,
                frames
                    .iter()
                    .map(|f| format!(" < {f:#x}"))
                    .collect::<String>(),
                preemption.cpu.as_secs_f64(),
                preemption.wall.as_secs_f64(),
            );
            self.sim
                .report_once(crate::sim::diagnostics::DiagKind::Preemption, msg);
            self.sim.threads.get_mut(&vtid).expect("thread").state =
                ThreadState::Ready(Resume::Continue);
            return StepEnd::Done;
        }
        if sig == libc::SIGTRAP {
            if let Some(end) = self.on_go_yield(vtid, tid, pid) {
                return end;
            }
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
            self.sim.threads.get_mut(&vtid).expect("thread").last_signal = Some(detail);
        }
        self.sim.record(vtid, "signal", &[sig as i64], "deliver");
        self.sim.threads.get_mut(&vtid).expect("thread").state =
            ThreadState::Ready(Resume::Signal(sig));
        StepEnd::Done
    }

    /// Blocks every signal of a thread the watchdog stopped at an arbitrary
    /// instruction (a pending Go preemption signal, say, would otherwise
    /// run its handler there, and Go decides by that instruction what to do).
    pub(super) fn hold_signals(&mut self, vtid: Vtid, tid: i32) {
        let th = self.sim.threads.get_mut(&vtid).expect("thread");
        if th.held_mask.is_some() {
            return;
        }
        if let Ok(mask) = tracee::sigmask(tid) {
            if tracee::set_sigmask(tid, HOLD_ALL).is_ok() {
                th.held_mask = Some(mask);
            }
        }
    }

    /// At a ptrace stop of `vtid`: the signal mask its patched Go runtime's
    /// stub left held after an answer (`ch::Slot::held`) is given back, so
    /// the stop sees, and the kernel delivers by, the program's own mask,
    /// as on a run without the fast path.
    pub(super) fn give_back_held_mask(&mut self, vtid: Vtid) {
        let (Some(chan), Some(th)) = (&self.channel, self.sim.threads.get(&vtid)) else {
            return;
        };
        let Some(slot) = th.gs_slot else {
            return;
        };
        if let Some(mask) = chan.take_held_mask(slot) {
            let _ = tracee::set_sigmask(th.tid, mask);
        }
    }

    /// At a system call of the program, a deterministic point: gives back
    /// the mask [`Self::hold_signals`] took, unless the program changed it
    /// since, and forgets the clock reads made since the preemption (how
    /// many the rest of the interrupted loop round made depends on where
    /// the watchdog stopped it).
    pub(crate) fn release_signals(&mut self, vtid: Vtid, tid: i32) {
        let Some(mask) = self
            .sim
            .threads
            .get_mut(&vtid)
            .and_then(|t| t.held_mask.take())
        else {
            return;
        };
        let pid = self.sim.threads[&vtid].pid;
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
    pub(super) fn emulate_rdtsc(&mut self, vtid: Vtid, tid: i32, pid: i32) -> Option<StepEnd> {
        let mut regs = tracee::get_regs(tid).ok()?;
        let mut insn = [0u8; 3];
        tracee::Process(pid).read_mem(regs.rip, &mut insn).ok()?;
        let len = match insn {
            [0x0f, 0x31, _] => 2,
            [0x0f, 0x01, 0xf9] => 3,
            _ => return None,
        };
        let in_loader = self.sim.procs[&pid]
            .interp
            .is_some_and(|(lo, hi)| (lo..hi).contains(&regs.rip));
        let tsc = self.sim.clock.tsc();
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
        self.sim.record(vtid, "rdtsc", &[], tsc.to_string());
        self.sim.threads.get_mut(&vtid).expect("thread").state =
            ThreadState::Ready(Resume::Continue);
        Some(StepEnd::Done)
    }
}

/// Every signal that can be blocked (the kernel drops SIGKILL and SIGSTOP
/// from any mask).
pub(crate) const HOLD_ALL: u64 = !((1 << (libc::SIGKILL - 1)) | (1 << (libc::SIGSTOP - 1)));

pub(super) fn fault_detail(tid: i32, sig: i32) -> String {
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

/// Return addresses of up to 6 callers, from the frame-pointer chain that
/// starts at `rbp` (Go keeps one; C built with frame pointers too): where a
/// preempted spin loop was called from. Stops at the first unreadable or
/// implausible link.
fn frame_chain(pid: i32, mut rbp: u64) -> Vec<u64> {
    let mut frames = Vec::new();
    while frames.len() < 6 && rbp != 0 && rbp.is_multiple_of(8) {
        let mem = tracee::Process(pid);
        let (Ok(next), Ok(ret)) = (mem.read_val::<u64>(rbp), mem.read_val::<u64>(rbp + 8)) else {
            break;
        };
        if ret == 0 || next <= rbp {
            break;
        }
        frames.push(ret);
        rbp = next;
    }
    frames
}
