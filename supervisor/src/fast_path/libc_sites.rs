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
//! glibc's inline calls have another shape: the number is loaded further
//! up (`read`: `xor eax, eax; syscall`; `__open_nocancel`: `mov eax, 0x101;
//! mov rsi, rdi; mov edi, -100; syscall`) and the `syscall` alone is too
//! short for the jump, so the jump covers the `cmp rax, -4096` after it
//! too, and the stub makes that compare before it jumps back, the number
//! taken from `eax` as the call has it (see [`Shape`]).
//!
//! The stubs live in one page at [`ch::LIBC_STUBS_AT`], which the seccomp
//! filter lets make futex calls (the shared code's waits), mapped with the
//! channel (at [`ch::GO_CHANNEL_AT`]) at the program's exec. A stub first
//! steps below the 128-byte red zone (a leaf function of libc may keep data
//! there, and the shared code calls and pushes). A site is patched only
//! when the bytes and the registers agree that the stop came from exactly
//! that instruction pair, no other thread of the process is stopped between
//! the two instructions, and the process is not a vfork child (which shares
//! its parent's memory and stub page). The dynamic loader's sites are
//! patched the same way: a passed call is made at the library's gate, in
//! the trampoline page faultline maps at the exec of a program that will
//! load the library, before the loader runs.

use faultline_channel as ch;

use crate::engine::Supervisor;
use crate::fast_path::go_runtime::{map_code_page, map_stub_page};
use crate::fast_path::go_stub::{common, rel32};
use crate::host::tracee;
use crate::sim::fdkind::FdKind;
use crate::sim::memory::{Memory, Regs};
use crate::sim::world::{LibcStubs, Resume, ThreadState, Vtid};

/// `syscall`.
const SYSCALL: [u8; 2] = [0x0f, 0x05];

/// `cmp rax, -4096`: glibc's test of a call's result for an error.
const CHECK_RESULT: [u8; 6] = [0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff];

/// Bytes of one site's stub ([`site_stub`], padded with int3s): the stubs
/// follow the shared code in the page, in the order their sites were
/// patched.
const STUB_LEN: u64 = 31 + CHECK_RESULT.len() as u64;

/// Where the tail a stub makes for its site ([`Shape::tail`]) starts in the
/// stub: after the step down, the number, r11, the call and the step up.
const STUB_TAIL_AT: u64 = 26;

/// How a patchable site looks around its `syscall`. A site is named by the
/// address of that `syscall`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `mov eax, NR; syscall`: the stub comes back right after the call.
    LoadNr,
    /// `syscall; cmp rax, -4096`, the number loaded earlier (glibc's inline
    /// calls: `read`, `__open_nocancel`): the jump needs the compare's
    /// bytes too, so the stub makes it, and a thread stopped at the call
    /// resumes at the stub's copy of it; the stub leaves `eax` as the call
    /// has it.
    NrBeforeThenCheck,
}

impl Shape {
    /// The bytes before the `syscall` for call `nr`.
    fn lead(self, nr: u32) -> Vec<u8> {
        match self {
            Shape::LoadNr => [&[0xb8][..], &nr.to_le_bytes()].concat(),
            Shape::NrBeforeThenCheck => Vec::new(),
        }
    }

    /// The instructions after the `syscall` the jump covers, which the stub
    /// makes before it jumps back.
    fn tail(self) -> &'static [u8] {
        match self {
            Shape::LoadNr => &[],
            Shape::NrBeforeThenCheck => &CHECK_RESULT,
        }
    }

    /// The stub's first instructions after its step down: `mov eax, NR`,
    /// or a five-byte `nop` where the call's `eax` is its number already.
    fn load_nr(self, nr: u32) -> [u8; 5] {
        match self {
            Shape::NrBeforeThenCheck => [0x0f, 0x1f, 0x44, 0x00, 0x00],
            _ => {
                let [a, b, c, d] = nr.to_le_bytes();
                [0xb8, a, b, c, d]
            }
        }
    }

    /// The site's first byte, for its `syscall` at `call`.
    fn start(self, call: u64, nr: u32) -> u64 {
        call - self.lead(nr).len() as u64
    }

    /// The first byte after the site: where its stub jumps back to.
    fn end(self, call: u64) -> u64 {
        call + SYSCALL.len() as u64 + self.tail().len() as u64
    }

    /// The shape of call `nr`'s site whose `syscall` is at `call`, if it is
    /// one of these: the bytes around it are `code` (from `call - 6`), and
    /// the byte before the lead must not change its meaning.
    fn of(code: &[u8; 16], nr: u32) -> Option<Shape> {
        [Shape::LoadNr, Shape::NrBeforeThenCheck]
            .into_iter()
            .find(|shape| {
                let lead = shape.lead(nr);
                let from = 6 - lead.len();
                let want = [&lead[..], &SYSCALL, shape.tail()].concat();
                (lead.is_empty() || !is_prefix(code[from - 1]))
                    && code[from..from + want.len()] == want[..]
            })
    }
}

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
/// be made. An `fcntl` waits only for a lock (its command in `regs`), a
/// `read` only on a descriptor that is not a file (`fd`, its kind).
fn never_waits(nr: i64, regs: &Regs, fd: Option<FdKind>) -> bool {
    match nr {
        libc::SYS_fcntl => !super::fcntl_waits(regs.rsi),
        libc::SYS_read => matches!(
            fd,
            Some(FdKind::File | FdKind::Disk { .. } | FdKind::Proc | FdKind::Random)
        ),
        _ => matches!(
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
                | libc::SYS_rt_sigaction
        ),
    }
}

