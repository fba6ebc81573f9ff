//! Readiness: poll, ppoll, select, pselect6, epoll_wait, epoll_pwait, epoll_pwait2 and
//! epoll_ctl. Readiness is decided by the supervisor: real descriptors are
//! probed through the host (`HostProbe`: pidfd_getfd + poll(0)), virtual
//! sockets asked of vnet. The kernel
//! only ever runs these calls with a zero timeout; a caller that would wait
//! is parked, and its call re-executed when something may be ready or its
//! deadline has passed (the deadline survives the re-execution). The wake
//! scans that re-run parked readiness waits live here too.

use super::{err, ret, Action, Call};
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::{Memory, Regs};
use crate::sim::netstate::{event_bits, VsId};
use crate::sim::quiet_scan::ScanStamp;
use crate::sim::state::Sim;
use crate::sim::vclock::Timespec;
use crate::sim::world::{resume_label, ExitHook, Resume, ThreadState, Vtid, Wait, WaitKind};

/// Where a call keeps its timeout.
enum Timeout {
    /// An int of milliseconds in this argument register (poll, epoll_wait).
    Millis(usize),
    /// A pointer to a timespec in this argument register.
    Timespec(usize),
    /// A pointer to a timeval in this argument register (select).
    Timeval(usize),
}

/// Bytes below the stack pointer that leaf code may use (System V ABI).
const RED_ZONE: u64 = 128;
/// What a read waits for on a simulated socket or pipe end (POLLIN).
pub(super) const WANT_READ: u32 = 0x001;
/// What a write waits for (POLLOUT).
pub(super) const WANT_WRITE: u32 = 0x004;
const POLLNVAL: i16 = 0x20;
/// sizeof(struct epoll_event) on x86_64 (packed).
const EPOLL_EVENT_SIZE: u64 = 12;

/// One entry of a poll set: descriptor, requested events, and where it came from.
struct Entry {
    fd: i32,
    events: i16,
}

impl Sim {
    /// Wakes the threads `waiters` (parked on network readiness) whose
    /// condition may hold; their calls re-execute and decide for
    /// themselves. Runs before every scheduling decision, so it reads the
    /// waits in place. Returns how many of them it looked at: all, unless
    /// `host` had to guess ([`HostProbe::guessed`]).
    pub(crate) fn wake_net_waiters(&mut self, host: &impl HostProbe, waiters: &[Vtid]) -> usize {
        let stamp = |sim: &Sim| {
            host.memo_epoch().map(|memo_epoch| ScanStamp {
                generation: sim.net.generation(),
                memo_epoch,
                net_parks: sim.net_parks,
            })
        };
        let before = stamp(self);
        if self.quiet_net_scan.holds(before, waiters) {
            return waiters.len();
        }
        let mut woke = false;
        for (done, &vtid) in waiters.iter().enumerate() {
            let Some((pid, wait)) = self.parked_wait(vtid) else {
                continue;
            };
            let WaitKind::Net { epoll, seen, .. } = wait.kind else {
                continue;
            };
            // The virtual side is looked at again only if the network
            // changed since it was last found not ready.
            let look = seen != self.net.generation();
            // Resolved now: the registrations may have arrived through a dup
            // of the descriptor after the thread parked.
            let epoll = epoll
                .filter(|_| look)
                .map(|(p, fd)| self.epoll_key(host, p, fd));
            let Some((_, wait)) = self.parked_wait(vtid) else {
                continue;
            };
            let WaitKind::Net { real, virt, .. } = &wait.kind else {
                continue;
            };
            let deadline = wait.deadline;
            let ready = (!real.is_empty() && self.fds_ready(host, pid, real, false))
                || look
                    && (virt.iter().any(|&(vs, mask)| {
                        crate::sim::netstate::event_bits(self.net.readiness(vs)) & (mask | 0x18)
                            != 0
                    }) || epoll.is_some_and(|key| self.net.epoll_any_ready(key)));
            if host.guessed() {
                return done;
            }
            let t = self.threads.get_mut(&vtid).expect("thread");
            if ready {
                woke = true;
                t.restart_deadline = deadline;
                t.state = ThreadState::Ready(Resume::Restart);
                self.record(vtid, "ready", &[], "restart");
            } else if let ThreadState::Parked(Wait {
                kind: WaitKind::Net { seen, .. },
                ..
            }) = &mut t.state
            {
                *seen = self.net.generation();
            }
        }
        // Remembered only if the scan itself changed nothing it looks at:
        // then every waiter's `seen` is the generation.
        if !woke && stamp(self) == before {
            self.quiet_net_scan.remember(before, waiters);
        }
        waiters.len()
    }

