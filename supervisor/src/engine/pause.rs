//! The `pause` fault: a node's processes stop (a GC pause, a VM freeze)
//! without noticing. faultline simply does not schedule their threads: their
//! timers come due but they run late, their peers see silence, their sockets
//! stay open, and their view of the clock (the vDSO page) is refreshed only
//! when they run again.

use std::collections::BTreeSet;

use super::*;
use crate::sim::scheduler::{Decision, States};

/// The threads of the nodes that are not paused, as the scheduler sees them.
struct Unpaused<'a> {
    threads: &'a BTreeMap<Vtid, Thread>,
    procs: &'a HashMap<i32, Process>,
    paused: &'a BTreeSet<vnet::HostId>,
}

impl Unpaused<'_> {
    fn visible(&self, t: &Thread) -> bool {
        schedulable(self.procs, self.paused, t)
    }
}

/// Whether the scheduler may pick thread `t`: its node is not paused.
pub(super) fn schedulable(
    procs: &HashMap<i32, Process>,
    paused: &BTreeSet<vnet::HostId>,
    t: &Thread,
) -> bool {
    procs.get(&t.pid).is_none_or(|p| !paused.contains(&p.host))
}

impl States for Unpaused<'_> {
    fn states(&self) -> impl Iterator<Item = (Vtid, &ThreadState)> {
        self.threads
            .iter()
            .filter(|(_, t)| self.visible(t))
            .map(|(&v, t)| (v, &t.state))
    }

    fn state(&self, vtid: Vtid) -> Option<&ThreadState> {
        self.threads
            .get(&vtid)
            .filter(|t| self.visible(t))
            .map(|t| &t.state)
    }
}

impl Supervisor {
    /// The scheduler's decision over the threads of nodes that are not paused.
    pub(super) fn decide(&mut self) -> Decision {
        // Asked for only when no thread can run (see `other_deadline`).
        let outside = (
            &self.sim.signal_timers[..],
            &self.sim.timer_fds,
            &self.sim.net,
        );
        let (plan, probes) = (&self.plan, &self.probes);
        let other = || super::run::other_deadline(outside, plan, probes);
        if self.paused.is_empty() {
            return self.sim.sched.decide(&self.sim.threads, other);
        }
        let view = Unpaused {
            threads: &self.sim.threads,
            procs: &self.sim.procs,
            paused: &self.paused,
        };
        self.sim.sched.decide(&view, other)
    }

    /// [`Scheduler::decide_before_wakes`](crate::sim::scheduler::Scheduler::decide_before_wakes)
    /// over the threads of nodes that are not paused.
    pub(super) fn decide_before_wakes(&mut self) -> Option<Vtid> {
        if self.paused.is_empty() {
            return self.sim.sched.decide_before_wakes(&self.sim.threads);
        }
        let view = Unpaused {
            threads: &self.sim.threads,
            procs: &self.sim.procs,
            paused: &self.paused,
        };
        self.sim.sched.decide_before_wakes(&view)
    }

    /// Stops scheduling the node's threads.
    pub(super) fn pause_node(&mut self, name: &str) {
        let host = self.sim.net.hosts[name];
        if self.paused.insert(host) {
            let threads = self.host_threads(host);
            self.fault(
                "pause",
                name,
                &[threads],
                format!("{threads} thread(s) stopped"),
            );
        }
    }

    /// Schedules them again (a node that crashed meanwhile is simply up).
    pub(super) fn resume_node(&mut self, name: &str) {
        let host = self.sim.net.hosts[name];
        if self.paused.remove(&host) {
            let threads = self.host_threads(host);
            self.fault(
                "resume",
                name,
                &[threads],
                format!("{threads} thread(s) go on"),
            );
        }
    }

    fn host_threads(&self, host: vnet::HostId) -> i64 {
        self.sim
            .threads
            .values()
            .filter(|t| self.sim.procs.get(&t.pid).is_some_and(|p| p.host == host))
            .count() as i64
    }
}
