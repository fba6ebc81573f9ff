//! The scheduler: which stopped thread runs next, and when virtual time
//! moves instead. It owns the scheduling policy (and its random stream), the
//! watchdog's give-way rule for a preempted spinner, and the futex wait
//! queues; it reads thread states but never touches a process, so every
//! decision it makes is unit-tested here without ptrace.

use crate::hashing::HashMap;
use std::collections::{BTreeMap, BTreeSet};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sim::world::{Thread, ThreadState, Vtid, WaitKind};

/// How the next thread is chosen among the runnable ones. Recorded in
/// report.json, because the same seed under another policy is another run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SchedulePolicy {
    /// Uniformly at random at every scheduling point: the shortest
    /// interleavings, a thread switch at most points.
    Random,
    /// The thread that just ran goes on, if it still can and did not
    /// yield, with probability `stay` percent; otherwise a uniform choice,
    /// as under [`SchedulePolicy::Random`]. Runs of a few steps, as a
    /// CPU's time slice gives (5 on average at 80%), with a switch still
    /// possible at every point: the default, because each thread switch
    /// costs the programs a context switch, and this makes about half as
    /// many as `Random` (the etcd harness: 15% less wall time).
    Sticky {
        /// Percent chance of staying on the thread that just ran.
        stay: u8,
    },
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010):
    /// the runnable thread with the highest seeded priority runs; at
    /// `depth - 1` seeded steps within the first `steps` the running thread
    /// drops below every other. Finds a bug of depth d with probability at
    /// least 1/(n·k^(d-1)), and switches threads far less often.
    Pct {
        /// Bug depth d: d - 1 priority change points.
        depth: u32,
        /// The step range k the change points are drawn from.
        steps: u64,
    },
}

/// Picks one of the candidate threads (never empty, in vtid order).
trait Policy {
    fn pick(&mut self, candidates: &[Vtid]) -> Vtid;
    /// The thread is gone: forget what the policy keeps about it.
    fn forget(&mut self, _vtid: Vtid) {}
    /// The thread that ran last yielded its CPU (sched_yield).
    fn yielded(&mut self) {}
    /// The thread that ran last gave way at a spin loop's point (it then
    /// waits until its siblings have had a step): by default as a yield.
    fn gave_way(&mut self) {
        self.yielded();
    }
    /// Draws now, ahead of the next [`Policy::pick`], whether that pick
    /// keeps the thread picked last, if it is `eligible` and the policy's
    /// choice between it and the rest does not depend on who else can run
    /// then. None (nothing drawn) if the policy cannot tell now.
    fn keeps_ahead(&mut self, _eligible: &dyn Fn(Vtid) -> bool) -> Option<Vtid> {
        None
    }
}

/// Today's policy: a uniform choice from the seeded stream.
struct UniformRandom {
    rng: ChaCha8Rng,
}

impl Policy for UniformRandom {
    fn pick(&mut self, candidates: &[Vtid]) -> Vtid {
        candidates[self.rng.gen_range(0..candidates.len())]
    }
}

/// The sticky policy: the last pick again with probability `stay`
/// percent while it can run and has not yielded, else a uniform choice.
struct Sticky {
    uniform: UniformRandom,
    stay: f64,
    /// The thread picked last, while staying on it is allowed.
    last: Option<Vtid>,
    /// A stay drawn ahead of its pick that came out "switch"
    /// ([`Policy::keeps_ahead`]): the next pick uses it instead of a draw.
    switch_drawn: bool,
}

impl Policy for Sticky {
    fn pick(&mut self, candidates: &[Vtid]) -> Vtid {
        let switch_drawn = std::mem::take(&mut self.switch_drawn);
        // No draw at 0%: then it is the uniform choice, draw for draw.
        let stays = self
            .last
            .filter(|v| self.stay > 0.0 && candidates.contains(v))
            .filter(|_| !switch_drawn && self.uniform.rng.gen_bool(self.stay));
        let pick = stays.unwrap_or_else(|| self.uniform.pick(candidates));
        self.last = Some(pick);
        pick
    }

