//! A small world for handler unit tests: one process with one thread on
//! host "n1", at the default epoch, and calls whose memory is a
//! `FakeMemory`, so a handler runs without a process.

use crate::hashing::HashMap;
use std::cell::RefCell;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use super::Call;
use crate::sim::diskstate::NodeDisk;
use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::{HostProbe, SigStatus, Unprobed};
use crate::sim::memory::FakeMemory;
use crate::sim::netstate::NetState;
use crate::sim::scheduler::SchedulePolicy;
use crate::sim::state::Sim;
use crate::sim::trace::TraceLog;
use crate::sim::world::{Process, Thread, Vtid};

/// The test process's host pid.
pub(super) const PID: i32 = 100;

/// The test thread's virtual id (its host tid is `PID`).
pub(super) const VTID: Vtid = 1;

/// REALTIME at the start of a test world: 2025-01-01T00:00:00Z.
pub(super) const EPOCH_SECS: i64 = 1_735_689_600;

/// A folder name under the temporary folder no other test uses.
fn temp_dir(label: &str) -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("faultline-{label}-{}-{n}", std::process::id()))
}

/// A world of one process with one thread, on 2 CPUs.
pub(super) fn world() -> Sim {
    let dir = temp_dir("sys");
    let net =
        NetState::new(1, vnet::NetConfig::default(), &["n1".into()], &dir).expect("net state");
    let _ = std::fs::remove_dir_all(&dir);
    let mut sim = Sim::new(
        1,
        EPOCH_SECS,
        2,
        SchedulePolicy::Random,
        TraceLog::new(None, true),
        net,
    );
    let host = sim.net.hosts["n1"];
    sim.procs.insert(PID, Process::new(PID, host, 1, 1, 0));
    sim.threads.insert(VTID, Thread::new(VTID, PID, PID, PID));
    sim.by_tid.insert(PID, VTID);
    sim
}

/// Call `nr` by the test thread with arguments `a`, on memory `mem`.
pub(super) fn call(nr: i64, a: [u64; 6], mem: FakeMemory) -> Call<FakeMemory> {
    Call {
        vtid: VTID,
        tid: PID,
        pid: PID,
        nr,
        a,
        // SAFETY: plain old data; no handler under test reads it.
        regs: unsafe { std::mem::zeroed() },
        mem,
    }
}

/// The value a handler answered with; panics if it parked or passed.
pub(super) fn returned(action: super::Action) -> i64 {
    match action {
        super::Action::Now(crate::sim::world::Resume::Return(v)) => v,
        super::Action::Now(r) => panic!("resumed with {r:?}, not a return value"),
        super::Action::Park(w) => panic!("parked on {:?}", w.kind),
    }
}

/// The wait a handler parked its thread on; panics if it did not park.
pub(super) fn parked(action: super::Action) -> crate::sim::world::Wait {
    match action {
        super::Action::Park(w) => w,
        super::Action::Now(r) => panic!("resumed with {r:?} instead of parking"),
    }
}

/// A fake memory with `len` zero bytes at `addr`.
pub(super) fn zeroed(addr: u64, len: usize) -> FakeMemory {
    let mem = FakeMemory::default();
    mem.map(addr, &vec![0; len]);
    mem
}

/// Where the test process's node sees its simulated disk.
pub(super) const DISK_AT: &str = "/data";

