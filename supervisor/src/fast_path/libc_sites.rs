//! The fast path for glibc's own calls: a dynamic program's libc makes
//! many calls inside itself, past the LD_PRELOAD library's functions (a
//! name lookup's opens, stats and closes, a mutex's futex calls, stdio's
//! writes), so each stopped in ptrace. Most of libc's `syscall`
//! instructions come right after `mov eax, NR`, the shape of the Go
//! runtime's wrappers: at the first stop of such a site, the supervisor
//! writes over those seven bytes a jump to a stub of its own that makes the
//! call through the Go stub's shared code (`go_stub::common`), which posts
//! it in the thread's slot, named by its GS base; the stub then jumps back
//! after the original `syscall`. Later calls from that site go over the
//! channel, dispatched by the same handlers with the same trace events.
//!
//! The stubs live in one page at [`ch::LIBC_STUBS_AT`], which the seccomp
//! filter lets make futex calls (the shared code's waits), mapped with the
//! channel (at [`ch::GO_CHANNEL_AT`]) at the program's exec. A stub first
//! steps below the 128-byte red zone (a leaf function of libc may keep data
//! there, and the shared code calls and pushes). A site is patched only
//! when the bytes and the registers agree that the stop came from exactly
//! that instruction pair, no other thread of the process is stopped between
//! the two instructions, and the process is not a vfork child (which shares
//! its parent's memory and stub page).

use faultline_channel as ch;

use crate::engine::Supervisor;
use crate::fast_path::go_runtime::map_stub_page;
use crate::fast_path::go_stub::{common, rel32};
use crate::host::tracee;
use crate::sim::memory::{Memory, Regs};
use crate::sim::world::{LibcStubs, Resume, ThreadState, Vtid};

/// `syscall`.
const SYSCALL: [u8; 2] = [0x0f, 0x05];

/// Bytes a site has: `mov eax, NR` (5) and `syscall` (2).
const SITE_LEN: u64 = 7;

/// Bytes of one site's stub ([`site_stub`]): the stubs follow the shared
/// code in the page, in the order their sites were patched.
const STUB_LEN: u64 = 31;

/// Bytes that change an instruction when they come before it: the site's
/// `b8` would then not start the `mov eax` it seems to (`41 b8` is
/// `mov r8d`).
fn is_prefix(byte: u8) -> bool {
    matches!(
        byte,
        0x40..=0x4f | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3 | 0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65
    )
}

/// The calls whose sites are patched: those the channel takes (see
/// `trap_reply`), less the clock reads, which only faultline's vDSO posts.
fn patched_call(nr: i64) -> bool {
    super::channel_may_take(nr)
        && !matches!(
            nr,
            libc::SYS_clock_gettime | libc::SYS_gettimeofday | libc::SYS_time
        )
}

/// Calls the kernel never makes wait (so never runs again after a signal):
/// a site of one of them may be patched while its passed call is still to
/// be made.
fn never_waits(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_close
            | libc::SYS_newfstatat
            | libc::SYS_fstat
            | libc::SYS_uname
            | libc::SYS_socket
            | libc::SYS_getsockname
            | libc::SYS_getpeername
            | libc::SYS_setsockopt
            | libc::SYS_getsockopt
            | libc::SYS_sched_getaffinity
    )
}

/// The stub of one site at `at`, for call `nr`, that comes back to `back`,
/// and the jump written over the site at `site`. None if a jump cannot
/// reach.
fn site_stub(at: u64, site: u64, nr: u32) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut stub = Vec::with_capacity(32);
    // lea rsp, [rsp - 128]
    stub.extend_from_slice(&[0x48, 0x8d, 0x64, 0x24, 0x80]);
    // mov eax, NR
    stub.push(0xb8);
    stub.extend_from_slice(&nr.to_le_bytes());
    // xor r11d, r11d: nothing for the shared code to copy (`Slot::peek`)
    stub.extend_from_slice(&[0x45, 0x31, 0xdb]);
    // call common
    stub.push(0xe8);
    stub.extend_from_slice(&rel32(at + stub.len() as u64 + 4, ch::LIBC_STUBS_AT)?.to_le_bytes());
    // lea rsp, [rsp + 128]
    stub.extend_from_slice(&[0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0]);
    // jmp back, after the original syscall
    stub.push(0xe9);
    stub.extend_from_slice(&rel32(at + stub.len() as u64 + 4, site + SITE_LEN)?.to_le_bytes());
    let mut jump = vec![0xcc; SITE_LEN as usize];
    jump[0] = 0xe9;
    jump[1..5].copy_from_slice(&rel32(site + 5, at)?.to_le_bytes());
    Some((stub, jump))
}

