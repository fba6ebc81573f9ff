//! Applying the fault plan: partitions and heals of the network, crashes
//! (SIGKILL of every process of a node, then its disk's crash model), kills
//! (the same without the crash model) and restarts; every fault is recorded
//! in the trace and in faults.json. Pauses, clock, link and disk faults
//! have their own modules.

use super::*;
use crate::host::launch;
use crate::scenario::plan::FaultEvent;

/// How a node goes down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Down {
    /// A planned crash: its processes die and its disk loses power.
    Crash,
    /// A planned kill: its processes die, its machine keeps running.
    Kill,
    /// Its program exited by itself and its machine reboots (`reboot_on_exit`).
    Reboot,
}

impl Supervisor {
    /// Records a fault in the trace and in the fault log (faults.json).
    pub(super) fn fault(&mut self, kind: &'static str, node: &str, args: &[i64], detail: String) {
        let t = self.sim.clock.now();
        self.sim.trace.record(t, 0, kind, args, node);
        self.fault_log.push(FaultRecord {
            t,
            event: self.sim.trace.count(),
            kind: kind.to_string(),
            node: node.to_string(),
            detail,
            paths: super::fault_log::FaultPaths::default(),
            planned: None,
        });
        self.probes.after_fault(kind, t);
    }

    /// Applies the planned faults whose time has come.
    pub(super) fn apply_faults(&mut self) -> Result<(), launch::LaunchError> {
        let now = self.sim.clock.now();
        while self.plan.first().is_some_and(|f| f.t <= now) {
            let scheduled = self.plan.remove(0);
            let logged = self.fault_log.len();
            match scheduled.event.clone() {
                FaultEvent::Partition {
                    isolate,
                    from,
                    one_way,
                } => {
                    let cut = self.host_ids(|n| isolate.contains(n));
                    let rest = match &from {
                        Some(from) => self.host_ids(|n| from.contains(n)),
                        None => self.host_ids(|n| !isolate.contains(n)),
                    };
                    self.sim.net.net_mut().partition(&cut, &rest, one_way);
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
                    self.sim.net.net_mut().heal();
                    self.fault("heal", "", &[], "every link restored".into());
                }
                FaultEvent::Crash(node) => self.crash_node(&node, Down::Crash)?,
                FaultEvent::Kill(node) => self.crash_node(&node, Down::Kill)?,
                FaultEvent::Reboot(node) => self.crash_node(&node, Down::Reboot)?,
                FaultEvent::Restart(node) => self.restart_node(&node)?,
                FaultEvent::Pause(node) => self.pause_node(&node),
                FaultEvent::Resume(node) => self.resume_node(&node),
                FaultEvent::ClockJump(node, by) => self.jump_clock(&node, by, "clock_jump"),
                FaultEvent::ClockOffset(node, by) => self.jump_clock(&node, by, "clock_offset"),
                FaultEvent::ClockDrift(node, ppm) => self.drift_clock(&node, ppm),
                FaultEvent::Link(groups, params) => self.set_links(&groups, Some(params)),
                FaultEvent::LinkNormal(groups) => self.set_links(&groups, None),
                FaultEvent::Reset(groups) => self.reset_links(&groups),
                FaultEvent::DiskFull(node, full) => self.disk_full(&node, full),
                FaultEvent::Corrupt { node, path, bytes } => self.corrupt(&node, &path, bytes),
            }
            self.log_planned(scheduled, logged, "it had no effect");
        }
        Ok(())
    }

    /// Crashes a node: SIGKILL for every process on its host, its sockets
    /// vanish (peers get RST), and the run waits until all are reaped, so the
    /// crash lands at the same point of every run; then, but for a kill, its
    /// disk's crash model.
    pub(super) fn crash_node(&mut self, name: &str, how: Down) -> std::io::Result<()> {
        let planned = how != Down::Reboot;
        let Some(i) = self
            .roots
            .iter()
            .position(|r| r.name == name && r.down != planned)
        else {
            return Ok(());
        };
        let host = self.sim.net.hosts[name];
        let victims = self.sim.procs.values().filter(|p| p.host == host).count();
        let killed = format!("{victims} process(es) killed");
        if planned {
            let kind = if how == Down::Kill { "kill" } else { "crash" };
            self.fault(kind, name, &[victims as i64], killed);
            self.roots[i].down = true;
            self.roots[i].crashes += 1;
        } else {
            self.fault(
                "reboot",
                name,
                &[victims as i64],
                format!("after its program exited; {killed}"),
            );
        }
        self.sim
            .net
            .net_mut()
            .crash_host(host, self.sim.clock.now());
        self.kill_host(host)?;
        self.paused.remove(&host);
        if how == Down::Kill {
            return Ok(());
        }
        if let Some(d) = self.sim.disks.of_host(host) {
            self.crash_disk(d, name);
        }
        Ok(())
    }

    /// The ids of the nodes' hosts whose names satisfy `keep`, in host order.
    /// Probe hosts are never among them: probes watch every node and are
    /// never faulted.
    pub(super) fn host_ids(&self, keep: impl Fn(&String) -> bool) -> Vec<vnet::HostId> {
        self.sim
            .net
            .hosts
            .iter()
            .filter(|(n, _)| keep(n) && !self.probes.is_host(n))
            .map(|(_, id)| *id)
            .collect()
    }

    /// SIGKILLs every process on `host` and waits until all are reaped, so
    /// their end lands at the same point of every run; returns how many.
    pub(super) fn kill_host(&mut self, host: vnet::HostId) -> std::io::Result<usize> {
        let mut victims: Vec<i32> = self
            .sim
            .procs
            .values()
            .filter(|p| p.host == host)
            .map(|p| p.pid)
            .collect();
        victims.sort_unstable();
        for &pid in &victims {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.crashing = true;
        // The kernel reports the deaths in an order of its own: stops are
        // handled as they come (a thread at its exit stop must be let go
        // on), but the final statuses are kept and then reaped in creation
        // order, so the trace records the processes' ends the same way in
        // every run.
        let mut alive: std::collections::BTreeSet<i32> = victims.iter().copied().collect();
        let mut ended = Vec::new();
        while !alive.is_empty() {
            let (who, status) = self.wait_on(-1)?;
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                alive.remove(&who);
                ended.push((who, status));
            } else {
                self.handle_other(who, status);
            }
        }
        ended.sort_by_key(|&(tid, _)| self.reap_order(tid));
        for (who, status) in ended {
            self.handle_other(who, status);
        }
        self.crashing = false;
        Ok(victims.len())
    }

    /// Where a thread's end comes among its node's: by process creation
    /// order, a process's other threads before its leader (whose end is the
    /// process's), then by thread creation order.
    fn reap_order(&self, tid: i32) -> (u32, bool, Vtid) {
        let Some(&vtid) = self.sim.by_tid.get(&tid) else {
            return (u32::MAX, true, Vtid::MAX);
        };
        let pid = self.sim.threads[&vtid].pid;
        let vpid = self.sim.procs.get(&pid).map_or(u32::MAX, |p| p.vpid);
        (vpid, tid == pid, vtid)
    }

    /// Restarts a crashed node's command.
    pub(super) fn restart_node(&mut self, name: &str) -> Result<(), launch::LaunchError> {
        let Some(i) = self.roots.iter().position(|r| r.name == name && r.down) else {
            return Ok(());
        };
        self.roots[i].down = false;
        self.fault("restart", name, &[], String::new());
        let started = self.start_root(i);
        // A node faultline could not restart is still down, not dead by
        // its own doing.
        self.roots[i].down |= started.is_err();
        started
    }
}
