//! futex emulation. A waiting thread is parked in the supervisor, never in
//! the kernel; wakes, requeues and timeouts act on the supervisor's queues,
//! keyed by (address space, address).

use super::{err, ret, Action, Call};
use crate::sim::memory::Memory;
use crate::sim::state::Sim;
use crate::sim::vclock::Timespec;
use crate::sim::world::{Resume, ThreadState, Vtid, Wait, WaitKind};

const FUTEX_WAIT: i32 = 0;
const FUTEX_WAKE: i32 = 1;
const FUTEX_REQUEUE: i32 = 3;
const FUTEX_CMP_REQUEUE: i32 = 4;
const FUTEX_WAKE_OP: i32 = 5;
const FUTEX_WAIT_BITSET: i32 = 9;
const FUTEX_WAKE_BITSET: i32 = 10;
const FUTEX_CLOCK_REALTIME: i32 = 256;
const FUTEX_CMD_MASK: i32 = !(128 | FUTEX_CLOCK_REALTIME);

impl Sim {
    /// futex(2): WAIT, WAKE, their BITSET forms, REQUEUE, CMP_REQUEUE, WAKE_OP.
    pub(super) fn sys_futex(&mut self, c: &Call<impl Memory>, targs: &mut Vec<i64>) -> Action {
        let op = c.a[1] as i32;
        let cmd = op & FUTEX_CMD_MASK;
        let mm = self.proc_of(c.vtid).mm;
        let key = (mm, c.a[0]);
        targs.push(cmd as i64);
        match cmd {
            FUTEX_WAIT | FUTEX_WAIT_BITSET => {
                let bitset = if cmd == FUTEX_WAIT {
                    u32::MAX
                } else {
                    c.a[5] as u32
                };
                if bitset == 0 {
                    return err(libc::EINVAL);
                }
                let Ok(current) = c.mem().read_val::<u32>(c.a[0]) else {
                    return err(libc::EFAULT);
                };
                // The expected value is not traced: for pthread_join it is a host tid.
                if current != c.a[2] as u32 {
                    return err(libc::EAGAIN);
                }
                let deadline = match self.futex_deadline(c, cmd, op) {
                    Ok(d) => d,
                    Err(e) => return err(e),
                };
                self.sched.futex_wait(key, c.vtid);
                Action::Park(Wait {
                    kind: WaitKind::Futex { key, bitset },
                    deadline,
                    on_timeout: Resume::Return(-(libc::ETIMEDOUT as i64)),
                    restartable: true,
                })
            }
            FUTEX_WAKE | FUTEX_WAKE_BITSET => {
                let bitset = if cmd == FUTEX_WAKE {
                    u32::MAX
                } else {
                    c.a[5] as u32
                };
                if bitset == 0 {
                    return err(libc::EINVAL);
                }
                ret(self.futex_wake(key, c.a[2] as u32 as usize, bitset) as i64)
            }
            FUTEX_REQUEUE | FUTEX_CMP_REQUEUE => {
                if cmd == FUTEX_CMP_REQUEUE {
                    match c.mem().read_val::<u32>(c.a[0]) {
                        Ok(v) if v == c.a[5] as u32 => {}
                        Ok(_) => return err(libc::EAGAIN),
                        Err(_) => return err(libc::EFAULT),
                    }
                }
                let woken = self.futex_wake(key, c.a[2] as u32 as usize, u32::MAX);
                let moved = self.futex_requeue(key, (mm, c.a[4]), c.a[3] as u32 as usize);
                ret(if cmd == FUTEX_CMP_REQUEUE {
                    woken + moved
                } else {
                    woken
                } as i64)
            }
            FUTEX_WAKE_OP => match self.futex_wake_op(c, key, (mm, c.a[4])) {
                Ok(n) => ret(n as i64),
                Err(e) => err(e),
            },
            _ => self.unsupported(
                c,
                "priority-inheritance futexes are not emulated",
                libc::ENOSYS,
            ),
        }
    }

