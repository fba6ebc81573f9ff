//! getrlimit, setrlimit and prlimit64 on the simulated limits
//! (`sim::rlimits`), answered by the supervisor: a read from the process's
//! table, a change kept in it. The program sees the same answers on every
//! machine, as a privileged process would (a hard limit may go up). The
//! host enforces the change as far as its own hard limit allows (the
//! supervisor sets it on the process, lowered to that limit): a program
//! that raises its open-file limit past the host's can still run out of
//! descriptors earlier than it expects. A limit of another process is the
//! host's business: passed and reported as a host-state read.

use super::{err, pass, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::rlimits::Limit;
use crate::sim::state::Sim;

/// Sets `limit` on host process `pid`, lowered to the host's hard limit.
fn enforce_on_host(pid: i32, resource: u64, limit: Limit) -> std::io::Result<()> {
    let mut host = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer; no new limit.
    if unsafe { libc::prlimit(pid, resource as _, std::ptr::null(), &mut host) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let max = limit[1].min(host.rlim_max);
    let wanted = libc::rlimit {
        rlim_cur: limit[0].min(max),
        rlim_max: max,
    };
    // SAFETY: a valid limit; the old one is not wanted.
    if unsafe { libc::prlimit(pid, resource as _, &wanted, std::ptr::null_mut()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Sim {
    /// getrlimit (resource, old), setrlimit (resource, new) and prlimit64
    /// (pid, resource, new, old).
    pub(super) fn sys_rlimit(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let (pid, resource, new, old) = match c.nr {
            libc::SYS_getrlimit => (0, c.a[0], 0, c.a[1]),
            libc::SYS_setrlimit => (0, c.a[0], c.a[1], 0),
            _ => (c.a[0] as i32, c.a[1], c.a[2], c.a[3]),
        };
        targs.push(resource as i64);
        let Some(proc) = self.procs.get(&c.pid) else {
            return pass();
        };
        if pid != 0 && pid != proc.ns_pid {
            self.note_host_state(c.pid, "prlimit64 of another process".to_string());
            return pass();
        }
        let Some(previous) = proc.rlimits.get(resource) else {
            return err(libc::EINVAL);
        };
        let limit = match new {
            0 => None,
            addr => match c.mem().read_val::<Limit>(addr) {
                Ok(limit) if limit[0] > limit[1] => return err(libc::EINVAL),
                Ok(limit) => Some(limit),
                Err(_) => return err(libc::EFAULT),
            },
        };
        if old != 0 && c.mem().write_val(old, &previous).is_err() {
            return err(libc::EFAULT);
        }
        if let Some(limit) = limit {
            if let Err(e) = enforce_on_host(c.pid, resource, limit) {
                self.note_host_state(c.pid, format!("setrlimit on the host ({e})"));
            }
            if let Some(proc) = self.procs.get_mut(&c.pid) {
                proc.rlimits.set(resource, limit);
            }
        }
        ret(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed};
    use super::*;
    use crate::sim::world::Resume;

    const LIMIT: u64 = 0x1000;

    #[test]
    fn a_read_answers_from_the_table() {
        let mut sim = world();
        let c = call(
            libc::SYS_getrlimit,
            [libc::RLIMIT_NOFILE as u64, LIMIT, 0, 0, 0, 0],
            zeroed(LIMIT, 16),
        );
        assert_eq!(returned(sim.sys_rlimit(&c, &mut vec![])), 0);
        assert_eq!(c.mem().read_val::<Limit>(LIMIT).unwrap(), [1024, 524_288]);
    }

    #[test]
    fn bad_resources_and_limits_are_invalid() {
        let mut sim = world();
        let c = call(
            libc::SYS_getrlimit,
            [99, LIMIT, 0, 0, 0, 0],
            zeroed(LIMIT, 16),
        );
        assert_eq!(
            returned(sim.sys_rlimit(&c, &mut vec![])),
            -(libc::EINVAL as i64)
        );
        let mem = zeroed(LIMIT, 16);
        mem.write_val(LIMIT, &[10u64, 5]).unwrap();
        let c = call(
            libc::SYS_setrlimit,
            [libc::RLIMIT_NOFILE as u64, LIMIT, 0, 0, 0, 0],
            mem,
        );
        assert_eq!(
            returned(sim.sys_rlimit(&c, &mut vec![])),
            -(libc::EINVAL as i64)
        );
    }

    #[test]
    fn another_process_limit_is_passed_and_reported() {
        let mut sim = world();
        let c = call(
            libc::SYS_prlimit64,
            [7, libc::RLIMIT_NOFILE as u64, 0, LIMIT, 0, 0],
            zeroed(LIMIT, 16),
        );
        assert!(matches!(
            sim.sys_rlimit(&c, &mut vec![]),
            Action::Now(Resume::Pass)
        ));
        assert_eq!(sim.host_state.values().sum::<u64>(), 1);
    }
}
