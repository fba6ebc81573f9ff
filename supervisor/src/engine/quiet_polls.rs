//! A Go program's calls that find nothing are not scheduling points: its
//! zero-timeout epoll waits that find nothing ready, and its socket reads
//! that fail with EAGAIN. Go's scheduler polls the network that way
//! whenever a thread looks for work (146,461 of the 1.3 million events of
//! the etcd harness's 60 s seed), and its network code reads a socket
//! until EAGAIN after every read that returned data (49,151 more). Such a
//! call changes nothing and finds what the thread's last scheduling point
//! left, since no other thread runs in between. So it is answered in place
//! (0, -EAGAIN), without a trace event, on every path (trapped, over the
//! channel), except every 64th of a thread, which stays a scheduling point
//! so that a thread polling in a loop still gives way. A patched runtime's
//! stub goes further: its slot says which epoll descriptor was found quiet
//! (`ch::Slot::quiet_epfd`) and which socket empty (`ch::Slot::empty_fd`)
//! at which readiness version, the header the version that holds while
//! the thread runs (`ch::Header::readiness`), and while they agree the
//! stub answers itself. The supervisor counts those at the thread's next
//! request or stop. Every path answers the same calls in place, so the
//! trace is the same on each.

use super::*;
use crate::fast_path::channel::QuietFds;
use crate::sim::host_probe::{HostProbe, MemoryOnly};
use faultline_channel as ch;

/// One in this many quiet calls of a thread is a scheduling point, as one
/// in `--clock-step-every` clock reads is.
const QUIET_CALL_STEP_EVERY: u32 = 64;

/// How many more quiet calls a thread's stub may answer itself when
/// `count` have been answered in place since its last scheduling point at
/// one: the rest up to the 64th, which goes to the supervisor.
fn stub_budget(count: u32) -> u32 {
    (QUIET_CALL_STEP_EVERY - 1).saturating_sub(count)
}

/// Versions of what epoll waits would find: a new one whenever the
/// simulated network or the host's memory of real descriptors changed.
#[derive(Debug, Default)]
pub(crate) struct ReadinessVersions {
    last: Option<(u64, u64)>,
    version: u64,
}

impl ReadinessVersions {
    /// The version at network generation `generation` and host memory
    /// epoch `memo_epoch` (never `ch::UNSETTLED`).
    fn at(&mut self, generation: u64, memo_epoch: u64) -> u64 {
        if self.last != Some((generation, memo_epoch)) {
            self.last = Some((generation, memo_epoch));
            self.version += 1;
        }
        self.version
    }
}

/// Whether `nr(args)` is a wait a quiet epoll instance answers 0 at once:
/// `epoll_wait`, or `epoll_pwait` with no signal mask, with a zero timeout
/// and room for an event.
fn is_zero_poll(nr: i64, args: &[u64; 6]) -> bool {
    let unmasked = match nr {
        libc::SYS_epoll_wait => true,
        libc::SYS_epoll_pwait => args[4] == 0,
        _ => false,
    };
    unmasked && args[2] as i32 > 0 && args[3] as i32 == 0
}

/// The calls a Go program makes that may find nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quiet {
    /// A zero-timeout epoll wait.
    Poll,
    /// A socket read.
    Read,
}

/// The descriptor a slot's entry names: itself, or the complement of one
/// not found quiet at the slot's version (`ch::Slot::quiet_epfd`).
fn named(entry: i32) -> i32 {
    if entry < 0 {
        !entry
    } else {
        entry
    }
}

/// A slot's entry for descriptor `fd`: itself if it was found quiet at the
/// slot's version, else its complement ([`named`] reads it back).
fn entry(fd: i32, found: bool) -> i32 {
    if found {
        fd
    } else {
        !fd
    }
}

/// Which kind of quiet call `nr(args)` may be, and on which descriptor.
fn quiet_call(nr: i64, args: &[u64; 6]) -> Option<(Quiet, i32)> {
    if is_zero_poll(nr, args) {
        Some((Quiet::Poll, args[0] as i32))
    } else if nr == libc::SYS_read {
        Some((Quiet::Read, args[0] as i32))
    } else {
        None
    }
}

