//! Descriptor calls: opening /dev/urandom (answered from the seed), reads that
//! could block (parked until the supervisor sees the descriptor ready),
//! writes (hashed into the trace), and sockets (failing closed).

use super::{err, pass, ret, Action, Call};
use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::trace::hash_bytes;
use crate::sim::world::{ExitHook, Resume, Wait, WaitKind};

/// How many bytes of each write are folded into the trace hash.
const WRITE_HASH_BYTES: usize = 4096;
const CLOSE_RANGE_CLOEXEC: u64 = 4;

impl Sim {
    /// open/openat: remember descriptors of the kernel's random devices and
    /// of /proc files; point simulated files (/etc, /proc, /sys) at their
    /// stand-ins.
    pub(super) fn sys_open(&mut self, c: &Call<impl Memory>) -> Action {
        let path_addr = if c.nr == libc::SYS_open {
            c.a[0]
        } else {
            c.a[1]
        };
        let path = c.mem().read_cstr(path_addr, 4096).unwrap_or_default();
        if path == b"/dev/urandom" || path == b"/dev/random" {
            return Action::Now(Resume::PassThenExit(None, ExitHook::Mark(FdKind::Random)));
        }
        let host = self.procs[&c.pid].host;
        let stand_in = match self.net.redirect(&path, host) {
            Some(file) => Some(file),
            None => self.machine_stand_in(c, &path),
        };
        let Some(stand_in) = stand_in else {
            if path.starts_with(b"/proc/") {
                self.note_proc_open(c, &path);
                return Action::Now(Resume::PassThenExit(None, ExitHook::Mark(FdKind::Proc)));
            }
            return pass();
        };
        // Point the path argument at the stand-in's name, placed below the
        // red zone of the caller's stack, and restore it at the exit.
        let mut name = stand_in.into_os_string().into_encoded_bytes();
        name.push(0);
        let scratch = (c.regs.rsp - 128 - name.len() as u64 - 16) & !15;
        if c.mem().write_mem(scratch, &name).is_err() {
            return err(libc::EFAULT);
        }
        let mut regs = c.regs;
        if c.nr == libc::SYS_open {
            regs.rdi = scratch;
        } else {
            regs.rsi = scratch;
        }
        Action::Now(Resume::PassThenExit(
            Some(Box::new(regs)),
            ExitHook::RestoreArgs(Box::new(c.regs)),
        ))
    }

    /// close, close_range, dup2, dup3: keep the descriptor cache exact.
    pub(super) fn sys_close(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        let closed: Vec<i32> = match c.nr {
            libc::SYS_close => vec![c.a[0] as i32],
            libc::SYS_close_range if c.a[2] & CLOSE_RANGE_CLOEXEC == 0 => {
                let (lo, hi) = (c.a[0] as u32, c.a[1] as u32);
                let fds = &self.procs[&c.pid].fds;
                fds.keys()
                    .copied()
                    .filter(|&fd| (lo..=hi).contains(&(fd as u32)))
                    .collect()
            }
            libc::SYS_close_range => Vec::new(),
            _ if c.a[0] != c.a[1] => vec![c.a[1] as i32],
            _ => Vec::new(),
        };
        // close takes one argument; the second register is leftover data.
        let used = if c.nr == libc::SYS_close { 1 } else { 2 };
        targs.extend(c.a[..used].iter().map(|&a| a as i32 as i64));
        match c.nr {
            libc::SYS_close_range if c.a[2] & CLOSE_RANGE_CLOEXEC == 0 => host.forget(
                c.pid,
                c.a[0] as u32 as i32,
                c.a[1].min(i32::MAX as u64) as i32,
            ),
            _ => closed.iter().for_each(|&fd| host.forget(c.pid, fd, fd)),
        }
        let now = self.clock.now();
        let mut timer_closed = false;
        for fd in closed {
            let kind = self.procs.get_mut(&c.pid).expect("process").fds.remove(&fd);
            if let Some(vs) = kind.and_then(FdKind::counted) {
                self.net.drop_ref(c.pid, fd, vs, now);
            }
            timer_closed |= matches!(kind, Some(FdKind::Timer(_)));
            self.net.netlink.remove(&(c.pid, fd));
            self.net.drop_epoll(c.pid, fd);
        }
        if timer_closed {
            self.drop_unheld_timerfds();
        }
        if matches!(c.nr, libc::SYS_dup2 | libc::SYS_dup3) && c.a[0] != c.a[1] {
            // The new descriptor is what the old one is.
            let (old, new) = (c.a[0] as i32, c.a[1] as i32);
            if let Some(kind) = self.procs[&c.pid].fds.get(&old).copied() {
                if let Some(vs) = kind.counted() {
                    self.net.add_ref(vs);
                }
                self.procs
                    .get_mut(&c.pid)
                    .expect("process")
                    .fds
                    .insert(new, kind);
            }
        }
        pass()
    }