/// libc's executable mapping in process `pid` (start, end), if it has one.
fn libc_text(pid: i32) -> Option<(u64, u64)> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    maps.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (lo, hi) = f.next()?.split_once('-')?;
        let perms = f.next()?;
        let path = f.nth(3)?;
        (perms.contains('x') && path.ends_with("/libc.so.6")).then_some((
            u64::from_str_radix(lo, 16).ok()?,
            u64::from_str_radix(hi, 16).ok()?,
        ))
    })
}

impl Supervisor {
    /// After the exec of a dynamic program `pid` (stopped at its exec
    /// event), with the channel on: maps the stub page and the channel, and
    /// gives the thread its slot. Its sites are patched later, as they are
    /// reached. A failure is reported once and leaves libc's own calls on
    /// ptrace stops.
    pub(crate) fn prepare_libc_stubs(&mut self, vtid: Vtid, pid: i32, mm: u32) {
        if !self.channel_inherited(pid) {
            return;
        }
        let Some(stub) = self.vdso_pages.get(&mm).map(|p| p.inject_stub()) else {
            return;
        };
        let mapped = map_stub_page(pid, stub, ch::LIBC_STUBS_AT, common());
        match mapped {
            Ok(()) => {
                let p = self.sim.procs.get_mut(&pid).expect("exec'd process");
                p.libc_stubs = Some(LibcStubs::default());
                self.give_go_slot(vtid);
            }
            Err(e) => self.report_unpatched(pid, "glibc", &e.to_string()),
        }
    }

    /// Where a call rewound to run again resumes in process `pid`: at
    /// `rip` (its `syscall`), or at its site's stub if the site is patched.
    pub(crate) fn rewound_call_at(&self, pid: i32, rip: u64) -> u64 {
        let site = rip.wrapping_sub(5);
        self.sim
            .procs
            .get(&pid)
            .and_then(|p| p.libc_stubs.as_ref())
            .and_then(|s| s.patched.get(&site).copied())
            .unwrap_or(rip)
    }