/// The stub at `at` of the site of `shape` whose `syscall` (of call `nr`)
/// is at `call`, and the jump written over the site. None if a jump cannot
/// reach.
fn site_stub(at: u64, call: u64, shape: Shape, nr: u32) -> Option<(Vec<u8>, Vec<u8>)> {
    let (site, back) = (shape.start(call, nr), shape.end(call));
    let mut stub = Vec::with_capacity(STUB_LEN as usize);
    // lea rsp, [rsp - 128]
    stub.extend_from_slice(&[0x48, 0x8d, 0x64, 0x24, 0x80]);
    // mov eax, NR (or what the call has in eax)
    stub.extend_from_slice(&shape.load_nr(nr));
    // xor r11d, r11d: `ch::CALLER_LIBC`, nothing for the shared code to
    // copy (`Slot::peek`) and nothing to copy out (`Slot::poke`)
    stub.extend_from_slice(&[0x45, 0x31, 0xdb]);
    // call common
    stub.push(0xe8);
    stub.extend_from_slice(&rel32(at + stub.len() as u64 + 4, ch::LIBC_STUBS_AT)?.to_le_bytes());
    // lea rsp, [rsp + 128]
    stub.extend_from_slice(&[0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0]);
    debug_assert_eq!(stub.len() as u64, STUB_TAIL_AT);
    // what the jump covered after the syscall
    stub.extend_from_slice(shape.tail());
    // jmp back, after the site
    stub.push(0xe9);
    stub.extend_from_slice(&rel32(at + stub.len() as u64 + 4, back)?.to_le_bytes());
    stub.resize(STUB_LEN as usize, 0xcc);
    let mut jump = vec![0xcc; (back - site) as usize];
    jump[0] = 0xe9;
    jump[1..5].copy_from_slice(&rel32(site + 5, at)?.to_le_bytes());
    Some((stub, jump))
}

/// libc's executable mapping in process `pid` (start, end), if it has one.
fn libc_text(pid: i32) -> Option<(u64, u64)> {
    crate::host::maps::of(pid)?
        .into_iter()
        .find(|m| m.perms.contains('x') && m.path.ends_with("/libc.so.6"))
        .map(|m| (m.lo, m.hi))
}

