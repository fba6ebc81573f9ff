//! Clock faults: a node's wall clock steps (`clock_jump`), starts off
//! (`clock_offset`) or all its clocks run at a wrong rate (`clock_drift`).
//! Each host has its own view of virtual time in `VClock`; clock reads,
//! sleeps, futex deadlines and the vDSO time page use the reader's host.

use super::*;

impl Supervisor {
    /// Steps the node's wall clock by `by` ns.
    pub(super) fn jump_clock(&mut self, name: &str, by: i64, kind: &'static str) {
        let host = self.sim.net.hosts[name].index();
        self.sim.clock.jump(host, by);
        let wall = self.sim.clock.read_on(host, libc::CLOCK_REALTIME);
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
        let host = self.sim.net.hosts[name].index();
        self.sim.clock.set_drift(host, ppm);
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