    /// When a wait with this call's timeout ends (timer slack included).
    fn futex_deadline(&self, c: &Call<impl Memory>, cmd: i32, op: i32) -> Result<Option<u64>, i32> {
        if c.a[3] == 0 {
            return Ok(None);
        }
        let ts = c
            .mem()
            .read_val::<Timespec>(c.a[3])
            .map_err(|_| libc::EFAULT)?;
        if cmd == FUTEX_WAIT {
            let ns = ts.to_ns().ok_or(libc::EINVAL)?;
            let span = self.clock.span_on(self.clock_host(c.pid), ns as i128);
            return Ok(Some(
                self.timer_end(c.vtid, self.clock.now().saturating_add(span)),
            ));
        }
        let clock = if op & FUTEX_CLOCK_REALTIME != 0 {
            libc::CLOCK_REALTIME
        } else {
            libc::CLOCK_MONOTONIC
        };
        let abs = ts.sec as i128 * 1_000_000_000 + ts.nsec as i128;
        let deadline = self.clock.deadline_on(self.clock_host(c.pid), clock, abs);
        Ok(Some(self.timer_end(c.vtid, deadline)))
    }

    /// Wakes up to `n` waiters on `key` whose bitset intersects `bitset`, in
    /// the order they started waiting. Returns how many woke.
    pub(crate) fn futex_wake(&mut self, key: (u32, u64), n: usize, bitset: u32) -> usize {
        let threads = &self.threads;
        let woken = self.sched.futex_wake(key, n, |v| {
            matches!(&threads[&v].state,
                ThreadState::Parked(Wait { kind: WaitKind::Futex { bitset: b, .. }, .. }) if b & bitset != 0)
        });
        for v in &woken {
            self.threads.get_mut(v).expect("waiter").state = ThreadState::Ready(Resume::Return(0));
        }
        woken.len()
    }

    fn futex_requeue(&mut self, from: (u32, u64), to: (u32, u64), n: usize) -> usize {
        let moved = self.sched.futex_requeue(from, to, n);
        for v in &moved {
            if let ThreadState::Parked(Wait {
                kind: WaitKind::Futex { key, .. },
                ..
            }) = &mut self.threads.get_mut(v).expect("waiter").state
            {
                *key = to;
            }
        }
        moved.len()
    }

    /// FUTEX_WAKE_OP: atomically (only one thread runs) update *uaddr2, wake
    /// uaddr, and wake uaddr2 if the old value passes the comparison.
    fn futex_wake_op(
        &mut self,
        c: &Call<impl Memory>,
        key: (u32, u64),
        key2: (u32, u64),
    ) -> Result<usize, i32> {
        let val3 = c.a[5] as u32;
        let mut op = (val3 >> 28) & 0xf;
        let cmp = (val3 >> 24) & 0xf;
        let mut oparg = sign_extend_12((val3 >> 12) & 0xfff);
        let cmparg = sign_extend_12(val3 & 0xfff);
        if op & 8 != 0 {
            op &= 7;
            oparg = 1i32.checked_shl(oparg as u32).unwrap_or(0);
        }
        let old = c.mem().read_val::<i32>(c.a[4]).map_err(|_| libc::EFAULT)?;
        let new = match op {
            0 => oparg,
            1 => old.wrapping_add(oparg),
            2 => old | oparg,
            3 => old & !oparg,
            4 => old ^ oparg,
            _ => return Err(libc::ENOSYS),
        };
        c.mem().write_val(c.a[4], &new).map_err(|_| libc::EFAULT)?;
        let mut woken = self.futex_wake(key, c.a[2] as u32 as usize, u32::MAX);
        let pass = match cmp {
            0 => old == cmparg,
            1 => old != cmparg,
            2 => old < cmparg,
            3 => old <= cmparg,
            4 => old > cmparg,
            5 => old >= cmparg,
            _ => return Err(libc::ENOSYS),
        };
        if pass {
            woken += self.futex_wake(key2, c.a[3] as u32 as usize, u32::MAX);
        }
        Ok(woken)
    }

    /// Removes parked thread `vtid` from the queue its wait kind keeps (a
    /// futex's), when something other than a wake ends its wait.
    pub(crate) fn unpark(&mut self, vtid: Vtid, kind: &WaitKind) {
        if let WaitKind::Futex { key, .. } = kind {
            self.sched.futex_cancel(*key, vtid);
        }
    }
}

