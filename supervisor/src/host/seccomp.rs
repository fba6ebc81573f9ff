//! The seccomp-BPF filter installed in every tracee: the syscalls faultline
//! models stop in the supervisor (`SECCOMP_RET_TRACE`), everything else runs
//! natively. Keeping the list narrow is what keeps the ptrace path affordable.
//! Calls numbered past the syscall table's last (newer than faultline) stop
//! too, so the supervisor can refuse them: the filter fails closed.

use std::io;

const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
/// `SECCOMP_FILTER_FLAG_NEW_LISTENER`: the install returns a listener.
const FLAG_NEW_LISTENER: libc::c_ulong = 1 << 3;
/// `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`: once the supervisor has taken
/// a notification, only a fatal signal ends the caller's wait (Linux 5.19),
/// as at a ptrace stop.
const FLAG_WAIT_KILLABLE_RECV: libc::c_ulong = 1 << 5;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;

// Offsets into struct seccomp_data.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_IP: u32 = 8;
/// The low half of the first argument.
const OFF_ARG0: u32 = 16;

/// A call trapped only when its first argument is one of these (it runs
/// natively otherwise): `prctl`, whose only simulated options are the
/// timer slack's (`sys::slack`), while threads name themselves with it.
const TRAPPED_OPTIONS: (i64, [u32; 2]) = (
    libc::SYS_prctl,
    [
        libc::PR_SET_TIMERSLACK as u32,
        libc::PR_GET_TIMERSLACK as u32,
    ],
);

const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const BPF_JGT_K: u16 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Where the fast path's code is in every process: what the filter lets
/// through unstopped.
#[derive(Debug, Clone, Copy)]
pub struct FastPath {
    /// The 4 KiB page whose `futex` calls run natively.
    pub page: u64,
    /// A second such page (the stubs of glibc's patched call sites).
    pub stubs: u64,
    /// The one `syscall` instruction any call may be made from.
    pub gate: u64,
}

