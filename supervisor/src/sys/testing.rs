//! A small world for handler unit tests: one process with one thread on
//! host "n1", at the default epoch, and calls whose memory is a
//! `FakeMemory`, so a handler runs without a process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use super::Call;
use crate::host::tracee::FakeMemory;
use crate::sim::diskstate::NodeDisk;
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
