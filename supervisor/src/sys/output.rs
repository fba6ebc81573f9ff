//! Writes into a node's captured output or the workload's history: noted
//! with their virtual time and node (see `sim::output`), outside the trace.

use crate::sim::fdkind::FdKind;
use crate::sim::state::Sim;

impl Sim {
    /// At a trapped write of process `pid` to descriptor `fd`. Only
    /// regular files are watched, so a write known to go elsewhere (a pipe
    /// or eventfd, such as the Go runtime's wake-ups) is not looked up in
    /// /proc (a `stat` of /proc/PID/fd/FD costs more than the rest of the
    /// call's handling).
    pub(super) fn note_output_write(&mut self, pid: i32, fd: i32) {
        let p = self.procs.get(&pid);
        if !matches!(p.and_then(|p| p.fds.get(&fd)), None | Some(FdKind::File)) {
            return;
        }
        let now = self.clock.now();
        let host = p.map(|p| p.host);
        let hosts = &self.net.hosts;
        let node = || {
            hosts
                .iter()
                .find(|(_, &id)| Some(id) == host)
                .map_or_else(String::new, |(name, _)| name.clone())
        };
        self.outputs.on_write(now, pid, fd, node);
    }
}
