//! Thread and process lifecycle calls: clone/fork/vfork (the supervisor learns
//! the flags before the kernel runs them), exit, and wait4/waitid (probed with
//! WNOHANG, parked until a child exits).

use super::{pass, Action, Call};
use crate::sim::memory::{Memory, Regs};
use crate::sim::state::Sim;
use crate::sim::world::{ExitHook, ExitKind};
use crate::sim::world::{Resume, ThreadState, Vtid, Wait, WaitKind};

/// Namespace flags: a new namespace would step outside what faultline sees.
const CLONE_NEW_ANY: u64 = 0x7e02_0080;

impl Sim {
    /// clone, clone3, fork, vfork.
    pub(super) fn sys_clone(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let (flags, ctid) = match c.nr {
            libc::SYS_clone => (c.a[0], c.a[3]),
            libc::SYS_clone3 => match c.mem().read_val::<[u64; 3]>(c.a[0]) {
                Ok([flags, _pidfd, child_tid]) => (flags, child_tid),
                Err(_) => return super::err(libc::EFAULT),
            },
            libc::SYS_vfork => (
                (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as u64,
                0,
            ),
            _ => (libc::SIGCHLD as u64, 0),
        };
        targs.push((flags & !0xff) as i64);
        if flags & CLONE_NEW_ANY != 0 {
            return self.unsupported(c, "new namespaces would escape the simulation", libc::EPERM);
        }
        self.threads.get_mut(&c.vtid).expect("thread").pending_clone = Some((flags, ctid));
        pass()
    }

    /// exit and exit_group: remember which, so the exit event is understood.
    pub(super) fn sys_exit(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        targs.push(c.a[0] as i32 as i64);
        let kind = if c.nr == libc::SYS_exit {
            ExitKind::Thread
        } else {
            ExitKind::Group
        };
        self.threads.get_mut(&c.vtid).expect("thread").exit_kind = Some(kind);
        pass()
    }

    /// wait4 and waitid: run in the kernel with WNOHANG; if no child is ready
    /// the call is rewound and the thread parks until a child exits.
    pub(super) fn sys_wait(&mut self, c: &Call<impl Memory>) -> Action {
        let opt_reg = if c.nr == libc::SYS_wait4 { 2 } else { 3 };
        let options = c.a[opt_reg] as i32;
        if options & libc::WNOHANG != 0 {
            return pass();
        }
        let mut probe = c.regs;
        super::poll::set_arg(&mut probe, opt_reg, (options | libc::WNOHANG) as u32 as u64);
        Action::Now(Resume::PassThenExit(
            Some(Box::new(probe)),
            ExitHook::ParkUnlessReaped(Box::new(c.regs)),
        ))
    }
}

impl Sim {
    /// The exit of a non-blocking probe of wait4/waitid (see `sys_wait`),
    /// which answered `ret` with the caller's registers `saved`: if it
    /// reaped nothing, the thread parks until a child exits and its call
    /// runs again (true); else the caller gets the answer (false).
    pub(crate) fn wait_probed(
        &mut self,
        mem: &impl Memory,
        vtid: Vtid,
        saved: &Regs,
        ret: i64,
    ) -> bool {
        if !nothing_reaped(mem, saved, ret) {
            return false;
        }
        self.record(vtid, "wait_child", &[], "park");
        self.threads.get_mut(&vtid).expect("thread").state = ThreadState::Parked(Wait {
            kind: WaitKind::Child,
            deadline: None,
            on_timeout: Resume::Continue,
            restartable: true,
        });
        true
    }
}

/// Whether a WNOHANG probe of wait4/waitid found no child to report.
fn nothing_reaped(mem: &impl Memory, saved: &Regs, ret: i64) -> bool {
    if saved.orig_rax as i64 == libc::SYS_waitid {
        let infop = saved.rdx;
        let si_pid = if infop != 0 && ret == 0 {
            mem.read_val::<i32>(infop + 16).unwrap_or(1)
        } else {
            1
        };
        return ret == 0 && si_pid == 0;
    }
    ret == 0
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, VTID};
    use super::super::Action;
    use crate::sim::memory::Memory;
    use crate::sim::world::{ExitHook, ExitKind, Resume, ThreadState, WaitKind};

