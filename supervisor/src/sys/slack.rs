//! Timer slack: how much later than asked a timed wait ends. Linux lets the
//! timer of an ordinary (SCHED_OTHER) thread's sleep, futex wait or
//! `sigtimedwait` fire anywhere up to the thread's timer slack after the
//! time asked (50 µs unless `prctl(PR_SET_TIMERSLACK)` changed it), so that
//! wake-ups coalesce; a `poll`, `select` or `epoll_wait` gets 0.1% of its
//! timeout (at most 100 ms) if that is more. With no other timer due in
//! that range the timer fires at its end, which is where the simulation
//! ends the wait. It matters for runtimes that sleep a few microseconds at
//! a time: Go's `sysmon` asks for 20 µs and gets about 70 µs natively;
//! without the slack it woke three times as often as on Linux.

use super::{pass, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::world::Vtid;

/// The most a poll's timeout adds (Linux's `MAX_SLACK`).
const MAX_POLL_SLACK_NS: u64 = 100_000_000;

impl Sim {
    /// prctl: `PR_SET_TIMERSLACK` and `PR_GET_TIMERSLACK` set and read the
    /// calling thread's slack in the simulation (0 sets the run's
    /// `--timer-slack` again); every other option is the kernel's.
    pub(super) fn sys_prctl(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        match c.a[0] as i32 {
            libc::PR_SET_TIMERSLACK => {
                targs.push(c.a[1] as i64);
                if let Some(t) = self.threads.get_mut(&c.vtid) {
                    t.timer_slack = (c.a[1] != 0).then_some(c.a[1]);
                }
                ret(0)
            }
            libc::PR_GET_TIMERSLACK => ret(self.slack_of(c.vtid) as i64),
            _ => pass(),
        }
    }

    /// The end of thread `vtid`'s sleep, futex wait or `sigtimedwait`
    /// asked to end at `deadline` (scheduler ns): its timer slack later,
    /// unless that time has already come (the wait then ends at once).
    pub(super) fn timer_end(&self, vtid: Vtid, deadline: u64) -> u64 {
        self.slackened(deadline, self.slack_of(vtid))
    }

    /// The end of thread `vtid`'s `poll`, `select` or `epoll_wait` asked to
    /// end at `deadline`: later by its timer slack or 0.1% of the timeout,
    /// whichever is more (none with a zero slack, so `--timer-slack 0`
    /// gives the exact deadlines of runs recorded before it existed).
    pub(super) fn poll_end(&self, vtid: Vtid, deadline: u64) -> u64 {
        let slack = self.slack_of(vtid);
        let timeout = deadline.saturating_sub(self.clock.now());
        let share = (timeout / 1000).min(MAX_POLL_SLACK_NS);
        let slack = if slack == 0 { 0 } else { slack.max(share) };
        self.slackened(deadline, slack)
    }

    fn slack_of(&self, vtid: Vtid) -> u64 {
        self.threads
            .get(&vtid)
            .and_then(|t| t.timer_slack)
            .unwrap_or(self.timer_slack_ns)
    }

    fn slackened(&self, deadline: u64, slack: u64) -> u64 {
        if deadline <= self.clock.now() {
            deadline
        } else {
            deadline.saturating_add(slack)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, VTID};

    #[test]
    fn a_wait_still_to_come_ends_the_slack_later_and_a_past_one_at_once() {
        let mut sim = world();
        sim.timer_slack_ns = 50_000;
        let now = sim.clock.now();
        assert_eq!(sim.timer_end(VTID, now + 20_000), now + 70_000);
        assert_eq!(sim.timer_end(VTID, now), now, "already due: no slack");
        // A poll's timeout adds 0.1% when that is more than the slack.
        assert_eq!(sim.poll_end(VTID, now + 10_000_000), now + 10_050_000);
        assert_eq!(sim.poll_end(VTID, now + 500_000_000), now + 500_500_000);
        assert_eq!(
            sim.poll_end(VTID, now + 1_000_000_000_000),
            now + 1_000_100_000_000
        );
        assert_eq!(sim.poll_end(VTID, now), now, "a zero timeout polls once");
        sim.timer_slack_ns = 0;
        assert_eq!(sim.poll_end(VTID, now + 500_000_000), now + 500_000_000);
        assert_eq!(sim.timer_end(VTID, now + 20_000), now + 20_000);
    }

    #[test]
    fn prctl_sets_and_reads_the_threads_own_slack() {
        let mut sim = world();
        sim.timer_slack_ns = 50_000;
        let prctl = |option: i32, arg: u64| {
            call(
                libc::SYS_prctl,
                [option as u64, arg, 0, 0, 0, 0],
                zeroed(0, 0),
            )
        };
        let get = |sim: &mut crate::sim::state::Sim| {
            returned(sim.sys_prctl(&prctl(libc::PR_GET_TIMERSLACK, 0), &mut vec![]))
        };
        assert_eq!(get(&mut sim), 50_000);
        assert_eq!(
            returned(sim.sys_prctl(&prctl(libc::PR_SET_TIMERSLACK, 1), &mut vec![])),
            0
        );
        assert_eq!(get(&mut sim), 1);
        let now = sim.clock.now();
        assert_eq!(sim.timer_end(VTID, now + 20_000), now + 20_001);
        // 0 gives the thread the run's slack again.
        sim.sys_prctl(&prctl(libc::PR_SET_TIMERSLACK, 0), &mut vec![]);
        assert_eq!(get(&mut sim), 50_000);
        // Other options are the kernel's.
        assert!(matches!(
            sim.sys_prctl(&prctl(libc::PR_SET_NAME, 0), &mut vec![]),
            super::super::Action::Now(_)
        ));
    }
}