    /// Thread `vtid`'s process and wait, if it is parked.
    fn parked_wait(&self, vtid: Vtid) -> Option<(i32, &Wait)> {
        let t = self.threads.get(&vtid)?;
        match &t.state {
            ThreadState::Parked(w) => Some((t.pid, w)),
            _ => None,
        }
    }

    /// True if the kernel would not block a call on any of `fds` of process
    /// `pid` now: one is ready, invalid (the call fails at once), or — when
    /// `nonblocking_counts` — opened O_NONBLOCK.
    pub(super) fn fds_ready(
        &self,
        host: &impl HostProbe,
        pid: i32,
        fds: &[(i32, i16)],
        nonblocking_counts: bool,
    ) -> bool {
        // Nothing can be probed of a process without a pidfd: the kernel
        // answers.
        fds.iter().any(|&(fd, ev)| {
            let ready = if nonblocking_counts {
                host.would_not_block(pid, fd, ev)
            } else {
                host.revents(pid, fd, ev).map(|r| r.map(|r| r != 0))
            };
            ready.map_or(true, |r| r.unwrap_or(true))
        })
    }

    /// Wakes the threads `waiters` (parked on real descriptors) whose
    /// descriptors have become ready. Returns how many of them it looked
    /// at: all, unless `host` had to guess ([`HostProbe::guessed`]).
    pub(crate) fn wake_ready_fds(&mut self, host: &impl HostProbe, waiters: &[Vtid]) -> usize {
        for (done, &vtid) in waiters.iter().enumerate() {
            let Some((pid, wait)) = self.parked_wait(vtid) else {
                continue;
            };
            let WaitKind::Fds { fds, on_ready } = &wait.kind else {
                continue;
            };
            let ready = self.fds_ready(host, pid, fds, false);
            if host.guessed() {
                return done;
            }
            if ready {
                let on_ready = on_ready.clone();
                self.record(vtid, "ready", &[], resume_label(&on_ready));
                self.threads.get_mut(&vtid).expect("thread").state = ThreadState::Ready(on_ready);
            }
        }
        waiters.len()
    }

