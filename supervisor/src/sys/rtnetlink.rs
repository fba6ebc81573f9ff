//! AF_NETLINK/NETLINK_ROUTE sockets, answered by the supervisor so that
//! interface listing works and shows the simulated host (see netlink.rs).

use super::{err, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::world::{ExitHook, Resume};

const NETLINK_ROUTE: u64 = 0;
/// sizeof(struct sockaddr_nl).
const SOCKADDR_NL_LEN: u32 = 12;

impl Sim {
    /// socket(AF_NETLINK, ..., NETLINK_ROUTE): a placeholder descriptor.
    pub(super) fn sys_socket_netlink(&mut self, c: &Call<impl Memory>) -> Action {
        if c.a[2] != NETLINK_ROUTE {
            return self.unsupported(
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
        self.procs.get(&pid).map_or(0, |p| p.ns_pid as u32)
    }

    /// Every call on a netlink placeholder descriptor.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_netlink(&mut self, c: &Call<impl Memory>) -> Action {
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
                let host = self.procs[&c.pid].host;
                let addr = self.net.net().host_addr(host);
                match crate::sim::netlink::reply(&req, addr, port) {
                    Some(r) => {
                        self.net.netlink.entry((c.pid, fd)).or_default().extend(r);
                        ret(len as i64)
                    }
                    None => err(EINVAL),
                }
            }
            SYS_read | SYS_recvfrom | SYS_recvmsg => self.netlink_recv(c, fd),
            SYS_getsockopt => ret(0),
            _ => self.unsupported(
                c,
                "this call is not simulated on netlink sockets",
                EOPNOTSUPP,
            ),
        }
    }

    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn netlink_recv(&mut self, c: &Call<impl Memory>, fd: i32) -> Action {
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
            .net
            .netlink
            .get_mut(&(c.pid, fd))
            .filter(|q| !q.is_empty())
        else {
            return err(EAGAIN);
        };
        let n = room.min(queue.len());
        let data: Vec<u8> = queue.drain(..n).collect();
        if !super::iovec::scatter(c.mem(), &iovs, &data) {
            return err(EFAULT);
        }
        // The sender is the kernel: port id 0.
        let kernel = [AF_NETLINK as u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        if c.nr == SYS_recvfrom && c.a[4] != 0 && c.a[5] != 0 {
            let _ = c.mem().write_mem(c.a[4], &kernel);
            let _ = c.mem().write_val(c.a[5], &SOCKADDR_NL_LEN);
        }
        ret(n as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, returned, world, zeroed, PID};
    use super::super::Action;
    use super::SOCKADDR_NL_LEN;
    use crate::sim::memory::{FakeMemory, Memory};
    use crate::sim::world::{ExitHook, Resume};

    const FD: u64 = 7;
    const BUF: u64 = 0x1000;
    const ADDR: u64 = 0x3000;

    fn memory() -> FakeMemory {
        let mem = zeroed(BUF, 0x1000);
        mem.map(ADDR, &[0; 64]);
        mem
    }

    /// An RTM_GETLINK dump request: nlmsghdr, then an empty ifinfomsg.
    fn getlink() -> Vec<u8> {
        let mut req = 32u32.to_ne_bytes().to_vec();
        req.extend_from_slice(&18u16.to_ne_bytes());
        req.extend_from_slice(&0x301u16.to_ne_bytes());
        req.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        req.extend_from_slice(&[0; 16]);
        req
    }

    #[test]
    fn a_route_socket_is_an_eventfd_placeholder_and_other_protocols_fail() {
        let mut sim = world();
        let a = [
            libc::AF_NETLINK as u64,
            (libc::SOCK_RAW | libc::SOCK_CLOEXEC) as u64,
            0,
            0,
            0,
            0,
        ];
        let Action::Now(Resume::PassThenExit(Some(regs), ExitHook::NewNetlink(_))) =
            sim.sys_socket_netlink(&call(libc::SYS_socket, a, memory()))
        else {
            panic!("not rewritten to eventfd2");
        };
        assert_eq!(
            (regs.orig_rax, regs.rsi),
            (libc::SYS_eventfd2 as u64, libc::O_CLOEXEC as u64)
        );
        let uevent = [libc::AF_NETLINK as u64, libc::SOCK_RAW as u64, 15, 0, 0, 0];
        let c = call(libc::SYS_socket, uevent, memory());
        assert_eq!(
            returned(sim.sys_socket_netlink(&c)),
            -(libc::EPROTONOSUPPORT as i64)
        );
    }

    #[test]
    fn a_request_is_answered_in_reads_from_the_kernel_port() {
        let mut sim = world();
        let empty = call(libc::SYS_read, [FD, BUF, 4096, 0, 0, 0], memory());
        assert_eq!(returned(sim.sys_netlink(&empty)), -(libc::EAGAIN as i64));
        let mem = memory();
        mem.write_mem(BUF, &getlink()).unwrap();
        let c = call(libc::SYS_sendto, [FD, BUF, 32, 0, 0, 0], mem);
        assert_eq!(returned(sim.sys_netlink(&c)), 32);
        let c = call(
            libc::SYS_recvfrom,
            [FD, BUF, 4096, 0, ADDR, ADDR + 16],
            memory(),
        );
        let n = returned(sim.sys_netlink(&c));
        assert!(n > 32, "{n}");
        let first_type: u16 = c.mem().read_val(BUF + 4).unwrap();
        assert_eq!(first_type, 16, "RTM_NEWLINK");
        assert_eq!(
            c.mem().read_val::<u16>(ADDR).unwrap(),
            libc::AF_NETLINK as u16
        );
        assert_eq!(c.mem().read_val::<u32>(ADDR + 16).unwrap(), SOCKADDR_NL_LEN);
        assert_eq!(
            returned(sim.sys_netlink(&empty)),
            -(libc::EAGAIN as i64),
            "all read"
        );
    }

    #[test]
    fn the_sockets_port_is_the_pid_the_program_sees() {
        let mut sim = world();
        sim.procs.get_mut(&PID).unwrap().ns_pid = 3;
        let c = call(
            libc::SYS_getsockname,
            [FD, ADDR, ADDR + 32, 0, 0, 0],
            memory(),
        );
        assert_eq!(returned(sim.sys_netlink(&c)), 0);
        assert_eq!(c.mem().read_val::<[u32; 2]>(ADDR).unwrap()[1], 3);
        let c = call(libc::SYS_connect, [FD, ADDR, 12, 0, 0, 0], memory());
        assert_eq!(returned(sim.sys_netlink(&c)), -(libc::EOPNOTSUPP as i64));
    }
}
