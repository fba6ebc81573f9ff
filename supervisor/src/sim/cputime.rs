//! Virtual CPU time: what `getrusage`, `times`, the CPU-time clocks and
//! `/proc/<pid>/stat` report. The host's CPU time of a tracee depends on the
//! machine and its load; here a thread has used exactly the step time charged
//! for its own steps (`--step-cost` per scheduling point, and per clock read
//! answered in place), so the same seed reads the same CPU time.

use crate::hashing::HashMap;
use std::collections::BTreeMap;

use super::world::Vtid;

/// CPU time per thread, per process (threads that are gone) and per parent
/// (children that are gone), in virtual nanoseconds.
#[derive(Debug, Default)]
pub struct CpuLedger {
    /// Live threads: (host pid of their process, ns used).
    threads: BTreeMap<Vtid, (i32, u64)>,
    /// Per host pid: the time of its threads that have exited.
    gone: HashMap<i32, u64>,
    /// Per host pid: the time of its children that have exited.
    children: HashMap<i32, u64>,
}

impl CpuLedger {
    /// Charges `ns` of CPU time to thread `vtid` of process `pid`.
    pub fn charge(&mut self, vtid: Vtid, pid: i32, ns: u64) {
        let e = self.threads.entry(vtid).or_insert((pid, 0));
        e.1 = e.1.saturating_add(ns);
    }

    /// The CPU time thread `vtid` has used.
    pub fn thread(&self, vtid: Vtid) -> u64 {
        self.threads.get(&vtid).map_or(0, |&(_, ns)| ns)
    }

    /// The CPU time of process `pid`: its live threads and those gone.
    pub fn process(&self, pid: i32) -> u64 {
        let live: u64 = self
            .threads
            .values()
            .filter(|&&(p, _)| p == pid)
            .map(|&(_, ns)| ns)
            .sum();
        live + self.gone.get(&pid).copied().unwrap_or(0)
    }

    /// The CPU time of the children of `pid` that have exited
    /// (`RUSAGE_CHILDREN`, `tms_cutime`).
    pub fn children(&self, pid: i32) -> u64 {
        self.children.get(&pid).copied().unwrap_or(0)
    }

    /// A thread is gone: its time stays with its process.
    pub fn thread_gone(&mut self, vtid: Vtid) {
        if let Some((pid, ns)) = self.threads.remove(&vtid) {
            *self.gone.entry(pid).or_insert(0) += ns;
        }
    }

    /// A process is gone: its time (and its children's) goes to `parent`.
    pub fn process_gone(&mut self, pid: i32, parent: Option<i32>) {
        let total = self.gone.remove(&pid).unwrap_or(0) + self.children.remove(&pid).unwrap_or(0);
        if let Some(parent) = parent {
            *self.children.entry(parent).or_insert(0) += total;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CpuLedger;

    #[test]
    fn threads_processes_and_children_add_up() {
        let mut l = CpuLedger::default();
        l.charge(1, 10, 5);
        l.charge(2, 10, 7);
        l.charge(3, 20, 11);
        assert_eq!((l.thread(1), l.thread(2), l.process(10)), (5, 7, 12));
        l.thread_gone(2);
        assert_eq!((l.thread(2), l.process(10)), (0, 12));
        l.thread_gone(3);
        l.process_gone(20, Some(10));
        assert_eq!((l.process(20), l.children(10)), (0, 11));
    }
}
