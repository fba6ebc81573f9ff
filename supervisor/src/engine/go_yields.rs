//! Go's runtime waits in user space. Its wait loops (`runtime.GC` waiting
//! for the last sweeper, `bgsweep`, `forEachP`) make no system call while
//! they wait for a thread faultline has stopped: only the watchdog could end
//! such a spin, at a point that depends on wall time. So breakpoints on
//! runtime functions those loops call make them scheduling points, at the
//! same instruction on every run. Found from the executable's pclntab,
//! which survives stripping.
//!
//! * `runtime.freeSomeWbufs`, which the background sweeper calls once per
//!   round: once when a GC cycle's sweep is done, and again on every turn
//!   of its loop while another thread still holds a span it sweeps (the
//!   `!isSweepDone()` case, which calls no Gosched). Always armed: its
//!   thread gives way until the other threads of its process have had a
//!   step, as after a watchdog preemption, so the sweeper it waits for
//!   finishes.
//! * `runtime.gosched_m` (what Gosched and Go 1.20's goschedIfBusy reach),
//!   with `--go-yields`: each call is a scheduling point where another
//!   thread may be given the turn.

use crate::hashing::HashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::host::gosym::{self, GoFunctions};
use crate::host::tracee;
use crate::sim::memory::Memory;
use crate::sim::world::*;

/// The runtime functions of wait loops whose calls make their thread give
/// way to the rest of its process (always armed).
pub const GIVE_WAY_FUNCTIONS: &[&str] = &["runtime.freeSomeWbufs"];

/// The runtime functions whose calls become scheduling points with
/// `--go-yields`.
pub const YIELD_FUNCTIONS: &[&str] = &["runtime.gosched_m"];

/// What a breakpoint's hit does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// A scheduling point: any thread may be picked next.
    Yield,
    /// The thread waits until the other threads of its process had a step.
    GiveWay,
}

/// A placed breakpoint: the byte its INT3 replaced, and what a hit does.
#[derive(Debug, Clone, Copy)]
struct Armed {
    original: u8,
    point: Point,
}

/// The x86 breakpoint instruction.
const INT3: u8 = 0xcc;

/// The Go programs seen and the breakpoints placed in each address space.
#[derive(Default)]
pub struct GoYields {
    /// Per executable: its yield functions (None: not Go, or unreadable).
    images: HashMap<PathBuf, Option<GoFunctions>>,
    /// Per address space: breakpoint address → what is there.
    armed: HashMap<u32, BTreeMap<u64, Armed>>,
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

    /// Whether address space `mm` runs a Go program (one whose function
    /// table was read at its exec, or a fork of one).
    pub fn is_go(&self, mm: u32) -> bool {
        self.armed.contains_key(&mm)
    }

    /// The breakpoint at `addr` of `mm`, if there is one.
    fn at(&self, mm: u32, addr: u64) -> Option<Armed> {
        self.armed.get(&mm)?.get(&addr).copied()
    }
}

impl Supervisor {
    /// After an exec: if the new image is a Go program, puts a breakpoint on
    /// each of its give-way functions, and with `--go-yields` its yield
    /// functions. `entry` is AT_ENTRY (where a PIE landed). Returns the
    /// program's functions (the fast path's wrappers among them when the
    /// channel is on); None if it is not Go.
    pub(super) fn arm_go_yields(&mut self, pid: i32, mm: u32, entry: u64) -> Option<GoFunctions> {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        let go = self.go_image(&exe)?;
        let bias = if go.pie {
            entry.wrapping_sub(go.entry)
        } else {
            0
        };
        let mut points = BTreeMap::new();
        let breakpoints = go.found.iter().filter(|(name, _)| {
            GIVE_WAY_FUNCTIONS.contains(&name.as_str()) || YIELD_FUNCTIONS.contains(&name.as_str())
        });
        for (name, link_addr) in breakpoints {
            let addr = link_addr.wrapping_add(bias);
            let mut byte = [0u8];
            let armed = tracee::Process(pid)
                .read_mem(addr, &mut byte)
                .and_then(|()| tracee::Process(pid).write_mem(addr, &[INT3]));
            let point = if GIVE_WAY_FUNCTIONS.contains(&name.as_str()) {
                Point::GiveWay
            } else {
                Point::Yield
            };
            match armed {
                Ok(()) => {
                    points.insert(
                        addr,
                        Armed {
                            original: byte[0],
                            point,
                        },
                    );
                }
                Err(e) => self.sim.report_once(
                    crate::sim::diagnostics::DiagKind::InternalError,
                    format!(
                        "cannot put a breakpoint on {name} of {} at {addr:#x} ({e})",
                        exe.display()
                    ),
                ),
            }
        }
        self.go_yields.armed.insert(mm, points);
        Some(go)
    }