    /// poll, ppoll, select, pselect6.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(super) fn sys_poll(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        let (timeout, entries, is_select) = match c.nr {
            SYS_poll => (Timeout::Millis(2), self.pollfds(c), false),
            SYS_ppoll => (Timeout::Timespec(2), self.pollfds(c), false),
            SYS_select => (Timeout::Timeval(4), self.select_fds(c), true),
            _ => (Timeout::Timespec(4), self.select_fds(c), true),
        };
        targs.extend(entries.iter().map(|e| e.fd as i64));
        let deadline = match self.deadline(c, &timeout) {
            Ok(d) => d,
            Err(e) => return err(e),
        };
        let expired = deadline.is_some_and(|d| d <= self.clock.now());
        let virt: Vec<(crate::sim::netstate::VsId, u32)> = entries
            .iter()
            .filter_map(|e| {
                self.simulated_fd(c.pid, e.fd)
                    .map(|vs| (vs, e.events as u16 as u32))
            })
            .collect();
        let real: Vec<(i32, i16)> = entries
            .iter()
            .filter(|e| self.simulated_fd(c.pid, e.fd).is_none())
            .map(|e| (e.fd, e.events))
            .collect();
        if virt.is_empty() {
            // Only real descriptors: the kernel answers, with a zero timeout.
            if expired || self.fds_ready(host, c.pid, &real, false) {
                return self.zero_timeout_pass(c, &timeout, None);
            }
        } else {
            let revents: Vec<i16> = entries
                .iter()
                .map(|e| self.revents(host, c.pid, e))
                .collect();
            let ready = revents.iter().filter(|&&r| r != 0).count();
            if ready > 0 || expired {
                let written = if is_select {
                    self.write_select_result(c, &entries, &revents)
                } else {
                    self.write_poll_result(c, &revents)
                };
                return match written {
                    Some(n) => ret(n as i64),
                    None => err(libc::EFAULT),
                };
            }
        }
        self.park_net(real, virt, None, deadline)
    }

    /// epoll_wait, epoll_pwait, epoll_pwait2.
    pub(super) fn sys_epoll_wait(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        let timeout = if c.nr == libc::SYS_epoll_pwait2 {
            Timeout::Timespec(3)
        } else {
            Timeout::Millis(3)
        };
        let (epfd, events, max) = (c.a[0] as i32, c.a[1], c.a[2] as i32);
        targs.push(epfd as i64);
        if max <= 0 {
            return err(libc::EINVAL);
        }
        let deadline = match self.deadline(c, &timeout) {
            Ok(d) => d,
            Err(e) => return err(e),
        };
        let expired = deadline.is_some_and(|d| d <= self.clock.now());
        let key = self.epoll_key(host, c.pid, epfd);
        let real_ready = self.fds_ready(host, c.pid, &[(epfd, libc::POLLIN)], false);
        let has_virtual = self.net.has_epoll(key);
        if !has_virtual && (real_ready || expired) {
            return self.zero_timeout_pass(c, &timeout, None);
        }
        if has_virtual {
            let virt = self.net.epoll_ready(key, max as usize, true);
            if real_ready && virt.len() < max as usize {
                // The kernel fills in the real events; the exit hook appends ours.
                return self.zero_timeout_pass(c, &timeout, Some((virt, max)));
            }
            if !virt.is_empty() || expired {
                targs.push(virt.len() as i64);
                return match write_epoll_events(c.mem(), events, &virt) {
                    true => ret(virt.len() as i64),
                    false => err(libc::EFAULT),
                };
            }
        }
        self.park_net(vec![(epfd, libc::POLLIN)], Vec::new(), Some(key), deadline)
    }

    /// Whether a zero-timeout wait on epoll descriptor `epfd` of `pid`
    /// would return 0 events from [`Sim::sys_epoll_wait`] without a change
    /// to anything: the instance has simulated registrations (else the
    /// kernel answers the wait), none of them is ready, nor are its real
    /// descriptors. `Some(true)` if `host` remembers those not ready, so
    /// that it answers the same without a system call until it next
    /// changes (`HostProbe::memo_epoch`); `None` if the wait finds
    /// something or is the kernel's to answer.
    pub(crate) fn epoll_quiet(
        &mut self,
        host: &impl HostProbe,
        pid: i32,
        epfd: i32,
    ) -> Option<bool> {
        let key = self.epoll_key(host, pid, epfd);
        let quiet = self.net.has_epoll(key)
            && !self.net.epoll_any_ready(key)
            && !self.fds_ready(host, pid, &[(epfd, libc::POLLIN)], false);
        quiet.then(|| host.known_not_ready(pid, epfd, libc::POLLIN))
    }

    /// epoll_ctl: virtual sockets and simulated pipe ends are registered in
    /// the supervisor, real descriptors in the kernel.
    pub(super) fn sys_epoll_ctl(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        let (epfd, op, fd) = (c.a[0] as i32, c.a[1] as i32, c.a[2] as i32);
        targs.extend([epfd as i64, op as i64, fd as i64]);
        let Some(vs) = self.simulated_fd(c.pid, fd) else {
            return Action::Now(Resume::Pass);
        };
        let (events, data) = if op == libc::EPOLL_CTL_DEL {
            (0, 0)
        } else {
            let mut raw = [0u8; 12];
            if c.mem().read_mem(c.a[3], &mut raw).is_err() {
                return err(libc::EFAULT);
            }
            (
                u32::from_ne_bytes(raw[0..4].try_into().expect("4 bytes")),
                u64::from_ne_bytes(raw[4..12].try_into().expect("8 bytes")),
            )
        };
        let key = self.epoll_key(host, c.pid, epfd);
        match self.net.epoll_ctl(key, op, fd, vs, events, data) {
            Ok(()) => ret(0),
            Err(e) => err(e),
        }
    }

    /// The key of epoll descriptor `epfd`'s registrations: a descriptor not
    /// seen before may be a dup of one that has registrations (tokio's mio
    /// registers through a dup of the epoll fd it waits on), which kcmp tells.
    fn epoll_key(&mut self, host: &impl HostProbe, pid: i32, epfd: i32) -> (i32, i32) {
        if self.net.knows_epoll((pid, epfd)) {
            return self.net.epoll_key((pid, epfd));
        }
        let original = self
            .net
            .epoll_fds(pid)
            .into_iter()
            .find(|&known| host.same_file(pid, epfd, known));
        match original {
            Some(known) => {
                self.net.alias_epoll((pid, epfd), (pid, known));
                self.net.epoll_key((pid, known))
            }
            None => (pid, epfd),
        }
    }

    /// Parks a blocking read or write until the simulated socket or pipe
    /// end `vs` may be ready for `mask` (or is in error or hung up), or
    /// until `deadline`; the call is then made again.
    pub(super) fn park_on_simulated(vs: VsId, mask: u32, deadline: Option<u64>) -> Action {
        Action::Park(Wait {
            kind: WaitKind::Net {
                real: Vec::new(),
                virt: vec![(vs, mask)],
                epoll: None,
                seen: 0,
            },
            deadline,
            on_timeout: Resume::Restart,
            restartable: true,
        })
    }

    /// Parks until a real descriptor, a virtual socket or an epoll instance
    /// may be ready, or the deadline; the call is then executed again.
    fn park_net(
        &mut self,
        real: Vec<(i32, i16)>,
        virt: Vec<(crate::sim::netstate::VsId, u32)>,
        epoll: Option<(i32, i32)>,
        deadline: Option<u64>,
    ) -> Action {
        Action::Park(Wait {
            kind: WaitKind::Net {
                real,
                virt,
                epoll,
                seen: 0,
            },
            deadline,
            on_timeout: Resume::Restart,
            restartable: false,
        })
    }

    /// poll(2) revents of one entry.
    fn revents(&self, host: &impl HostProbe, pid: i32, e: &Entry) -> i16 {
        if let Some(vs) = self.simulated_fd(pid, e.fd) {
            let always = libc::POLLERR | libc::POLLHUP;
            return (event_bits(self.net.readiness(vs)) as i16) & (e.events | always);
        }
        match host.revents(pid, e.fd, e.events) {
            Ok(Some(r)) => r,
            _ => POLLNVAL,
        }
    }

    fn write_poll_result(&self, c: &Call<impl Memory>, revents: &[i16]) -> Option<usize> {
        let n = (c.a[1] as usize).min(4096);
        let mut next = revents.iter();
        let mut count = 0;
        for i in 0..n {
            let at = c.a[0] + 8 * i as u64;
            let fd: i32 = c.mem().read_val(at).ok()?;
            let r = if fd >= 0 {
                *next.next().unwrap_or(&0)
            } else {
                0
            };
            count += usize::from(r != 0);
            c.mem().write_val(at + 6, &r).ok()?;
        }
        Some(count)
    }

    fn write_select_result(
        &self,
        c: &Call<impl Memory>,
        entries: &[Entry],
        revents: &[i16],
    ) -> Option<usize> {
        let words = (c.a[0] as usize).min(libc::FD_SETSIZE).div_ceil(64);
        let mut sets = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
        let mut count = 0;
        for (e, &r) in entries.iter().zip(revents) {
            let (set, hit) = match e.events {
                libc::POLLIN => (0, r & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0),
                libc::POLLOUT => (1, r & (libc::POLLOUT | libc::POLLERR) != 0),
                _ => (2, r & libc::POLLPRI != 0),
            };
            if hit {
                sets[set][e.fd as usize / 64] |= 1 << (e.fd % 64);
                count += 1;
            }
        }
        for (i, set) in sets.iter().enumerate() {
            let addr = c.a[1 + i];
            if addr != 0 {
                for (w, bits) in set.iter().enumerate() {
                    c.mem().write_val(addr + 8 * w as u64, bits).ok()?;
                }
            }
        }
        Some(count)
    }

    /// The entries of a poll/ppoll array.
    fn pollfds(&self, c: &Call<impl Memory>) -> Vec<Entry> {
        let n = (c.a[1] as usize).min(4096);
        (0..n)
            .filter_map(|i| {
                let [fd, ev]: [i32; 2] = c.mem().read_val(c.a[0] + 8 * i as u64).unwrap_or([-1, 0]);
                (fd >= 0).then_some(Entry {
                    fd,
                    events: (ev & 0xffff) as i16,
                })
            })
            .collect()
    }

    /// The entries of select's three fd_sets (read, write, except).
    fn select_fds(&self, c: &Call<impl Memory>) -> Vec<Entry> {
        let nfds = (c.a[0] as usize).min(libc::FD_SETSIZE);
        let words = nfds.div_ceil(64);
        let mut out = Vec::new();
        for (set, events) in [
            (c.a[1], libc::POLLIN),
            (c.a[2], libc::POLLOUT),
            (c.a[3], libc::POLLPRI),
        ] {
            if set == 0 {
                continue;
            }
            for w in 0..words {
                let bits: u64 = c.mem().read_val(set + 8 * w as u64).unwrap_or(0);
                for b in 0..64 {
                    let fd = w * 64 + b;
                    if fd < nfds && bits & (1 << b) != 0 {
                        out.push(Entry {
                            fd: fd as i32,
                            events,
                        });
                    }
                }
            }
        }
        out
    }

    /// The call's deadline in scheduler time (`None`: wait forever). A call
    /// re-executed after a wait keeps the deadline of its first execution.
    fn deadline(&mut self, c: &Call<impl Memory>, t: &Timeout) -> Result<Option<u64>, i32> {
        if let Some(d) = self
            .threads
            .get_mut(&c.vtid)
            .expect("thread")
            .restart_deadline
            .take()
        {
            return Ok(Some(d));
        }
        let ns = match *t {
            Timeout::Millis(i) => {
                let ms = c.a[i] as i32;
                (ms >= 0).then(|| ms as u64 * 1_000_000)
            }
            Timeout::Timespec(i) | Timeout::Timeval(i) => {
                if c.a[i] == 0 {
                    None
                } else {
                    let ts: Timespec = c.mem().read_val(c.a[i]).map_err(|_| libc::EFAULT)?;
                    let ts = if matches!(t, Timeout::Timeval(_)) {
                        Timespec {
                            sec: ts.sec,
                            nsec: ts.nsec.saturating_mul(1000),
                        }
                    } else {
                        ts
                    };
                    Some(ts.to_ns().ok_or(libc::EINVAL)?)
                }
            }
        };
        Ok(ns.map(|ns| self.poll_end(c.vtid, self.clock.now().saturating_add(ns))))
    }

    /// Runs the call in the kernel with a zero timeout: the timeout argument
    /// is replaced (a zeroed timespec is placed below the red zone of the
    /// caller's stack) and restored at the call's exit. With `append`, the
    /// kernel may fill at most `max - append.len()` epoll events and the
    /// virtual ones are appended at the exit.
    fn zero_timeout_pass(
        &self,
        c: &Call<impl Memory>,
        t: &Timeout,
        append: Option<(Vec<(u32, u64)>, i32)>,
    ) -> Action {
        let mut regs = c.regs;
        match *t {
            Timeout::Millis(i) => set_arg(&mut regs, i, 0),
            Timeout::Timespec(i) | Timeout::Timeval(i) => {
                let scratch = (c.regs.rsp - RED_ZONE - 16) & !15;
                if c.mem().write_val(scratch, &Timespec::default()).is_err() {
                    return err(libc::EFAULT);
                }
                set_arg(&mut regs, i, scratch);
            }
        }
        let restore = Box::new(c.regs);
        let hook = match append {
            Some((events, max)) => {
                regs.rdx = (max as usize - events.len()) as u64;
                ExitHook::AppendEpollEvents {
                    buf: c.a[1],
                    events,
                    restore,
                }
            }
            None => ExitHook::RestoreArgs(restore),
        };
        Action::Now(Resume::PassThenExit(Some(Box::new(regs)), hook))
    }
}