    /// A read of a /proc file, passed in place without a trace event: the
    /// file's length depends on what faultline mapped into the process (the
    /// LD_PRELOAD library adds lines to /proc/self/maps, which glibc reads
    /// to find the main thread's stack), so the number of reads must not
    /// move scheduling points. True if `c` is one.
    pub(crate) fn is_proc_read(&self, c: &Call<impl Memory>) -> bool {
        matches!(c.nr, libc::SYS_read | libc::SYS_readv)
            && self
                .procs
                .get(&c.pid)
                .and_then(|p| p.fds.get(&(c.a[0] as i32)))
                == Some(&FdKind::Proc)
    }

    /// fsync, fdatasync and syncfs of a file that is not on a simulated disk
    /// (a node's stdout file, say): durability of host files means nothing
    /// inside the simulation, and a real flush takes as long as the host's
    /// disk wants, which the watchdog would see. Answered at once, with the
    /// kernel's errors for a bad or unsyncable descriptor.
    pub(super) fn sys_host_sync(&mut self, c: &Call<impl Memory>, host: &impl HostProbe) -> Action {
        match self.fd_kind(host, c.pid, c.a[0] as i32) {
            None => err(libc::EBADF),
            Some(
                FdKind::Pollable
                | FdKind::Socket(_)
                | FdKind::Pipe(_)
                | FdKind::Netlink
                | FdKind::Timer(_),
            ) if c.nr != libc::SYS_syncfs => err(libc::EINVAL),
            Some(_) => ret(0),
        }
    }

    /// read, readv, recvfrom, recvmsg, accept, accept4.
    pub(super) fn sys_read(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        let fd = c.a[0] as i32;
        targs.push(fd as i64);
        let flags = match c.nr {
            libc::SYS_recvfrom => c.a[3],
            libc::SYS_recvmsg => c.a[2],
            _ => 0,
        };
        if flags & libc::MSG_DONTWAIT as u64 != 0 {
            return pass();
        }
        match self.fd_kind(host, c.pid, fd) {
            Some(FdKind::Random) if c.nr == libc::SYS_read => {
                let len = (c.a[2] as usize).min(1 << 20);
                targs.push(len as i64);
                match self.fill_random(c.mem(), c.a[1], len) {
                    Ok(()) => ret(len as i64),
                    Err(_) => err(libc::EFAULT),
                }
            }
            Some(FdKind::Pollable) => self.park_unless_ready(host, c.pid, vec![(fd, libc::POLLIN)]),
            _ => pass(),
        }
    }

    /// Passes a blocking call to the kernel only when it cannot block:
    /// the descriptor is non-blocking or already ready; otherwise parks it.
    pub(super) fn park_unless_ready(
        &self,
        host: &impl HostProbe,
        pid: i32,
        fds: Vec<(i32, i16)>,
    ) -> Action {
        if self.fds_ready(host, pid, &fds, true) {
            return pass();
        }
        Action::Park(Wait {
            kind: WaitKind::Fds {
                fds,
                on_ready: Resume::Pass,
            },
            deadline: None,
            on_timeout: Resume::Pass,
            restartable: true,
        })
    }

    /// write, writev: passed to the kernel; their bytes go into the trace hash,
    /// so a run whose output differs has a different hash.
    pub(super) fn sys_write(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let fd = c.a[0] as i32;
        let (addr, len) = if c.nr == libc::SYS_write {
            (c.a[1], c.a[2] as usize)
        } else {
            match c.mem().read_val::<[u64; 2]>(c.a[1]) {
                Ok([base, len]) if c.a[2] > 0 => (base, len as usize),
                _ => (0, 0),
            }
        };
        let mut buf = vec![0u8; len.min(WRITE_HASH_BYTES)];
        let digest = match c.mem().read_mem(addr, &mut buf) {
            Ok(()) => hash_bytes(&buf),
            Err(_) => 0,
        };
        targs.extend([fd as i64, len as i64, digest as i64]);
        self.note_output_write(c.pid, fd);
        pass()
    }

    /// socket: AF_INET/AF_INET6 become virtual sockets, AF_UNIX (local IPC)
    /// is let through, every other family fails closed.
    pub(super) fn sys_socket(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let domain = c.a[0] as i32;
        targs.push(domain as i64);
        match domain {
            libc::AF_UNIX => return pass(),
            libc::AF_INET => return self.sys_socket_inet(c, vnet::Domain::Inet),
            libc::AF_INET6 => return self.sys_socket_inet(c, vnet::Domain::Inet6),
            libc::AF_NETLINK => return self.sys_socket_netlink(c),
            _ => {}
        }
        let fam = match domain {
            libc::AF_NETLINK => "AF_NETLINK",
            libc::AF_PACKET => "AF_PACKET",
            _ => "this family",
        };
        self.unsupported(
            c,
            &format!("{fam} sockets are not simulated; failing closed so nothing reaches the host network"),
            libc::EAFNOSUPPORT,
        )
    }
}

