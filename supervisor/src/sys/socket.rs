//! Socket calls on virtual sockets. A virtual socket is a vnet socket; the
//! program holds a placeholder descriptor (an eventfd the supervisor never
//! lets it use directly), so descriptor numbers come from the kernel and
//! never collide. Blocking calls park the thread and re-execute the call when
//! the socket's readiness may have changed.

use vnet::{ConnectProgress, Domain, Kind, NetError, Shutdown};

use super::iovec::{gather, read_iovecs, read_msghdr, scatter, MsgHdr, MAX_IO};
use super::poll::{WANT_READ, WANT_WRITE};
use super::{err, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::netstate::VsId;
use crate::sim::sockaddr as addrs;
use crate::sim::state::Sim;
use crate::sim::world::NewSocket;
use crate::sim::world::{ExitHook, Resume};

const EFD_NONBLOCK: u64 = libc::O_NONBLOCK as u64;
const EFD_CLOEXEC: u64 = libc::O_CLOEXEC as u64;

fn net_err(e: NetError) -> Action {
    err(e.errno())
}

/// Writes msg_name/msg_namelen, msg_controllen = 0 and msg_flags.
fn finish_recvmsg(mem: &impl Memory, hdr: u64, m: &MsgHdr, got: &vnet::Received, inet6: bool) {
    if let (true, Some(from)) = (m.name != 0, got.from) {
        let bytes = addrs::encode(from, inet6);
        let n = bytes.len().min(m.namelen as usize);
        let _ = mem.write_mem(m.name, &bytes[..n]);
        let _ = mem.write_val(hdr + 8, &(bytes.len() as u32));
    }
    let _ = mem.write_val(hdr + 40, &0u64);
    let trunc = if got.full_len > got.data.len() {
        libc::MSG_TRUNC
    } else {
        0
    };
    let _ = mem.write_val(hdr + 48, &trunc);
}

impl Sim {
    /// The virtual socket or simulated pipe end behind descriptor `fd` of
    /// process `pid`, if any: whose readiness the supervisor decides.
    pub(crate) fn simulated_fd(&self, pid: i32, fd: i32) -> Option<VsId> {
        self.procs.get(&pid)?.fds.get(&fd)?.counted()
    }

    /// socket(AF_INET/AF_INET6, SOCK_STREAM/SOCK_DGRAM): a vnet socket and a
    /// placeholder descriptor.
    pub(super) fn sys_socket_inet(&mut self, c: &Call<impl Memory>, domain: Domain) -> Action {
        let ty = c.a[1] as i32;
        let kind = match ty & 0xf {
            libc::SOCK_STREAM => Kind::Stream,
            libc::SOCK_DGRAM => Kind::Dgram,
            _ => {
                return self.unsupported(
                    c,
                    "only TCP and UDP sockets are simulated",
                    libc::EPROTONOSUPPORT,
                );
            }
        };
        let host = self.procs[&c.pid].host;
        let net = self.net.net_mut().socket(host, domain, kind);
        self.placeholder(
            c,
            net,
            ty & libc::SOCK_NONBLOCK != 0,
            ty & libc::SOCK_CLOEXEC != 0,
        )
    }

    /// Turns the current call into eventfd2 so the kernel hands out the
    /// descriptor number; the exit hook binds it to `net`.
    fn placeholder(
        &mut self,
        c: &Call<impl Memory>,
        net: vnet::SocketId,
        nonblocking: bool,
        cloexec: bool,
    ) -> Action {
        let mut regs = c.regs;
        regs.orig_rax = libc::SYS_eventfd2 as u64;
        regs.rdi = 0;
        regs.rsi =
            if nonblocking { EFD_NONBLOCK } else { 0 } | if cloexec { EFD_CLOEXEC } else { 0 };
        Action::Now(Resume::PassThenExit(
            Some(Box::new(regs)),
            ExitHook::NewSocket(NewSocket {
                net,
                nonblocking,
                restore: Box::new(c.regs),
            }),
        ))
    }

    /// Whether a `read` of descriptor `fd` of `pid` would fail with EAGAIN
    /// from [`Sim::handle`] without a change to anything: a non-blocking
    /// simulated socket or pipe end with nothing to read (see `vsock_recv`
    /// and `pipe_read`).
    pub(crate) fn read_would_block(&self, pid: i32, fd: i32) -> bool {
        use crate::sim::fdkind::FdKind;
        match self.procs.get(&pid).and_then(|p| p.fds.get(&fd)) {
            Some(FdKind::Socket(vs)) => self
                .net
                .get(*vs)
                .is_some_and(|s| s.nonblocking && self.net.net().recv_would_block(s.net)),
            Some(FdKind::Pipe(vs)) => {
                let pipes = self.net.pipes();
                pipes.nonblocking(*vs) && pipes.read_would_block(*vs)
            }
            _ => false,
        }
    }

    /// Parks a blocking caller until `vs` may be ready for `mask`; a
    /// non-blocking one gets EAGAIN, and so does a blocking one whose
    /// SO_RCVTIMEO/SO_SNDTIMEO has passed (the deadline survives the
    /// re-execution of the call).
    fn would_block(
        &mut self,
        c: &Call<impl Memory>,
        vs: VsId,
        mask: u32,
        dontwait: bool,
    ) -> Action {
        let Some(sock) = self.net.get(vs) else {
            return err(libc::EBADF);
        };
        if sock.nonblocking || dontwait {
            return err(libc::EAGAIN);
        }
        let option = if mask == WANT_READ {
            libc::SO_RCVTIMEO
        } else {
            libc::SO_SNDTIMEO
        };
        let timeout = match self
            .net
            .net()
            .get_option(sock.net, libc::SOL_SOCKET, option)
        {
            Ok(Some(v)) if v.len() >= 16 => {
                let sec = i64::from_ne_bytes(v[0..8].try_into().expect("8 bytes"));
                let usec = i64::from_ne_bytes(v[8..16].try_into().expect("8 bytes"));
                let ns = sec.max(0) as u64 * 1_000_000_000 + usec.max(0) as u64 * 1000;
                (ns > 0).then_some(ns)
            }
            _ => None,
        };
        let now = self.clock.now();
        let restarted = self
            .threads
            .get_mut(&c.vtid)
            .expect("thread")
            .restart_deadline
            .take();
        let deadline = restarted.or(timeout.map(|ns| now + ns));
        if deadline.is_some_and(|d| d <= now) {
            return err(libc::EAGAIN);
        }
        Sim::park_on_simulated(vs, mask, deadline)
    }

    /// Every call on a descriptor that is a virtual socket.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_vsock(
        &mut self,
        c: &Call<impl Memory>,
        vs: VsId,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        let now = self.clock.now();
        let Some(sock) = self.net.get(vs) else {
            return err(EBADF);
        };
        let (net, inet6) = (sock.net, sock.domain == Domain::Inet6);
        targs.push(c.a[0] as i64);
        match c.nr {
            SYS_bind => match addrs::read(c.mem(), c.a[1], c.a[2]) {
                Ok(sa) => self
                    .net
                    .net_mut()
                    .bind(net, sa)
                    .map_or_else(net_err, |()| ret(0)),
                Err(e) => err(e.errno()),
            },
            SYS_listen => {
                let backlog = (c.a[1] as i32).clamp(1, 4096) as usize;
                self.net
                    .net_mut()
                    .listen(net, backlog)
                    .map_or_else(net_err, |()| ret(0))
            }
            SYS_connect => self.vsock_connect(c, vs, net),
            SYS_accept | SYS_accept4 => {
                let flags = if c.nr == SYS_accept4 {
                    c.a[3] as i32
                } else {
                    0
                };
                match self.net.net_mut().accept(net) {
                    Ok((child, peer)) => {
                        // The peer's address is written before the call
                        // returns, as the kernel writes it: where it
                        // cannot be, the connection is dropped (its peer
                        // reads end of file) and the call fails.
                        let written = addrs::write_out(c.mem(), c.a[1], c.a[2], peer, inet6)
                            .is_ok()
                            && c.mem().flush().is_ok();
                        if !written {
                            let _ = self.net.net_mut().close(child, now);
                            return err(EFAULT);
                        }
                        self.placeholder(
                            c,
                            child,
                            flags & SOCK_NONBLOCK != 0,
                            flags & SOCK_CLOEXEC != 0,
                        )
                    }
                    Err(NetError::WouldBlock) => self.would_block(c, vs, WANT_READ, false),
                    Err(e) => net_err(e),
                }
            }
            SYS_read | SYS_readv | SYS_recvfrom | SYS_recvmsg => {
                self.vsock_recv(c, vs, net, inet6, targs)
            }
            SYS_write | SYS_writev | SYS_sendto | SYS_sendmsg => {
                self.vsock_send(c, vs, net, now, targs)
            }
            SYS_shutdown => {
                let how = match c.a[1] as i32 {
                    SHUT_RD => Shutdown::Read,
                    SHUT_WR => Shutdown::Write,
                    SHUT_RDWR => Shutdown::Both,
                    _ => return err(EINVAL),
                };
                self.net
                    .net_mut()
                    .shutdown(net, how, now)
                    .map_or_else(net_err, |()| ret(0))
            }
            SYS_getsockname | SYS_getpeername => {
                let addr = if c.nr == SYS_getsockname {
                    self.net.net().local_addr(net)
                } else {
                    self.net.net().peer_addr(net)
                };
                match addr {
                    Ok(sa) => addrs::write_out(c.mem(), c.a[1], c.a[2], sa, inet6)
                        .map_or_else(|e| err(e.errno()), |()| ret(0)),
                    Err(e) => net_err(e),
                }
            }
            SYS_setsockopt => {
                let mut val = vec![0u8; (c.a[4] as usize).min(256)];
                if c.mem().read_mem(c.a[3], &mut val).is_err() {
                    return err(EFAULT);
                }
                self.net
                    .net_mut()
                    .set_option(net, c.a[1] as i32, c.a[2] as i32, &val)
                    .map_or_else(net_err, |()| ret(0))
            }
            SYS_getsockopt => self.vsock_getsockopt(c, vs, net),
            SYS_fcntl => {
                let cmd = c.a[1] as i32;
                match cmd {
                    F_SETFL => {
                        self.net.get_mut(vs).expect("socket").nonblocking =
                            c.a[2] as i32 & O_NONBLOCK != 0;
                        Action::Now(Resume::Pass)
                    }
                    F_DUPFD | F_DUPFD_CLOEXEC => Action::Now(Resume::PassThenExit(
                        None,
                        ExitHook::DupFd(crate::sim::fdkind::FdKind::Socket(vs)),
                    )),
                    _ => Action::Now(Resume::Pass),
                }
            }
            SYS_ioctl => match c.a[1] {
                0x5421 /* FIONBIO */ => match c.mem().read_val::<i32>(c.a[2]) {
                    Ok(on) => {
                        self.net.get_mut(vs).expect("socket").nonblocking = on != 0;
                        ret(0)
                    }
                    Err(_) => err(EFAULT),
                },
                0x541B /* FIONREAD */ => {
                    let n = self.net.net().pending_bytes(net).unwrap_or(0) as i32;
                    c.mem().write_val(c.a[2], &n).map_or_else(|_| err(EFAULT), |()| ret(0))
                }
                _ => err(ENOTTY),
            },
            SYS_dup => Action::Now(Resume::PassThenExit(
                None,
                ExitHook::DupFd(crate::sim::fdkind::FdKind::Socket(vs)),
            )),
            _ => self.unsupported(
                c,
                "this call is not simulated on network sockets",
                EOPNOTSUPP,
            ),
        }
    }

    fn vsock_connect(&mut self, c: &Call<impl Memory>, vs: VsId, net: vnet::SocketId) -> Action {
        // A blocking connect re-executed after its wait: report the outcome.
        if self
            .threads
            .get_mut(&c.vtid)
            .expect("thread")
            .connect_pending
            .take()
            == Some(vs)
        {
            return match self.net.net_mut().pending_error(net) {
                Ok(None) => ret(0),
                Ok(Some(e)) | Err(e) => net_err(e),
            };
        }
        let sa = match addrs::read(c.mem(), c.a[1], c.a[2]) {
            Ok(sa) => sa,
            Err(e) => return err(e.errno()),
        };
        match self.net.net_mut().connect(net, sa, self.clock.now()) {
            Ok(ConnectProgress::Connected) => ret(0),
            Ok(ConnectProgress::InProgress) => {
                if self.net.get(vs).is_some_and(|s| s.nonblocking) {
                    return err(libc::EINPROGRESS);
                }
                self.threads
                    .get_mut(&c.vtid)
                    .expect("thread")
                    .connect_pending = Some(vs);
                self.would_block(c, vs, WANT_WRITE, false)
            }
            Err(NetError::NetUnreachable) => {
                let name = self.proc_of(c.vtid).name.clone();
                self.report_once(
                    crate::sim::diagnostics::DiagKind::BlockedConnect,
                    format!(
                        "blocked connect to {sa} by {name:?}: not a simulated host (ENETUNREACH)"
                    ),
                );
                err(libc::ENETUNREACH)
            }
            Err(e) => net_err(e),
        }
    }

    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn vsock_recv(
        &mut self,
        c: &Call<impl Memory>,
        vs: VsId,
        net: vnet::SocketId,
        inet6: bool,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        let (iovs, flags, name_out, msg) = match c.nr {
            SYS_read => (vec![(c.a[1], c.a[2] as usize)], 0, None, None),
            SYS_readv => match read_iovecs(c.mem(), c.a[1], c.a[2]) {
                Some(v) => (v, 0, None, None),
                None => return err(EFAULT),
            },
            SYS_recvfrom => (
                vec![(c.a[1], c.a[2] as usize)],
                c.a[3] as i32,
                (c.a[4] != 0).then_some((c.a[4], c.a[5])),
                None,
            ),
            _ => match read_msghdr(c.mem(), c.a[1]) {
                Some(m) => match read_iovecs(c.mem(), m.iov, m.iovlen) {
                    Some(v) => (v, c.a[2] as i32, None, Some(m)),
                    None => return err(EFAULT),
                },
                None => return err(EFAULT),
            },
        };
        let want: usize = iovs.iter().map(|&(_, l)| l).sum::<usize>().min(MAX_IO);
        targs.push(want as i64);
        match self.net.net_mut().recv(net, want, flags & MSG_PEEK != 0) {
            Ok(got) => {
                if !scatter(c.mem(), &iovs, &got.data) {
                    return err(EFAULT);
                }
                if let (Some((addr, lenp)), Some(from)) = (name_out, got.from) {
                    let _ = addrs::write_out(c.mem(), addr, lenp, from, inet6);
                }
                if let Some(m) = msg {
                    finish_recvmsg(c.mem(), c.a[1], &m, &got, inet6);
                }
                let n = if flags & MSG_TRUNC != 0 {
                    got.full_len
                } else {
                    got.data.len()
                };
                targs.push(n as i64);
                ret(n as i64)
            }
            Err(NetError::WouldBlock) => {
                self.would_block(c, vs, WANT_READ, flags & MSG_DONTWAIT != 0)
            }
            Err(e) => net_err(e),
        }
    }

    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn vsock_send(
        &mut self,
        c: &Call<impl Memory>,
        vs: VsId,
        net: vnet::SocketId,
        now: u64,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        let pid = c.pid;
        let (iovs, flags, to) = match c.nr {
            SYS_write => (vec![(c.a[1], c.a[2] as usize)], 0, None),
            SYS_writev => match read_iovecs(c.mem(), c.a[1], c.a[2]) {
                Some(v) => (v, 0, None),
                None => return err(EFAULT),
            },
            SYS_sendto => {
                let to = if c.a[4] != 0 {
                    match addrs::read(c.mem(), c.a[4], c.a[5]) {
                        Ok(sa) => Some(sa),
                        Err(e) => return err(e.errno()),
                    }
                } else {
                    None
                };
                (vec![(c.a[1], c.a[2] as usize)], c.a[3] as i32, to)
            }
            _ => {
                let Some(m) = read_msghdr(c.mem(), c.a[1]) else {
                    return err(EFAULT);
                };
                let to = if m.name != 0 && m.namelen > 0 {
                    match addrs::read(c.mem(), m.name, m.namelen as u64) {
                        Ok(sa) => Some(sa),
                        Err(e) => return err(e.errno()),
                    }
                } else {
                    None
                };
                match read_iovecs(c.mem(), m.iov, m.iovlen) {
                    Some(v) => (v, c.a[2] as i32, to),
                    None => return err(EFAULT),
                }
            }
        };
        let Some(data) = gather(c.mem(), &iovs, MAX_IO) else {
            return err(EFAULT);
        };
        targs.extend([
            data.len() as i64,
            crate::sim::trace::hash_bytes(&data) as i64,
        ]);
        match self.net.net_mut().send_to(net, &data, to, now) {
            Ok(n) => ret(n as i64),
            Err(NetError::WouldBlock) => {
                self.would_block(c, vs, WANT_WRITE, flags & MSG_DONTWAIT != 0)
            }
            Err(NetError::BrokenPipe) => self.broken_pipe(pid, c.tid, flags & MSG_NOSIGNAL != 0),
            Err(NetError::NetUnreachable) => {
                let name = self.proc_of(c.vtid).name.clone();
                self.report_once(
                    crate::sim::diagnostics::DiagKind::BlockedConnect,
                    format!(
                        "blocked datagram from {name:?} to a non-simulated address (ENETUNREACH)"
                    ),
                );
                err(ENETUNREACH)
            }
            Err(e) => net_err(e),
        }
    }

    fn vsock_getsockopt(&mut self, c: &Call<impl Memory>, vs: VsId, net: vnet::SocketId) -> Action {
        use libc::*;
        let (level, name) = (c.a[1] as i32, c.a[2] as i32);
        let sock = self.net.get(vs).expect("socket");
        let int = |v: i32| v.to_ne_bytes().to_vec();
        let value: Vec<u8> = match (level, name) {
            (SOL_SOCKET, SO_ERROR) => int(match self.net.net_mut().pending_error(net) {
                Ok(Some(e)) => e.errno(),
                _ => 0,
            }),
            (SOL_SOCKET, SO_TYPE) => int(if sock.kind == Kind::Stream {
                SOCK_STREAM
            } else {
                SOCK_DGRAM
            }),
            (SOL_SOCKET, SO_DOMAIN) => int(if sock.domain == Domain::Inet6 {
                AF_INET6
            } else {
                AF_INET
            }),
            (SOL_SOCKET, SO_RCVBUF | SO_SNDBUF) => {
                match self.net.net().get_option(net, level, name) {
                    Ok(Some(v)) => v,
                    _ => int(256 * 1024),
                }
            }
            _ => match self.net.net().get_option(net, level, name) {
                Ok(Some(v)) => v,
                _ => int(0),
            },
        };
        let Ok(room) = c.mem().read_val::<u32>(c.a[4]) else {
            return err(EFAULT);
        };
        let n = value.len().min(room as usize);
        if c.mem().write_mem(c.a[3], &value[..n]).is_err()
            || c.mem().write_val(c.a[4], &(n as u32)).is_err()
        {
            return err(EFAULT);
        }
        ret(0)
    }
}

impl Sim {
    /// The kernel answered the eventfd2 standing in for a new virtual
    /// socket (socket, accept) with descriptor `fd` of `pid`: bind it to
    /// the vnet socket; on the kernel's error (`fd` < 0) close the vnet
    /// socket instead.
    pub(crate) fn placeholder_opened(&mut self, pid: i32, fd: i64, opened: &NewSocket) {
        if fd < 0 {
            let _ = self.net.net_mut().close(opened.net, self.clock.now());
            return;
        }
        let vs = self.net.add(opened.net, opened.nonblocking);
        if let Some(p) = self.procs.get_mut(&pid) {
            p.fds
                .insert(fd as i32, crate::sim::fdkind::FdKind::Socket(vs));
        }
    }
}

#[cfg(test)]
#[path = "socket_tests.rs"]
mod tests;
