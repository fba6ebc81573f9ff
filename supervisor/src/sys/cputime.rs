//! Reads of CPU time — `clock_gettime` on the CPU-time clocks, `getrusage`,
//! `times` — answered from the virtual CPU ledger (`sim::cputime`) instead of
//! the host's accounting, which differs on every run.

use super::{err, ret, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::sim::vclock::{Timespec, NS};

/// `sysconf(_SC_CLK_TCK)` on Linux x86-64: the unit of `times` and of the
/// CPU fields of `/proc/<pid>/stat`.
pub(crate) const CLK_TCK: u64 = 100;

/// Nanoseconds per clock tick.
pub(crate) const NS_PER_TICK: u64 = NS / CLK_TCK;

/// Whose CPU time a clock id names.
enum CpuClock {
    /// A thread (virtual thread id).
    Thread(u32),
    /// A process (host pid).
    Process(i32),
}

impl Supervisor {
    /// clock_gettime on a CPU-time clock.
    pub(super) fn sys_cpu_clock(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let clock = c.a[0] as i32;
        targs.push(clock as i64);
        let Some(who) = self.cpu_clock_owner(c, clock) else {
            return err(libc::EINVAL);
        };
        let ns = match who {
            CpuClock::Thread(v) => self.sim.cpu.thread(v),
            CpuClock::Process(p) => self.sim.cpu.process(p),
        };
        targs.push(ns as i64);
        if c.a[1] != 0
            && tracee::Process(c.pid)
                .write_val(c.a[1], &Timespec::from_ns(ns as i128))
                .is_err()
        {
            return err(libc::EFAULT);
        }
        ret(0)
    }

    /// Decodes a CPU clock id: the two fixed ids, or the kernel's encoding
    /// `(~pid << 3) | perthread << 2 | type` of `clock_getcpuclockid` and
    /// `pthread_getcpuclockid`, whose pid is one the program sees (its
    /// namespace's); pid 0 is the caller.
    fn cpu_clock_owner(&self, c: &Call, clock: i32) -> Option<CpuClock> {
        match clock {
            libc::CLOCK_PROCESS_CPUTIME_ID => return Some(CpuClock::Process(c.pid)),
            libc::CLOCK_THREAD_CPUTIME_ID => return Some(CpuClock::Thread(c.vtid)),
            _ => {}
        }
        if clock & 3 == 3 {
            return None;
        }
        let id = !(clock >> 3);
        let per_thread = clock & 4 != 0;
        if id == 0 {
            return Some(if per_thread {
                CpuClock::Thread(c.vtid)
            } else {
                CpuClock::Process(c.pid)
            });
        }
        let ns_root = self.sim.procs.get(&c.pid)?.ns_root;
        let in_ns = |pid: i32| {
            self.sim
                .procs
                .get(&pid)
                .is_some_and(|p| p.ns_root == ns_root)
        };
        if per_thread {
            self.sim
                .threads
                .values()
                .find(|t| t.ns_tid == id && t.pid == c.pid)
                .map(|t| CpuClock::Thread(t.vtid))
        } else {
            self.sim
                .procs
                .values()
                .find(|p| p.ns_pid == id && in_ns(p.pid))
                .map(|p| CpuClock::Process(p.pid))
        }
    }

    /// getrusage: user time is the virtual CPU time, system time and every
    /// counter (page faults, context switches, max RSS) are zero.
    pub(super) fn sys_getrusage(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let who = c.a[0] as i32;
        targs.push(who as i64);
        let ns = match who {
            libc::RUSAGE_SELF => self.sim.cpu.process(c.pid),
            libc::RUSAGE_THREAD => self.sim.cpu.thread(c.vtid),
            libc::RUSAGE_CHILDREN => self.sim.cpu.children(c.pid),
            _ => return err(libc::EINVAL),
        };
        targs.push(ns as i64);
        // struct rusage: two timevals, then 14 longs.
        let mut usage = [0i64; 18];
        usage[0] = (ns / NS) as i64;
        usage[1] = ((ns % NS) / 1000) as i64;
        if tracee::Process(c.pid).write_val(c.a[1], &usage).is_err() {
            return err(libc::EFAULT);
        }
        ret(0)
    }

    /// times: the virtual CPU time in clock ticks, all of it user time; the
    /// return value counts ticks of the virtual monotonic clock.
    pub(super) fn sys_times(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let own = self.sim.cpu.process(c.pid) / NS_PER_TICK;
        let children = self.sim.cpu.children(c.pid) / NS_PER_TICK;
        targs.extend([own as i64, children as i64]);
        let tms: [i64; 4] = [own as i64, 0, children as i64, 0];
        if c.a[0] != 0 && tracee::Process(c.pid).write_val(c.a[0], &tms).is_err() {
            return err(libc::EFAULT);
        }
        let mono = self
            .sim
            .clock
            .read_on(self.sim.clock_host(c.pid), libc::CLOCK_MONOTONIC) as u64;
        ret((mono / NS_PER_TICK) as i64)
    }
}
