//! A Go program's futex wakes are not scheduling points. Go's runtime
//! wakes an idle thread (or one waiting on a runtime lock) and goes on; on
//! a real machine the woken thread needs microseconds to start, so nothing
//! of it runs between the wake and the waker's next instructions, and the
//! runtime ignores the count a wake returns. So such a wake is answered in
//! place, with its trace event, and no switch can come at it; the woken
//! thread can run from the waker's next scheduling point on. A patched
//! runtime's stub goes further: it notes its wakes in its channel slot
//! without a round trip (`ch::Slot::wakes`), and they are taken here,
//! before anything else of the thread, at its next request or stop. Every
//! path (trapped, over the channel, notified, noted) records the same
//! event at the same place, so the trace is the same on each.

use super::*;
use crate::sim::world::resume_label;

/// The futex command of a wake (the private and clock flags masked off).
fn is_wake(nr: i64, args: &[u64; 6]) -> bool {
    nr == libc::SYS_futex && (args[1] as i32) & 0x7f == libc::FUTEX_WAKE
}

impl Supervisor {
    /// If `nr(args)` of `vtid` is a futex wake in a Go program: wakes its
    /// waiters, records its event, and returns its result (the thread runs
    /// on). Signals held since a preemption stay held, as at a call
    /// answered without a stop, so a wake noted without one is the same.
    pub(crate) fn answer_go_wake(&mut self, vtid: Vtid, nr: i64, args: &[u64; 6]) -> Option<i64> {
        if !is_wake(nr, args) {
            return None;
        }
        let mm = self.sim.procs.get(&self.sim.threads.get(&vtid)?.pid)?.mm;
        if !self.go_yields.is_go(mm) {
            return None;
        }
        let _ = self.settle_doomed();
        self.tell_descriptor_changes();
        let woken =
            self.sim
                .futex_wake((mm, args[0]), args[2] as u32 as usize, u32::MAX) as i64;
        self.sim.record(
            vtid,
            crate::sys::table::name(nr),
            &[i64::from(libc::FUTEX_WAKE)],
            resume_label(&Resume::Return(woken)),
        );
        Some(woken)
    }

    /// Takes the futex wakes the running thread `vtid` noted in its slot
    /// since its last request or stop, in the order it made them.
    pub(super) fn take_noted_wakes(&mut self, vtid: Vtid) {
        let (Some(chan), Some(slot)) = (
            &self.channel,
            self.sim.threads.get(&vtid).and_then(|t| t.gs_slot),
        ) else {
            return;
        };
        for wake in chan.take_wakes(slot) {
            self.fast_calls += 1;
            let args = [wake.addr, libc::FUTEX_WAKE as u64, wake.count, 0, 0, 0];
            self.answer_go_wake(vtid, libc::SYS_futex, &args);
        }
    }
}
