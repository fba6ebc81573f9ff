//! Writes into a node's captured output or the workload's history: noted
//! with their virtual time and node (see `sim::output`), outside the trace.

use crate::engine::Supervisor;

impl Supervisor {
    /// At a trapped write of process `pid` to descriptor `fd`.
    pub(super) fn note_output_write(&mut self, pid: i32, fd: i32) {
        let now = self.sim.clock.now();
        let host = self.sim.procs.get(&pid).map(|p| p.host);
        let hosts = &self.sim.net.hosts;
        let node = || {
            hosts
                .iter()
                .find(|(_, &id)| Some(id) == host)
                .map_or_else(String::new, |(name, _)| name.clone())
        };
        self.outputs.on_write(now, pid, fd, node);
    }
}