/// A folder removed when the test is done with it, passed or not.
pub(super) struct TempDir(pub PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Gives the test process's node a simulated disk of `size` bytes, seen at
/// `DISK_AT`, backed by a fresh folder (removed when the result is dropped).
pub(super) fn add_disk(sim: &mut Sim, size: u64) -> TempDir {
    let root = temp_dir("disk");
    let disk = vfs::Disk::new(&root, 1).expect("disk");
    let host = sim.procs[&PID].host;
    let node = sim.node_of(PID);
    let visible = PathBuf::from(DISK_AT);
    sim.disks.add(NodeDisk {
        node,
        host,
        visible,
        disk,
        size,
    });
    TempDir(root)
}

/// The host as a handler test sets it up: the kinds and readiness of the
/// test process's descriptors the kernel would own, and its threads'
/// signal words. A descriptor it was not told of does not exist.
#[derive(Default)]
pub(super) struct FakeHost {
    /// Descriptors by number: their kind and the revents a probe finds.
    fds: HashMap<i32, (FdKind, i16)>,
    /// Regular files by descriptor: their position and whether they were
    /// opened for writing.
    files: HashMap<i32, (u64, bool)>,
    /// Pairs of descriptors that are the same open file.
    same: Vec<(i32, i32)>,
    /// The signal words of the test process's threads.
    signals: SigStatus,
    /// The ranges `forget` was told of.
    forgotten: RefCell<Vec<(i32, i32)>>,
    /// What `memo_epoch` answers: a host that remembers descriptors found
    /// not ready, its memory unchanged while this is.
    memo_epoch: Option<u64>,
}

impl FakeHost {
    /// Gives the test process descriptor `fd`, a pipe, eventfd or the like
    /// whose probe answers `revents` (0: not ready).
    pub(super) fn pollable(mut self, fd: i32, revents: i16) -> FakeHost {
        self.fds.insert(fd, (FdKind::Pollable, revents));
        self
    }

    /// Gives the test process descriptor `fd`, a regular file at offset
    /// `position`, opened for writing or not.
    pub(super) fn file(mut self, fd: i32, position: u64, writable: bool) -> FakeHost {
        self.fds
            .insert(fd, (FdKind::File, libc::POLLIN | libc::POLLOUT));
        self.files.insert(fd, (position, writable));
        self
    }

    /// Makes the host one whose memory of descriptors found not ready has
    /// lost nothing since `epoch` last changed (`HostProbe::memo_epoch`).
    pub(super) fn remembering(mut self, epoch: u64) -> FakeHost {
        self.memo_epoch = Some(epoch);
        self
    }

    /// Makes descriptors `a` and `b` the same open file (a dup).
    pub(super) fn dup(mut self, a: i32, b: i32) -> FakeHost {
        self.same.push((a, b));
        self
    }

    /// Sets the signal words of the test process's threads.
    pub(super) fn signals(mut self, signals: SigStatus) -> FakeHost {
        self.signals = signals;
        self
    }

    /// The descriptor ranges the handler said were closed.
    pub(super) fn forgotten(&self) -> Vec<(i32, i32)> {
        self.forgotten.borrow().clone()
    }
}

impl HostProbe for FakeHost {
    fn classify(&self, pid: i32, fd: i32) -> Option<FdKind> {
        (pid == PID).then(|| self.fds.get(&fd).map(|f| f.0))?
    }

    fn revents(&self, pid: i32, fd: i32, _events: i16) -> Result<Option<i16>, Unprobed> {
        if pid != PID {
            return Err(Unprobed);
        }
        Ok(self.fds.get(&fd).map(|f| f.1))
    }

    /// The fake's descriptors are all blocking: only readiness counts.
    fn would_not_block(&self, pid: i32, fd: i32, events: i16) -> Result<Option<bool>, Unprobed> {
        Ok(self.revents(pid, fd, events)?.map(|r| r != 0))
    }

    /// The fake's readiness is fixed by the test: nothing to forget.
    fn changed(&self) {}

    fn memo_epoch(&self) -> Option<u64> {
        self.memo_epoch
    }

    fn same_file(&self, pid: i32, a: i32, b: i32) -> bool {
        pid == PID && (self.same.contains(&(a, b)) || self.same.contains(&(b, a)))
    }

    fn forget(&self, _pid: i32, lo: i32, hi: i32) {
        self.forgotten.borrow_mut().push((lo, hi));
    }

    fn borrow(&self, pid: i32, fd: i32) -> Option<OwnedFd> {
        self.classify(pid, fd)?;
        // SAFETY: eventfd returns a new descriptor, owned here (checked).
        let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
        // SAFETY: as above.
        (raw >= 0).then(|| unsafe { OwnedFd::from_raw_fd(raw) })
    }

    fn position(&self, pid: i32, fd: i32) -> Option<u64> {
        (pid == PID).then(|| self.files.get(&fd).map(|f| f.0))?
    }

    fn writable(&self, pid: i32, fd: i32) -> Option<bool> {
        (pid == PID).then(|| self.files.get(&fd).map(|f| f.1))?
    }

    fn signals(&self, pid: i32, _tid: i32) -> Option<SigStatus> {
        (pid == PID).then_some(self.signals)
    }
}