impl Sim {
    /// What a descriptor is, from the cache or by asking the kernel.
    pub(crate) fn fd_kind(&mut self, host: &impl HostProbe, pid: i32, fd: i32) -> Option<FdKind> {
        let p = self.procs.get_mut(&pid)?;
        if let Some(k) = p.fds.get(&fd) {
            return Some(*k);
        }
        let kind = host.classify(pid, fd)?;
        p.fds.insert(fd, kind);
        Some(kind)
    }

    /// An open of a file faultline treats specially (/dev/urandom, a /proc
    /// file) succeeded, or a tracked descriptor was duplicated: remember the
    /// new descriptor as `kind` (a duplicated socket gains a reference).
    pub(crate) fn fd_opened(&mut self, pid: i32, fd: i64, kind: FdKind, duplicate: bool) {
        if fd < 0 {
            return;
        }
        if let (true, Some(vs)) = (duplicate, kind.counted()) {
            self.net.add_ref(vs);
        }
        if let Some(p) = self.procs.get_mut(&pid) {
            p.fds.insert(fd as i32, kind);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, parked, returned, world, zeroed, FakeHost, PID};
    use super::super::Action;
    use crate::sim::fdkind::FdKind;
    use crate::sim::memory::Memory;
    use crate::sim::world::{Resume, WaitKind};

    const BUF: u64 = 0x1000;

    #[test]
    fn a_read_that_would_block_parks_on_its_descriptor_and_a_ready_one_passes() {
        let mut sim = world();
        let read = |sim: &mut crate::sim::state::Sim, host: &FakeHost| {
            let c = call(libc::SYS_read, [7, BUF, 64, 0, 0, 0], zeroed(BUF, 64));
            sim.sys_read(&c, host, &mut vec![])
        };
        let w = parked(read(&mut sim, &FakeHost::default().pollable(7, 0)));
        assert!(
            matches!(&w.kind, WaitKind::Fds { fds, on_ready: Resume::Pass } if fds == &[(7, libc::POLLIN)])
        );
        assert_eq!(
            sim.procs[&PID].fds.get(&7),
            Some(&FdKind::Pollable),
            "kind cached"
        );
        let ready = FakeHost::default().pollable(7, libc::POLLIN);
        assert!(matches!(read(&mut sim, &ready), Action::Now(Resume::Pass)));
    }

    #[test]
    fn a_read_of_urandom_is_answered_from_the_seed() {
        let read = || {
            let mut sim = world();
            sim.fd_opened(PID, 5, FdKind::Random, false);
            let c = call(libc::SYS_read, [5, BUF, 16, 0, 0, 0], zeroed(BUF, 16));
            let n = returned(sim.sys_read(&c, &FakeHost::default(), &mut vec![]));
            (n, c.mem.read_val::<[u64; 2]>(BUF).unwrap())
        };
        let (n, first) = read();
        assert_eq!(n, 16);
        assert_ne!(first, [0, 0]);
        assert_eq!(read().1, first, "same seed, same bytes");
    }

    #[test]
    fn close_forgets_the_descriptor_and_its_kept_copy() {
        let mut sim = world();
        sim.fd_opened(PID, 5, FdKind::Pollable, false);
        sim.fd_opened(PID, 6, FdKind::Pollable, false);
        let host = FakeHost::default();
        let c = call(libc::SYS_close, [5, 0, 0, 0, 0, 0], zeroed(BUF, 8));
        assert!(matches!(
            sim.sys_close(&c, &host, &mut vec![]),
            Action::Now(Resume::Pass)
        ));
        assert_eq!(host.forgotten(), [(5, 5)]);
        assert!(!sim.procs[&PID].fds.contains_key(&5));
        // dup2(6, 9): 9 is what 6 is.
        let c = call(libc::SYS_dup2, [6, 9, 0, 0, 0, 0], zeroed(BUF, 8));
        sim.sys_close(&c, &host, &mut vec![]);
        assert_eq!(host.forgotten(), [(5, 5), (9, 9)]);
        assert_eq!(sim.procs[&PID].fds.get(&9), Some(&FdKind::Pollable));
    }

    #[test]
    fn fsync_of_a_host_file_is_answered_with_the_kernels_errors() {
        let mut sim = world();
        let host = FakeHost::default().pollable(7, 0);
        let fsync = |sim: &mut crate::sim::state::Sim, fd: u64| {
            let c = call(libc::SYS_fsync, [fd, 0, 0, 0, 0, 0], zeroed(BUF, 8));
            returned(sim.sys_host_sync(&c, &host))
        };
        assert_eq!(fsync(&mut sim, 7), -(libc::EINVAL as i64), "a pipe");
        assert_eq!(
            fsync(&mut sim, 8),
            -(libc::EBADF as i64),
            "no such descriptor"
        );
        sim.fd_opened(PID, 3, FdKind::File, false);
        assert_eq!(fsync(&mut sim, 3), 0);
    }
}