/// Writes epoll events (packed 12-byte structs) at `buf`.
pub(crate) fn write_epoll_events(mem: &impl Memory, buf: u64, events: &[(u32, u64)]) -> bool {
    let mut bytes = Vec::with_capacity(events.len() * EPOLL_EVENT_SIZE as usize);
    for &(ev, data) in events {
        bytes.extend_from_slice(&ev.to_ne_bytes());
        bytes.extend_from_slice(&data.to_ne_bytes());
    }
    mem.write_mem(buf, &bytes).is_ok()
}

/// The byte offset of epoll event `n` in a buffer.
pub(crate) fn epoll_event_offset(n: u64) -> u64 {
    n * EPOLL_EVENT_SIZE
}

/// Sets syscall argument register `i` (0-based: rdi, rsi, rdx, r10, r8, r9).
pub(super) fn set_arg(regs: &mut Regs, i: usize, v: u64) {
    match i {
        0 => regs.rdi = v,
        1 => regs.rsi = v,
        2 => regs.rdx = v,
        3 => regs.r10 = v,
        4 => regs.r8 = v,
        _ => regs.r9 = v,
    }
}

/// epoll_wait ran in the kernel for the real descriptors and found `n`
/// (or failed with `n` < 0): the ready virtual sockets' events go after the
/// kernel's, and the call answers the total.
pub(crate) fn append_epoll_events(
    mem: &impl Memory,
    n: i64,
    buf: u64,
    events: &[(u32, u64)],
) -> i64 {
    if n < 0 {
        return n;
    }
    let at = buf + epoll_event_offset(n as u64);
    n + if write_epoll_events(mem, at, events) {
        events.len() as i64
    } else {
        0
    }
}

#[cfg(test)]
#[path = "poll_tests.rs"]
mod tests;
