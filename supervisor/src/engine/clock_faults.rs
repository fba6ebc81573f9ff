//! Clock faults: a node's wall clock steps (`clock_jump`), starts off
//! (`clock_offset`) or all its clocks run at a wrong rate (`clock_drift`).
//! Each host has its own view of virtual time in `VClock`; clock reads,
//! sleeps, futex deadlines and the vDSO time page use the reader's host.

use super::*;

impl Supervisor {
    /// The clock index of process `pid`'s host (an index no host has, so
    /// the run's own clock, for a process faultline does not know).
    pub(crate) fn clock_host(&self, pid: i32) -> usize {
        self.procs.get(&pid).map_or(usize::MAX, |p| p.host.index())
    }

    /// Steps the node's wall clock by `by` ns.
    pub(super) fn jump_clock(&mut self, name: &str, by: i64, kind: &str) {
        let host = self.net.hosts[name].index();
        self.clock.jump(host, by);
        let wall = self.clock.read_on(host, libc::CLOCK_REALTIME);
        self.fault(
            kind,
            name,
            &[by],
            format!(
                "wall clock {} by {:.3}s, now reads {:.3}s since 1970",
                if by < 0 { "back" } else { "forward" },
                by.unsigned_abs() as f64 / 1e9,
                wall as f64 / 1e9
            ),
        );
    }

    /// The node's clocks run `ppm` fast (or slow) from now on.
    pub(super) fn drift_clock(&mut self, name: &str, ppm: i64) {
        let host = self.net.hosts[name].index();
        self.clock.set_drift(host, ppm);
        let detail = if ppm == 0 {
            "clocks back at the true rate".to_string()
        } else {
            format!(
                "clocks run {} by {} ppm",
                if ppm > 0 { "fast" } else { "slow" },
                ppm.abs()
            )
        };
        self.fault("clock_drift", name, &[ppm], detail);
    }
}