impl Supervisor {
    /// After the exec of a dynamic program `pid` (stopped at its exec
    /// event), with the channel on: maps the stub page and the channel
    /// (which a patched Go runtime has mapped already: a Go program linked
    /// with cgo makes some calls through libc, such as `sigaction` for each
    /// signal at its start) and, without Go, the library's trampoline page
    /// (its pass gate), and gives the thread its slot. Its sites, and the
    /// dynamic loader's, are patched later, as they are reached;
    /// faultline's vDSO makes its trapping clock reads through the page's
    /// shared code from the start (as in a patched Go program), over the
    /// channel instead of a stop. A failure is reported once and leaves
    /// libc's own calls on ptrace stops.
    pub(crate) fn prepare_libc_stubs(&mut self, vtid: Vtid, pid: i32, mm: u32) {
        let beside_go = self.sim.procs.get(&pid).is_some_and(|p| p.go_patched);
        if !beside_go && !self.channel_inherited(pid) {
            return;
        }
        let Some(stub) = self.vdso_pages.get(&mm).map(|p| p.inject_stub()) else {
            return;
        };
        // A program that will load the library over an intact channel gets
        // the library's trampoline page from its exec, where the library
        // finds it when it starts: its loader's calls, patched before
        // that, pass theirs at its gate, and faultline's vDSO posts its
        // trapping reads from the start. One without (LD_PRELOAD dropped,
        // the channel overwritten) is patched only if it maps the page.
        let early = !beside_go && self.will_load_library(pid);
        let mapped = if beside_go {
            map_code_page(pid, stub, ch::LIBC_STUBS_AT, common())
        } else {
            map_stub_page(pid, stub, ch::LIBC_STUBS_AT, common()).and_then(|()| match early {
                true => map_code_page(pid, stub, ch::TRAMPOLINE, &ch::trampoline_page()),
                false => Ok(()),
            })
        };
        match mapped {
            Ok(()) => {
                let p = self.sim.procs.get_mut(&pid).expect("exec'd process");
                p.libc_stubs = Some(LibcStubs::default());
                if early {
                    if let Some(page) = self.vdso_pages.get_mut(&mm) {
                        if page.set_channel_call(pid, ch::LIBC_STUBS_AT).is_ok() {
                            // Its reads post from now on, before the
                            // library announces itself: waits for its
                            // threads watch the channel.
                            p.channel_user = true;
                        }
                    }
                }
                self.give_go_slot(vtid);
            }
            Err(e) => self.report_unpatched(pid, "glibc", &e.to_string()),
        }
    }

    /// Whether process `pid`, just exec'd, will load faultline's library
    /// and find the channel usable: its environment preloads the library
    /// (a program may drop LD_PRELOAD for its children) and the channel's
    /// header is intact.
    fn will_load_library(&self, pid: i32) -> bool {
        let (Some(lib), Some(chan)) = (&self.preload_lib, &self.channel) else {
            return false;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            return false;
        };
        let preloads = environ.split(|&b| b == 0).any(|var| {
            var.strip_prefix(b"LD_PRELOAD=").is_some_and(|list| {
                list.split(|&b| b == b':' || b == b' ')
                    .any(|entry| entry == lib.as_bytes())
            })
        });
        preloads && chan.intact()
    }

