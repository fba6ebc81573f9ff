//! Go's runtime yields in user space. Its wait loops (`runtime.GC` waiting
//! for the last sweeper, `bgsweep`, `forEachP`) call `runtime.Gosched`,
//! which only switches goroutines: with no other goroutine on its P the
//! loop spins, making no system call, waiting for a thread faultline has
//! stopped. Only the watchdog could end that spin, at a point that depends
//! on wall time. So the runtime's yield function (`runtime.gosched_m`,
//! which Gosched and Go 1.20's goschedIfBusy both reach) gets a breakpoint
//! in every Go program (with `--go-yields`): each call is a scheduling
//! point, at the same instruction on every run, where another thread may
//! be given the turn. Found from the executable's pclntab, which survives
//! stripping.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use super::*;
use crate::host::gosym::{self, GoFunctions};
use crate::host::tracee;
use crate::host::tracee::Memory;
use crate::sim::world::*;

/// The runtime functions whose calls become scheduling points.
pub const YIELD_FUNCTIONS: &[&str] = &["runtime.gosched_m"];

/// The x86 breakpoint instruction.
const INT3: u8 = 0xcc;

/// The Go programs seen and the breakpoints placed in each address space.
#[derive(Default)]
pub struct GoYields {
    /// Per executable: its yield functions (None: not Go, or unreadable).
    images: HashMap<PathBuf, Option<GoFunctions>>,
    /// Per address space: breakpoint address → the byte the INT3 replaced.
    armed: HashMap<u32, BTreeMap<u64, u8>>,
}

impl GoYields {
    /// A forked child's memory is a copy of its parent's, breakpoints too.
    pub fn inherit(&mut self, parent_mm: u32, child_mm: u32) {
        if let Some(points) = self.armed.get(&parent_mm).cloned() {
            self.armed.insert(child_mm, points);
        }
    }

    /// The address space is gone.
    pub fn forget(&mut self, mm: u32) {
        self.armed.remove(&mm);
    }

    /// The byte under the breakpoint at `addr` of `mm`, if there is one.
    fn original(&self, mm: u32, addr: u64) -> Option<u8> {
        self.armed.get(&mm)?.get(&addr).copied()
    }
}

impl Supervisor {
    /// After an exec: if the new image is a Go program, puts a breakpoint on
    /// each of its yield functions. `entry` is AT_ENTRY (where a PIE landed).
    pub(super) fn arm_go_yields(&mut self, pid: i32, mm: u32, entry: u64) {
        if !self.cfg.go_yields {
            return;
        }
        let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
            return;
        };
        if !self.go_yields.images.contains_key(&exe) {
            let found = match gosym::find_functions(&exe, YIELD_FUNCTIONS) {
                Ok(found) => found,
                Err(e) => {
                    self.sim.report_once(
                        diagnostics::DiagKind::InternalError,
                        format!("{e}: its runtime's yields are not scheduling points, so its spin loops may be preempted by the watchdog"),
                    );
                    None
                }
            };
            self.go_yields.images.insert(exe.clone(), found);
        }
        let Some(Some(go)) = self.go_yields.images.get(&exe).cloned() else {
            return;
        };
        let bias = if go.pie {
            entry.wrapping_sub(go.entry)
        } else {
            0
        };
        let mut points = BTreeMap::new();
        for (name, link_addr) in &go.found {
            let addr = link_addr.wrapping_add(bias);
            let mut byte = [0u8];
            let armed = tracee::Process(pid)
                .read_mem(addr, &mut byte)
                .and_then(|()| tracee::Process(pid).write_mem(addr, &[INT3]));
            match armed {
                Ok(()) => {
                    points.insert(addr, byte[0]);
                }
                Err(e) => self.sim.report_once(
                    diagnostics::DiagKind::InternalError,
                    format!(
                        "cannot put a breakpoint on {name} of {} at {addr:#x} ({e})",
                        exe.display()
                    ),
                ),
            }
        }
        self.go_yields.armed.insert(mm, points);
    }

    /// A SIGTRAP of `vtid`: if it stopped on a yield breakpoint, the thread
    /// is put back at the function's first instruction and its step ends
    /// here, a scheduling point. None: some other SIGTRAP.
    pub(super) fn on_go_yield(&mut self, vtid: Vtid, tid: i32, pid: i32) -> Option<StepEnd> {
        let mm = self.sim.procs.get(&pid)?.mm;
        let mut regs = tracee::get_regs(tid).ok()?;
        let addr = regs.rip.checked_sub(1)?;
        self.go_yields.original(mm, addr)?;
        regs.rip = addr;
        self.set_regs_or_dead(tid, &regs);
        let th = self.sim.threads.get_mut(&vtid)?;
        th.step_over = Some(addr);
        th.state = ThreadState::Ready(Resume::Continue);
        self.sim.record(vtid, "yield", &[addr as i64], "go");
        Some(StepEnd::Done)
    }

    /// Before a thread stopped on a yield breakpoint runs on: runs the one
    /// instruction the breakpoint covers (the original byte back, a single
    /// step, the breakpoint again), while no other thread runs. Returns a
    /// signal that arrived instead of the step, to be delivered with the
    /// resume.
    pub(super) fn step_over_yield(&mut self, tid: i32, pid: i32, addr: u64) -> Option<i32> {
        let mm = self.sim.procs.get(&pid)?.mm;
        let original = self.go_yields.original(mm, addr)?;
        let mem = tracee::Process(pid);
        if mem.write_mem(addr, &[original]).is_err() {
            return None;
        }
        let status = tracee::single_step(tid).and_then(|()| self.wait_on(tid));
        let _ = mem.write_mem(addr, &[INT3]);
        match status {
            Ok((_, status)) if libc::WIFSTOPPED(status) => {
                let sig = libc::WSTOPSIG(status);
                // Another signal stops the thread before the instruction
                // runs: deliver it; the handler returns to the breakpoint.
                (sig != libc::SIGTRAP).then_some(sig)
            }
            Ok((_, status)) => {
                // Killed meanwhile: the run loop collects the death.
                self.early_status = Some((tid, status));
                None
            }
            Err(e) => {
                self.sim.report_once(
                    diagnostics::DiagKind::InternalError,
                    format!("cannot step thread {tid} over a Go yield breakpoint ({e})"),
                );
                None
            }
        }
    }
}
