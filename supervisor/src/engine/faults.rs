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
    pub(super) fn fault(&mut self, kind: &str, node: &str, args: &[i64], detail: String) {
        let t = self.clock.now();
        self.trace.record(t, 0, kind, args, node);
        self.fault_log.push(FaultRecord {
            t,
            event: self.trace.count(),
            kind: kind.to_string(),
            node: node.to_string(),
            detail,
        });
    }

    /// Applies the planned faults whose time has come.
    pub(super) fn apply_faults(&mut self) -> Result<(), launch::LaunchError> {
        let now = self.clock.now();
        while self.plan.first().is_some_and(|f| f.0 <= now) {
            let (_, event) = self.plan.remove(0);
            match event {
                FaultEvent::Partition {
                    isolate,
                    from,
                    one_way,
                } => {
                    let ids = |keep: &dyn Fn(&String) -> bool| -> Vec<vnet::HostId> {
                        self.net
                            .hosts
                            .iter()
                            .filter(|(n, _)| keep(n))
                            .map(|(_, id)| *id)
                            .collect()
                    };
                    let cut = ids(&|n| isolate.contains(n));
                    let rest = match &from {
                        Some(from) => ids(&|n| from.contains(n)),
                        None => ids(&|n| !isolate.contains(n)),
                    };
                    self.net.net.partition(&cut, &rest, one_way);
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
                    self.net.net.heal();
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
        let host = self.net.hosts[name];
        let mut victims: Vec<i32> = self
            .procs
            .values()
            .filter(|p| p.host == host)
            .map(|p| p.pid)
            .collect();
        victims.sort_unstable();
        let killed = format!("{} process(es) killed", victims.len());
        if planned {
            let kind = if how == Down::Kill { "kill" } else { "crash" };
            self.fault(kind, name, &[victims.len() as i64], killed);
            self.roots[i].down = true;
            self.roots[i].crashes += 1;
        } else {
            self.fault(
                "reboot",
                name,
                &[victims.len() as i64],
                format!("after its program exited; {killed}"),
            );
        }
        self.net.net.crash_host(host, self.clock.now());
        for &pid in &victims {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.crashing = true;
        while victims.iter().any(|p| self.procs.contains_key(p)) {
            let (who, status) = self.wait_any()?;
            self.handle_other(who, status);
        }
        self.crashing = false;
        self.paused.remove(&host);
        if how == Down::Kill {
            return Ok(());
        }
        if let Some(d) = self.disks.of_host(host) {
            match self.disks.get_mut(d).disk.crash() {
                Ok(report) => {
                    let lost: usize = report
                        .files
                        .iter()
                        .map(|f| f.lost_changes + f.dropped_changes)
                        .sum();
                    let torn = report.files.iter().filter(|f| f.torn.is_some()).count();
                    let reverted = report.dir_ops.iter().filter(|o| !o.survived).count();
                    let args = [lost as i64, torn as i64, reverted as i64];
                    let detail = format!("{lost} unsynced change(s) lost, {torn} torn write(s), {reverted} directory operation(s) reverted");
                    self.fault("disk_crash", name, &args, detail);
                }
                Err(e) => eprintln!("faultline: internal error: crash of {name}'s disk: {e}"),
            }
        }
        Ok(())
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