    fn forget(&mut self, vtid: Vtid) {
        if self.last == Some(vtid) {
            self.last = None;
        }
    }

    fn yielded(&mut self) {
        self.last = None;
    }

    /// The draw [`Sticky::pick`] makes, made early: it depends only on
    /// whether the last pick can still run, which the caller vouches for.
    fn keeps_ahead(&mut self, eligible: &dyn Fn(Vtid) -> bool) -> Option<Vtid> {
        let last = self
            .last
            .filter(|&v| self.stay > 0.0 && !self.switch_drawn && eligible(v))?;
        if self.uniform.rng.gen_bool(self.stay) {
            return Some(last);
        }
        self.switch_drawn = true;
        None
    }
}

/// Consecutive picks of one thread, while others could run, after which PCT
/// lowers its priority below everyone's: a thread that polls without ever
/// blocking would otherwise starve the rest forever (PCT assumes programs
/// that terminate; servers do not).
const PCT_PATIENCE: u32 = 100;

/// PCT: fixed random priorities, lowered at seeded change points.
struct Pct {
    rng: ChaCha8Rng,
    depth: u32,
    /// Priority of each thread seen; higher runs first.
    priorities: HashMap<Vtid, i64>,
    /// The steps at which the running thread's priority drops, ascending.
    change_points: Vec<u64>,
    /// Scheduling steps taken.
    step: u64,
    /// The next priority given to a starving-others thread (below all).
    next_low: i64,
    /// The last pick and how many times in a row it ran with company.
    streak: (Vtid, u32),
}

impl Pct {
    fn new(mut rng: ChaCha8Rng, depth: u32, steps: u64) -> Pct {
        let mut change_points: Vec<u64> = (1..depth.max(1))
            .map(|_| rng.gen_range(1..=steps.max(1)))
            .collect();
        change_points.sort_unstable();
        Pct {
            rng,
            depth: depth.max(1),
            priorities: HashMap::default(),
            change_points,
            step: 0,
            next_low: 0,
            streak: (0, 0),
        }
    }

    fn priority(&mut self, vtid: Vtid) -> i64 {
        let (rng, depth) = (&mut self.rng, self.depth);
        *self
            .priorities
            .entry(vtid)
            .or_insert_with(|| depth as i64 + rng.gen_range(0..1i64 << 32))
    }

    /// Gives `vtid` a priority below every other's (and its streak ends).
    fn lower_below_all(&mut self, vtid: Vtid) {
        self.next_low -= 1;
        self.priorities.insert(vtid, self.next_low);
        self.streak = (vtid, 0);
    }
}

impl Policy for Pct {
    fn pick(&mut self, candidates: &[Vtid]) -> Vtid {
        self.step += 1;
        let mut best = candidates[0];
        let mut best_priority = self.priority(best);
        for &v in &candidates[1..] {
            let p = self.priority(v);
            if p > best_priority {
                (best, best_priority) = (v, p);
            }
        }
        // Change points: the i-th lowers the running thread to d - 1 - i,
        // below every initial priority (which are all >= d).
        let passed = self.change_points.partition_point(|&c| c <= self.step);
        if passed > 0 && self.change_points[passed - 1] == self.step {
            self.priorities
                .insert(best, self.depth as i64 - passed as i64);
        }
        let company = candidates.len() > 1;
        self.streak = match self.streak {
            (v, n) if v == best && company => (v, n + 1),
            _ => (best, u32::from(company)),
        };
        if self.streak.1 >= PCT_PATIENCE {
            self.lower_below_all(best);
        }
        best
    }

    fn forget(&mut self, vtid: Vtid) {
        self.priorities.remove(&vtid);
    }