    const ARGS: u64 = 0x1000;

    #[test]
    fn a_clone_is_passed_with_its_flags_noted_and_new_namespaces_refused() {
        let mut sim = world();
        let flags = (libc::CLONE_VM | libc::CLONE_THREAD) as u64;
        let c = call(
            libc::SYS_clone,
            [flags, 0, 0, 0x7000, 0, 0],
            zeroed(ARGS, 8),
        );
        assert!(matches!(
            sim.sys_clone(&c, &mut vec![]),
            Action::Now(Resume::Pass)
        ));
        assert_eq!(sim.threads[&VTID].pending_clone, Some((flags, 0x7000)));
        let mem = zeroed(ARGS, 24);
        mem.write_val(ARGS, &[libc::CLONE_NEWNET as u64, 0, 0])
            .unwrap();
        let c = call(libc::SYS_clone3, [ARGS, 88, 0, 0, 0, 0], mem);
        assert_eq!(
            returned(sim.sys_clone(&c, &mut vec![])),
            -(libc::EPERM as i64)
        );
        let c = call(libc::SYS_clone3, [0x9000, 88, 0, 0, 0, 0], zeroed(ARGS, 8));
        assert_eq!(
            returned(sim.sys_clone(&c, &mut vec![])),
            -(libc::EFAULT as i64)
        );
    }

    #[test]
    fn exit_notes_whether_the_thread_or_the_whole_process_ends() {
        let mut sim = world();
        for (nr, kind) in [
            (libc::SYS_exit, ExitKind::Thread),
            (libc::SYS_exit_group, ExitKind::Group),
        ] {
            let c = call(nr, [3, 0, 0, 0, 0, 0], zeroed(ARGS, 8));
            let mut targs = vec![];
            assert!(matches!(
                sim.sys_exit(&c, &mut targs),
                Action::Now(Resume::Pass)
            ));
            assert_eq!((sim.threads[&VTID].exit_kind, targs), (Some(kind), vec![3]));
        }
    }

    #[test]
    fn a_blocking_wait_first_probes_with_wnohang() {
        let mut sim = world();
        let c = call(
            libc::SYS_wait4,
            [u64::MAX, 0, libc::WNOHANG as u64, 0, 0, 0],
            zeroed(ARGS, 8),
        );
        assert!(matches!(sim.sys_wait(&c), Action::Now(Resume::Pass)));
        let c = call(
            libc::SYS_waitid,
            [0, 0, 0, libc::WEXITED as u64, 0, 0],
            zeroed(ARGS, 8),
        );
        let Action::Now(Resume::PassThenExit(Some(probe), ExitHook::ParkUnlessReaped(_))) =
            sim.sys_wait(&c)
        else {
            panic!("not probed");
        };
        assert_eq!(probe.r10, (libc::WEXITED | libc::WNOHANG) as u64);
    }

    #[test]
    fn a_waitid_probe_that_reaped_nothing_parks_the_caller_until_a_child_exits() {
        let mut sim = world();
        // SAFETY: plain old data.
        let mut saved: crate::sim::memory::Regs = unsafe { std::mem::zeroed() };
        saved.orig_rax = libc::SYS_waitid as u64;
        saved.rdx = ARGS;
        let info = zeroed(ARGS, 128);
        assert!(sim.wait_probed(&info, VTID, &saved, 0), "si_pid 0: nothing");
        assert!(matches!(
            &sim.threads[&VTID].state,
            ThreadState::Parked(w) if matches!(w.kind, WaitKind::Child)
        ));
        let mut sim = world();
        info.write_val(ARGS + 16, &7i32).unwrap();
        assert!(!sim.wait_probed(&info, VTID, &saved, 0), "child 7 reported");
        saved.orig_rax = libc::SYS_wait4 as u64;
        assert!(!sim.wait_probed(&info, VTID, &saved, 7), "wait4 reaped 7");
        assert!(sim.wait_probed(&info, VTID, &saved, 0), "wait4 found none");
    }
}
