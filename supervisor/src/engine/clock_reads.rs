//! Which clock reads are scheduling points, and the faultline vDSO's life
//! in each address space (installed at exec, inherited by fork, kept current
//! before every resume, dropped with the last process that uses it).
//!
//! Every `--clock-step-every`-th clock read of an address space is a
//! scheduling point; the others are answered in place, and that scheduling
//! read charges `--step-cost` for each of them, so time passes per read as
//! if every read were a step. The vDSO image counts its reads in its time
//! page; the trapping path keeps the same count here, so both give one
//! trace.

use crate::engine::Supervisor;
use crate::host::timepage::ShareError;
use crate::host::vdso::{Clocks, VdsoPage};
use crate::sim::memory::Memory;
use crate::sim::vclock::is_cpu_clock;
use crate::sim::world::Vtid;
use crate::sys::Call;

impl Supervisor {
    /// N of `--clock-step-every` (the CLI refuses 0; a Config built
    /// elsewhere with 0 means every read).
    fn clock_step_every(&self) -> u32 {
        self.cfg.clock_step_every.max(1)
    }

    /// The clocks process `pid`'s vDSO page must show now (its host's).
    fn page_clocks(&self, pid: i32, ahead: u64) -> Clocks {
        let host = self.sim.clock_host(pid);
        let clock = &self.sim.clock;
        Clocks {
            mono_ns: clock.read_on_ahead(host, libc::CLOCK_MONOTONIC, ahead) as u64,
            real_ns: clock.read_on_ahead(host, libc::CLOCK_REALTIME, ahead) as i64,
        }
    }

    /// At an exec stop: puts the image at `base` (the kernel's vDSO) for the
    /// new address space `mm`. False if the vDSO is off or cannot be used.
    pub(crate) fn install_vdso(&mut self, pid: i32, mm: u32, base: u64) -> bool {
        if !self.cfg.vdso {
            return false;
        }
        let every = self.clock_step_every();
        match VdsoPage::install(pid, base, every, self.page_clocks(pid, 0)) {
            Ok((page, unshared)) => {
                self.vdso_pages.insert(mm, page);
                self.report_unshared(unshared);
                true
            }
            Err(e) => {
                self.sim.report_once(
                    crate::sim::diagnostics::DiagKind::Vdso,
                    format!("the faultline vDSO is not used ({e}); every clock read traps"),
                );
                false
            }
        }
    }

    /// One line if a time page could not be shared with the supervisor (it
    /// is then written through the process's memory, as correct but slower).
    fn report_unshared(&mut self, why: Option<ShareError>) {
        if let Some(e) = why {
            self.sim.report_once(
                crate::sim::diagnostics::DiagKind::Vdso,
                format!("the time page is not shared ({e}); it is written through process memory"),
            );
        }
    }

    /// A forked child (new address space `child_mm`) inherits its parent's
    /// page (as it is now: its clocks and read count) and read count.
    pub(crate) fn inherit_clock_state(&mut self, parent_mm: u32, child_mm: u32) {
        if let Some(page) = self.vdso_pages.get(&parent_mm).map(VdsoPage::fork) {
            self.vdso_pages.insert(child_mm, page);
        }
        if let Some(&n) = self.clock_reads.get(&parent_mm) {
            self.clock_reads.insert(child_mm, n);
        }
    }

    /// After the watchdog preempted a thread of `pid`: how many clock reads
    /// it answered in place while it spun depends on wall time, so the
    /// count starts again from zero, and the next scheduling read comes at
    /// the same point of every run (a spin that only polls memory and the
    /// clock leaves nothing else behind).
    pub(crate) fn forget_spin_reads(&mut self, pid: i32) {
        let Some(mm) = self.sim.procs.get(&pid).map(|p| p.mm) else {
            return;
        };
        if let Some(page) = self.vdso_pages.get_mut(&mm) {
            let _ = page.set_reads(pid, 0);
        }
        if let Some(n) = self.clock_reads.get_mut(&mm) {
            *n = 0;
        }
    }

    /// Forgets an address space no process uses any more.
    pub(crate) fn forget_mm(&mut self, mm: u32) {
        if !self.sim.procs.values().any(|p| p.mm == mm) {
            self.vdso_pages.remove(&mm);
            self.clock_reads.remove(&mm);
            self.go_yields.forget(mm);
        }
    }

    /// Before `pid` runs: its page shows the virtual time it runs at, the
    /// current time moved `ahead` ns on (and a forked child has its own
    /// page).
    pub(crate) fn refresh_vdso(&mut self, pid: i32, ahead: u64) {
        let Some(mm) = self.sim.procs.get(&pid).map(|p| p.mm) else {
            return;
        };
        let clocks = self.page_clocks(pid, ahead);
        if let Some(page) = self.vdso_pages.get_mut(&mm) {
            let unshared = page.refresh(pid, clocks);
            self.report_unshared(unshared);
        }
    }

    /// Moves virtual time by `ns` of computation of thread `vtid`, which is
    /// also the CPU time it used.
    pub(crate) fn charge_step(&mut self, vtid: Vtid, ns: u64) {
        self.sim.clock.advance_by(ns);
        if let Some(t) = self.sim.threads.get(&vtid) {
            self.sim.cpu.charge(vtid, t.pid, ns);
        }
    }

    /// True if the trapped call `c` is answered in place, without a
    /// scheduling point: getcpu always, and clock reads but every N-th.
    /// Counts the clock read, and at the N-th charges the step cost of the
    /// N-1 answered in place before it.
    pub(crate) fn answers_in_place(&mut self, c: &Call<impl Memory>) -> bool {
        match c.nr {
            libc::SYS_getcpu => true,
            // A CPU-time clock is no clock poll (the vDSO traps it too): it
            // is its own scheduling point, outside the read count.
            libc::SYS_clock_gettime if is_cpu_clock(c.a[0] as i32) => false,
            libc::SYS_clock_gettime | libc::SYS_gettimeofday | libc::SYS_time => {
                if !self.clock_read_is_step(c) {
                    return true;
                }
                // The reads answered in place since the last step were free:
                // charge them now, so a loop that polls the clock (or does
                // work between reads) sees time pass at --step-cost per read.
                let every = u64::from(self.clock_step_every());
                self.charge_step(c.vtid, self.cfg.step_cost_ns.saturating_mul(every - 1));
                false
            }
            _ => false,
        }
    }

    fn clock_read_is_step(&mut self, c: &Call<impl Memory>) -> bool {
        let every = self.clock_step_every();
        let mm = self.sim.procs[&c.pid].mm;
        if let Some(page) = self.vdso_pages.get_mut(&mm) {
            if page.made_call(c.regs.rip) || crate::fast_path::made_by_stub(c.regs.rip) {
                return true; // the image counted it and chose to trap
            }
            // The program made the call itself: count it on the page.
            let n = page.reads(c.pid).unwrap_or(0) + 1;
            let step = n >= every;
            let _ = page.set_reads(c.pid, if step { 0 } else { n });
            return step;
        }
        let count = self.clock_reads.entry(mm).or_insert(0);
        *count += 1;
        if *count >= every {
            *count = 0;
            return true;
        }
        false
    }
}