fn sign_extend_12(v: u32) -> i32 {
    ((v << 20) as i32) >> 20
}

#[cfg(test)]
mod tests {
    use super::super::testing::{call, parked, returned, world, zeroed, EPOCH_SECS, PID, VTID};
    use super::{FUTEX_CLOCK_REALTIME, FUTEX_WAKE_OP};
    use super::{FUTEX_CMP_REQUEUE, FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAKE, FUTEX_WAKE_BITSET};
    use crate::sim::memory::{FakeMemory, Memory};
    use crate::sim::state::Sim;
    use crate::sim::vclock::{Timespec, NS};
    use crate::sim::world::{Resume, Thread, ThreadState, Vtid, WaitKind};

    const WORD: u64 = 0x1000;
    const WORD2: u64 = 0x1004;
    const TIMEOUT: u64 = 0x1010;

    fn memory() -> FakeMemory {
        zeroed(WORD, 64)
    }

    /// A world with threads 1..=n of the test process.
    fn threads(n: Vtid) -> Sim {
        let mut sim = world();
        for v in 2..=n {
            sim.threads
                .insert(v, Thread::new(v, PID, PID + v as i32, v as i32));
        }
        sim
    }

    /// futex(WORD, op, val, timeout, uaddr2, val3) by thread `vtid`; a
    /// wait that parks leaves the thread parked, as dispatch does.
    fn futex(sim: &mut Sim, vtid: Vtid, a: [u64; 6], mem: FakeMemory) -> Option<i64> {
        let mut c = call(libc::SYS_futex, a, mem);
        c.vtid = vtid;
        match sim.sys_futex(&c, &mut vec![]) {
            super::Action::Park(w) => {
                sim.threads.get_mut(&vtid).unwrap().state = ThreadState::Parked(w);
                None
            }
            now => Some(returned(now)),
        }
    }

    fn wait(sim: &mut Sim, vtid: Vtid, addr: u64, bitset: u32) {
        let a = [addr, FUTEX_WAIT_BITSET as u64, 0, 0, 0, bitset as u64];
        assert_eq!(futex(sim, vtid, a, memory()), None, "parks");
    }

    fn woken(sim: &Sim) -> Vec<Vtid> {
        let ready = |t: &&Thread| matches!(t.state, ThreadState::Ready(Resume::Return(0)));
        sim.threads.values().filter(ready).map(|t| t.vtid).collect()
    }

    #[test]
    fn a_wait_parks_only_while_the_word_holds_the_expected_value() {
        let mut sim = world();
        let c = call(
            libc::SYS_futex,
            [WORD, FUTEX_WAIT as u64, 0, 0, 0, 0],
            memory(),
        );
        let w = parked(sim.sys_futex(&c, &mut vec![]));
        assert!(matches!(
            w.kind,
            WaitKind::Futex {
                key: (1, WORD),
                bitset: u32::MAX
            }
        ));
        assert_eq!(w.deadline, None);
        let errno = |e: i32| Some(-(e as i64));
        assert_eq!(
            futex(&mut sim, VTID, [WORD, 0, 1, 0, 0, 0], memory()),
            errno(libc::EAGAIN)
        );
        assert_eq!(
            futex(&mut sim, VTID, [0x9000, 0, 0, 0, 0, 0], memory()),
            errno(libc::EFAULT)
        );
        let no_bits = [WORD, FUTEX_WAIT_BITSET as u64, 0, 0, 0, 0];
        assert_eq!(
            futex(&mut sim, VTID, no_bits, memory()),
            errno(libc::EINVAL)
        );
    }

