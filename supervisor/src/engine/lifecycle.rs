//! Processes and threads coming and going: launching a node's program,
//! clone/fork/vfork events, exec (new address space, auxv, vDSO), thread and
//! process exit, reaping, and the waiters those wake.

use super::run::status_ending;
use super::*;
use crate::host::launch::{self, LaunchSpec};
use crate::host::tracee;
use crate::scenario::plan::{FaultEvent, Scheduled};
use crate::sim::diskstate::NodeDisk;
use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::HostProbe;
use crate::sim::world::*;
use rand::Rng;

impl Supervisor {
    /// Starts a program on simulated host `host` and runs it to its first
    /// trapped call. `--signal-at` signals are armed for the first program.
    pub fn launch(&mut self, spec: &LaunchSpec, host: &str) -> Result<(), launch::LaunchError> {
        if !self.sim.net.hosts.contains_key(host) {
            return Err(launch::LaunchError::NoHost(host.to_string()));
        }
        if let Some((out, err)) = spec.output {
            self.sim.outputs.watch_fd(out, "stdout");
            self.sim.outputs.watch_fd(err, "stderr");
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
                self.sim.signal_timers.push(SignalTimer {
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

    /// Gives node `host` a simulated disk of `size` bytes, which the node
    /// sees at `visible`.
    pub fn add_disk(
        &mut self,
        name: &str,
        visible: std::path::PathBuf,
        disk: vfs::Disk,
        size: u64,
    ) -> Result<(), launch::LaunchError> {
        let host = *self
            .sim
            .net
            .hosts
            .get(name)
            .ok_or_else(|| launch::LaunchError::NoHost(name.to_string()))?;
        self.sim.disks.add(NodeDisk {
            node: name.to_string(),
            host,
            visible,
            disk,
            size,
        });
        Ok(())
    }

    /// Spawns root `i` (again) on its host.
    pub(super) fn start_root(&mut self, i: usize) -> Result<(), launch::LaunchError> {
        let (spec, host) = (self.roots[i].spec.clone(), self.roots[i].name.clone());
        let (pid, vtid) = self.spawn_on(&spec, &host)?;
        let root = &mut self.roots[i];
        root.pid = pid;
        root.status = None;
        self.run_until_stopped(vtid)
    }

    /// Spawns a program on simulated host `host`, stopped before its first
    /// step (run it with `run_until_stopped`); returns its host pid and
    /// thread.
    pub(super) fn spawn_on(
        &mut self,
        spec: &LaunchSpec,
        host: &str,
    ) -> Result<(i32, Vtid), launch::LaunchError> {
        let host_id = self.sim.net.hosts[host];
        let spec = self.launch_spec(spec);
        let spawned = launch::spawn(&self.with_notify_filter(spec), &mut self.spawner)?;
        let pid = spawned.pid;
        self.placement.place_new(pid);
        match (&mut self.notify, spawned.listener) {
            (Some(n), Some(l)) => n.adopt(pid, crate::host::notify::Listener::new(l)),
            (Some(n), None) if n.first_without_listener() => eprintln!(
                "faultline: warning: the kernel gave no seccomp listener \
                 (notifications need Linux 5.19): --notify is off, calls stop in ptrace"
            ),
            _ => {}
        }
        let mm = self.new_mm();
        self.add_process(pid, None, mm);
        self.sim.procs.get_mut(&pid).expect("new root").host = host_id;
        let vtid = self.add_thread(pid, pid);
        // A root's first stop is its exec event; it is "started" already.
        self.sim
            .threads
            .get_mut(&vtid)
            .expect("root thread")
            .started = true;
        Ok((pid, vtid))
    }

    pub(super) fn new_mm(&mut self) -> u32 {
        self.next_mm += 1;
        self.next_mm - 1
    }

    pub(super) fn add_process(&mut self, pid: i32, parent: Option<i32>, mm: u32) {
        let vpid = self.next_vpid;
        self.next_vpid += 1;
        let now = self.sim.clock.now();
        // A child starts with what it inherits from its parent.
        let process = match parent.and_then(|p| self.sim.procs.get(&p)) {
            Some(p) => Process {
                ns_root: p.ns_root,
                fds: p.fds.clone(),
                restart_mask: p.restart_mask,
                name: p.name.clone(),
                channel_user: p.channel_user,
                go_patched: p.go_patched,
                libc_stubs: p.libc_stubs.clone(),
                interp: p.interp,
                rlimits: p.rlimits.clone(),
                ..Process::new(pid, p.host, vpid, mm, now)
            },
            None => Process::new(pid, vnet::HostId::default(), vpid, mm, now),
        };
        for vs in process.fds.values().filter_map(|k| k.counted()) {
            self.sim.net.add_ref(vs);
        }
        if let Some(parent) = parent {
            self.sim.net.fork_epolls(parent, pid);
            let parent_mm = self.sim.procs[&parent].mm;
            if parent_mm != mm {
                self.inherit_clock_state(parent_mm, mm);
                self.go_yields.inherit(parent_mm, mm);
            }
        }
        self.host_fds.open(pid);
        if let (Some(n), Some(parent)) = (&mut self.notify, parent) {
            n.inherit(parent, pid);
        }
        self.sim.procs.insert(
            pid,
            Process {
                ns_pid: ns_id(pid, pid),
                parent,
                ..process
            },
        );
    }

    pub(super) fn add_thread(&mut self, pid: i32, tid: i32) -> Vtid {
        let vtid = self.next_vtid;
        self.next_vtid += 1;
        let node = self.sim.node_of(pid);
        self.sim.thread_nodes.insert(vtid, node);
        let started = self.early_stops.remove(&tid);
        self.sim.threads.insert(
            vtid,
            Thread {
                started,
                ..Thread::new(vtid, pid, tid, ns_id(pid, tid))
            },
        );
        self.sim.by_tid.insert(tid, vtid);
        vtid
    }

    /// Forgets a thread that is gone, and frees its channel slot.
    pub(super) fn remove_thread(&mut self, vtid: Vtid) -> Option<Thread> {
        let t = self.sim.threads.remove(&vtid)?;
        self.sim.cpu.thread_gone(vtid);
        self.sim.by_tid.remove(&t.tid);
        self.sim.sched.forget(vtid);
        self.release_slot(t.channel_slot);
        self.release_slot(t.gs_slot);
        Some(t)
    }

    pub(crate) fn mark_dying(&mut self, vtid: Vtid) {
        if let Some(t) = self.sim.threads.get(&vtid) {
            if let ThreadState::Parked(w) = t.state.clone() {
                self.sim.unpark(vtid, &w.kind);
            }
        }
        if let Some(t) = self.sim.threads.get_mut(&vtid) {
            t.state = ThreadState::Dying;
        }
    }

    /// A thread (or, for a leader, its whole process) has been reaped.
    pub(super) fn reap(&mut self, tid: i32, status: i32) {
        let Some(&vtid) = self.sim.by_tid.get(&tid) else {
            return;
        };
        let th = self.remove_thread(vtid).expect("thread of tid");
        if let ThreadState::Parked(w) = &th.state {
            self.sim.unpark(vtid, &w.kind);
        }
        if th.tid != th.pid {
            // A non-leader thread: wake joiners the way the kernel's
            // CLONE_CHILD_CLEARTID does, but on the emulated futex.
            if th.clear_tid != 0 {
                if let Some(mm) = self.sim.procs.get(&th.pid).map(|p| p.mm) {
                    self.sim.futex_wake((mm, th.clear_tid), 1, u32::MAX);
                }
            }
            return;
        }
        self.process_ended(th, status);
    }

    pub(super) fn process_ended(&mut self, leader: Thread, status: i32) {
        let pid = leader.pid;
        // Its children may get their parent-death signal.
        self.signal_generation += 1;
        // Threads the kernel reaped silently with their leader.
        let rest: Vec<Vtid> = self
            .sim
            .threads
            .values()
            .filter(|t| t.pid == pid)
            .map(|t| t.vtid)
            .collect();
        for v in rest {
            self.mark_dying(v);
            self.remove_thread(v);
        }
        let Some(p) = self.sim.procs.remove(&pid) else {
            return;
        };
        self.host_fds.close(pid);
        if let Some(n) = &mut self.notify {
            n.forget(pid);
        }
        // Its descriptors closed: a pipe's other end may now see EOF.
        self.sim.descriptors_changed();
        self.sim.cpu.process_gone(pid, p.parent);
        self.forget_mm(p.mm);
        self.sim.signal_timers.retain(|t| t.pid != pid);
        self.sim.posix_timers.retain(|&(p, _), _| p != pid);
        // Its descriptors close: peers of its sockets see FIN or RST, of
        // its pipe ends EOF or EPIPE.
        let now = self.sim.clock.now();
        for (&fd, kind) in &p.fds {
            if let Some(vs) = kind.counted() {
                self.sim.net.drop_ref(pid, fd, vs, now);
            }
            self.sim.net.drop_epoll(pid, fd);
        }
        self.sim.drop_unheld_timerfds();
        let desc = describe_status(status);
        self.sim.trace.record(
            self.sim.clock.now(),
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
            self.sim
                .report_once(crate::sim::diagnostics::DiagKind::Killed, msg);
        }
        if let Some(parent_tid) = p.vfork_parent {
            self.wake_vfork_parent(parent_tid);
        }
        let when = (self.sim.clock.now(), self.sim.trace.count());
        if self.probes.exited(pid, status) {
            return;
        }
        if let Some(root) = self.roots.iter_mut().find(|r| r.pid == pid) {
            root.status = Some(status);
            root.exited_at = Some(when);
            if let (Some(delay), false) = (root.restart_on_exit, root.down) {
                // Like a service manager: bring it back on the same disk.
                root.down = true;
                root.restarts += 1;
                let now = self.sim.clock.now();
                let mut events = vec![(now + delay, FaultEvent::Restart(root.name.clone()))];
                if root.reboot_on_exit {
                    events.push((now, FaultEvent::Reboot(root.name.clone())));
                }
                for (at, event) in events {
                    let i = self.plan.partition_point(|s| s.t <= at);
                    let event = Scheduled {
                        t: at,
                        event,
                        fault: None,
                    };
                    self.plan.insert(i, event);
                }
            }
            return;
        }
        if let Some(parent) = p.parent {
            self.wake_child_waiters(parent);
            self.signals_may_come(parent);
        }
    }

    pub(super) fn wake_child_waiters(&mut self, parent: i32) {
        for t in self.sim.threads.values_mut() {
            if t.pid == parent
                && matches!(&t.state, ThreadState::Parked(w) if matches!(w.kind, WaitKind::Child))
            {
                t.state = ThreadState::Ready(Resume::Continue);
            }
        }
    }

    pub(crate) fn wake_vfork_parent(&mut self, parent_tid: i32) {
        if let Some(&v) = self.sim.by_tid.get(&parent_tid) {
            let t = self.sim.threads.get_mut(&v).expect("thread");
            if matches!(&t.state, ThreadState::Parked(w) if matches!(w.kind, WaitKind::Vfork { .. }))
            {
                t.state = ThreadState::Ready(Resume::Continue);
            }
        }
    }

    pub(super) fn on_clone_event(&mut self, vtid: Vtid, event: i32) -> StepEnd {
        let th = &self.sim.threads[&vtid];
        let (tid, pid) = (th.tid, th.pid);
        let Ok(new_tid) = tracee::event_msg(tid).map(|m| m as i32) else {
            return StepEnd::Running;
        };
        let (flags, ctid) = self.sim.threads[&vtid]
            .pending_clone
            .unwrap_or(match event {
                libc::PTRACE_EVENT_VFORK => ((libc::CLONE_VM | libc::CLONE_VFORK) as u64, 0),
                _ => (libc::SIGCHLD as u64, 0),
            });
        let new_pid = if flags & libc::CLONE_THREAD as u64 != 0 {
            pid
        } else {
            let mm = if flags & libc::CLONE_VM as u64 != 0 {
                self.sim.procs[&pid].mm
            } else {
                self.new_mm()
            };
            self.add_process(new_tid, Some(pid), mm);
            new_tid
        };
        let new_vtid = self.add_thread(new_pid, new_tid);
        let timer_slack = self.sim.threads[&vtid].timer_slack;
        let child = self.sim.threads.get_mut(&new_vtid).expect("new thread");
        child.timer_slack = timer_slack;
        if flags & libc::CLONE_CHILD_CLEARTID as u64 != 0 {
            child.clear_tid = ctid;
        }
        let label = if new_pid == pid { "thread" } else { "process" };
        self.sim.record(vtid, "spawn", &[new_vtid as i64], label);
        if event == libc::PTRACE_EVENT_VFORK {
            self.sim
                .procs
                .get_mut(&new_pid)
                .expect("vfork child")
                .vfork_parent = Some(tid);
            self.sim.threads.get_mut(&vtid).expect("thread").state = ThreadState::Parked(Wait {
                kind: WaitKind::Vfork { child: new_tid },
                deadline: None,
                on_timeout: Resume::Continue,
                restartable: false,
            });
            return StepEnd::Done;
        }
        self.sim
            .threads
            .get_mut(&vtid)
            .expect("thread")
            .pending_clone = None;
        let _ = tracee::cont(tid, 0);
        StepEnd::Running
    }

    pub(super) fn on_exec(&mut self, vtid: Vtid) {
        let th = &self.sim.threads[&vtid];
        let (tid, pid) = (th.tid, th.pid);
        // Other threads of the process were killed by the exec.
        let others = self.sim.siblings(vtid, pid);
        for v in others {
            self.mark_dying(v);
            self.remove_thread(v);
        }
        if tid != pid {
            // A non-leader exec'd: it takes over the leader's tid.
            self.sim.by_tid.remove(&tid);
            self.sim.by_tid.insert(pid, vtid);
            self.sim.threads.get_mut(&vtid).expect("thread").tid = pid;
        }
        let mut random = [0u8; 16];
        self.sim.data_rng.fill(&mut random);
        let mm = self.new_mm();
        let rsp = tracee::get_regs(pid).map(|r| r.rsp).unwrap_or(0);
        let mut install = |base: u64| self.install_vdso(pid, mm, base);
        let image = crate::host::auxv::rewrite(pid, rsp, random, &mut install).unwrap_or_default();
        let name = image.name;
        self.forget_closed_on_exec(pid);
        let go = self.arm_go_yields(pid, mm, image.entry);
        let interp = crate::host::auxv::mapping_of_file_at(pid, image.interp_base);
        let p = self.sim.procs.get_mut(&pid).expect("exec'ing process");
        p.interp = interp;
        let old_mm = std::mem::replace(&mut p.mm, mm);
        p.restart_mask = 0;
        // The new image's loader opens the library again, if it is dynamic.
        p.channel_user = false;
        p.go_patched = false;
        p.libc_stubs = None;
        p.loader_fd = None;
        p.name = name.clone();
        let vfork_parent = p.vfork_parent.take();
        self.forget_mm(old_mm);
        let t = self.sim.threads.get_mut(&vtid).expect("thread");
        t.clear_tid = 0;
        let old_slots = [t.channel_slot.take(), t.gs_slot.take()];
        old_slots.into_iter().for_each(|s| self.release_slot(s));
        if let Some(go) = go {
            self.patch_go_runtime(vtid, pid, mm, &go);
        }
        if interp.is_some() {
            self.prepare_libc_stubs(vtid, pid, mm);
        }
        self.sim.record(vtid, "exec", &[], &name);
        if let Some(parent) = vfork_parent {
            self.wake_vfork_parent(parent);
        }
    }

    /// After an exec the kernel has closed the O_CLOEXEC descriptors: keep
    /// only virtual sockets, pipe ends and timerfds that are still open,
    /// forget everything else.
    pub(super) fn forget_closed_on_exec(&mut self, pid: i32) {
        let now = self.sim.clock.now();
        self.sim.descriptors_changed();
        let Some(p) = self.sim.procs.get_mut(&pid) else {
            return;
        };
        self.host_fds.exec(pid);
        let old = std::mem::take(&mut p.fds);
        for (fd, kind) in old {
            if !matches!(kind, FdKind::Socket(_) | FdKind::Pipe(_) | FdKind::Timer(_)) {
                continue;
            }
            let open = self.host_fds.classify(pid, fd).is_some();
            if open {
                self.sim
                    .procs
                    .get_mut(&pid)
                    .expect("process")
                    .fds
                    .insert(fd, kind);
            } else if let Some(vs) = kind.counted() {
                self.sim.net.drop_ref(pid, fd, vs, now);
            }
            self.sim.net.drop_epoll(pid, fd);
        }
        self.sim.drop_unheld_timerfds();
    }

    pub(super) fn on_exit_event(&mut self, vtid: Vtid) -> StepEnd {
        let th = &self.sim.threads[&vtid];
        let (tid, pid, kind) = (th.tid, th.pid, th.exit_kind);
        let group = kind != Some(ExitKind::Thread);
        self.waits.running_exits();
        self.mark_dying(vtid);
        let _ = tracee::cont(tid, 0);
        if group {
            for t in self.sim.threads.values_mut().filter(|t| t.pid == pid) {
                t.state = ThreadState::Dying;
            }
            self.group_exit = Some(pid);
            // Wait (inside run_until_stopped) until the leader is reaped.
            return StepEnd::Running;
        }
        let others_alive = self
            .sim
            .threads
            .values()
            .any(|t| t.pid == pid && t.vtid != vtid && !matches!(t.state, ThreadState::Dying));
        if tid == pid && others_alive {
            // The leader left with pthread_exit; its reap comes with the last thread.
            return StepEnd::Done;
        }
        StepEnd::Running
    }
}

/// The id a thread has in the innermost PID namespace (the last NSpid field).
pub(super) fn ns_id(pid: i32, tid: i32) -> i32 {
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|v| v.split_whitespace().last().and_then(|x| x.parse().ok()))
        })
        .unwrap_or(tid)
}

pub(super) fn describe_status(status: i32) -> String {
    match status_ending(status) {
        Ending::Signaled(s) => format!("killed by {}", signal_name(s)),
        Ending::Exited(c) => format!("exit {c}"),
        _ => unreachable!(),
    }
}
