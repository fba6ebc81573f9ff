//! Reads of CPU time — `clock_gettime` on the CPU-time clocks, `getrusage`,
//! `times` — answered from the virtual CPU ledger (`sim::cputime`) instead of
//! the host's accounting, which differs on every run.

use super::{err, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::vclock::NS;

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

impl Sim {
    /// clock_gettime on a CPU-time clock.
    pub(super) fn sys_cpu_clock(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let clock = c.a[0] as i32;
        targs.push(clock as i64);
        let Some(who) = self.cpu_clock_owner(c, clock) else {
            return err(libc::EINVAL);
        };
        let ns = match who {
            CpuClock::Thread(v) => self.cpu.thread(v),
            CpuClock::Process(p) => self.cpu.process(p),
        };
        targs.push(ns as i64);
        super::ret_timespec(c, c.a[1], ns as i128)
    }

    /// Decodes a CPU clock id: the two fixed ids, or the kernel's encoding
    /// `(~pid << 3) | perthread << 2 | type` of `clock_getcpuclockid` and
    /// `pthread_getcpuclockid`, whose pid is one the program sees (its
    /// namespace's); pid 0 is the caller.
    fn cpu_clock_owner(&self, c: &Call<impl Memory>, clock: i32) -> Option<CpuClock> {
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
        let ns_root = self.procs.get(&c.pid)?.ns_root;
        let in_ns = |pid: i32| self.procs.get(&pid).is_some_and(|p| p.ns_root == ns_root);
        if per_thread {
            self.threads
                .values()
                .find(|t| t.ns_tid == id && t.pid == c.pid)
                .map(|t| CpuClock::Thread(t.vtid))
        } else {
            self.procs
                .values()
                .find(|p| p.ns_pid == id && in_ns(p.pid))
                .map(|p| CpuClock::Process(p.pid))
        }
    }

    /// getrusage: user time is the virtual CPU time, system time and every
    /// counter (page faults, context switches, max RSS) are zero.
    pub(super) fn sys_getrusage(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let who = c.a[0] as i32;
        targs.push(who as i64);
        let ns = match who {
            libc::RUSAGE_SELF => self.cpu.process(c.pid),
            libc::RUSAGE_THREAD => self.cpu.thread(c.vtid),
            libc::RUSAGE_CHILDREN => self.cpu.children(c.pid),
            _ => return err(libc::EINVAL),
        };
        targs.push(ns as i64);
        // struct rusage: two timevals, then 14 longs.
        let mut usage = [0i64; 18];
        usage[0] = (ns / NS) as i64;
        usage[1] = ((ns % NS) / 1000) as i64;
        if c.mem().write_val(c.a[1], &usage).is_err() {
            return err(libc::EFAULT);
        }
        ret(0)
    }

    /// times: the virtual CPU time in clock ticks, all of it user time; the
    /// return value counts ticks of the virtual monotonic clock.
    pub(super) fn sys_times(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let own = self.cpu.process(c.pid) / NS_PER_TICK;
        let children = self.cpu.children(c.pid) / NS_PER_TICK;
        targs.extend([own as i64, children as i64]);
        let tms: [i64; 4] = [own as i64, 0, children as i64, 0];
        if c.a[0] != 0 && c.mem().write_val(c.a[0], &tms).is_err() {
            return err(libc::EFAULT);
        }
        let mono = self
            .clock
            .read_on(self.clock_host(c.pid), libc::CLOCK_MONOTONIC) as u64;
        ret((mono / NS_PER_TICK) as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, PID, VTID};
    use super::NS_PER_TICK;
    use crate::sim::memory::Memory;
    use crate::sim::vclock::{Timespec, MONOTONIC_BASE_NS, NS};
    use crate::sim::world::Thread;

    const BUF: u64 = 0x1000;

    /// The clock id `clock_getcpuclockid`/`pthread_getcpuclockid` make for
    /// the (namespace) id `id`: CPUCLOCK_SCHED, per thread or per process.
    fn clock_id(id: i32, per_thread: bool) -> u64 {
        ((!id << 3) | if per_thread { 4 } else { 0 } | 2) as u64
    }

    /// What clock_gettime on `clock` writes, or its error.
    fn read_clock(sim: &mut crate::sim::state::Sim, clock: u64) -> Result<u64, i64> {
        let c = call(
            libc::SYS_clock_gettime,
            [clock, BUF, 0, 0, 0, 0],
            zeroed(BUF, 16),
        );
        match returned(sim.sys_cpu_clock(&c, &mut vec![])) {
            0 => Ok(c.mem().read_val::<Timespec>(BUF).unwrap().to_ns().unwrap()),
            e => Err(e),
        }
    }

    #[test]
    fn the_cpu_clocks_read_the_virtual_ledger() {
        let mut sim = world();
        sim.threads.insert(2, Thread::new(2, PID, PID + 1, 7));
        sim.cpu.charge(VTID, PID, 300);
        sim.cpu.charge(2, PID, 50);
        let thread = libc::CLOCK_THREAD_CPUTIME_ID as u64;
        let process = libc::CLOCK_PROCESS_CPUTIME_ID as u64;
        assert_eq!(read_clock(&mut sim, thread), Ok(300));
        assert_eq!(read_clock(&mut sim, process), Ok(350));
        // Encoded ids: 0 is the caller, others are namespace ids.
        assert_eq!(read_clock(&mut sim, clock_id(0, true)), Ok(300));
        assert_eq!(read_clock(&mut sim, clock_id(7, true)), Ok(50));
        assert_eq!(read_clock(&mut sim, clock_id(PID, false)), Ok(350));
        let einval = Err(-(libc::EINVAL as i64));
        assert_eq!(
            read_clock(&mut sim, clock_id(99, true)),
            einval,
            "no such thread"
        );
        assert_eq!(
            read_clock(&mut sim, (!0i64 << 3 | 3) as u64),
            einval,
            "bad type"
        );
    }

    #[test]
    fn getrusage_shows_user_time_only_and_checks_who() {
        let mut sim = world();
        sim.cpu.charge(VTID, PID, 2 * NS + 5_000);
        let c = call(
            libc::SYS_getrusage,
            [libc::RUSAGE_SELF as u64, BUF, 0, 0, 0, 0],
            zeroed(BUF, 144),
        );
        assert_eq!(returned(sim.sys_getrusage(&c, &mut vec![])), 0);
        let usage: [i64; 18] = c.mem().read_val(BUF).unwrap();
        assert_eq!(usage[..4], [2, 5, 0, 0], "utime 2.000005 s, stime 0");
        let c = call(libc::SYS_getrusage, [7, BUF, 0, 0, 0, 0], zeroed(BUF, 144));
        assert_eq!(
            returned(sim.sys_getrusage(&c, &mut vec![])),
            -(libc::EINVAL as i64)
        );
        let c = call(
            libc::SYS_getrusage,
            [libc::RUSAGE_SELF as u64, 0x9000, 0, 0, 0, 0],
            zeroed(BUF, 144),
        );
        assert_eq!(
            returned(sim.sys_getrusage(&c, &mut vec![])),
            -(libc::EFAULT as i64)
        );
    }

    #[test]
    fn times_counts_ticks_of_cpu_time_and_of_the_monotonic_clock() {
        let mut sim = world();
        sim.cpu.charge(VTID, PID, 30 * NS_PER_TICK);
        sim.clock.advance_to(NS);
        let c = call(libc::SYS_times, [BUF, 0, 0, 0, 0, 0], zeroed(BUF, 32));
        let ticks = returned(sim.sys_times(&c, &mut vec![]));
        assert_eq!(ticks as u64, (MONOTONIC_BASE_NS + NS) / NS_PER_TICK);
        assert_eq!(c.mem().read_val::<[i64; 4]>(BUF).unwrap(), [30, 0, 0, 0]);
    }
}
