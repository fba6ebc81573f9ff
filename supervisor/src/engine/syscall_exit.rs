//! Work at the syscall-exit stop of a call the kernel ran on faultline's
//! behalf (an [`ExitHook`]): new descriptors to remember, registers to put
//! back, results to complete.

use super::*;
use crate::host::fdprobe;
use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::sim::world::*;

impl Supervisor {
    pub(super) fn on_syscall_exit(&mut self, vtid: Vtid) -> StepEnd {
        let tid = self.threads[&vtid].tid;
        let pid = self.threads[&vtid].pid;
        let hook = self.exit_hook.take();
        let Ok(regs) = tracee::get_regs(tid) else {
            return StepEnd::Running;
        };
        match hook {
            Some(ExitHook::LoaderOpen) => self.loader_opened(pid, regs.rax as i64),
            Some(ExitHook::RestoreArgs(saved)) => {
                let _ = tracee::put_back_regs(tid, &saved, regs.rax);
            }
            Some(ExitHook::Mark(kind)) if (regs.rax as i64) >= 0 => {
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.fds.insert(regs.rax as i32, kind);
                }
            }
            Some(ExitHook::NewSocket {
                net,
                nonblocking,
                peer,
                restore,
            }) => {
                let fd = regs.rax as i64;
                if fd >= 0 {
                    let vs = self.net.add(net, nonblocking);
                    if let Some(p) = self.procs.get_mut(&pid) {
                        p.fds
                            .insert(fd as i32, crate::host::fdprobe::FdKind::Socket(vs));
                    }
                    if let Some((addr, lenp, sa)) = peer {
                        let inet6 = self
                            .net
                            .get(vs)
                            .is_some_and(|s| s.domain == vnet::Domain::Inet6);
                        let _ = crate::sim::sockaddr::write_out(
                            &tracee::Process(pid),
                            addr,
                            lenp,
                            sa,
                            inet6,
                        );
                    }
                } else {
                    let _ = self.net.net.close(net, self.clock.now());
                }
                let _ = tracee::put_back_regs(tid, &restore, fd as u64);
            }
            Some(ExitHook::NewNetlink(restore)) => {
                let fd = regs.rax;
                if (fd as i64) >= 0 {
                    if let Some(p) = self.procs.get_mut(&pid) {
                        p.fds.insert(fd as i32, fdprobe::FdKind::Netlink);
                    }
                }
                let _ = tracee::put_back_regs(tid, &restore, fd);
            }
            Some(ExitHook::DupFd(kind)) if (regs.rax as i64) >= 0 => {
                if let fdprobe::FdKind::Socket(vs) = kind {
                    self.net.add_ref(vs);
                }
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.fds.insert(regs.rax as i32, kind);
                }
            }
            Some(
                hook @ (ExitHook::DiskOpen { .. }
                | ExitHook::DiskWrite { .. }
                | ExitHook::DiskChange { .. }),
            ) => {
                if let ExitHook::DiskChange {
                    restore: Some(saved),
                    ..
                } = &hook
                {
                    let _ = tracee::put_back_regs(tid, saved, regs.rax);
                }
                self.disk_exit(pid, hook, regs.rax as i64);
            }
            Some(ExitHook::AppendEpollEvents {
                buf,
                events,
                restore,
            }) => {
                let n = regs.rax as i64;
                let ret = if n >= 0 {
                    let at = buf + crate::sys::epoll_event_offset(n as u64);
                    let ok = crate::sys::write_epoll_events(pid, at, &events);
                    n + if ok { events.len() as i64 } else { 0 }
                } else {
                    n
                };
                let _ = tracee::put_back_regs(tid, &restore, ret as u64);
            }
            Some(ExitHook::PatchUname(addr)) if regs.rax == 0 => {
                // struct utsname: six 65-byte fields; nodename is the second.
                let mut field = [0u8; 65];
                let host = self.procs.get(&pid).map(|p| p.host).unwrap_or_default();
                let host_name = self.net.net.host_name(host).to_string();
                let name = host_name.as_bytes();
                let n = name.len().min(64);
                field[..n].copy_from_slice(&name[..n]);
                let _ = tracee::Process(pid).write_mem(addr + 65, &field);
            }
            Some(ExitHook::ParkUnlessReaped(saved)) => {
                if self.nothing_reaped(pid, &saved, regs.rax as i64) {
                    let mut rewound = *saved;
                    rewound.rax = saved.orig_rax;
                    rewound.rip -= 2;
                    let _ = tracee::set_regs(tid, &rewound);
                    self.record(vtid, "wait_child", &[], "park");
                    self.threads.get_mut(&vtid).expect("thread").state =
                        ThreadState::Parked(Wait {
                            kind: WaitKind::Child,
                            deadline: None,
                            on_timeout: Resume::Continue,
                            restartable: true,
                        });
                    return StepEnd::Done;
                }
                let _ = tracee::put_back_regs(tid, &saved, regs.rax);
            }
            _ => {}
        }
        let _ = tracee::cont(tid, 0);
        StepEnd::Running
    }

    /// Whether a WNOHANG probe of wait4/waitid found no child to report.
    pub(super) fn nothing_reaped(&self, pid: i32, saved: &tracee::Regs, ret: i64) -> bool {
        if saved.orig_rax as i64 == libc::SYS_waitid {
            let infop = saved.rdx;
            let si_pid = if infop != 0 && ret == 0 {
                tracee::Process(pid)
                    .read_val::<i32>(infop + 16)
                    .unwrap_or(1)
            } else {
                1
            };
            return ret == 0 && si_pid == 0;
        }
        ret == 0
    }
}
