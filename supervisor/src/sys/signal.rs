//! Signals. Sending passes to the kernel (only to traced processes); a parked
//! target is then woken at the next scheduling point — with EINTR, or by
//! re-executing its call when the handler has SA_RESTART — so signals arrive
//! at deterministic points. Which signals are pending the host tells
//! (`HostProbe::signals`); the engine's wake scan asks `signal_wakeup`.

use super::{Action, Call};
use crate::sim::host_probe::{HostProbe, SigStatus};
use crate::sim::memory::Memory;
use crate::sim::state::{Kill, Sim};
use crate::sim::vclock::Timespec;
use crate::sim::world::{resume_label, Resume, ThreadState, Vtid, Wait, WaitKind};

const SA_RESTART: u64 = 0x1000_0000;

/// Signals whose default action is to ignore them.
const DEFAULT_IGNORED: u64 =
    bit(libc::SIGCHLD) | bit(libc::SIGURG) | bit(libc::SIGWINCH) | bit(libc::SIGCONT);

const fn bit(sig: i32) -> u64 {
    1 << (sig - 1)
}

impl SigStatus {
    /// Pending signals that would be delivered with `mask` blocked.
    fn deliverable(&self, mask: Option<u64>) -> u64 {
        let ignored = self.ignored | (DEFAULT_IGNORED & !self.caught);
        (self.thread_pending | self.shared_pending) & !mask.unwrap_or(self.blocked) & !ignored
    }
}

