//! What POSIX timers and timerfds share: a timer's schedule on the
//! scheduler's clock, made from the `struct itimerspec` a settime call
//! passes (relative or absolute on the timer's clock, as the caller's host
//! sees it), and told back as one (gettime, and a settime's old value).

use super::Call;
use crate::host::tracee::Memory;
use crate::sim::state::Sim;
use crate::sim::vclock::Timespec;

/// An armed timer: its next expiry and its period (0: one-shot), in
/// scheduler ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Schedule {
    /// The next expiry.
    pub at: u64,
    /// The period.
    pub interval: u64,
}

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

impl Schedule {
    /// The itimerspec (interval, time left) of an armed or disarmed timer
    /// at `now`; one past its deadline runs on by its interval.
    pub(crate) fn itimerspec(armed: Option<Schedule>, now: u64) -> [Timespec; 2] {
        let (left, interval) = match armed {
            Some(s) if s.at <= now && s.interval > 0 => {
                (s.interval - (now - s.at) % s.interval, s.interval)
            }
            Some(s) => (s.at.saturating_sub(now), s.interval),
            None => (0, 0),
        };
        let ts = |ns: u64| Timespec::from_ns(ns as i128);
        [ts(interval), ts(left)]
    }

    /// How many times the timer expired by `now` (at least once: it is
    /// due), and its next schedule (None: a one-shot timer is spent).
    pub(crate) fn expire(self, now: u64) -> (u64, Option<Schedule>) {
        if self.interval == 0 {
            return (1, None);
        }
        let count = 1 + now.saturating_sub(self.at) / self.interval;
        let next = Schedule {
            at: self.at.saturating_add(count.saturating_mul(self.interval)),
            interval: self.interval,
        };
        (count, Some(next))
    }
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

#[cfg(test)]
mod tests {
    use super::Schedule;

    #[test]
    fn a_periodic_timer_counts_every_missed_expiry_and_keeps_its_phase() {
        let s = Schedule {
            at: 100,
            interval: 10,
        };
        assert_eq!(
            s.expire(100),
            (
                1,
                Some(Schedule {
                    at: 110,
                    interval: 10
                })
            )
        );
        assert_eq!(
            s.expire(135),
            (
                4,
                Some(Schedule {
                    at: 140,
                    interval: 10
                })
            )
        );
        let once = Schedule { at: 5, interval: 0 };
        assert_eq!(once.expire(9), (1, None));
    }

    #[test]
    fn time_left_runs_on_by_the_interval_past_the_deadline() {
        let s = Some(Schedule {
            at: 100,
            interval: 30,
        });
        let [iv, left] = Schedule::itimerspec(s, 40);
        assert_eq!((iv.nsec, left.nsec), (30, 60));
        let [_, left] = Schedule::itimerspec(s, 110);
        assert_eq!(left.nsec, 20);
        let [iv, left] = Schedule::itimerspec(None, 110);
        assert_eq!((iv.nsec, left.nsec), (0, 0));
    }
}