impl Supervisor {
    /// If `nr(args)` of `vtid` is a call of a Go program that finds
    /// nothing (a zero-timeout epoll wait, a read of an empty non-blocking
    /// socket): tells the thread's stub, and returns the answer (0,
    /// -EAGAIN) to give in place, unless it is the thread's 64th such call,
    /// which is left to its handler as a scheduling point.
    pub(crate) fn answer_quiet_call(
        &mut self,
        vtid: Vtid,
        nr: i64,
        args: &[u64; 6],
    ) -> Option<i64> {
        let (kind, fd) = quiet_call(nr, args)?;
        let pid = self.sim.threads.get(&vtid)?.pid;
        if !self.go_yields.is_go(self.sim.procs.get(&pid)?.mm) {
            return None;
        }
        let _ = self.settle_doomed();
        self.tell_descriptor_changes();
        let (remembered, answer) = match kind {
            Quiet::Poll => (self.sim.epoll_quiet(&self.host_fds, pid, fd)?, 0),
            Quiet::Read if self.sim.read_would_block(pid, fd) => (true, -(libc::EAGAIN as i64)),
            Quiet::Read => return None,
        };
        let th = self.sim.threads.get_mut(&vtid)?;
        let point = th.quiet_calls + 1 >= QUIET_CALL_STEP_EVERY;
        th.quiet_calls = if point { 0 } else { th.quiet_calls + 1 };
        let (count, slot) = (th.quiet_calls, th.gs_slot);
        let version = self.settled_readiness();
        let held = match (&self.channel, slot) {
            (Some(chan), Some(slot)) if remembered && version.is_some() => Some(chan.quiet(slot).0),
            _ => None,
        };
        if let (Some(held), Some(slot), Some(version)) = (held, slot, version) {
            let fds = match kind {
                Quiet::Poll => QuietFds {
                    epfd: fd,
                    read_fd: self.still_empty(pid, held.read_fd),
                },
                Quiet::Read => QuietFds {
                    epfd: self.still_quiet(pid, held.epfd),
                    read_fd: fd,
                },
            };
            if let Some(chan) = &self.channel {
                chan.set_quiet(slot, fds, version, stub_budget(count));
            }
        }
        if let (Some(chan), Some(version), false) = (&self.channel, version, point) {
            chan.publish_readiness(version);
        }
        if point {
            return None;
        }
        match kind {
            Quiet::Poll => self.quiet_polls += 1,
            Quiet::Read => self.empty_reads += 1,
        }
        Some(answer)
    }

    /// Counts the quiet calls the running thread `vtid`'s stub answered
    /// itself since its last request or stop.
    pub(super) fn take_stub_quiet_calls(&mut self, vtid: Vtid) {
        let (Some(chan), Some(th)) = (&self.channel, self.sim.threads.get_mut(&vtid)) else {
            return;
        };
        let Some(slot) = th.gs_slot else {
            return;
        };
        let (polls, reads) = chan.take_quiet(slot);
        th.quiet_calls += polls + reads;
        self.quiet_polls += u64::from(polls);
        self.quiet_polls_in_stub += u64::from(polls);
        self.empty_reads += u64::from(reads);
        self.empty_reads_in_stub += u64::from(reads);
    }

    /// A Go thread's `read` of `fd` was answered with data: if that left
    /// the socket empty, the thread's stub answers its next read of it (Go
    /// reads again until EAGAIN), once the version is published.
    pub(crate) fn note_socket_read(&mut self, vtid: Vtid, nr: i64, fd: i32) {
        let (Some(chan), Some(th)) = (&self.channel, self.sim.threads.get(&vtid)) else {
            return;
        };
        if let (libc::SYS_read, Some(slot)) = (nr, th.gs_slot) {
            let (held, _) = chan.quiet(slot);
            let fds = QuietFds {
                read_fd: fd,
                ..held
            };
            chan.set_quiet(slot, fds, ch::UNSETTLED, stub_budget(th.quiet_calls));
        }
    }

    /// The slot's entry for the epoll descriptor `held` names: itself if
    /// its zero-timeout waits find nothing now, by what the host remembers
    /// alone (a probe's system call here would delay the thread's answer),
    /// else its complement (`ch::Slot::quiet_epfd`).
    fn still_quiet(&mut self, pid: i32, held: i32) -> i32 {
        let epfd = named(held);
        let host = MemoryOnly::new(&self.host_fds);
        entry(epfd, self.sim.epoll_quiet(&host, pid, epfd) == Some(true))
    }

    /// The slot's entry for the socket `held` names: itself if its reads
    /// fail with EAGAIN now, else its complement (`ch::Slot::empty_fd`).
    fn still_empty(&self, pid: i32, held: i32) -> i32 {
        let fd = named(held);
        entry(fd, self.sim.read_would_block(pid, fd))
    }

