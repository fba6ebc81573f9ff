//! futex emulation. A waiting thread is parked in the supervisor, never in
//! the kernel; wakes, requeues and timeouts act on the supervisor's queues,
//! keyed by (address space, address).

use super::{err, ret, Action, Call};
use crate::engine::Supervisor;
use crate::host::tracee::Memory;
use crate::sim::vclock::Timespec;
use crate::sim::world::{Resume, ThreadState, Wait, WaitKind};

const FUTEX_WAIT: i32 = 0;
const FUTEX_WAKE: i32 = 1;
const FUTEX_REQUEUE: i32 = 3;
const FUTEX_CMP_REQUEUE: i32 = 4;
const FUTEX_WAKE_OP: i32 = 5;
const FUTEX_WAIT_BITSET: i32 = 9;
const FUTEX_WAKE_BITSET: i32 = 10;
const FUTEX_CLOCK_REALTIME: i32 = 256;
const FUTEX_CMD_MASK: i32 = !(128 | FUTEX_CLOCK_REALTIME);

impl Supervisor {
    /// futex(2): WAIT, WAKE, their BITSET forms, REQUEUE, CMP_REQUEUE, WAKE_OP.
    pub(super) fn sys_futex(&mut self, c: &Call, targs: &mut Vec<i64>) -> Action {
        let op = c.a[1] as i32;
        let cmd = op & FUTEX_CMD_MASK;
        let mm = self.sim.proc_of(c.vtid).mm;
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
                self.sim.sched.futex_wait(key, c.vtid);
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
            _ => self.sim.unsupported(
                c,
                "priority-inheritance futexes are not emulated",
                libc::ENOSYS,
            ),
        }
    }

    fn futex_deadline(&self, c: &Call, cmd: i32, op: i32) -> Result<Option<u64>, i32> {
        if c.a[3] == 0 {
            return Ok(None);
        }
        let ts = c
            .mem()
            .read_val::<Timespec>(c.a[3])
            .map_err(|_| libc::EFAULT)?;
        if cmd == FUTEX_WAIT {
            let ns = ts.to_ns().ok_or(libc::EINVAL)?;
            let span = self
                .sim
                .clock
                .span_on(self.sim.clock_host(c.pid), ns as i128);
            return Ok(Some(self.sim.clock.now().saturating_add(span)));
        }
        let clock = if op & FUTEX_CLOCK_REALTIME != 0 {
            libc::CLOCK_REALTIME
        } else {
            libc::CLOCK_MONOTONIC
        };
        let abs = ts.sec as i128 * 1_000_000_000 + ts.nsec as i128;
        Ok(Some(self.sim.clock.deadline_on(
            self.sim.clock_host(c.pid),
            clock,
            abs,
        )))
    }

    /// Wakes up to `n` waiters on `key` whose bitset intersects `bitset`, in
    /// the order they started waiting. Returns how many woke.
    pub(crate) fn futex_wake(&mut self, key: (u32, u64), n: usize, bitset: u32) -> usize {
        let threads = &self.sim.threads;
        let woken = self.sim.sched.futex_wake(key, n, |v| {
            matches!(&threads[&v].state,
                ThreadState::Parked(Wait { kind: WaitKind::Futex { bitset: b, .. }, .. }) if b & bitset != 0)
        });
        for v in &woken {
            self.sim.threads.get_mut(v).expect("waiter").state =
                ThreadState::Ready(Resume::Return(0));
        }
        woken.len()
    }

    fn futex_requeue(&mut self, from: (u32, u64), to: (u32, u64), n: usize) -> usize {
        let moved = self.sim.sched.futex_requeue(from, to, n);
        for v in &moved {
            if let ThreadState::Parked(Wait {
                kind: WaitKind::Futex { key, .. },
                ..
            }) = &mut self.sim.threads.get_mut(v).expect("waiter").state
            {
                *key = to;
            }
        }
        moved.len()
    }

    /// FUTEX_WAKE_OP: atomically (only one thread runs) update *uaddr2, wake
    /// uaddr, and wake uaddr2 if the old value passes the comparison.
    fn futex_wake_op(&mut self, c: &Call, key: (u32, u64), key2: (u32, u64)) -> Result<usize, i32> {
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
}

fn sign_extend_12(v: u32) -> i32 {
    ((v << 20) as i32) >> 20
}