    /// Where a call rewound to run again resumes in process `pid`: at
    /// `rip` (its `syscall`), or at its site's stub if the site is patched.
    pub(crate) fn rewound_call_at(&self, pid: i32, rip: u64) -> u64 {
        self.sim
            .procs
            .get(&pid)
            .and_then(|p| p.libc_stubs.as_ref())
            .and_then(|s| s.patched.get(&rip).copied())
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
    /// reached. A site whose jump covers more than its call
    /// ([`Shape::NrBeforeThenCheck`]) is patched only when the thread can be
    /// moved to go on at its stub's copy of the rest: at the call's exit,
    /// or when the call returns a value or is passed without waiting.
    pub(crate) fn patch_libc_site(&mut self, vtid: Vtid, regs: &Regs, done: bool) {
        let nr = regs.orig_rax as i64;
        let th = &self.sim.threads[&vtid];
        let (pid, tid, has_slot) = (th.pid, th.tid, th.gs_slot.is_some());
        let fd = self
            .sim
            .procs
            .get(&pid)
            .and_then(|p| p.fds.get(&(regs.rdi as i32)).copied());
        let state = &th.state;
        let waits_in_kernel = match state {
            ThreadState::Ready(Resume::Pass) => !never_waits(nr, regs, fd),
            ThreadState::Ready(Resume::PassThenExit(..) | Resume::Signal(_)) => true,
            _ => false,
        };
        if waits_in_kernel && !done {
            return;
        }
        // Where the thread goes on after its call can be moved to the
        // stub's tail: from its exit, to be returned a value, or to pass a
        // call that never waits (a restart would make it again at the
        // `syscall`, which the jump covers).
        let movable = done || matches!(state, ThreadState::Ready(Resume::Return(_) | Resume::Pass));
        let call = regs.rip.wrapping_sub(SYSCALL.len() as u64);
        let Some(p) = self.sim.procs.get_mut(&pid) else {
            return;
        };
        let wanted = has_slot && p.vfork_parent.is_none() && patched_call(nr);
        let interp = p.interp;
        let Some(stubs) = p.libc_stubs.as_mut().filter(|_| wanted) else {
            return;
        };
        if stubs.refused.contains(&call) || stubs.patched.contains_key(&call) {
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
        // The loader's own calls come first, before libc is mapped: its
        // sites are patched too (the pass gate is there from the exec),
        // and libc's text is looked for only once a call comes from
        // elsewhere.
        let in_loader = interp.is_some_and(|(lo, hi)| call >= lo && call < hi);
        let text = match in_loader {
            true => interp,
            false => *stubs.text.get_or_insert_with(|| libc_text(pid)),
        };
        let at = ch::LIBC_STUBS_AT + common().len() as u64 + STUB_LEN * stubs.patched.len() as u64;
        let mut code = [0u8; 16];
        let shape = text
            .filter(|&(lo, hi)| call > lo + 6 && call + 10 <= hi)
            .filter(|_| mem.read_mem(call - 6, &mut code).is_ok())
            .and_then(|_| Shape::of(&code, nr as u32));
        let stub = shape
            .filter(|_| at + STUB_LEN <= ch::LIBC_STUBS_AT + 4096)
            .and_then(|shape| Some((shape, site_stub(at, call, shape, nr as u32)?)));
        let Some((shape, (stub, jump))) = stub else {
            stubs.refused.insert(call);
            return;
        };
        // This thread goes on inside the site unless moved to the stub.
        let moved = !shape.tail().is_empty();
        if moved && !movable {
            return;
        }
        // A thread stopped inside the site would resume in the middle of
        // the jump, and one that stopped at this site's call may be in it
        // in the kernel, which runs it again at its `syscall` if a signal
        // interrupts it. (One waiting for an answer on the channel is in
        // the stub code, whatever its last stop left in its registers.)
        let (start, end) = (shape.start(call, nr as u32), shape.end(call));
        let inside = |rip: u64| rip > start && rip <= end;
        if self.sim.threads.values().any(|t| {
            t.pid == pid && t.vtid != vtid && t.channel_wait.is_none() && inside(t.regs.rip)
        }) {
            return;
        }
        let mut written = mem.write_mem(at, &stub).is_ok() && mem.write_mem(start, &jump).is_ok();
        if written && moved {
            written = self.resume_at_tail(vtid, tid, at + STUB_TAIL_AT, done);
        }
        let p = self.sim.procs.get_mut(&pid).expect("process");
        let Some(stubs) = p.libc_stubs.as_mut() else {
            return;
        };
        if written {
            stubs.patched.insert(call, at);
            // Its threads post now: waits for them watch the channel.
            p.channel_user = true;
        } else {
            stubs.refused.insert(call);
        }
    }

    /// Moves thread `vtid` (host `tid`), stopped at the call of a site
    /// just patched (or at its exit, `done`), to go on at `tail`, its
    /// stub's copy of what followed the call, however it is resumed. False
    /// if its registers could not be set.
    fn resume_at_tail(&mut self, vtid: Vtid, tid: i32, tail: u64, done: bool) -> bool {
        let th = self.sim.threads.get_mut(&vtid).expect("thread");
        th.regs.rip = tail;
        // At the exit the result is in rax, as the exit's handling left it.
        let regs = if done {
            tracee::get_regs(tid)
        } else {
            Ok(th.regs)
        };
        regs.and_then(|mut r| {
            r.rip = tail;
            tracee::set_regs(tid, &r)
        })
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target of the rel32 jump or call whose 4 bytes end at `next`.
    fn target(bytes: &[u8], next: u64) -> u64 {
        let rel = i32::from_le_bytes(bytes.try_into().unwrap());
        next.wrapping_add(rel as u64)
    }

    #[test]
    fn a_site_jumps_to_its_stub_which_steps_below_the_red_zone_and_back() {
        let call = 0x7fff_f7d9_1239;
        let site = call - 5;
        let at = ch::LIBC_STUBS_AT + 0x400;
        let (stub, jump) = site_stub(at, call, Shape::LoadNr, 257).expect("near enough");
        assert_eq!(stub.len() as u64, STUB_LEN);
        // The jump over the site, then int3s to its end.
        assert_eq!(jump.len(), 7);
        assert_eq!(jump[0], 0xe9);
        assert_eq!(target(&jump[1..5], site + 5), at);
        assert_eq!(&jump[5..], &[0xcc, 0xcc]);
        // Down past the red zone, the call's number, no copies, the call
        // of the shared code at the page's start, back up, back to the site.
        assert_eq!(&stub[..5], &[0x48, 0x8d, 0x64, 0x24, 0x80]);
        assert_eq!(&stub[5..10], &[0xb8, 1, 1, 0, 0]);
        assert_eq!(&stub[10..13], &[0x45, 0x31, 0xdb]);
        assert_eq!(target(&stub[14..18], at + 18), ch::LIBC_STUBS_AT);
        assert_eq!(&stub[18..26], &[0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0]);
        assert_eq!(stub[26], 0xe9);
        assert_eq!(target(&stub[27..31], at + 31), call + 2);
        assert!(stub[31..].iter().all(|&b| b == 0xcc));
        // Out of a 32-bit jump's reach: no patch.
        assert!(site_stub(at, 0x1000, Shape::LoadNr, 257).is_none());
    }

    #[test]
    fn an_inline_site_s_stub_makes_the_result_check_the_jump_covers() {
        // glibc's read: xor eax, eax; syscall; cmp rax, -4096; ja ...
        let mut code = [0x90u8; 16];
        code[4..14].copy_from_slice(&[0x31, 0xc0, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff]);
        assert_eq!(Shape::of(&code, 0), Some(Shape::NrBeforeThenCheck));
        // __open_nocancel: mov eax, 0x101 further up; mov edi, -100; syscall; cmp
        let mut open = [0x90u8; 16];
        open[1..14].copy_from_slice(&[
            0xbf, 0x9c, 0xff, 0xff, 0xff, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff,
        ]);
        assert_eq!(Shape::of(&open, 257), Some(Shape::NrBeforeThenCheck));
        // Without the compare after it, the jump would not fit.
        open[8] = 0x89;
        assert_eq!(Shape::of(&open, 257), None);
        let call = 0x7fff_f7d9_12ab;
        let at = ch::LIBC_STUBS_AT + 0x400;
        let (stub, jump) = site_stub(at, call, Shape::NrBeforeThenCheck, 257).expect("near");
        assert_eq!(stub.len() as u64, STUB_LEN);
        // The jump from the syscall, over it and the compare.
        assert_eq!(jump.len(), 8);
        assert_eq!(target(&jump[1..5], call + 5), at);
        assert!(jump[5..].iter().all(|&b| b == 0xcc));
        // No number loaded: eax is the call's (a five-byte nop).
        assert_eq!(&stub[5..10], &[0x0f, 0x1f, 0x44, 0x00, 0x00]);
        // The compare at the tail (where a stopped caller goes on), then
        // back after the site.
        let tail = STUB_TAIL_AT as usize;
        assert_eq!(&stub[tail..tail + 6], &CHECK_RESULT);
        assert_eq!(stub[tail + 6], 0xe9);
        assert_eq!(
            target(&stub[tail + 7..tail + 11], at + tail as u64 + 11),
            call + 8
        );
        // The mov eax shape is still told apart, and not after a prefix
        // (`41 b8` is `mov r8d`).
        let mut load = [0x90u8; 16];
        load[1..8].copy_from_slice(&[0xb8, 0x01, 0x01, 0, 0, 0x0f, 0x05]);
        assert_eq!(Shape::of(&load, 257), Some(Shape::LoadNr));
        assert_eq!(Shape::of(&load, 258), None);
        load[0] = 0x41;
        assert_eq!(Shape::of(&load, 257), None);
    }

    #[test]
    fn only_calls_the_channel_takes_are_patched_and_prefixes_are_seen() {
        assert!(patched_call(libc::SYS_futex));
        assert!(patched_call(libc::SYS_openat));
        assert!(!patched_call(libc::SYS_clock_gettime));
        assert!(patched_call(libc::SYS_rt_sigaction));
        assert!(patched_call(libc::SYS_fcntl));
        assert!(!patched_call(libc::SYS_ioctl));
        assert!(!patched_call(libc::SYS_rt_sigprocmask));
        assert!(is_prefix(0x41));
        assert!(!is_prefix(0xc3));
    }

    #[test]
    fn a_lock_wait_and_a_read_of_a_pipe_may_wait_in_the_kernel() {
        let regs = |rsi: i32| {
            // SAFETY: plain old data.
            let mut r: Regs = unsafe { std::mem::zeroed() };
            r.rsi = rsi as u64;
            r
        };
        let (fcntl, read) = (libc::SYS_fcntl, libc::SYS_read);
        assert!(never_waits(fcntl, &regs(libc::F_GETFL), None));
        assert!(!never_waits(fcntl, &regs(libc::F_SETLKW), None));
        assert!(!never_waits(fcntl, &regs(libc::F_OFD_SETLKW), None));
        assert!(never_waits(read, &regs(0), Some(FdKind::File)));
        assert!(!never_waits(read, &regs(0), Some(FdKind::Pollable)));
        assert!(!never_waits(read, &regs(0), None));
        assert!(never_waits(libc::SYS_rt_sigaction, &regs(0), None));
        assert!(!never_waits(libc::SYS_futex, &regs(0), None));
    }
}
