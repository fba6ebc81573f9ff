//! AF_NETLINK/NETLINK_ROUTE sockets, answered by the supervisor so that
//! interface listing works and shows the simulated host (see netlink.rs).

use super::{err, ret, Action, Call};
use crate::engine::Supervisor;

use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::host::tracee::Regs;
use crate::sim::world::{ExitHook, Resume};

const NETLINK_ROUTE: u64 = 0;
/// sizeof(struct sockaddr_nl).
const SOCKADDR_NL_LEN: u32 = 12;

impl Supervisor {
    /// socket(AF_NETLINK, ..., NETLINK_ROUTE): a placeholder descriptor.
    pub(super) fn sys_socket_netlink(&mut self, c: &Call) -> Action {
        if c.a[2] != NETLINK_ROUTE {
            return self.sim.unsupported(
                c,
                "only NETLINK_ROUTE netlink sockets are simulated",
                libc::EPROTONOSUPPORT,
            );
        }
        let mut regs = c.regs;
        regs.orig_rax = libc::SYS_eventfd2 as u64;
        regs.rdi = 0;
        regs.rsi = if c.a[1] as i32 & libc::SOCK_CLOEXEC != 0 {
            libc::O_CLOEXEC as u64
        } else {
            0
        };
        Action::Now(Resume::PassThenExit(
            Some(Box::new(regs)),
            ExitHook::NewNetlink(Box::new(c.regs)),
        ))
    }

    /// The netlink port id a process's sockets report: its pid as it sees it.
    fn netlink_port(&self, pid: i32) -> u32 {
        self.sim.procs.get(&pid).map_or(0, |p| p.ns_pid as u32)
    }

    /// Every call on a netlink placeholder descriptor.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_netlink(&mut self, c: &Call) -> Action {
        use libc::*;
        let fd = c.a[0] as i32;
        let port = self.netlink_port(c.pid);
        match c.nr {
            SYS_bind | SYS_setsockopt | SYS_shutdown => ret(0),
            SYS_getsockname => {
                let mut sa = (AF_NETLINK as u16).to_ne_bytes().to_vec();
                sa.extend_from_slice(&[0, 0]);
                sa.extend_from_slice(&port.to_ne_bytes());
                sa.extend_from_slice(&0u32.to_ne_bytes());
                let ok = c.mem().write_mem(c.a[1], &sa).is_ok()
                    && c.mem().write_val(c.a[2], &SOCKADDR_NL_LEN).is_ok();
                if ok {
                    ret(0)
                } else {
                    err(EFAULT)
                }
            }
            SYS_write | SYS_sendto | SYS_sendmsg => {
                let (buf, len) = if c.nr == SYS_sendmsg {
                    // The request is in the first iovec of the msghdr.
                    match c
                        .mem()
                        .read_val::<[u64; 4]>(c.a[1])
                        .ok()
                        .and_then(|h| super::iovec::read_iovecs(c.mem(), h[2], h[3].min(1)))
                    {
                        Some(v) if !v.is_empty() => v[0],
                        _ => return err(EFAULT),
                    }
                } else {
                    (c.a[1], c.a[2] as usize)
                };
                let mut req = vec![0u8; len.min(65536)];
                if c.mem().read_mem(buf, &mut req).is_err() {
                    return err(EFAULT);
                }
                let host = self.sim.procs[&c.pid].host;
                let addr = self.sim.net.net.host_addr(host);
                match crate::sim::netlink::reply(&req, addr, port) {
                    Some(r) => {
                        self.sim
                            .net
                            .netlink
                            .entry((c.pid, fd))
                            .or_default()
                            .extend(r);
                        ret(len as i64)
                    }
                    None => err(EINVAL),
                }
            }
            SYS_read | SYS_recvfrom | SYS_recvmsg => self.netlink_recv(c, fd),
            SYS_getsockopt => ret(0),
            _ => self.sim.unsupported(
                c,
                "this call is not simulated on netlink sockets",
                EOPNOTSUPP,
            ),
        }
    }

    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn netlink_recv(&mut self, c: &Call, fd: i32) -> Action {
        use libc::*;
        let iovs = match c.nr {
            SYS_recvmsg => match c
                .mem()
                .read_val::<[u64; 4]>(c.a[1])
                .ok()
                .and_then(|h| super::iovec::read_iovecs(c.mem(), h[2], h[3]))
            {
                Some(v) => v,
                None => return err(EFAULT),
            },
            _ => vec![(c.a[1], c.a[2] as usize)],
        };
        let room: usize = iovs.iter().map(|v| v.1).sum();
        let Some(queue) = self
            .sim
            .net
            .netlink
            .get_mut(&(c.pid, fd))
            .filter(|q| !q.is_empty())
        else {
            return err(EAGAIN);
        };
        let n = room.min(queue.len());
        let data: Vec<u8> = queue.drain(..n).collect();
        let mut rest = &data[..];
        for (base, len) in iovs {
            let k = len.min(rest.len());
            if c.mem().write_mem(base, &rest[..k]).is_err() {
                return err(EFAULT);
            }
            rest = &rest[k..];
        }
        // The sender is the kernel: port id 0.
        let kernel = [AF_NETLINK as u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        if c.nr == SYS_recvfrom && c.a[4] != 0 && c.a[5] != 0 {
            let _ = c.mem().write_mem(c.a[4], &kernel);
            let _ = c.mem().write_val(c.a[5], &SOCKADDR_NL_LEN);
        }
        ret(n as i64)
    }

    /// At the exit of the eventfd2 that stands in for a netlink socket: mark
    /// the placeholder and put back the caller's registers.
    pub(crate) fn netlink_opened(&mut self, tid: i32, pid: i32, fd: u64, restore: &Regs) {
        if (fd as i64) >= 0 {
            if let Some(p) = self.sim.procs.get_mut(&pid) {
                p.fds
                    .insert(fd as i32, crate::host::fdprobe::FdKind::Netlink);
            }
        }
        let _ = tracee::put_back_regs(tid, restore, fd);
    }
}