    /// A thread that yields waits for another to act: it drops below
    /// every thread. Kept, a Go GC worker yielding while it waits for a
    /// goroutine to stop, and the sweepers giving way beside it, took
    /// turns for millions of steps while the threads they waited on hardly
    /// ran (seed 1 of the 15 s etcd harness: 4.6 million events, 305 s).
    fn yielded(&mut self) {
        self.lower_below_all(self.streak.0);
    }

    /// Not lowered: a give-way point already makes the thread wait until
    /// its siblings have had a step. Lowered as well, a Go sweeper (which
    /// gives way at each batch) and the GC worker yielding while it waits
    /// for the sweeper's goroutine to stop ran strictly in turn, and that
    /// goroutine, rescheduled within each of its steps, was running
    /// whenever the worker looked: 3 of 5 etcd seeds made no progress.
    fn gave_way(&mut self) {}
}

/// What the run loop should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Resume this thread until its next scheduling point.
    Run(Vtid),
    /// Nobody may run now: move virtual time to this deadline.
    AdvanceTo(u64),
    /// Nobody can run and nothing is due: wait for the outside, or deadlock.
    Stuck,
}

/// The scheduler's read-only view of thread states, so it works on the
/// supervisor's threads and on plain states in tests alike.
pub trait States {
    /// Every thread's state, in vtid order.
    fn states(&self) -> impl Iterator<Item = (Vtid, &ThreadState)>;
    /// One thread's state.
    fn state(&self, vtid: Vtid) -> Option<&ThreadState>;
}

impl States for BTreeMap<Vtid, Thread> {
    fn states(&self) -> impl Iterator<Item = (Vtid, &ThreadState)> {
        self.iter().map(|(&v, t)| (v, &t.state))
    }
    fn state(&self, vtid: Vtid) -> Option<&ThreadState> {
        self.get(&vtid).map(|t| &t.state)
    }
}

impl States for BTreeMap<Vtid, ThreadState> {
    fn states(&self) -> impl Iterator<Item = (Vtid, &ThreadState)> {
        self.iter().map(|(&v, s)| (v, s))
    }
    fn state(&self, vtid: Vtid) -> Option<&ThreadState> {
        self.get(&vtid)
    }
}

/// A futex queue key: (address space, address).
pub type FutexKey = (u32, u64);

/// The scheduler of one run.
pub struct Scheduler {
    policy: Box<dyn Policy>,
    /// A thread the watchdog preempted, and the threads of its process that
    /// get a step before it runs again.
    penalty: Option<(Vtid, BTreeSet<Vtid>)>,
    /// futex waiters per key, in the order they started waiting.
    futexes: HashMap<FutexKey, Vec<Vtid>>,
}

impl Scheduler {
    /// A scheduler whose random choices come from the `stream` seed.
    pub fn new(stream: u64, policy: SchedulePolicy) -> Scheduler {
        let rng = ChaCha8Rng::seed_from_u64(stream);
        let policy: Box<dyn Policy> = match policy {
            SchedulePolicy::Random => Box::new(UniformRandom { rng }),
            SchedulePolicy::Sticky { stay } => Box::new(Sticky {
                uniform: UniformRandom { rng },
                stay: f64::from(stay.min(99)) / 100.0,
                last: None,
                switch_drawn: false,
            }),
            SchedulePolicy::Pct { depth, steps } => Box::new(Pct::new(rng, depth, steps)),
        };
        Scheduler {
            policy,
            penalty: None,
            futexes: HashMap::default(),
        }
    }