    #[test]
    fn timeouts_are_relative_for_wait_and_absolute_for_wait_bitset() {
        let mut sim = world();
        sim.clock.advance_to(NS);
        let mem = memory();
        mem.write_val(TIMEOUT, &Timespec { sec: 2, nsec: 5 })
            .unwrap();
        let c = call(
            libc::SYS_futex,
            [WORD, FUTEX_WAIT as u64, 0, TIMEOUT, 0, 0],
            mem,
        );
        let w = parked(sim.sys_futex(&c, &mut vec![]));
        assert_eq!(w.deadline, Some(3 * NS + 5));
        assert!(matches!(w.on_timeout, Resume::Return(e) if e == -(libc::ETIMEDOUT as i64)));
        let mem = memory();
        mem.write_val(
            TIMEOUT,
            &Timespec {
                sec: EPOCH_SECS + 4,
                nsec: 0,
            },
        )
        .unwrap();
        let op = (FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME) as u64;
        let c = call(
            libc::SYS_futex,
            [WORD, op, 0, TIMEOUT, 0, u32::MAX as u64],
            mem,
        );
        assert_eq!(
            parked(sim.sys_futex(&c, &mut vec![])).deadline,
            Some(4 * NS)
        );
    }

    #[test]
    fn wake_takes_waiters_in_order_and_honours_bitsets() {
        let mut sim = threads(4);
        wait(&mut sim, 3, WORD, 1);
        wait(&mut sim, 2, WORD, 2);
        wait(&mut sim, 4, WORD, 3);
        let wake_bits = |bits: u32, n: u64| [WORD, FUTEX_WAKE_BITSET as u64, n, 0, 0, bits as u64];
        assert_eq!(futex(&mut sim, VTID, wake_bits(2, 1), memory()), Some(1));
        assert_eq!(woken(&sim), [2]);
        let wake_all = [WORD, FUTEX_WAKE as u64, 10, 0, 0, 0];
        assert_eq!(futex(&mut sim, VTID, wake_all, memory()), Some(2));
        assert_eq!(woken(&sim), [2, 3, 4]);
        assert_eq!(futex(&mut sim, VTID, wake_all, memory()), Some(0));
    }

    #[test]
    fn cmp_requeue_wakes_some_and_moves_the_rest() {
        let mut sim = threads(4);
        for v in 2..=4 {
            wait(&mut sim, v, WORD, u32::MAX);
        }
        let requeue = |val3: u64| [WORD, FUTEX_CMP_REQUEUE as u64, 1, 5, WORD2, val3];
        let eagain = Some(-(libc::EAGAIN as i64));
        assert_eq!(futex(&mut sim, VTID, requeue(9), memory()), eagain);
        assert_eq!(futex(&mut sim, VTID, requeue(0), memory()), Some(3));
        assert_eq!(woken(&sim), [2]);
        let key = |v: Vtid| match &sim.threads[&v].state {
            ThreadState::Parked(w) => match w.kind {
                WaitKind::Futex { key, .. } => key,
                _ => panic!("{:?}", w.kind),
            },
            s => panic!("{s:?}"),
        };
        assert_eq!((key(3), key(4)), ((1, WORD2), (1, WORD2)));
        let wake2 = [WORD2, FUTEX_WAKE as u64, 10, 0, 0, 0];
        assert_eq!(futex(&mut sim, VTID, wake2, memory()), Some(2));
    }

    #[test]
    fn wake_op_updates_the_second_word_and_wakes_it_on_the_comparison() {
        let mut sim = threads(3);
        wait(&mut sim, 2, WORD, u32::MAX);
        wait(&mut sim, 3, WORD2, u32::MAX);
        let mem = memory();
        mem.write_val(WORD2, &5i32).unwrap();
        // FUTEX_OP_ADD 3, then wake uaddr2 if the old value was > 4.
        let val3 = (1 << 28) | (4 << 24) | (3 << 12) | 4;
        let a = [WORD, FUTEX_WAKE_OP as u64, 1, 1, WORD2, val3];
        let c = call(libc::SYS_futex, a, mem);
        assert_eq!(returned(sim.sys_futex(&c, &mut vec![])), 2);
        assert_eq!(c.mem().read_val::<i32>(WORD2).unwrap(), 8);
        assert_eq!(woken(&sim), [2, 3]);
    }

    #[test]
    fn priority_inheritance_futexes_are_refused() {
        let mut sim = world();
        let lock_pi = [WORD, 6, 0, 0, 0, 0];
        assert_eq!(
            futex(&mut sim, VTID, lock_pi, memory()),
            Some(-(libc::ENOSYS as i64))
        );
        assert_eq!(std::mem::take(&mut sim.diagnostics).into_list().len(), 1);
    }
}
