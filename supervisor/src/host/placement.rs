//! Which host CPUs the supervisor and its programs run on. Only one of them
//! runs at a time, so by default they share one CPU: every hand-off through
//! the kernel (a ptrace stop, a futex wake) then switches tasks on that CPU,
//! which costs far less than waking another, idle, virtual CPU.
//!
//! A hand-off through shared memory is different: with the supervisor and
//! the programs on two CPUs, each side can wait for the other by spinning,
//! and a round trip costs no switch at all. The LD_PRELOAD channel does that
//! while most events come over it; the placement moves the programs to a
//! second CPU then, and back while ptrace stops dominate.

use std::io;

/// The CPUs of a run.
#[derive(Debug, Default)]
pub struct Placement {
    /// The supervisor's CPU (and the programs' while they share it).
    home: Option<usize>,
    /// A second CPU the programs may move to.
    away: Option<usize>,
    /// Whether the programs are on `away` now.
    split: bool,
}

impl Placement {
    /// Pins the calling thread (and so every tracee forked later) to one of
    /// the CPUs it may use, and notes a second one for
    /// [`Placement::split`]: those of `slot` for a `run -j` worker (see
    /// [`cpu_pair`]), else picked by pid.
    pub fn pin(slot: Option<CpuSlot>) -> Placement {
        let allowed = allowed_cpus();
        if allowed.is_empty() {
            return Placement::default();
        }
        let (home, away) = cpu_pair(slot, std::process::id() as usize, allowed.len());
        if set_affinity(0, &[allowed[home]]).is_err() {
            return Placement::default();
        }
        Placement {
            home: Some(allowed[home]),
            away: away.map(|a| allowed[a]),
            split: false,
        }
    }

    /// Whether the programs run on another CPU than the supervisor.
    pub fn is_split(&self) -> bool {
        self.split
    }

    /// Whether there is a second CPU to move the programs to.
    pub fn can_split(&self) -> bool {
        self.away.is_some()
    }

    /// Moves the threads `tids` (every thread of every program) to the
    /// second CPU; threads they start later follow them.
    pub fn split(&mut self, tids: impl Iterator<Item = i32>) {
        if let (Some(away), false) = (self.away, self.split) {
            tids.for_each(|t| {
                let _ = set_affinity(t, &[away]);
            });
            self.split = true;
        }
    }

    /// Puts a newly launched program's first thread `tid` where the
    /// others are.
    pub fn place_new(&self, tid: i32) {
        if let (Some(away), true) = (self.away, self.split) {
            let _ = set_affinity(tid, &[away]);
        }
    }

    /// Moves the threads `tids` back to the supervisor's CPU.
    pub fn join(&mut self, tids: impl Iterator<Item = i32>) {
        if let (Some(home), true) = (self.home, self.split) {
            tids.for_each(|t| {
                let _ = set_affinity(t, &[home]);
            });
            self.split = false;
        }
    }
}

/// Lets the calling thread run on every CPU faultline may use: a helper
/// that takes only idle time ([`crate::host::idle_zstd`]) finds it on
/// whichever CPU has some, not only on the supervisor's. Best effort.
pub fn unpin_calling_thread() {
    let _ = set_affinity(0, allowed_cpus());
}

/// A `run -j` worker's number among the workers running at once, and
/// how many run at once: parallel seeds take CPUs apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuSlot {
    /// 0 for the first worker.
    pub index: usize,
    /// `-j`.
    pub workers: usize,
}

/// Which of `cpus` allowed CPUs (by position) a run takes: its home and
/// the second CPU its programs may move to. Workers that each fit a pair
/// take pairs apart; more workers than that each take a home of their
/// own, and the next worker's as the second; a run alone picks by `pid`.
fn cpu_pair(slot: Option<CpuSlot>, pid: usize, cpus: usize) -> (usize, Option<usize>) {
    let home = match slot {
        Some(s) if 2 * s.workers <= cpus => 2 * s.index,
        Some(s) => s.index,
        None => pid,
    } % cpus;
    (home, (cpus > 1).then_some((home + 1) % cpus))
}

/// The CPUs faultline may run on: the calling thread's when first asked.
/// Kept, because pinning changes the thread's own set: read again, a
/// second run in the same process (`run --seeds N`) would find only the
/// first run's CPU, and never give its programs a CPU of their own.
fn allowed_cpus() -> &'static [usize] {
    static ALLOWED: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    ALLOWED.get_or_init(current_cpus)
}

/// The CPUs the calling thread may run on now.
fn current_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data manipulated by the libc macros.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Lets thread `tid` (0: the caller) run on `cpus` only.
fn set_affinity(tid: i32, cpus: &[usize]) -> io::Result<()> {
    // SAFETY: as above.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        cpus.iter().for_each(|&c| libc::CPU_SET(c, &mut set));
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_workers_take_cpus_apart() {
        let slot = |index, workers| Some(CpuSlot { index, workers });
        // Two workers on 2 CPUs: a home each.
        assert_eq!(cpu_pair(slot(0, 2), 7, 2), (0, Some(1)));
        assert_eq!(cpu_pair(slot(1, 2), 7, 2), (1, Some(0)));
        // Two workers on 4 CPUs: a pair each.
        assert_eq!(cpu_pair(slot(0, 2), 7, 4), (0, Some(1)));
        assert_eq!(cpu_pair(slot(1, 2), 7, 4), (2, Some(3)));
        // Three on 4: a home each.
        let homes: Vec<usize> = (0..3).map(|k| cpu_pair(slot(k, 3), 7, 4).0).collect();
        assert_eq!(homes, [0, 1, 2]);
        // Alone: by pid; on one CPU, nowhere to move to.
        assert_eq!(cpu_pair(None, 7, 4), (3, Some(0)));
        assert_eq!(cpu_pair(slot(1, 2), 7, 1), (0, None));
    }

    #[test]
    fn a_pinned_worker_is_on_its_slots_cpu() {
        std::thread::spawn(|| {
            let allowed = allowed_cpus();
            let p = Placement::pin(Some(CpuSlot {
                index: 1,
                workers: allowed.len(),
            }));
            assert_eq!(p.home, Some(allowed[1 % allowed.len()]));
            assert_eq!(current_cpus(), vec![allowed[1 % allowed.len()]]);
        })
        .join()
        .expect("the placement thread");
    }

    #[test]
    fn a_second_run_in_the_same_process_can_still_split() {
        // In a thread of its own: pinning changes the caller's CPU set.
        std::thread::spawn(|| {
            let first = Placement::pin(None);
            let second = Placement::pin(None);
            assert_eq!(first.can_split(), second.can_split());
            assert_eq!(first.can_split(), allowed_cpus().len() > 1);
        })
        .join()
        .expect("the placement thread");
    }
}