    /// The next step: a thread to run, or time to move. `other_deadline`
    /// gives the earliest event outside the threads (timers, network,
    /// faults), asked for only when no thread can run.
    pub fn decide(
        &mut self,
        threads: &impl States,
        other_deadline: impl FnOnce() -> Option<u64>,
    ) -> Decision {
        let runnable = runnable(threads);
        let next = || next_deadline(threads, other_deadline());
        if runnable.is_empty() {
            return next().map_or(Decision::Stuck, Decision::AdvanceTo);
        }
        let Some(candidates) = self.spin_penalty(threads, runnable) else {
            // Only the spinner could run: let time pass to whatever it
            // waits for, as it would while the CPU spun. (A thread it waits
            // for sleeps until a deadline, so there is one.)
            return Decision::AdvanceTo(next().expect("a parked thread's deadline"));
        };
        let pick = self.policy.pick(&candidates);
        if let Some((_, owed)) = &mut self.penalty {
            owed.remove(&pick);
        }
        Decision::Run(pick)
    }

    /// The decision made before the wakes that precede it, when it can be:
    /// some thread can run already and no spinner's penalty is pending
    /// (what the penalty allows depends on who else can run). The threads
    /// those wakes make runnable can then be picked from the next decision
    /// on. `None`: nothing was decided (or drawn).
    pub fn decide_before_wakes(&mut self, threads: &impl States) -> Option<Vtid> {
        if self.penalty.is_some() {
            return None;
        }
        let runnable = runnable(threads);
        (!runnable.is_empty()).then(|| self.policy.pick(&runnable))
    }

    /// The watchdog preempted `spinner`: it waits until each of `owed` (the
    /// other threads of its process) has had a step.
    pub fn preempted(&mut self, spinner: Vtid, owed: BTreeSet<Vtid>) {
        self.penalty = Some((spinner, owed));
    }

    /// The thread the next decision picks, decided now if the policy can
    /// tell without knowing who else will be able to run: the thread that
    /// ran last, if it is `eligible` (it can run then, whatever wakes
    /// before the decision) and the policy keeps it. The decision itself
    /// is then not asked for; otherwise it comes out as it would have.
    pub fn keeps_ahead(&mut self, eligible: impl Fn(Vtid) -> bool) -> Option<Vtid> {
        if self.penalty.is_some() {
            return None;
        }
        self.policy.keeps_ahead(&eligible)
    }

    /// The thread is gone.
    pub fn forget(&mut self, vtid: Vtid) {
        self.policy.forget(vtid);
    }

    /// The thread that ran last yielded its CPU: the policy does not
    /// prefer it for the next step.
    pub fn yielded(&mut self) {
        self.policy.yielded();
    }

    /// The thread that ran last gave way at a spin loop's point.
    pub fn gave_way(&mut self) {
        self.policy.gave_way();
    }

    /// The threads the scheduler may pick from `runnable`. A thread the
    /// watchdog stopped was spinning on something another thread must do
    /// (a lock holder, the last sweeper of a Go GC), most likely one of its
    /// own process: it waits until each of those has had a step. None if
    /// the spinner is all that could run while one of those is still
    /// waiting for a deadline: virtual time should move on first.
    fn spin_penalty(&mut self, threads: &impl States, runnable: Vec<Vtid>) -> Option<Vec<Vtid>> {
        let Some((spinner, owed)) = &mut self.penalty else {
            return Some(runnable);
        };
        let spinner = *spinner;
        owed.retain(|&v| {
            threads
                .state(v)
                .is_some_and(|s| !matches!(s, ThreadState::Dying))
        });
        let others: Vec<Vtid> = runnable.iter().copied().filter(|&v| v != spinner).collect();
        if owed.iter().any(|v| runnable.contains(v)) {
            return Some(others);
        }
        let owed_wait_on_time = owed.iter().any(
            |&v| matches!(threads.state(v), Some(ThreadState::Parked(w)) if w.deadline.is_some()),
        );
        if others.is_empty() && owed_wait_on_time {
            return None;
        }
        self.penalty = None;
        Some(runnable)
    }

    /// Queues `vtid` as a waiter on `key`.
    pub fn futex_wait(&mut self, key: FutexKey, vtid: Vtid) {
        self.futexes.entry(key).or_default().push(vtid);
    }

