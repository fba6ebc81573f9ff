//! Signals. Sending passes to the kernel (only to traced processes); a parked
//! target is then woken at the next scheduling point — with EINTR, or by
//! re-executing its call when the handler has SA_RESTART — so signals arrive
//! at deterministic points.

use super::{pass, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::sim::vclock::Timespec;
use crate::sim::world::{Resume, ThreadState, Vtid, Wait, WaitKind};

const SA_RESTART: u64 = 0x1000_0000;

/// Signals whose default action is to ignore them.
const DEFAULT_IGNORED: u64 =
    bit(libc::SIGCHLD) | bit(libc::SIGURG) | bit(libc::SIGWINCH) | bit(libc::SIGCONT);

const fn bit(sig: i32) -> u64 {
    1 << (sig - 1)
}

/// The signal words of /proc/PID/task/TID/status.
#[derive(Default)]
struct SigStatus {
    thread_pending: u64,
    shared_pending: u64,
    blocked: u64,
    ignored: u64,
    caught: u64,
}

fn sig_status(pid: i32, tid: i32) -> Option<SigStatus> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).ok()?;
    let mut s = SigStatus::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = u64::from_str_radix(v.trim(), 16).unwrap_or(0);
        match k {
            "SigPnd" => s.thread_pending = v,
            "ShdPnd" => s.shared_pending = v,
            "SigBlk" => s.blocked = v,
            "SigIgn" => s.ignored = v,
            "SigCgt" => s.caught = v,
            _ => {}
        }
    }
    Some(s)
}

impl SigStatus {
    /// Pending signals that would be delivered with `mask` blocked.
    fn deliverable(&self, mask: Option<u64>) -> u64 {
        let ignored = self.ignored | (DEFAULT_IGNORED & !self.caught);
        (self.thread_pending | self.shared_pending) & !mask.unwrap_or(self.blocked) & !ignored
    }
}

impl Supervisor {
    /// kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo.
    pub(super) fn sys_kill(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        // Targets are ids as the program sees them (its PID namespace).
        let (target, sig) = match c.nr {
            libc::SYS_kill | libc::SYS_rt_sigqueueinfo => (c.a[0] as i32, c.a[1] as i32),
            libc::SYS_tkill => (
                self.ns_pid_of_tid(c.pid, c.a[0] as i32).unwrap_or(-1),
                c.a[1] as i32,
            ),
            _ => (c.a[0] as i32, c.a[2] as i32),
        };
        targs.push(sig as i64);
        // Ids are per node: only processes in the caller's namespace match.
        let ns_root = self.sim.procs[&c.pid].ns_root;
        let by_ns = self
            .sim
            .procs
            .values()
            .find(|p| p.ns_root == ns_root && p.ns_pid == target)
            .map(|p| p.pid);
        let root_group = -self.sim.procs.get(&ns_root).map_or(0, |p| p.ns_pid);
        let targets: Vec<i32> = if let (true, Some(host)) = (target > 0, by_ns) {
            vec![host]
        } else if c.nr == libc::SYS_kill && (target == 0 || target == root_group) {
            let mut all: Vec<i32> = self
                .sim
                .procs
                .values()
                .filter(|p| p.ns_root == ns_root)
                .map(|p| p.pid)
                .collect();
            all.sort_unstable();
            all
        } else {
            return self.sim.unsupported(
                c,
                "signals may only go to processes inside the simulation",
                libc::EPERM,
            );
        };
        targs.extend(targets.iter().map(|p| self.sim.procs[p].vpid as i64));
        if sig == libc::SIGKILL {
            for &p in &targets {
                self.waits.doom(p);
            }
        }
        self.signal_checks.extend(targets);
        pass()
    }

    fn ns_pid_of_tid(&self, caller: i32, ns_tid: i32) -> Option<i32> {
        let ns_root = self.sim.procs.get(&caller)?.ns_root;
        let same_ns = |t: &&crate::sim::world::Thread| {
            self.sim
                .procs
                .get(&t.pid)
                .is_some_and(|p| p.ns_root == ns_root)
        };
        let t = self
            .sim
            .threads
            .values()
            .filter(same_ns)
            .find(|t| t.ns_tid == ns_tid)?;
        self.sim.procs.get(&t.pid).map(|p| p.ns_pid)
    }

