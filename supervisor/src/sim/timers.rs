//! What the simulation keeps of the programs' timers: a timer's schedule on
//! the scheduler's clock (shared by POSIX timers and timerfds), the POSIX
//! timers of every process and the run's timerfds. The calls that arm and
//! read them are in `sys::timers`, `sys::timerfd` and `sys::itimer`.

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;

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

/// One timer of a process, as timer_create made it.
#[derive(Debug, Clone, Copy)]
pub struct PosixTimer {
    /// The clock it counts on (for TIMER_ABSTIME).
    pub(crate) clock: i32,
    /// The signal (0 for SIGEV_NONE).
    pub(crate) sig: i32,
    /// SIGEV_THREAD_ID's host tid, or 0.
    pub(crate) tid: i32,
    /// sigev_value.
    pub(crate) value: u64,
    /// The schedule while armed without a signal (SIGEV_NONE).
    pub(crate) silent: Option<Schedule>,
}

/// The timers of every process: (host pid, timer id).
pub type PosixTimers = BTreeMap<(i32, i32), PosixTimer>;

/// One timerfd.
#[derive(Debug)]
pub struct FdTimer {
    /// The clock it counts on (for TFD_TIMER_ABSTIME).
    pub(crate) clock: i32,
    /// The supervisor's copy of the eventfd, whose counter is the count
    /// of expirations the program has not read.
    pub(crate) counter: OwnedFd,
    /// The schedule while armed.
    pub(crate) armed: Option<Schedule>,
}

/// Every timerfd of the run, by id (ids are handed out in creation order,
/// so they are the same on every run of a seed).
#[derive(Debug, Default)]
pub struct TimerFds {
    /// The live timers.
    pub(crate) timers: BTreeMap<u32, FdTimer>,
    /// The id the next timerfd_create gets.
    pub(crate) next: u32,
}

impl TimerFds {
    /// The earliest deadline of an armed timerfd: virtual time may jump there.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.timers
            .values()
            .filter_map(|t| t.armed.map(|s| s.at))
            .min()
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