    /// Takes up to `n` waiters on `key` for which `wakes` holds, in the
    /// order they started waiting; the others stay queued.
    pub fn futex_wake(
        &mut self,
        key: FutexKey,
        n: usize,
        wakes: impl Fn(Vtid) -> bool,
    ) -> Vec<Vtid> {
        let Some(queue) = self.futexes.get_mut(&key) else {
            return Vec::new();
        };
        let mut woken: Vec<Vtid> = Vec::new();
        queue.retain(|&v| {
            if woken.len() >= n || !wakes(v) {
                return true;
            }
            woken.push(v);
            false
        });
        if queue.is_empty() {
            self.futexes.remove(&key);
        }
        woken
    }

    /// Moves the first `n` waiters of `from` to the end of `to`'s queue;
    /// returns them.
    pub fn futex_requeue(&mut self, from: FutexKey, to: FutexKey, n: usize) -> Vec<Vtid> {
        let Some(mut queue) = self.futexes.remove(&from) else {
            return Vec::new();
        };
        let rest = queue.split_off(n.min(queue.len()));
        if !rest.is_empty() {
            self.futexes.insert(from, rest);
        }
        self.futexes
            .entry(to)
            .or_default()
            .extend(queue.iter().copied());
        queue
    }

    /// Removes a waiter from `key`'s queue (timeout, signal, death).
    pub fn futex_cancel(&mut self, key: FutexKey, vtid: Vtid) {
        if let Some(q) = self.futexes.get_mut(&key) {
            q.retain(|&v| v != vtid);
            if q.is_empty() {
                self.futexes.remove(&key);
            }
        }
    }
}

/// The earliest deadline of a parked thread or of `other`.
pub fn next_deadline(threads: &impl States, other: Option<u64>) -> Option<u64> {
    threads
        .states()
        .filter_map(|(_, s)| match s {
            ThreadState::Parked(w) => w.deadline,
            _ => None,
        })
        .chain(other)
        .min()
}

/// The parked threads the run loop looks at between two steps, found in
/// one pass over every thread, each list in vtid order.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Parked {
    /// Those whose deadline has passed.
    pub due: Vec<Vtid>,
    /// Those waiting for real descriptors (`WaitKind::Fds`).
    pub on_fds: Vec<Vtid>,
    /// Those waiting for the network or real descriptors' readiness
    /// (`WaitKind::Net`).
    pub on_net: Vec<Vtid>,
}

/// The threads that can run now, in the order the policy draws from.
fn runnable(threads: &impl States) -> Vec<Vtid> {
    threads
        .states()
        .filter(|(_, s)| matches!(s, ThreadState::Ready(_)))
        .map(|(v, _)| v)
        .collect()
}