    /// The readiness version now, or None while a change may be under way
    /// that the version does not show yet: a call passed to the kernel
    /// (told to the host side at the next decision), a process killed and
    /// not yet gone.
    fn settled_readiness(&mut self) -> Option<u64> {
        if self.sim.descriptors_touched || self.waits.any_doomed() {
            return None;
        }
        let memo_epoch = self.host_fds.memo_epoch()?;
        Some(self.readiness.at(self.sim.net.generation(), memo_epoch))
    }

    /// Thread `tid`, about to run, may answer its quiet calls itself while
    /// nothing changes: the epoll descriptor and the socket its slot names
    /// are looked at again if the version moved since, and the version that
    /// holds now is published.
    pub(super) fn publish_readiness(&mut self, tid: i32) {
        if self.channel.is_none() {
            return;
        }
        if let Some(&vtid) = self.sim.by_tid.get(&tid) {
            self.refresh_quiet(vtid);
        }
        let version = self.settled_readiness().unwrap_or(ch::UNSETTLED);
        if let Some(chan) = &self.channel {
            chan.publish_readiness(version);
        }
    }

    /// Tells `vtid`'s stub again whether the epoll descriptor its last
    /// quiet wait was on is still quiet, and the socket it last read still
    /// empty, if the readiness version moved since: between two of a Go
    /// thread's polls other threads run, and the network changes, but
    /// mostly not that instance's readiness. Nor can the look change the
    /// version: it resolves no epoll dup and polls nothing.
    fn refresh_quiet(&mut self, vtid: Vtid) {
        let (Some(chan), Some(th)) = (&self.channel, self.sim.threads.get(&vtid)) else {
            return;
        };
        let (Some(slot), pid, count) = (th.gs_slot, th.pid, th.quiet_calls) else {
            return;
        };
        let (held, seen) = chan.quiet(slot);
        let Some(version) = self.settled_readiness() else {
            return;
        };
        if version == seen {
            return;
        }
        let fds = QuietFds {
            epfd: self.still_quiet(pid, held.epfd),
            read_fd: self.still_empty(pid, held.read_fd),
        };
        if let Some(chan) = &self.channel {
            chan.set_quiet(slot, fds, version, stub_budget(count));
        }
    }

    /// The supervisor is about to decide something: what the published
    /// version says may change, so no stub answers a wait meanwhile.
    pub(super) fn unsettle_readiness(&self) {
        if let Some(chan) = &self.channel {
            chan.publish_readiness(ch::UNSETTLED);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_changes_exactly_when_what_it_stands_for_does() {
        let mut v = ReadinessVersions::default();
        let first = v.at(5, 1);
        assert_ne!(first, ch::UNSETTLED);
        assert_eq!(v.at(5, 1), first, "nothing changed");
        let second = v.at(6, 1);
        assert_ne!(second, first, "the network changed");
        assert_ne!(v.at(6, 2), second, "the host's memory changed");
        assert_ne!(v.at(5, 1), first, "back to old numbers is still new");
    }

    #[test]
    fn only_a_zero_timeout_wait_without_a_mask_is_a_zero_poll() {
        let wait = |max: u64, timeout: u64, mask: u64| [4, 0x1000, max, timeout, mask, 8];
        assert!(is_zero_poll(libc::SYS_epoll_pwait, &wait(128, 0, 0)));
        assert!(
            !is_zero_poll(libc::SYS_epoll_pwait, &wait(128, 10, 0)),
            "waits"
        );
        assert!(
            !is_zero_poll(libc::SYS_epoll_pwait, &wait(128, u64::MAX, 0)),
            "forever"
        );
        assert!(
            !is_zero_poll(libc::SYS_epoll_pwait, &wait(128, 0, 0x2000)),
            "a mask"
        );
        assert!(
            !is_zero_poll(libc::SYS_epoll_pwait, &wait(0, 0, 0)),
            "EINVAL"
        );
        assert!(is_zero_poll(libc::SYS_epoll_wait, &wait(128, 0, 0)));
        assert!(
            !is_zero_poll(libc::SYS_epoll_wait, &wait(128, 1, 0)),
            "waits"
        );
        assert!(
            !is_zero_poll(libc::SYS_epoll_pwait2, &wait(128, 0, 0)),
            "a timespec"
        );
    }
}