impl Sim {
    /// A write found no reader: EPIPE, and SIGPIPE raised on the writing
    /// thread (host thread `tid` of `pid`) unless `quiet` (MSG_NOSIGNAL),
    /// as Linux does for sockets and pipes.
    pub(super) fn broken_pipe(&mut self, pid: i32, tid: i32, quiet: bool) -> Action {
        if !quiet {
            // SAFETY: a signal to a thread of a process faultline traces.
            unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGPIPE) };
            self.signals_raised += 1;
            self.descriptors_changed();
        }
        super::err(libc::EPIPE)
    }

    /// kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo: passed to
    /// the kernel, and noted for the engine (`signals_let_go`), when every
    /// target is inside the simulation; refused otherwise.
    pub(super) fn sys_kill(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
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
        let ns_root = self.procs[&c.pid].ns_root;
        let by_ns = self
            .procs
            .values()
            .find(|p| p.ns_root == ns_root && p.ns_pid == target)
            .map(|p| p.pid);
        let root_group = -self.procs.get(&ns_root).map_or(0, |p| p.ns_pid);
        let targets: Vec<i32> = if let (true, Some(host)) = (target > 0, by_ns) {
            vec![host]
        } else if c.nr == libc::SYS_kill && (target == 0 || target == root_group) {
            let mut all: Vec<i32> = self
                .procs
                .values()
                .filter(|p| p.ns_root == ns_root)
                .map(|p| p.pid)
                .collect();
            all.sort_unstable();
            all
        } else {
            return self.unsupported(
                c,
                "signals may only go to processes inside the simulation",
                libc::EPERM,
            );
        };
        targs.extend(targets.iter().map(|p| self.procs[p].vpid as i64));
        self.signals_let_go.push(Kill { sig, targets });
        super::pass()
    }

    fn ns_pid_of_tid(&self, caller: i32, ns_tid: i32) -> Option<i32> {
        let ns_root = self.procs.get(&caller)?.ns_root;
        let same_ns = |t: &&crate::sim::world::Thread| {
            self.procs.get(&t.pid).is_some_and(|p| p.ns_root == ns_root)
        };
        let t = self
            .threads
            .values()
            .filter(same_ns)
            .find(|t| t.ns_tid == ns_tid)?;
        self.procs.get(&t.pid).map(|p| p.ns_pid)
    }

    /// rt_sigaction: remember which handlers restart interrupted calls.
    pub(super) fn sys_sigaction(&mut self, c: &Call<impl Memory>) -> Action {
        let sig = c.a[0] as i32;
        if c.a[1] != 0 && (1..=64).contains(&sig) {
            if let Ok([_handler, flags]) = c.mem().read_val::<[u64; 2]>(c.a[1]) {
                let p = self.procs.get_mut(&c.pid).expect("process");
                if flags & SA_RESTART != 0 {
                    p.restart_mask |= bit(sig);
                } else {
                    p.restart_mask &= !bit(sig);
                }
            }
        }
        super::pass()
    }

    /// pause, rt_sigsuspend, rt_sigtimedwait: park until a signal is pending.
    pub(super) fn sys_sigwait(&mut self, c: &Call<impl Memory>, host: &impl HostProbe) -> Action {
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
                        Some(ns) => {
                            Some(self.timer_end(c.vtid, self.clock.now().saturating_add(ns)))
                        }
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
        if let Some(r) = self.signal_wakeup(host, c.pid, c.tid, &wait, &mut 0) {
            return Action::Now(r);
        }
        Action::Park(wait)
    }

    /// Wakes the parked threads of process `pid` (memory `mem`) that a
    /// pending signal interrupts, in thread order: a process-directed
    /// signal interrupts one thread, not all. An interrupted sleep learns
    /// the time it had left.
    pub(crate) fn wake_signalled(&mut self, host: &impl HostProbe, mem: &impl Memory, pid: i32) {
        let parked: Vec<(Vtid, i32, Wait)> = self
            .threads
            .values()
            .filter(|t| t.pid == pid)
            .filter_map(|t| match &t.state {
                ThreadState::Parked(w) => Some((t.vtid, t.tid, w.clone())),
                _ => None,
            })
            .collect();
        let mut shared_taken = 0u64;
        for (vtid, tid, wait) in parked {
            let Some(resume) = self.signal_wakeup(host, pid, tid, &wait, &mut shared_taken) else {
                continue;
            };
            self.unpark(vtid, &wait.kind);
            if let (WaitKind::Sleep { rem }, Some(deadline)) = (&wait.kind, wait.deadline) {
                let left = deadline.saturating_sub(self.clock.now());
                if *rem != 0 {
                    let _ = mem.write_val(*rem, &Timespec::from_ns(left as i128));
                }
            }
            self.record(vtid, "interrupted", &[], resume_label(&resume));
            self.threads.get_mut(&vtid).expect("thread").state = ThreadState::Ready(resume);
        }
    }

    /// How a thread in `wait` resumes given its pending signals, if it does.
    pub(crate) fn signal_wakeup(
        &self,
        host: &impl HostProbe,
        pid: i32,
        tid: i32,
        wait: &Wait,
        shared_taken: &mut u64,
    ) -> Option<Resume> {
        let mut st = host.signals(pid, tid)?;
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
                let restart_mask = self.procs.get(&pid).map_or(0, |p| p.restart_mask);
                let lowest = d & d.wrapping_neg();
                if wait.restartable && restart_mask & lowest != 0 {
                    Some(Resume::Restart)
                } else {
                    Some(Resume::Return(-(libc::EINTR as i64)))
                }
            }
        }
    }

    /// The signal mask of a thread waiting on the fast path's channel (the
    /// library blocks everything while it waits; this is the mask that
    /// counts).
    fn channel_mask(&self, tid: i32) -> Option<u64> {
        let vtid = self.by_tid.get(&tid)?;
        self.threads.get(vtid)?.channel_wait.map(|r| r.mask)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, parked, returned, world, zeroed, FakeHost, PID, VTID};
    use super::super::Action;
    use super::{bit, Kill};
    use crate::sim::host_probe::SigStatus;
    use crate::sim::memory::Memory;
    use crate::sim::vclock::{Timespec, NS};
    use crate::sim::world::{Process, Resume, Thread, ThreadState, Wait, WaitKind};

    const SET: u64 = 0x1000;
    const SPEC: u64 = 0x1100;

    /// A thread with `pending` signals for it and `blocked` ones.
    fn pending(pending: u64, blocked: u64) -> FakeHost {
        FakeHost::default().signals(SigStatus {
            thread_pending: pending,
            blocked,
            ..SigStatus::default()
        })
    }

    #[test]
    fn sigsuspend_parks_until_a_signal_its_mask_lets_through_is_pending() {
        let mut sim = world();
        let mem = zeroed(SET, 8);
        mem.write_val(SET, &bit(libc::SIGUSR1)).unwrap();
        let c = call(libc::SYS_rt_sigsuspend, [SET, 8, 0, 0, 0, 0], mem);
        let usr1 = bit(libc::SIGUSR1);
        let w = parked(sim.sys_sigwait(&c, &pending(usr1, 0)));
        assert!(matches!(w.kind, WaitKind::Signal { mask: Some(m), set: None } if m == usr1));
        assert_eq!(w.deadline, None);
        let usr2 = bit(libc::SIGUSR2);
        let Action::Now(Resume::Pass) = sim.sys_sigwait(&c, &pending(usr2, usr2)) else {
            panic!("a signal the mask lets through is not delivered");
        };
    }

    #[test]
    fn sigtimedwait_parks_with_its_deadline_and_times_out_with_eagain() {
        let mut sim = world();
        let mem = zeroed(SET, 0x200);
        mem.write_val(SET, &bit(libc::SIGUSR1)).unwrap();
        mem.write_val(SPEC, &Timespec { sec: 3, nsec: 0 }).unwrap();
        let c = call(libc::SYS_rt_sigtimedwait, [SET, 0, SPEC, 8, 0, 0], mem);
        let now = sim.clock.now();
        let w = parked(sim.sys_sigwait(&c, &pending(0, 0)));
        assert_eq!(w.deadline, Some(now + 3 * NS));
        assert!(matches!(w.on_timeout, Resume::Return(e) if e == -(libc::EAGAIN as i64)));
        // A blocked signal in the set is taken at once.
        let usr1 = bit(libc::SIGUSR1);
        let Action::Now(Resume::Pass) = sim.sys_sigwait(&c, &pending(usr1, usr1)) else {
            panic!("a pending signal of the set is not taken");
        };
    }

    #[test]
    fn a_signal_interrupts_a_wait_or_restarts_it_under_sa_restart() {
        let mut sim = world();
        let wait = Wait {
            kind: WaitKind::Child,
            deadline: None,
            on_timeout: Resume::Pass,
            restartable: true,
        };
        let wait = Wait {
            kind: WaitKind::Sleep { rem: 0 },
            ..wait
        };
        let usr1 = bit(libc::SIGUSR1);
        let wake = |sim: &crate::sim::state::Sim, host: &FakeHost| {
            sim.signal_wakeup(host, PID, PID, &wait, &mut 0)
        };
        assert!(matches!(
            wake(&sim, &pending(usr1, 0)),
            Some(Resume::Return(e)) if e == -(libc::EINTR as i64)
        ));
        assert!(wake(&sim, &pending(usr1, usr1)).is_none(), "blocked");
        let chld = bit(libc::SIGCHLD);
        assert!(
            wake(&sim, &pending(chld, 0)).is_none(),
            "ignored by default"
        );
        // rt_sigaction(SIGUSR1, {handler, SA_RESTART}).
        let mem = zeroed(SET, 16);
        mem.write_val(SET, &[1u64, super::SA_RESTART]).unwrap();
        let c = call(
            libc::SYS_rt_sigaction,
            [libc::SIGUSR1 as u64, SET, 0, 8, 0, 0],
            mem,
        );
        let Action::Now(Resume::Pass) = sim.sys_sigaction(&c) else {
            panic!("sigaction not passed");
        };
        assert!(matches!(
            wake(&sim, &pending(usr1, 0)),
            Some(Resume::Restart)
        ));
    }

    #[test]
    fn kill_goes_to_the_callers_namespace_only() {
        let mut sim = world();
        let host = sim.procs[&PID].host;
        // A child in the namespace (pid 2 there), and a process of another.
        let child = Process {
            ns_pid: 2,
            ns_root: PID,
            ..Process::new(200, host, 2, 2, 0)
        };
        sim.procs.insert(200, child);
        sim.procs.insert(300, Process::new(300, host, 3, 3, 0));
        // kill(target, SIGTERM): what it answers, and what it let go.
        let kill = |sim: &mut crate::sim::state::Sim, target: i32| {
            let term = libc::SIGTERM as u64;
            let c = call(
                libc::SYS_kill,
                [target as u64, term, 0, 0, 0, 0],
                zeroed(SET, 8),
            );
            let answer = match sim.sys_kill(&c, &mut vec![]) {
                Action::Now(Resume::Pass) => None,
                refused => Some(returned(refused)),
            };
            (answer, std::mem::take(&mut sim.signals_let_go))
        };
        let sent = |targets: Vec<i32>| {
            let sig = libc::SIGTERM;
            (None, vec![Kill { sig, targets }])
        };
        assert_eq!(kill(&mut sim, 2), sent(vec![200]));
        assert_eq!(kill(&mut sim, 0), sent(vec![PID, 200]));
        let eperm = -(libc::EPERM as i64);
        assert_eq!(kill(&mut sim, 300), (Some(eperm), vec![]), "outside");
        let reported = std::mem::take(&mut sim.diagnostics).into_list();
        assert_eq!(reported.len(), 1, "reported");
    }

    #[test]
    fn a_process_directed_signal_interrupts_one_sleeper_which_learns_its_time_left() {
        let mut sim = world();
        let rem = SPEC;
        let second = Thread::new(VTID + 1, PID, PID + 1, 2);
        sim.threads.insert(VTID + 1, second);
        let now = sim.clock.now();
        for vtid in [VTID, VTID + 1] {
            let wait = Wait {
                kind: WaitKind::Sleep { rem },
                deadline: Some(now + 5 * NS),
                on_timeout: Resume::Return(0),
                restartable: false,
            };
            sim.threads.get_mut(&vtid).unwrap().state = ThreadState::Parked(wait);
        }
        sim.clock.advance_to(now + 2 * NS);
        let term = FakeHost::default().signals(SigStatus {
            shared_pending: bit(libc::SIGTERM),
            ..SigStatus::default()
        });
        let mem = zeroed(SPEC, 16);
        sim.wake_signalled(&term, &mem, PID);
        let eintr = -(libc::EINTR as i64);
        assert!(matches!(
            sim.threads[&VTID].state,
            ThreadState::Ready(Resume::Return(e)) if e == eintr
        ));
        assert!(matches!(
            sim.threads[&(VTID + 1)].state,
            ThreadState::Parked(_)
        ));
        assert_eq!(mem.read_val::<Timespec>(rem).unwrap().to_ns(), Some(3 * NS));
    }
}