/// The parked threads at `now` (see [`Parked`]).
pub fn parked(threads: &impl States, now: u64) -> Parked {
    let mut out = Parked::default();
    for (v, s) in threads.states() {
        let ThreadState::Parked(w) = s else {
            continue;
        };
        if w.deadline.is_some_and(|d| d <= now) {
            out.due.push(v);
        }
        match w.kind {
            WaitKind::Fds { .. } => out.on_fds.push(v),
            WaitKind::Net { .. } => out.on_net.push(v),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::world::{Resume, Wait, WaitKind};

    fn ready() -> ThreadState {
        ThreadState::Ready(Resume::Continue)
    }

    fn sleeping(deadline: Option<u64>) -> ThreadState {
        ThreadState::Parked(Wait {
            kind: WaitKind::Sleep { rem: 0 },
            deadline,
            on_timeout: Resume::Return(0),
            restartable: false,
        })
    }

    fn states(list: &[(Vtid, ThreadState)]) -> BTreeMap<Vtid, ThreadState> {
        list.iter().cloned().collect()
    }

    fn picks(sched: &mut Scheduler, threads: &BTreeMap<Vtid, ThreadState>, n: usize) -> Vec<Vtid> {
        (0..n)
            .map(|_| match sched.decide(threads, || None) {
                Decision::Run(v) => v,
                other => panic!("expected a pick, got {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_decision_before_the_wakes_is_the_decision_over_the_threads_ready_then() {
        let threads = states(&[(1, sleeping(Some(5))), (2, ready()), (3, ready())]);
        for policy in [SchedulePolicy::Random, SchedulePolicy::Sticky { stay: 80 }] {
            let mut early = Scheduler::new(7, policy);
            let expected = picks(&mut Scheduler::new(7, policy), &threads, 40);
            let got: Vec<Vtid> = (0..40)
                .map(|_| {
                    early
                        .decide_before_wakes(&threads)
                        .expect("a thread is ready")
                })
                .collect();
            assert_eq!(got, expected, "the same draws as the decision's");
        }
        let mut sched = Scheduler::new(7, SchedulePolicy::Random);
        let none_ready = states(&[(1, sleeping(Some(5)))]);
        assert_eq!(sched.decide_before_wakes(&none_ready), None);
        // A spinner's penalty depends on who can run: decided after the wakes.
        sched.preempted(2, BTreeSet::from([3]));
        assert_eq!(sched.decide_before_wakes(&threads), None);
    }

    #[test]
    fn random_policy_is_the_seeded_uniform_choice() {
        let threads = states(&[(1, ready()), (2, ready()), (3, ready())]);
        let mut sched = Scheduler::new(42, SchedulePolicy::Random);
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let expected: Vec<Vtid> = (0..50).map(|_| [1, 2, 3][rng.gen_range(0..3)]).collect();
        assert_eq!(picks(&mut sched, &threads, 50), expected);
        let again = picks(
            &mut Scheduler::new(42, SchedulePolicy::Random),
            &threads,
            50,
        );
        assert_eq!(again, expected, "same seed, same picks");
        let other = picks(
            &mut Scheduler::new(43, SchedulePolicy::Random),
            &threads,
            50,
        );
        assert_ne!(other, expected, "another seed, other picks");
    }

    #[test]
    fn only_ready_threads_are_picked() {
        let threads = states(&[
            (1, sleeping(Some(5))),
            (2, ready()),
            (3, ThreadState::Dying),
        ]);
        let mut sched = Scheduler::new(1, SchedulePolicy::Random);
        assert!(picks(&mut sched, &threads, 20).iter().all(|&v| v == 2));
    }

    #[test]
    fn time_moves_to_the_earliest_deadline_when_nobody_can_run() {
        let threads = states(&[(1, sleeping(Some(900))), (2, sleeping(Some(300)))]);
        let mut sched = Scheduler::new(1, SchedulePolicy::Random);
        assert_eq!(sched.decide(&threads, || None), Decision::AdvanceTo(300));
        assert_eq!(
            sched.decide(&threads, || Some(100)),
            Decision::AdvanceTo(100)
        );
        let stuck = states(&[(1, sleeping(None))]);
        assert_eq!(sched.decide(&stuck, || None), Decision::Stuck);
        assert_eq!(parked(&threads, 300).due, vec![2]);
        assert_eq!(parked(&threads, 1000).due, vec![1, 2]);
    }

    #[test]
    fn a_preempted_spinner_gives_way_until_its_siblings_had_a_step() {
        let threads = states(&[(1, ready()), (2, ready()), (3, ready())]);
        let mut sched = Scheduler::new(9, SchedulePolicy::Random);
        sched.preempted(1, [2, 3].into_iter().collect());
        let mut seen = BTreeSet::new();
        while seen.len() < 2 {
            let Decision::Run(v) = sched.decide(&threads, || None) else {
                panic!("a pick");
            };
            assert_ne!(v, 1, "the spinner waits while a sibling is owed a step");
            seen.insert(v);
        }
        // Every sibling has had its step: the spinner may run again.
        assert!(picks(&mut sched, &threads, 200).contains(&1));
    }

    #[test]
    fn a_lone_spinner_lets_time_pass_to_the_sibling_it_waits_for() {
        let threads = states(&[(1, ready()), (2, sleeping(Some(700)))]);
        let mut sched = Scheduler::new(9, SchedulePolicy::Random);
        sched.preempted(1, [2].into_iter().collect());
        assert_eq!(sched.decide(&threads, || None), Decision::AdvanceTo(700));
        // A sibling that waits with no deadline cannot be waited for.
        let forever = states(&[(1, ready()), (2, sleeping(None))]);
        let mut sched = Scheduler::new(9, SchedulePolicy::Random);
        sched.preempted(1, [2].into_iter().collect());
        assert_eq!(sched.decide(&forever, || None), Decision::Run(1));
    }

    #[test]
    fn pct_runs_the_highest_priority_thread_until_a_change_point() {
        let threads = states(&[(1, ready()), (2, ready()), (3, ready())]);
        let policy = SchedulePolicy::Pct {
            depth: 1,
            steps: 10,
        };
        let mut sched = Scheduler::new(5, policy);
        let run = picks(&mut sched, &threads, 50);
        // No change point with depth 1: one thread runs until the patience
        // bound hands the turn on.
        assert!(run.iter().all(|&v| v == run[0]));
        let run = picks(&mut sched, &threads, 300);
        let switches = run.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(
            (1..=4).contains(&switches),
            "a starving thread is demoted after {PCT_PATIENCE} steps: {switches} switches"
        );
        let mut random = Scheduler::new(5, SchedulePolicy::Random);
        let random_run = picks(&mut random, &threads, 300);
        let random_switches = random_run.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(random_switches > 100, "random switches at most steps");
    }

    #[test]
    fn pct_lowers_a_thread_that_yields_but_not_one_that_gives_way() {
        let threads = states(&[(1, ready()), (2, ready()), (3, ready())]);
        let policy = SchedulePolicy::Pct {
            depth: 1,
            steps: 10,
        };
        for seed in 0..10 {
            // The two higher threads yield at every step, waiting on the
            // lowest: it runs by the third pick (unlowered, never).
            let mut sched = Scheduler::new(seed, policy);
            let mut run = Vec::new();
            for _ in 0..3 {
                run.push(picks(&mut sched, &threads, 1)[0]);
                sched.yielded();
            }
            run.sort_unstable();
            assert_eq!(run, [1, 2, 3], "seed {seed}");
            // The highest gives way: once each sibling has had a step it
            // runs again, its priority kept, and stays on.
            let mut sched = Scheduler::new(seed, policy);
            let top = picks(&mut sched, &threads, 1)[0];
            sched.gave_way();
            let owed = [1, 2, 3].into_iter().filter(|&v| v != top).collect();
            sched.preempted(top, owed);
            let after = picks(&mut sched, &threads, 2 * PCT_PATIENCE as usize);
            let back = after.iter().position(|&v| v == top).expect("back");
            assert!(
                [1, 2, 3]
                    .iter()
                    .all(|v| *v == top || after[..back].contains(v)),
                "seed {seed}: {after:?}"
            );
            assert!(after[back..back + 10].iter().all(|&v| v == top));
        }
    }

    #[test]
    fn pct_change_points_demote_the_running_thread() {
        let threads = states(&[(1, ready()), (2, ready())]);
        let policy = SchedulePolicy::Pct {
            depth: 3,
            steps: 20,
        };
        let mut seen_switch_early = false;
        for seed in 0..20 {
            let run = picks(&mut Scheduler::new(seed, policy), &threads, 40);
            let first_switch = run.windows(2).position(|w| w[0] != w[1]);
            assert!(
                first_switch.is_some(),
                "seed {seed}: two change points in 20 steps"
            );
            seen_switch_early |= first_switch.is_some_and(|i| i < 20);
            assert_eq!(run, picks(&mut Scheduler::new(seed, policy), &threads, 40));
        }
        assert!(seen_switch_early);
    }

    #[test]
    fn sticky_stays_on_the_last_pick_unless_it_yielded_or_cannot_run() {
        let threads = states(&[(1, ready()), (2, ready()), (3, ready())]);
        let switches = |run: &[Vtid]| run.windows(2).filter(|w| w[0] != w[1]).count();
        let sticky = SchedulePolicy::Sticky { stay: 80 };
        let run = picks(&mut Scheduler::new(7, sticky), &threads, 300);
        assert_eq!(run, picks(&mut Scheduler::new(7, sticky), &threads, 300));
        let random = picks(
            &mut Scheduler::new(7, SchedulePolicy::Random),
            &threads,
            300,
        );
        assert!(
            (10..100).contains(&switches(&run)) && switches(&random) > 150,
            "sticky {} switches, random {}",
            switches(&run),
            switches(&random)
        );
        // stay 0 is the uniform choice, draw for draw.
        let never = picks(
            &mut Scheduler::new(7, SchedulePolicy::Sticky { stay: 0 }),
            &threads,
            300,
        );
        assert_eq!(never, random);
        // A yield ends the run: the next pick is the uniform choice.
        let mut sched = Scheduler::new(7, sticky);
        let mut yielding = Vec::new();
        for _ in 0..300 {
            yielding.extend(picks(&mut sched, &threads, 1));
            sched.yielded();
        }
        assert!(switches(&yielding) > 150, "{}", switches(&yielding));
        // A pick that cannot run is not stayed on.
        let only_two = states(&[(1, sleeping(Some(5))), (2, ready()), (3, ready())]);
        let mut sched = Scheduler::new(7, sticky);
        let _ = picks(&mut sched, &threads, 50);
        assert!(!picks(&mut sched, &only_two, 50).contains(&1));
    }

    #[test]
    fn a_stay_drawn_ahead_gives_the_picks_of_the_decisions() {
        let threads = states(&[(1, ready()), (2, ready()), (3, ready())]);
        let sticky = SchedulePolicy::Sticky { stay: 80 };
        let plain = picks(&mut Scheduler::new(11, sticky), &threads, 300);
        // Asked ahead before every decision (only thread 2 eligible): a
        // kept thread skips the decision, any other answer leaves it to
        // come out as it would have, draw for draw.
        let mut sched = Scheduler::new(11, sticky);
        let mut ahead = Vec::new();
        let mut kept = 0;
        while ahead.len() < 300 {
            match sched.keeps_ahead(|v| v == 2) {
                Some(v) => {
                    kept += 1;
                    ahead.push(v);
                }
                None => ahead.extend(picks(&mut sched, &threads, 1)),
            }
        }
        assert_eq!(ahead, plain);
        assert!(kept > 30, "{kept} kept ahead");
        // Policies that cannot tell ahead draw nothing.
        let mut random = Scheduler::new(11, SchedulePolicy::Random);
        let _ = picks(&mut random, &threads, 1);
        assert_eq!(random.keeps_ahead(|_| true), None);
    }

    #[test]
    fn futex_queues_are_fifo_and_requeue_keeps_order() {
        let mut sched = Scheduler::new(0, SchedulePolicy::Random);
        let (a, b) = ((1, 0x10), (1, 0x20));
        for v in [4, 2, 7] {
            sched.futex_wait(a, v);
        }
        assert_eq!(sched.futex_wake(a, 1, |_| true), vec![4]);
        assert_eq!(
            sched.futex_wake(a, 5, |v| v != 2),
            vec![7],
            "a filtered waiter stays"
        );
        sched.futex_wait(a, 9);
        assert_eq!(sched.futex_requeue(a, b, 1), vec![2]);
        sched.futex_cancel(a, 9);
        assert!(sched.futex_wake(a, 9, |_| true).is_empty());
        assert_eq!(sched.futex_wake(b, 9, |_| true), vec![2]);
    }
}
