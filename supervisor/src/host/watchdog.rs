//! The watchdog. Without hardware performance counters there is no
//! deterministic preemption, so a thread that runs too long without a trapped
//! syscall (a spin loop, or a call blocking in the kernel) is stopped with
//! SIGSTOP from this helper thread; the supervisor swallows the signal,
//! schedules someone else, and flags the run as possibly non-deterministic.
//!
//! "Too long" is CPU time of the running process (only one of its threads
//! runs at a time), so a loaded machine that merely slows a burst of
//! computation does not turn it into a preemption; a call blocked in the
//! kernel uses no CPU, and is preempted after three times the limit of wall
//! time instead.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Wall time, in multiples of the CPU limit, after which a thread that uses
/// no CPU (blocked in the kernel) is preempted too.
const WALL_FACTOR: u32 = 3;

/// State shared between the supervisor loop and the watchdog thread.
#[derive(Default)]
pub struct Watchdog {
    epoch: AtomicU64,
    running_pid: AtomicI32,
    running_tid: AtomicI32,
    pending: Mutex<Vec<Preemption>>,
    stop: AtomicI32,
}

/// One SIGSTOP the watchdog sent, with what it measured: the report says
/// whether the thread spun (CPU used) or sat blocked in the kernel (wall
/// time with little CPU), which point at different causes.
#[derive(Debug, Clone, Copy)]
pub struct Preemption {
    /// The stopped thread.
    pub tid: i32,
    /// CPU time its process used since the thread was resumed.
    pub cpu: Duration,
    /// Wall time since the thread was resumed (to the watchdog's tick).
    pub wall: Duration,
}

/// CPU time used so far by all threads of process `pid`.
fn process_cpu_time(pid: i32) -> Option<Duration> {
    // MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    let clock = (!pid << 3) | 2;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

impl Watchdog {
    /// Starts the watchdog thread; it preempts a thread that has used
    /// `limit` of CPU time since it was last resumed.
    pub fn start(limit: Duration) -> Arc<Watchdog> {
        let dog = Arc::new(Watchdog::default());
        let shared = Arc::clone(&dog);
        std::thread::Builder::new()
            .name("faultline-watchdog".into())
            .spawn(move || shared.watch(limit))
            .expect("spawn watchdog thread");
        dog
    }

    fn watch(&self, limit: Duration) {
        let tick = (limit / 4).max(Duration::from_millis(1));
        let mut last_epoch = u64::MAX;
        let mut quiet = Duration::ZERO;
        let mut cpu_at_start = None;
        while self.stop.load(Ordering::Relaxed) == 0 {
            std::thread::sleep(tick);
            let epoch = self.epoch.load(Ordering::Acquire);
            let tid = self.running_tid.load(Ordering::Acquire);
            let pid = self.running_pid.load(Ordering::Acquire);
            if epoch != last_epoch || tid == 0 {
                last_epoch = epoch;
                quiet = Duration::ZERO;
                cpu_at_start = process_cpu_time(pid);
                continue;
            }
            quiet += tick;
            // The clock can be unreadable for a moment (a process in the
            // middle of an exec): then only the wall-time rule applies.
            let now = process_cpu_time(pid);
            let spun = match (cpu_at_start, now) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => {
                    cpu_at_start = cpu_at_start.or(now);
                    Duration::ZERO
                }
            };
            if spun >= limit || quiet >= limit * WALL_FACTOR {
                // Under the lock `idle` takes: a step that has ended gets
                // no SIGSTOP any more.
                let mut pending = self.pending.lock().expect("watchdog lock");
                if self.epoch.load(Ordering::Acquire) == epoch {
                    pending.push(Preemption {
                        tid,
                        cpu: spun,
                        wall: quiet,
                    });
                    unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, libc::SIGSTOP) };
                }
                drop(pending);
                // Wait for the supervisor to notice before firing again.
                last_epoch = u64::MAX;
                quiet = Duration::ZERO;
            }
        }
    }

    /// Called right before a thread is resumed.
    pub fn running(&self, pid: i32, tid: i32) {
        self.running_pid.store(pid, Ordering::Release);
        self.running_tid.store(tid, Ordering::Release);
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Called when the running thread has stopped. Returns its tid if a
    /// SIGSTOP was sent to it that its step did not end with: that signal is
    /// still pending, and must not count as a preemption of its next step.
    pub fn idle(&self) -> Option<i32> {
        let mut pending = self.pending.lock().expect("watchdog lock");
        let tid = self.running_tid.swap(0, Ordering::AcqRel);
        self.epoch.fetch_add(1, Ordering::AcqRel);
        let i = pending.iter().position(|p| p.tid == tid)?;
        Some(pending.swap_remove(i).tid)
    }

    /// The preemption (once) if a SIGSTOP seen on `tid` was sent by the
    /// watchdog.
    pub fn take_preemption(&self, tid: i32) -> Option<Preemption> {
        let mut p = self.pending.lock().expect("watchdog lock");
        let i = p.iter().position(|p| p.tid == tid)?;
        Some(p.swap_remove(i))
    }

    /// Ends the watchdog thread.
    pub fn shutdown(&self) {
        self.stop.store(1, Ordering::Relaxed);
    }
}