    /// The functions this run looks for in executable `exe` (its canonical
    /// path), read from its function table once per run; None if it is not
    /// a Go program (or its table cannot be read, which is said once).
    pub(crate) fn go_image(&mut self, exe: &Path) -> Option<GoFunctions> {
        if !self.go_yields.images.contains_key(exe) {
            let mut wanted = GIVE_WAY_FUNCTIONS.to_vec();
            if self.cfg.go_yields {
                wanted.extend_from_slice(YIELD_FUNCTIONS);
            }
            if self.channel.is_some() {
                wanted.extend(crate::fast_path::go_runtime::GO_CALLS.map(|(name, _)| name));
            }
            let found = match gosym::find_functions(exe, &wanted) {
                Ok(found) => found,
                Err(e) => {
                    self.sim.report_once(
                        crate::sim::diagnostics::DiagKind::InternalError,
                        format!("{e}: its runtime's yields are not scheduling points, so its spin loops may be preempted by the watchdog"),
                    );
                    None
                }
            };
            self.go_yields.images.insert(exe.to_path_buf(), found);
        }
        self.go_yields.images.get(exe).cloned().flatten()
    }

    /// A SIGTRAP of `vtid`: if it stopped on one of these breakpoints, the
    /// thread is put back at the function's first instruction and its step
    /// ends here, a scheduling point (where a give-way point also makes it
    /// wait for the rest of its process). None: some other SIGTRAP.
    pub(super) fn on_go_yield(&mut self, vtid: Vtid, tid: i32, pid: i32) -> Option<StepEnd> {
        let mm = self.sim.procs.get(&pid)?.mm;
        let mut regs = tracee::get_regs(tid).ok()?;
        let addr = regs.rip.checked_sub(1)?;
        let armed = self.go_yields.at(mm, addr)?;
        regs.rip = addr;
        self.set_regs_or_dead(tid, &regs);
        let th = self.sim.threads.get_mut(&vtid)?;
        th.step_over = Some(addr);
        th.state = ThreadState::Ready(Resume::Continue);
        let label = match armed.point {
            Point::Yield => {
                // A yield, as sched_yield is: the thread is not preferred next.
                self.sim.sched.yielded();
                "go"
            }
            Point::GiveWay => {
                self.sim.sched.gave_way();
                self.give_way(vtid, pid);
                "give-way"
            }
        };
        self.sim.record(vtid, "yield", &[addr as i64], label);
        Some(StepEnd::Done)
    }

    /// Before a thread stopped on a yield breakpoint runs on: runs the one
    /// instruction the breakpoint covers (the original byte back, a single
    /// step, the breakpoint again), while no other thread runs. Returns a
    /// signal that arrived instead of the step, to be delivered with the
    /// resume.
    pub(super) fn step_over_yield(&mut self, tid: i32, pid: i32, addr: u64) -> Option<i32> {
        let mm = self.sim.procs.get(&pid)?.mm;
        let original = self.go_yields.at(mm, addr)?.original;
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
                    crate::sim::diagnostics::DiagKind::InternalError,
                    format!("cannot step thread {tid} over a Go yield breakpoint ({e})"),
                );
                None
            }
        }
    }
}