    /// Once the call thread `vtid` made (registers `regs` at its stop) was
    /// decided at its seccomp stop, or `done` at its syscall-exit stop:
    /// patches the libc site it came from, if it is one to patch and was
    /// not left alone for good. Not while a call the kernel may run again
    /// at its `syscall` (one a signal interrupts while it waits in the
    /// kernel) is still to be made there, nor before the library's pass
    /// gate is mapped or while another thread may resume inside the site:
    /// such a site is patched at the call's exit, or when it is next
    /// reached.
    pub(crate) fn patch_libc_site(&mut self, vtid: Vtid, regs: &Regs, done: bool) {
        let nr = regs.orig_rax as i64;
        let waits_in_kernel = match &self.sim.threads[&vtid].state {
            ThreadState::Ready(Resume::Pass) => !never_waits(nr),
            ThreadState::Ready(Resume::PassThenExit(..) | Resume::Signal(_)) => true,
            _ => false,
        };
        if waits_in_kernel && !done {
            return;
        }
        let th = &self.sim.threads[&vtid];
        let (pid, has_slot) = (th.pid, th.gs_slot.is_some());
        let site = regs.rip.wrapping_sub(SITE_LEN);
        let Some(p) = self.sim.procs.get_mut(&pid) else {
            return;
        };
        let wanted = has_slot && p.vfork_parent.is_none() && patched_call(nr);
        let Some(stubs) = p.libc_stubs.as_mut().filter(|_| wanted) else {
            return;
        };
        if stubs.refused.contains(&site) || stubs.patched.contains_key(&site) {
            return;
        }
        let mem = tracee::Process(pid);
        if !stubs.gate {
            // The library maps its trampoline page, with the pass gate, as
            // it starts; a program without it gets no patches.
            let mut gate = [0u8; ch::PASS_GATE_CODE.len()];
            stubs.gate =
                mem.read_mem(ch::PASS_GATE, &mut gate).is_ok() && gate == ch::PASS_GATE_CODE;
            if !stubs.gate {
                return;
            }
        }
        let text = *stubs.text.get_or_insert_with(|| libc_text(pid));
        let in_libc = text.is_some_and(|(lo, hi)| site > lo && regs.rip <= hi);
        let at = ch::LIBC_STUBS_AT + common().len() as u64 + STUB_LEN * stubs.patched.len() as u64;
        let mut code = [0u8; 1 + SITE_LEN as usize];
        let mut want = vec![0xb8];
        want.extend_from_slice(&(nr as u32).to_le_bytes());
        want.extend_from_slice(&SYSCALL);
        let shaped = in_libc
            && mem.read_mem(site - 1, &mut code).is_ok()
            && code[1..] == want[..]
            && !is_prefix(code[0]);
        let stub = site_stub(at, site, nr as u32)
            .filter(|_| shaped && at + STUB_LEN <= ch::LIBC_STUBS_AT + 4096);
        let Some((stub, jump)) = stub else {
            stubs.refused.insert(site);
            return;
        };
        // A thread stopped between the two instructions would resume in
        // the middle of the jump, and one that stopped at this site's call
        // may be in it in the kernel, which runs it again at its `syscall`
        // if a signal interrupts it. (One waiting for an answer on the
        // channel is in the stub code, whatever its last stop left in its
        // registers.)
        let inside = |rip: u64| rip > site && rip <= site + SITE_LEN;
        if self.sim.threads.values().any(|t| {
            t.pid == pid && t.vtid != vtid && t.channel_wait.is_none() && inside(t.regs.rip)
        }) {
            return;
        }
        let written = mem.write_mem(at, &stub).is_ok() && mem.write_mem(site, &jump).is_ok();
        let p = self.sim.procs.get_mut(&pid).expect("process");
        let Some(stubs) = p.libc_stubs.as_mut() else {
            return;
        };
        if written {
            stubs.patched.insert(site, at);
            // Its threads post now: waits for them watch the channel.
            p.channel_user = true;
        } else {
            stubs.refused.insert(site);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_jumps_to_its_stub_which_steps_below_the_red_zone_and_back() {
        let site = 0x7fff_f7d9_1234;
        let at = ch::LIBC_STUBS_AT + 0x400;
        let (stub, jump) = site_stub(at, site, 257).expect("near enough");
        assert_eq!(stub.len() as u64, STUB_LEN);
        // The jump over the site, then int3s to its end.
        assert_eq!(jump.len(), 7);
        assert_eq!(jump[0], 0xe9);
        let to = (site + 5).wrapping_add(i32::from_le_bytes(jump[1..5].try_into().unwrap()) as u64);
        assert_eq!(to, at);
        assert_eq!(&jump[5..], &[0xcc, 0xcc]);
        // Down past the red zone, the call's number, no copies, the call
        // of the shared code at the page's start, back up, back to the site.
        assert_eq!(&stub[..5], &[0x48, 0x8d, 0x64, 0x24, 0x80]);
        assert_eq!(&stub[5..10], &[0xb8, 1, 1, 0, 0]);
        assert_eq!(&stub[10..13], &[0x45, 0x31, 0xdb]);
        let call =
            (at + 18).wrapping_add(i32::from_le_bytes(stub[14..18].try_into().unwrap()) as u64);
        assert_eq!(call, ch::LIBC_STUBS_AT);
        assert_eq!(&stub[18..26], &[0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0]);
        let back =
            (at + 31).wrapping_add(i32::from_le_bytes(stub[27..31].try_into().unwrap()) as u64);
        assert_eq!(back, site + 7);
        // Out of a 32-bit jump's reach: no patch.
        assert!(site_stub(at, 0x1000, 257).is_none());
    }

    #[test]
    fn only_calls_the_channel_takes_are_patched_and_prefixes_are_seen() {
        assert!(patched_call(libc::SYS_futex));
        assert!(patched_call(libc::SYS_openat));
        assert!(!patched_call(libc::SYS_clock_gettime));
        assert!(!patched_call(libc::SYS_rt_sigaction));
        assert!(!patched_call(libc::SYS_fcntl));
        assert!(is_prefix(0x41));
        assert!(!is_prefix(0xc3));
    }
}
