//! clock_getres: the resolution of each clock, the same on every machine.
//! The coarse clocks tick once per scheduler tick on Linux, so the host's
//! answer is its kernel's HZ; faultline answers as a kernel with HZ=250 and
//! high-resolution timers does.

use super::{err, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;

/// The resolution of `clock` in nanoseconds; None for a clock Linux does
/// not have. CPU-time clocks (negative ids) count in nanoseconds too.
fn resolution_ns(clock: i32) -> Option<i64> {
    match clock {
        libc::CLOCK_REALTIME_COARSE | libc::CLOCK_MONOTONIC_COARSE => Some(4_000_000),
        libc::CLOCK_REALTIME
        | libc::CLOCK_MONOTONIC
        | libc::CLOCK_PROCESS_CPUTIME_ID
        | libc::CLOCK_THREAD_CPUTIME_ID
        | libc::CLOCK_MONOTONIC_RAW
        | libc::CLOCK_BOOTTIME
        | libc::CLOCK_REALTIME_ALARM
        | libc::CLOCK_BOOTTIME_ALARM
        | libc::CLOCK_TAI => Some(1),
        c if c < 0 => Some(1),
        _ => None,
    }
}

impl Sim {
    /// clock_getres (clock, res).
    pub(super) fn sys_clock_getres(
        &mut self,
        c: &Call<impl Memory>,
        targs: &mut Vec<i64>,
    ) -> Action {
        let clock = c.a[0] as i32;
        targs.push(clock as i64);
        let Some(ns) = resolution_ns(clock) else {
            return err(libc::EINVAL);
        };
        super::ret_timespec(c, c.a[1], ns as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::vclock::Timespec;

    #[test]
    fn coarse_clocks_tick_at_250_hz_and_the_rest_in_nanoseconds() {
        assert_eq!(resolution_ns(libc::CLOCK_MONOTONIC_COARSE), Some(4_000_000));
        assert_eq!(resolution_ns(libc::CLOCK_MONOTONIC), Some(1));
        assert_eq!(resolution_ns(-6), Some(1));
        assert_eq!(resolution_ns(99), None);
    }

    #[test]
    fn clock_getres_writes_the_resolution_and_checks_clock_and_pointer() {
        use super::super::testing::{call, returned, world, zeroed};
        let mut sim = world();
        let res = |clock: i32, addr: u64| {
            call(
                libc::SYS_clock_getres,
                [clock as u64, addr, 0, 0, 0, 0],
                zeroed(0x1000, 16),
            )
        };
        let c = res(libc::CLOCK_REALTIME_COARSE, 0x1000);
        assert_eq!(returned(sim.sys_clock_getres(&c, &mut vec![])), 0);
        let ts: Timespec = c.mem().read_val(0x1000).unwrap();
        assert_eq!((ts.sec, ts.nsec), (0, 4_000_000));
        let null = res(libc::CLOCK_MONOTONIC, 0);
        assert_eq!(
            returned(sim.sys_clock_getres(&null, &mut vec![])),
            0,
            "res may be NULL"
        );
        let bad = res(99, 0x1000);
        assert_eq!(
            returned(sim.sys_clock_getres(&bad, &mut vec![])),
            -(libc::EINVAL as i64)
        );
        let unmapped = res(libc::CLOCK_MONOTONIC, 0x9000);
        let efault = -(libc::EFAULT as i64);
        assert_eq!(
            returned(sim.sys_clock_getres(&unmapped, &mut vec![])),
            efault
        );
    }
}
