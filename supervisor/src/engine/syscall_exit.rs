//! The syscall-exit stop of a call the kernel ran on faultline's behalf:
//! its [`ExitHook`] goes to the syscall family that set it (sys/), which
//! remembers new descriptors, completes results and puts back registers.

use super::*;
use crate::host::tracee;
use crate::sim::fdkind::FdKind;
use crate::sim::memory::Regs;

/// What a passed call's exit hook leaves for the thread.
pub(crate) enum Finish {
    /// It returns this (the kernel's result, or one the hook completed).
    Return(u64),
    /// Its argument registers as the caller had them (the handler changed
    /// some), and it returns this.
    PutBack(Box<Regs>, u64),
    /// It is rewound to make the call again (these registers, rip back at
    /// the `syscall`), once a child it waits for exits.
    Rewind(Box<Regs>),
}

impl Supervisor {
    pub(super) fn on_syscall_exit(&mut self, vtid: Vtid) -> StepEnd {
        let tid = self.sim.threads[&vtid].tid;
        let hook = self.exit_hook.take();
        let Ok(regs) = tracee::get_regs(tid) else {
            return StepEnd::Running;
        };
        match self.finish_passed(vtid, hook, regs.rax) {
            Finish::Return(_) => {}
            Finish::PutBack(saved, ret) => {
                let _ = tracee::put_back_regs(tid, &saved, ret);
            }
            Finish::Rewind(rewound) => {
                let _ = tracee::set_regs(tid, &rewound);
                return StepEnd::Done;
            }
        }
        // The call is made: its site may be patched now.
        self.patch_libc_site(vtid, &regs, true);
        let _ = tracee::cont(tid, 0);
        StepEnd::Running
    }

    /// Runs `hook`, the exit work of the call thread `vtid` passed to the
    /// kernel, on its result `ret`: at the call's syscall-exit stop, or
    /// when the fast path's stub reports the result.
    pub(crate) fn finish_passed(&mut self, vtid: Vtid, hook: Option<ExitHook>, ret: u64) -> Finish {
        let pid = self.sim.threads[&vtid].pid;
        match hook {
            Some(ExitHook::LoaderOpen) => self.loader_opened(pid, ret as i64),
            Some(ExitHook::RestoreArgs(saved)) => return Finish::PutBack(saved, ret),
            Some(ExitHook::Mark(kind)) => self.sim.fd_opened(pid, ret as i64, kind, false),
            Some(ExitHook::DupFd(kind)) => self.sim.fd_opened(pid, ret as i64, kind, true),
            Some(ExitHook::NewSocket(opened)) => {
                self.sim.placeholder_opened(pid, ret as i64, &opened);
                return Finish::PutBack(opened.restore, ret);
            }
            Some(ExitHook::NewPipe { fds }) => {
                self.sim
                    .pipe_opened(&tracee::Process(pid), pid, ret as i64, fds)
            }
            Some(ExitHook::NewNetlink(restore)) => {
                self.sim.fd_opened(pid, ret as i64, FdKind::Netlink, false);
                return Finish::PutBack(restore, ret);
            }
            Some(ExitHook::NewTimerFd { clock, restore }) => {
                self.sim
                    .timerfd_opened(&self.host_fds, pid, ret as i64, clock);
                return Finish::PutBack(restore, ret);
            }
            Some(
                mut hook @ (ExitHook::DiskOpen { .. }
                | ExitHook::DiskWrite { .. }
                | ExitHook::DiskChange { .. }),
            ) => {
                let saved = match &mut hook {
                    ExitHook::DiskChange { restore, .. } => restore.take(),
                    _ => None,
                };
                self.sim.disk_exit(pid, hook, ret as i64);
                if let Some(saved) = saved {
                    return Finish::PutBack(saved, ret);
                }
            }
            Some(ExitHook::AppendEpollEvents {
                buf,
                events,
                restore,
            }) => {
                let mem = tracee::Process(pid);
                let total = crate::sys::append_epoll_events(&mem, ret as i64, buf, &events);
                return Finish::PutBack(restore, total as u64);
            }
            Some(ExitHook::Stat { buf, layout, disk }) if ret == 0 => {
                self.sim.stat_exit(&tracee::Process(pid), buf, layout, disk)
            }
            Some(ExitHook::Statfs { buf, disk }) if ret == 0 => {
                self.sim.statfs_exit(&tracee::Process(pid), buf, disk)
            }
            Some(ExitHook::PatchUname(addr)) if ret == 0 => {
                self.sim.uname_answered(&tracee::Process(pid), pid, addr)
            }
            Some(ExitHook::Dirents(listing)) if (ret as i64) > 0 => {
                self.sim
                    .dirents_listed(&tracee::Process(pid), ret as usize, &listing)
            }
            Some(ExitHook::ParkUnlessReaped(saved)) => {
                if self
                    .sim
                    .wait_probed(&tracee::Process(pid), vtid, &saved, ret as i64)
                {
                    // Rewound to run again once a child exits.
                    return Finish::Rewind(Box::new(Regs {
                        rax: saved.orig_rax,
                        rip: saved.rip - 2,
                        ..*saved
                    }));
                }
                return Finish::PutBack(saved, ret);
            }
            _ => {}
        }
        Finish::Return(ret)
    }
}
