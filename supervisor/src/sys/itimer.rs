//! What POSIX timers and timerfds share: a timer's schedule on the
//! scheduler's clock (`sim::timers::Schedule`, which tells itself back as
//! an itimerspec), made from the `struct itimerspec` a settime call passes
//! (relative or absolute on the timer's clock, as the caller's host sees
//! it).

use super::Call;
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::timers::Schedule;
use crate::sim::vclock::Timespec;

/// A settime call's new value: the program's figures (for the trace) and
/// the schedule they make (None: disarm).
pub(crate) struct NewValue {
    /// it_value, ns.
    pub value: u64,
    /// it_interval, ns.
    pub interval: u64,
    /// Where the timer now stands.
    pub schedule: Option<Schedule>,
}

impl Sim {
    /// Reads the new `struct itimerspec` at `addr` of a settime call by
    /// `c`'s process for a timer on `clock`; `abstime` (TIMER_ABSTIME,
    /// TFD_TIMER_ABSTIME) makes it_value a time on that clock. Errors are
    /// the errno the kernel gives (EFAULT, EINVAL).
    pub(crate) fn new_timer_value(
        &self,
        c: &Call<impl Memory>,
        clock: i32,
        abstime: bool,
        addr: u64,
    ) -> Result<NewValue, i32> {
        let [interval, value] = c
            .mem()
            .read_val::<[Timespec; 2]>(addr)
            .map_err(|_| libc::EFAULT)?;
        let (Some(interval), Some(value)) = (interval.to_ns(), value.to_ns()) else {
            return Err(libc::EINVAL);
        };
        if value == 0 {
            return Ok(NewValue {
                value,
                interval,
                schedule: None,
            });
        }
        let now = self.clock.now();
        let host = self.clock_host(c.pid);
        let at = if abstime {
            self.clock.deadline_on(host, clock, value as i128)
        } else {
            now.saturating_add(self.clock.span_on(host, value as i128))
        }
        .max(now + 1);
        Ok(NewValue {
            value,
            interval,
            schedule: Some(Schedule { at, interval }),
        })
    }
}