    /// rt_sigaction: remember which handlers restart interrupted calls.
    pub(super) fn sys_sigaction(&mut self, c: &Call) -> Action {
        let sig = c.a[0] as i32;
        if c.a[1] != 0 && (1..=64).contains(&sig) {
            if let Ok([_handler, flags]) = c.mem().read_val::<[u64; 2]>(c.a[1]) {
                let p = self.sim.procs.get_mut(&c.pid).expect("process");
                if flags & SA_RESTART != 0 {
                    p.restart_mask |= bit(sig);
                } else {
                    p.restart_mask &= !bit(sig);
                }
            }
        }
        pass()
    }

    /// pause, rt_sigsuspend, rt_sigtimedwait: park until a signal is pending.
    pub(super) fn sys_sigwait(&mut self, c: &Call) -> Action {
        let (mask, set, deadline) = match c.nr {
            libc::SYS_pause => (None, None, None),
            libc::SYS_rt_sigsuspend => (c.mem().read_val::<u64>(c.a[0]).ok(), None, None),
            _ => {
                let deadline = if c.a[2] == 0 {
                    None
                } else {
                    match c
                        .mem()
                        .read_val::<Timespec>(c.a[2])
                        .ok()
                        .and_then(|t| t.to_ns())
                    {
                        Some(ns) => Some(self.sim.clock.now().saturating_add(ns)),
                        None => return super::err(libc::EINVAL),
                    }
                };
                (None, c.mem().read_val::<u64>(c.a[0]).ok(), deadline)
            }
        };
        let wait = Wait {
            kind: WaitKind::Signal { mask, set },
            deadline,
            on_timeout: Resume::Return(-(libc::EAGAIN as i64)),
            restartable: false,
        };
        if let Some(r) = self.signal_wakeup(c.pid, c.tid, &wait, &mut 0) {
            return Action::Now(r);
        }
        Action::Park(wait)
    }

    /// Wakes parked threads of processes that may have been sent a signal.
    pub(crate) fn check_signals(&mut self) {
        while let Some(pid) = self.signal_checks.pop_first() {
            let parked: Vec<(Vtid, i32, Wait)> = self
                .sim
                .threads
                .values()
                .filter(|t| t.pid == pid)
                .filter_map(|t| match &t.state {
                    ThreadState::Parked(w) => Some((t.vtid, t.tid, w.clone())),
                    _ => None,
                })
                .collect();
            // Process-directed signals interrupt one thread, not all.
            let mut shared_taken = 0u64;
            for (vtid, tid, wait) in parked {
                if let Some(resume) = self.signal_wakeup(pid, tid, &wait, &mut shared_taken) {
                    self.unpark(vtid, &wait.kind);
                    if let (WaitKind::Sleep { rem }, Some(deadline)) = (&wait.kind, wait.deadline) {
                        let left = deadline.saturating_sub(self.sim.clock.now());
                        if *rem != 0 {
                            let _ = tracee::Process(pid)
                                .write_val(*rem, &Timespec::from_ns(left as i128));
                        }
                    }
                    self.sim.record(
                        vtid,
                        "interrupted",
                        &[],
                        &crate::engine::resume_label(&resume),
                    );
                    self.sim.threads.get_mut(&vtid).expect("thread").state =
                        ThreadState::Ready(resume);
                }
            }
        }
    }

    /// How a thread in `wait` resumes given its pending signals, if it does.
    fn signal_wakeup(
        &self,
        pid: i32,
        tid: i32,
        wait: &Wait,
        shared_taken: &mut u64,
    ) -> Option<Resume> {
        let mut st = sig_status(pid, tid)?;
        if let Some(mask) = self.channel_mask(tid) {
            st.blocked = mask;
        }
        st.shared_pending &= !*shared_taken;
        match wait.kind {
            WaitKind::Signal { mask, set } => {
                let pending = st.thread_pending | st.shared_pending;
                if set.is_some_and(|s| pending & s != 0) || st.deliverable(mask) != 0 {
                    *shared_taken |= st.shared_pending;
                    return Some(Resume::Pass);
                }
                None
            }
            WaitKind::Vfork { .. } => None,
            _ => {
                let d = st.deliverable(None);
                if d == 0 {
                    return None;
                }
                *shared_taken |= d & st.shared_pending;
                if matches!(wait.kind, WaitKind::Child) {
                    return Some(Resume::Continue);
                }
                let restart_mask = self.sim.procs.get(&pid).map_or(0, |p| p.restart_mask);
                let lowest = d & d.wrapping_neg();
                if wait.restartable && restart_mask & lowest != 0 {
                    Some(Resume::Restart)
                } else {
                    Some(Resume::Return(-(libc::EINTR as i64)))
                }
            }
        }
    }
}