/// Builds the filter program that traps exactly `trapped` (x86_64 numbers)
/// and every number past `last`, the syscall table's last.
/// Foreign-architecture and x32 calls are refused with ENOSYS: they would
/// bypass the syscall table the supervisor understands. With `fast_path`,
/// `futex` made from its two 4 KiB pages runs natively (the trampoline and
/// the libc stubs, whose waits on the channel must not stop in ptrace
/// themselves), and so does
/// any call made by the `syscall` at its gate (the pass gate).
///
/// A call that is not trapped is let through on its number alone, before
/// the filter looks at where it was made: the kernel then knows the answer
/// for that number without running the filter (its per-number cache of
/// calls always allowed), so the calls programs make untrapped (the fast
/// path's own signal-mask changes, memory management) cost no filter run.
pub fn build_filter(
    trapped: &[i64],
    last: i64,
    fast_path: Option<FastPath>,
) -> Vec<libc::sock_filter> {
    let mut prog = vec![
        stmt(BPF_LD_W_ABS, OFF_ARCH),
        jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(BPF_RET_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        stmt(BPF_LD_W_ABS, OFF_NR),
        jump(BPF_JGE_K, X32_SYSCALL_BIT, 0, 1),
        stmt(BPF_RET_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
    ];
    // One compare per trapped call; a hit jumps past the ALLOW to the
    // trapped calls' part.
    let n = trapped.len();
    assert!(n < 250, "a BPF jump reaches at most 255 instructions");
    for (i, &nr) in trapped.iter().enumerate() {
        // Skip the remaining compares, the past-the-table one and the ALLOW.
        let to_trapped = (n - i + 1) as u8;
        prog.push(jump(BPF_JEQ_K, nr as u32, to_trapped, 0));
    }
    prog.push(jump(BPF_JGT_K, last as u32, 1, 0));
    prog.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    let (call, [first, second]) = TRAPPED_OPTIONS;
    if trapped.contains(&call) {
        // Its other options are let through; the accumulator holds the
        // number again afterwards.
        prog.extend([
            jump(BPF_JEQ_K, call as u32, 0, 4),
            stmt(BPF_LD_W_ABS, OFF_ARG0),
            jump(BPF_JEQ_K, first, 2, 0),
            jump(BPF_JEQ_K, second, 1, 0),
            stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
            stmt(BPF_LD_W_ABS, OFF_NR),
        ]);
    }
    if let Some(FastPath { page, stubs, gate }) = fast_path {
        // The kernel reports the address after the `syscall`.
        let after = gate + 2;
        prog.extend([
            stmt(BPF_LD_W_ABS, OFF_IP + 4),
            jump(BPF_JEQ_K, (after >> 32) as u32, 0, 3),
            stmt(BPF_LD_W_ABS, OFF_IP),
            jump(BPF_JEQ_K, after as u32, 0, 1),
            stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
            stmt(BPF_LD_W_ABS, OFF_NR),
        ]);
        // Not futex: on to the TRACE return. Each page's check falls
        // through to the next (the last one's to the TRACE return) when
        // the call was not made from that page.
        let pages = [page, stubs];
        prog.push(jump(
            BPF_JEQ_K,
            libc::SYS_futex as u32,
            0,
            6 * pages.len() as u8,
        ));
        for page in pages {
            let (hi, lo) = ((page >> 32) as u32, page as u32);
            prog.extend([
                stmt(BPF_LD_W_ABS, OFF_IP + 4),
                jump(BPF_JEQ_K, hi, 0, 4),
                stmt(BPF_LD_W_ABS, OFF_IP),
                jump(BPF_JGE_K, lo, 0, 2),
                jump(BPF_JGE_K, lo + 4096, 1, 0),
                stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
            ]);
        }
    }
    prog.push(stmt(BPF_RET_K, SECCOMP_RET_TRACE));
    prog
}

/// Builds the filter installed (with a listener) before the ptrace one:
/// it sends `notified` to its listener and lets everything else through,
/// so the other filter decides. A notification takes precedence over a
/// ptrace stop when both filters ask for one, and an error (the other
/// filter's refusal of foreign-architecture calls) over both.
pub fn build_notify_filter(notified: &[i64]) -> Vec<libc::sock_filter> {
    let n = notified.len();
    assert!(n < 250, "a BPF jump reaches at most 255 instructions");
    let mut prog = vec![
        stmt(BPF_LD_W_ABS, OFF_ARCH),
        jump(BPF_JEQ_K, AUDIT_ARCH_X86_64, 0, (n + 1) as u8),
        stmt(BPF_LD_W_ABS, OFF_NR),
    ];
    for (i, &nr) in notified.iter().enumerate() {
        // A hit skips the remaining compares and the ALLOW.
        prog.push(jump(BPF_JEQ_K, nr as u32, (n - i) as u8, 0));
    }
    prog.push(stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    prog.push(stmt(BPF_RET_K, SECCOMP_RET_USER_NOTIF));
    prog
}

/// Installs `prog` on the calling thread. Called in the forked child, after
/// `PR_SET_NO_NEW_PRIVS`, right before exec; must not allocate.
pub fn install(prog: &[libc::sock_filter]) -> io::Result<()> {
    set_filter(prog, 0).map(|_| ())
}

/// Installs `prog` (one with notified calls) and returns its listener
/// descriptor. As `install`, must not allocate.
pub fn install_with_listener(prog: &[libc::sock_filter]) -> io::Result<i32> {
    set_filter(prog, FLAG_NEW_LISTENER | FLAG_WAIT_KILLABLE_RECV).map(|fd| fd as i32)
}

fn set_filter(prog: &[libc::sock_filter], flags: libc::c_ulong) -> io::Result<libc::c_long> {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            1, /* SECCOMP_SET_MODE_FILTER */
            flags,
            &fprog as *const libc::sock_fprog,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `prog` on a call `nr` made from `ip` as the kernel would: the
    /// returned action, and whether the run read where the call was made.
    fn run(prog: &[libc::sock_filter], nr: u32, ip: u64) -> (u32, bool) {
        run_with(prog, nr, ip, 0)
    }

    /// As [`run`], with `arg0` as the call's first argument.
    fn run_with(prog: &[libc::sock_filter], nr: u32, ip: u64, arg0: u32) -> (u32, bool) {
        let (mut acc, mut pc, mut read_ip) = (0u32, 0usize, false);
        loop {
            let ins = prog[pc];
            pc += 1;
            match ins.code {
                BPF_LD_W_ABS => {
                    acc = match ins.k {
                        OFF_NR => nr,
                        OFF_ARCH => AUDIT_ARCH_X86_64,
                        OFF_IP => ip as u32,
                        k if k == OFF_IP + 4 => (ip >> 32) as u32,
                        OFF_ARG0 => arg0,
                        k => panic!("load of offset {k}"),
                    };
                    read_ip |= ins.k == OFF_IP || ins.k == OFF_IP + 4;
                }
                BPF_JEQ_K | BPF_JGE_K | BPF_JGT_K => {
                    let hit = match ins.code {
                        BPF_JEQ_K => acc == ins.k,
                        BPF_JGE_K => acc >= ins.k,
                        _ => acc > ins.k,
                    };
                    pc += if hit { ins.jt } else { ins.jf } as usize;
                }
                BPF_RET_K => return (ins.k, read_ip),
                code => panic!("instruction {code:#x}"),
            }
        }
    }

    #[test]
    fn untrapped_calls_are_let_through_on_their_number_alone() {
        let fast = FastPath {
            page: 0x10_2000,
            stubs: 0x7fff_f000_0000,
            gate: 0x10_2800,
        };
        let trapped = [libc::SYS_read, libc::SYS_futex, libc::SYS_nanosleep];
        let prog = build_filter(&trapped, 400, Some(fast));
        let elsewhere = 0x40_1000;
        // Not trapped: allowed without a look at where it was made, which
        // is what lets the kernel cache the answer per number.
        for nr in [libc::SYS_rt_sigprocmask, libc::SYS_mmap, libc::SYS_write] {
            assert_eq!(run(&prog, nr as u32, elsewhere), (SECCOMP_RET_ALLOW, false));
        }
        // Trapped: stops, unless made at the gate (anything) or from the
        // page (futex only).
        let gate_after = fast.gate + 2;
        for nr in trapped {
            assert_eq!(run(&prog, nr as u32, elsewhere).0, SECCOMP_RET_TRACE);
            assert_eq!(run(&prog, nr as u32, gate_after).0, SECCOMP_RET_ALLOW);
        }
        let in_page = fast.page + 0x40;
        assert_eq!(
            run(&prog, libc::SYS_futex as u32, in_page).0,
            SECCOMP_RET_ALLOW
        );
        assert_eq!(
            run(&prog, libc::SYS_read as u32, in_page).0,
            SECCOMP_RET_TRACE
        );
        // Past the table: stops.
        assert_eq!(run(&prog, 401, elsewhere).0, SECCOMP_RET_TRACE);
        // Without the fast path, only the numbers count.
        let plain = build_filter(&trapped, 400, None);
        assert_eq!(
            run(&plain, libc::SYS_futex as u32, in_page),
            (SECCOMP_RET_TRACE, false)
        );
        assert_eq!(
            run(&plain, libc::SYS_mmap as u32, in_page),
            (SECCOMP_RET_ALLOW, false)
        );
    }

    #[test]
    fn prctl_stops_only_for_the_timer_slack() {
        let trapped = [libc::SYS_read, libc::SYS_prctl];
        let prctl = libc::SYS_prctl as u32;
        for fast in [
            None,
            Some(FastPath {
                page: 0x10_2000,
                stubs: 0x7fff_f000_0000,
                gate: 0x10_2800,
            }),
        ] {
            let prog = build_filter(&trapped, 400, fast);
            for option in [libc::PR_SET_TIMERSLACK, libc::PR_GET_TIMERSLACK] {
                let got = run_with(&prog, prctl, 0x40_1000, option as u32).0;
                assert_eq!(got, SECCOMP_RET_TRACE);
            }
            let named = run_with(&prog, prctl, 0x40_1000, libc::PR_SET_NAME as u32).0;
            assert_eq!(named, SECCOMP_RET_ALLOW);
            // The other trapped calls still stop, whatever their first argument.
            let read = run_with(
                &prog,
                libc::SYS_read as u32,
                0x40_1000,
                libc::PR_SET_NAME as u32,
            );
            assert_eq!(read.0, SECCOMP_RET_TRACE);
        }
    }
}
