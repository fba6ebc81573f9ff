//! The code a patched Go runtime makes its hot system calls through: a Go
//! program makes raw `syscall` instructions, so no LD_PRELOAD library sees
//! them, but each of its runtime's wrappers (`runtime.futex`,
//! `runtime.usleep`, ...) loads its call number and makes the call in two
//! instructions, `mov eax, NR; syscall` (and `Syscall6`, package syscall's
//! one way in, `mov rdi, rbx; syscall`). Those bytes become a jump to a
//! small stub of the same two halves, `mov eax, NR; call common`, which
//! jumps back after the original `syscall`. `common` is the
//! library's request round trip in about 300 bytes of machine code: it finds the
//! thread's channel slot through the GS base (which the supervisor sets for
//! every thread of a patched process; Go and glibc use only FS), marks it
//! busy (a signal handler's call while it is makes the real call), blocks
//! every signal, posts the call, rings the doorbell, spins or sleeps for
//! the answer (waking first the thread the supervisor handed the turn to)
//! and gives back the signal mask. Its futex calls are made
//! from the trampoline page, which the seccomp filter lets through, and
//! `rt_sigprocmask` is never trapped; a call the channel sends back is made
//! by the stub itself, and traps as usual. A runtime wrapper's
//! `FUTEX_WAKE` is not posted at all: the stub notes it in the slot
//! (`ch::Slot::wakes`) and returns 0, and the supervisor takes it at the
//! thread's next request or stop (`engine/go_wakes.rs`). Nor are the
//! runtime's zero-timeout epoll waits on the instance the slot names as
//! quiet, and package syscall's reads of the socket it names as empty,
//! while the readiness version the header holds is the slot's: 0 and
//! EAGAIN come back at once (`engine/quiet_polls.rs`).
//!
//! The bytes are assembled into the supervisor and copied into each
//! patched process's trampoline page; the channel is mapped there at
//! [`ch::GO_CHANNEL_AT`], so the stub names the header by address.

use std::mem::offset_of;

use faultline_channel as ch;

std::arch::global_asm!(
    // The six argument registers, loaded from the slot's array at `from`
    // (the caller's arguments, or those a passed call is made with).
    ".macro faultline_go_stub_load_args from",
    "mov rdi, qword ptr gs:[\\from]",
    "mov rsi, qword ptr gs:[\\from + 8]",
    "mov rdx, qword ptr gs:[\\from + 16]",
    "mov r10, qword ptr gs:[\\from + 24]",
    "mov r8, qword ptr gs:[\\from + 32]",
    "mov r9, qword ptr gs:[\\from + 40]",
    ".endm",
    // rt_sigprocmask(SIG_SETMASK, &slot.mask, NULL, 8): the program's own
    // mask back (r11: the slot).
    ".macro faultline_go_stub_give_back_mask",
    "lea rsi, [r11 + {mask}]",
    "mov edi, 2",
    "xor edx, edx",
    "mov r10d, 8",
    "mov eax, {sys_sigprocmask}",
    "syscall",
    ".endm",
    // One of the answers the slot allows in place (`ch::Slot::quiet_epfd`):
    // on to 40 unless the readiness version it was told of still holds and
    // its budget lasts; else the budget is used, `taken` counted for the
    // supervisor, and the slot is free again.
    ".macro faultline_go_stub_answer_quiet taken",
    "cmp dword ptr gs:[{quiet_budget}], 0",
    "je 40f",
    "mov ecx, {header}",
    "mov rcx, qword ptr [rcx + {readiness}]",
    "test rcx, rcx",
    "jz 40f",
    "cmp rcx, qword ptr gs:[{quiet_version}]",
    "jne 40f",
    "sub dword ptr gs:[{quiet_budget}], 1",
    "add dword ptr gs:[{quiet_taken}], \\taken",
    "mov dword ptr gs:[{busy}], 0",
    ".endm",
    ".pushsection .rodata.faultline_go_stub, \"a\"",
    ".globl faultline_go_stub_start",
    ".globl faultline_go_stub_end",
    "faultline_go_stub_start:",
    // A signal handler's call while the slot is in use is made for real.
    "cmp dword ptr gs:[{busy}], 0",
    "jne 8f",
    "mov dword ptr gs:[{busy}], 1",
    // The program's own rt_sigprocmask (the runtime's wrapper, or a raw
    // call): a mask left held (`ch::Slot::held`) is given back first, so
    // the call reads and changes the program's own; then it is made.
    "cmp rax, {sys_sigprocmask}",
    "jne 44f",
    "cmp dword ptr gs:[{held}], 0",
    "je 43f",
    "mov dword ptr gs:[{held}], 0",
    "mov qword ptr gs:[{args}], rdi",
    "mov qword ptr gs:[{args} + 8], rsi",
    "mov qword ptr gs:[{args} + 16], rdx",
    "mov qword ptr gs:[{args} + 24], r10",
    "mov r11, qword ptr gs:[{home}]",
    "faultline_go_stub_give_back_mask",
    "mov rdi, qword ptr gs:[{args}]",
    "mov rsi, qword ptr gs:[{args} + 8]",
    "mov rdx, qword ptr gs:[{args} + 16]",
    "mov r10, qword ptr gs:[{args} + 24]",
    "mov eax, {sys_sigprocmask}",
    "43:",
    "mov dword ptr gs:[{busy}], 0",
    "jmp 8f",
    "44:",
    "cmp r11d, {caller_syscall}",
    "je 48f",
    // The network poller's zero-timeout epoll wait on the descriptor the
    // supervisor found quiet, at the readiness version that still holds,
    // finds nothing again: 0 at once, counted for the supervisor, while
    // the budget lasts (`ch::Slot::quiet_epfd`).
    "cmp r11d, {caller_runtime}",
    "jne 47f",
    "cmp rax, {sys_epoll_pwait}",
    "jne 47f",
    "test r10d, r10d",
    "jnz 40f",
    "test r8, r8",
    "jnz 40f",
    "test edx, edx",
    "jle 40f",
    "test edi, edi",
    "js 40f",
    "cmp edi, dword ptr gs:[{quiet_epfd}]",
    "jne 40f",
    "faultline_go_stub_answer_quiet 1",
    "xor eax, eax",
    "ret",
    "47:",
    // A runtime wrapper's FUTEX_WAKE is noted in the slot, not posted
    // (`ch::Slot::wakes`), while there is room: 0 comes back at once.
    "cmp r11d, {caller_runtime}",
    "jne 40f",
    "cmp rax, {sys_futex}",
    "jne 40f",
    "mov ecx, esi",
    "and ecx, 0x7f",
    "cmp ecx, {futex_wake}",
    "jne 40f",
    "mov ecx, dword ptr gs:[{wakes_len}]",
    "cmp ecx, {wakes_max}",
    "jae 40f",
    "shl ecx, 4",
    "mov qword ptr gs:[rcx + {wakes}], rdi",
    "mov qword ptr gs:[rcx + {wakes} + 8], rdx",
    "add dword ptr gs:[{wakes_len}], 1",
    "mov dword ptr gs:[{busy}], 0",
    "xor eax, eax",
    "ret",
    // A `read` through package syscall of the socket the supervisor found
    // empty, at the readiness version that still holds, fails with EAGAIN
    // again: at once, counted for the supervisor, while the shared budget
    // lasts (`ch::Slot::empty_fd`).
    "48:",
    "cmp rax, {sys_read}",
    "jne 40f",
    "test edi, edi",
    "js 40f",
    "cmp edi, dword ptr gs:[{empty_fd}]",
    "jne 40f",
    "faultline_go_stub_answer_quiet {empty_read_taken}",
    "mov rax, {eagain}",
    "ret",
    "40:",
    // r11: which kind of site called (`ch::Slot::caller`).
    "mov dword ptr gs:[{caller}], r11d",
    // The call, as the wrapper loaded it, into the slot.
    "mov qword ptr gs:[{nr}], rax",
    "mov qword ptr gs:[{args}], rdi",
    "mov qword ptr gs:[{args} + 8], rsi",
    "mov qword ptr gs:[{args} + 16], rdx",
    "mov qword ptr gs:[{args} + 24], r10",
    "mov qword ptr gs:[{args} + 32], r8",
    "mov qword ptr gs:[{args} + 40], r9",
    "lea rcx, [rsp + 8]",
    "mov qword ptr gs:[{sp}], rcx",
    "2:",
    // The memory the call reads, copied into the slot (again on a
    // restart, when it may have changed): a runtime wrapper's sleep's
    // timespec, its futex wait's word and timeout; the bytes a `write` of
    // package syscall sends.
    "mov qword ptr gs:[{peek_at}], 0",
    "mov qword ptr gs:[{peek_at} + 8], 0",
    "mov dword ptr gs:[{send_len}], 0",
    "cmp dword ptr gs:[{caller}], {caller_syscall}",
    "je 35f",
    "cmp dword ptr gs:[{caller}], {caller_runtime}",
    "jne 30f",
    "mov rcx, qword ptr gs:[{args}]",
    "cmp qword ptr gs:[{nr}], {sys_nanosleep}",
    "jne 31f",
    "mov r11, qword ptr [rcx]",
    "mov qword ptr gs:[{peek}], r11",
    "mov r11, qword ptr [rcx + 8]",
    "mov qword ptr gs:[{peek} + 8], r11",
    "mov dword ptr gs:[{peek_len}], 16",
    "mov qword ptr gs:[{peek_at}], rcx",
    "jmp 30f",
    "31:",
    "cmp qword ptr gs:[{nr}], {sys_futex}",
    "jne 30f",
    // FUTEX_WAIT or FUTEX_WAIT_BITSET, private or not, any clock.
    "mov r11, qword ptr gs:[{args} + 8]",
    "and r11d, 0x7f",
    "cmp r11d, {futex_wait}",
    "je 32f",
    "cmp r11d, {futex_wait_bitset}",
    "jne 30f",
    "32:",
    "mov r11d, dword ptr [rcx]",
    "mov dword ptr gs:[{peek}], r11d",
    "mov dword ptr gs:[{peek_len}], 4",
    "mov qword ptr gs:[{peek_at}], rcx",
    "mov rcx, qword ptr gs:[{args} + 24]",
    "test rcx, rcx",
    "jz 30f",
    "mov r11, qword ptr [rcx]",
    "mov qword ptr gs:[{peek} + {peek_bytes}], r11",
    "mov r11, qword ptr [rcx + 8]",
    "mov qword ptr gs:[{peek} + {peek_bytes} + 8], r11",
    "mov dword ptr gs:[{peek_len} + 4], 16",
    "mov qword ptr gs:[{peek_at} + 8], rcx",
    "jmp 30f",
    "35:",
    "cmp qword ptr gs:[{nr}], {sys_write}",
    "jne 30f",
    "mov rcx, qword ptr gs:[{args} + 16]",
    "cmp rcx, {send_bytes}",
    "ja 30f",
    "mov rsi, qword ptr gs:[{args} + 8]",
    "mov r11, qword ptr gs:[{home}]",
    "lea rdi, [r11 + {send}]",
    "mov dword ptr [r11 + {send_len}], ecx",
    "rep movsb",
    "30:",
    // rt_sigprocmask(SIG_SETMASK, &hold, &slot.mask, 8), unless the
    // signals are still held since the last answer.
    "cmp dword ptr gs:[{held}], 0",
    "jne 19f",
    "mov r11, qword ptr gs:[{home}]",
    "lea rdx, [r11 + {mask}]",
    "lea rsi, [rip + .Lfaultline_hold_signals]",
    "mov edi, 2",
    "mov r10d, 8",
    "mov eax, {sys_sigprocmask}",
    "syscall",
    // Post: a new sequence number, REQUEST, the slot's index in `posted`,
    // the doorbell bumped, and woken if the supervisor sleeps.
    "19:",
    "mov r11, qword ptr gs:[{home}]",
    "add dword ptr [r11 + {seq}], 1",
    "mov dword ptr [r11 + {handoff}], 0",
    "mov dword ptr [r11 + {state}], {request}",
    "mov ecx, dword ptr [r11 + {index1}]",
    "mov edi, {header}",
    "mov dword ptr [rdi + {posted}], ecx",
    "lock add dword ptr [rdi + {doorbell}], 1",
    "cmp dword ptr [rdi + {sleeping}], 0",
    "je 20f",
    "add rdi, {doorbell}",
    "mov esi, {futex_wake}",
    "mov edx, 1",
    "xor r10d, r10d",
    "mov eax, {sys_futex}",
    "syscall",
    "20:",
    "mov edi, {header}",
    "mov ecx, dword ptr [rdi + {spin}]",
    // Wait for REPLY with this sequence number as `await_reply` does:
    // spin `spin` times, then mark the slot asleep and sleep on the state
    // word; a turn handed over is passed on (its slot's state woken) first.
    "3:",
    "mov r11, qword ptr gs:[{home}]",
    "mov eax, dword ptr [r11 + {state}]",
    "cmp eax, {reply}",
    "jne 4f",
    "mov edx, dword ptr [r11 + {reply_seq}]",
    "cmp edx, dword ptr [r11 + {seq}]",
    "je 5f",
    "4:",
    "mov edx, dword ptr [r11 + {handoff}]",
    "test edx, edx",
    "jnz 9f",
    "test ecx, ecx",
    "jz 6f",
    "dec ecx",
    "pause",
    "jmp 3b",
    // Mark asleep, unless a handoff came first.
    "6:",
    "xor eax, eax",
    "mov edx, {asleep}",
    "lock cmpxchg dword ptr [r11 + {handoff}], edx",
    "jmp 3b",
    "9:",
    "cmp edx, {asleep}",
    "je 10f",
    "lea eax, [rdx - 1]",
    "cmp eax, {slots}",
    "jae 11f",
    "imul rax, rax, {slot_size}",
    "lea rdi, [rax + {first_state}]",
    "mov esi, {futex_wake}",
    "mov edx, 1",
    "xor r10d, r10d",
    "mov eax, {sys_futex}",
    "syscall",
    "11:",
    "mov r11, qword ptr gs:[{home}]",
    "mov eax, {asleep}",
    "xchg dword ptr [r11 + {handoff}], eax",
    "jmp 3b",
    "10:",
    "lea rdi, [r11 + {state}]",
    "mov esi, {futex_wait}",
    "mov edx, {request}",
    "xor r10d, r10d",
    "mov eax, {sys_futex}",
    "syscall",
    "jmp 3b",
    // Answered: copy what the supervisor wrote for the call into the
    // caller's memory (`ch::Slot::poke`), take the answer, free the slot,
    // restore the mask (which the supervisor may have changed).
    "5:",
    "mov ecx, dword ptr [r11 + {poke_len}]",
    "test ecx, ecx",
    "jz 21f",
    "mov rdi, qword ptr [r11 + {poke_at}]",
    "lea rsi, [r11 + {poke}]",
    "rep movsb",
    "mov dword ptr [r11 + {poke_len}], 0",
    "21:",
    "mov r9d, dword ptr [r11 + {reply_kind}]",
    "cmp r9d, {reply_pass}",
    "je 13f",
    "cmp r9d, {pass_report}",
    "je 13f",
    "15:",
    "mov dword ptr [r11 + {state}], {idle}",
    // Signals stay held when the supervisor says none can be pending.
    "cmp dword ptr [r11 + {release}], 0",
    "jne 45f",
    "mov dword ptr [r11 + {held}], 1",
    "jmp 46f",
    "45:",
    "mov dword ptr [r11 + {held}], 0",
    "faultline_go_stub_give_back_mask",
    "46:",
    "cmp r9d, {restart}",
    "je 2b",
    // The wrapper's registers as the kernel would leave them, and its
    // result: the answer's or the real call's (which traps).
    "cmp r9d, {reply_return}",
    "faultline_go_stub_load_args {args}",
    "mov rax, qword ptr gs:[{ret}]",
    "mov dword ptr gs:[{busy}], 0",
    "je 7f",
    "mov rax, qword ptr gs:[{nr}]",
    "8:",
    "syscall",
    "7:",
    "ret",
    // Passed: the call is made now, with the arguments the supervisor
    // gave, at the pass gate, signals still blocked (after a ptrace stop
    // the kernel too makes it before a signal comes). Its result is the
    // answer, or, for a call with work at its exit, is reported in a
    // second request whose answer is.
    "13:",
    "faultline_go_stub_load_args {pass_args}",
    "mov rax, qword ptr gs:[{pass_nr}]",
    "mov rcx, {gate}",
    "call rcx",
    "mov r11, qword ptr gs:[{home}]",
    "mov qword ptr [r11 + {ret}], rax",
    "cmp dword ptr [r11 + {reply_kind}], {pass_report}",
    "je 18f",
    "mov r9d, {reply_return}",
    "jmp 15b",
    "18:",
    "mov qword ptr [r11 + {nr}], {exit_report}",
    "jmp 19b",
    ".Lfaultline_hold_signals:",
    ".quad {hold_mask}",
    "faultline_go_stub_end:",
    ".popsection",
    nr = const offset_of!(ch::Slot, nr),
    args = const offset_of!(ch::Slot, args),
    ret = const offset_of!(ch::Slot, ret),
    home = const offset_of!(ch::Slot, home),
    mask = const offset_of!(ch::Slot, mask),
    seq = const offset_of!(ch::Slot, seq),
    reply_seq = const offset_of!(ch::Slot, reply_seq),
    reply_kind = const offset_of!(ch::Slot, reply),
    state = const offset_of!(ch::Slot, state),
    busy = const offset_of!(ch::Slot, busy),
    wakes_len = const offset_of!(ch::Slot, wakes_len),
    wakes = const offset_of!(ch::Slot, wakes),
    wakes_max = const ch::WAKES,
    held = const offset_of!(ch::Slot, held),
    release = const offset_of!(ch::Slot, release),
    hold_mask = const ch::HOLD_MASK,
    index1 = const offset_of!(ch::Slot, index1),
    handoff = const offset_of!(ch::Slot, handoff),
    asleep = const ch::ASLEEP,
    slots = const ch::SLOTS,
    slot_size = const std::mem::size_of::<ch::Slot>(),
    first_state = const ch::go_slot_home(0) as usize + offset_of!(ch::Slot, state),
    header = const ch::GO_CHANNEL_AT,
    posted = const offset_of!(ch::Header, posted),
    doorbell = const offset_of!(ch::Header, doorbell),
    sleeping = const offset_of!(ch::Header, sleeping),
    spin = const offset_of!(ch::Header, spin),
    request = const ch::REQUEST,
    reply = const ch::REPLY,
    idle = const ch::IDLE,
    restart = const ch::REPLY_RESTART,
    reply_return = const ch::REPLY_RETURN,
    reply_pass = const ch::REPLY_PASS,
    pass_report = const ch::REPLY_PASS_REPORT,
    exit_report = const ch::EXIT_REPORT,
    pass_args = const offset_of!(ch::Slot, pass_args),
    pass_nr = const offset_of!(ch::Slot, pass_nr),
    sp = const offset_of!(ch::Slot, sp),
    gate = const ch::PASS_GATE,
    caller = const offset_of!(ch::Slot, caller),
    caller_runtime = const ch::CALLER_RUNTIME,
    caller_syscall = const ch::CALLER_SYSCALL,
    send_len = const offset_of!(ch::Slot, send_len),
    send = const offset_of!(ch::Slot, send),
    send_bytes = const ch::SEND_BYTES,
    sys_write = const libc::SYS_write,
    poke_len = const offset_of!(ch::Slot, poke_len),
    poke_at = const offset_of!(ch::Slot, poke_at),
    poke = const offset_of!(ch::Slot, poke),
    peek_at = const offset_of!(ch::Slot, peek_at),
    peek_len = const offset_of!(ch::Slot, peek_len),
    peek = const offset_of!(ch::Slot, peek),
    peek_bytes = const ch::PEEK_BYTES,
    sys_nanosleep = const libc::SYS_nanosleep,
    futex_wait_bitset = const libc::FUTEX_WAIT_BITSET,
    futex_wake = const libc::FUTEX_WAKE,
    futex_wait = const libc::FUTEX_WAIT,
    sys_futex = const libc::SYS_futex,
    sys_epoll_pwait = const libc::SYS_epoll_pwait,
    quiet_epfd = const offset_of!(ch::Slot, quiet_epfd),
    quiet_budget = const offset_of!(ch::Slot, quiet_budget),
    quiet_taken = const offset_of!(ch::Slot, quiet_taken),
    quiet_version = const offset_of!(ch::Slot, quiet_version),
    empty_fd = const offset_of!(ch::Slot, empty_fd),
    empty_read_taken = const ch::EMPTY_READ_TAKEN,
    sys_read = const libc::SYS_read,
    eagain = const -(libc::EAGAIN as i64),
    readiness = const offset_of!(ch::Header, readiness),
    sys_sigprocmask = const libc::SYS_rt_sigprocmask,
);

extern "C" {
    static faultline_go_stub_start: u8;
    static faultline_go_stub_end: u8;
}

/// The shared part of the stub (position independent).
pub(crate) fn common() -> &'static [u8] {
    // SAFETY: both symbols delimit the read-only block assembled above.
    unsafe {
        let start = &raw const faultline_go_stub_start;
        let end = &raw const faultline_go_stub_end;
        std::slice::from_raw_parts(start, end.offset_from(start) as usize)
    }
}

/// What comes right before a patched `syscall`: the instruction the site's
/// stub repeats before it calls `common`. With the `syscall`, at least the
/// five bytes of the jump written over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// `mov eax, NR`: a runtime wrapper of one call.
    LoadNr(u32),
    /// `mov rdi, rbx`: `runtime/internal/syscall.Syscall6`, which every
    /// call of package syscall goes through, with its number in rax.
    MoveRdiRbx,
}

impl Lead {
    fn bytes(self) -> Vec<u8> {
        match self {
            Lead::LoadNr(nr) => [&[0xb8][..], &nr.to_le_bytes()].concat(),
            Lead::MoveRdiRbx => vec![0x48, 0x89, 0xdf],
        }
    }

    /// What the site's stub puts in r11 for `common` (free: `syscall`
    /// clobbers it), the kind of caller (`ch::Slot::caller`): a runtime
    /// wrapper, whose pointers `common` may copy into the slot
    /// (`ch::Slot::peek`), or `Syscall6`, which makes any call the program
    /// asks for, with its own slices.
    fn caller_flag(self) -> Vec<u8> {
        let caller = match self {
            Lead::LoadNr(_) => ch::CALLER_RUNTIME,
            Lead::MoveRdiRbx => ch::CALLER_SYSCALL,
        };
        // mov r11d, caller
        [&[0x41, 0xbb][..], &caller.to_le_bytes()].concat()
    }
}

/// `syscall`.
const SYSCALL: [u8; 2] = [0x0f, 0x05];

/// A `syscall` and its lead, found in a wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Site {
    /// Address of the lead instruction.
    pub addr: u64,
    /// The lead.
    pub lead: Lead,
}

impl Site {
    /// Bytes the jump replaces: the lead and the `syscall`.
    fn len(&self) -> u64 {
        (self.lead.bytes().len() + SYSCALL.len()) as u64
    }
}

/// The one `lead; syscall` in `code` (the first bytes of a wrapper at
/// `addr`); None if there is none or more than one, so a wrapper that is
/// not shaped as expected is left alone.
pub fn find_site(code: &[u8], addr: u64, lead: Lead) -> Option<Site> {
    let want = [lead.bytes(), SYSCALL.to_vec()].concat();
    let mut hits = code
        .windows(want.len())
        .enumerate()
        .filter(|(_, w)| *w == want);
    let (at, _) = hits.next()?;
    if hits.next().is_some() {
        return None;
    }
    Some(Site {
        addr: addr + at as u64,
        lead,
    })
}

/// The jump written over one site: its address and its bytes (a `jmp` to
/// the site's stub, then `int3`s).
pub type Patch = (u64, Vec<u8>);

/// What to write into a process to route `sites` through the stub: the
/// page's bytes (to put at `page`; the pass gate at its place in them) and,
/// per site, the jump that replaces it. None if a site is too far from the
/// page for a 32-bit jump (a position-independent program loaded high), or
/// the stubs would reach the gate.
pub fn rewrite(page: u64, sites: &[Site]) -> Option<(Vec<u8>, Vec<Patch>)> {
    let mut bytes = common().to_vec();
    let mut patches = Vec::with_capacity(sites.len());
    for site in sites {
        let at = page + bytes.len() as u64;
        bytes.extend_from_slice(&site.lead.bytes());
        bytes.extend_from_slice(&site.lead.caller_flag());
        // call common
        bytes.push(0xe8);
        bytes.extend_from_slice(&rel32(page + bytes.len() as u64 + 4, page)?.to_le_bytes());
        // jmp back, after the original syscall
        bytes.push(0xe9);
        let back = site.addr + site.len();
        bytes.extend_from_slice(&rel32(page + bytes.len() as u64 + 4, back)?.to_le_bytes());
        let mut jump = vec![0xcc; site.len() as usize];
        jump[0] = 0xe9;
        jump[1..5].copy_from_slice(&rel32(site.addr + 5, at)?.to_le_bytes());
        patches.push((site.addr, jump));
    }
    let gate = ch::PASS_GATE.checked_sub(page)? as usize;
    if bytes.len() > gate {
        return None;
    }
    bytes.resize(gate, 0xcc);
    bytes.extend_from_slice(&ch::PASS_GATE_CODE);
    Some((bytes, patches))
}

/// The displacement of a jump or call whose next instruction is at `next`
/// to `target`, if it fits in 32 bits.
pub(crate) fn rel32(next: u64, target: u64) -> Option<i32> {
    i32::try_from(target.wrapping_sub(next) as i64).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_one_site_of_a_wrapper() {
        // runtime.osyield: mov eax, 24; syscall; ret
        let code = [0xb8, 24, 0, 0, 0, 0x0f, 0x05, 0xc3];
        assert_eq!(
            find_site(&code, 0x1000, Lead::LoadNr(24)),
            Some(Site {
                addr: 0x1000,
                lead: Lead::LoadNr(24)
            })
        );
        assert_eq!(find_site(&code, 0x1000, Lead::LoadNr(35)), None);
        let twice = [code, code].concat();
        assert_eq!(find_site(&twice, 0x1000, Lead::LoadNr(24)), None);
        // Syscall6: ...; mov rsi, rcx; mov rdi, rbx; syscall; cmp rax, -0xfff
        let code = [0x48, 0x89, 0xce, 0x48, 0x89, 0xdf, 0x0f, 0x05, 0x48, 0x3d];
        assert_eq!(
            find_site(&code, 0x2000, Lead::MoveRdiRbx),
            Some(Site {
                addr: 0x2003,
                lead: Lead::MoveRdiRbx
            })
        );
    }

    #[test]
    fn a_site_jumps_to_its_stub_and_the_stub_back() {
        let page = 0x10_2000;
        let site = Site {
            addr: 0x46_1234,
            lead: Lead::LoadNr(202),
        };
        let (bytes, patches) = rewrite(page, &[site]).expect("near enough");
        let stub = common().len();
        // The stubs, int3 up to the pass gate, the gate.
        let gate = (ch::PASS_GATE - page) as usize;
        assert_eq!(bytes.len(), gate + ch::PASS_GATE_CODE.len());
        assert_eq!(&bytes[gate..], &ch::PASS_GATE_CODE);
        assert!(bytes[stub + 21..gate].iter().all(|&b| b == 0xcc));
        let (addr, jump) = patches[0].clone();
        assert_eq!(jump.len(), 7);
        assert_eq!(addr, site.addr);
        assert_eq!(jump[0], 0xe9);
        let to =
            (site.addr + 5).wrapping_add(i32::from_le_bytes(jump[1..5].try_into().unwrap()) as u64);
        assert_eq!(to, page + stub as u64);
        let s = &bytes[stub..];
        assert_eq!(&s[..5], &[0xb8, 202, 0, 0, 0]);
        // A runtime wrapper: its pointers may be read (r11 = 1).
        assert_eq!(&s[5..11], &[0x41, 0xbb, 1, 0, 0, 0]);
        let call = (page + stub as u64 + 16)
            .wrapping_add(i32::from_le_bytes(s[12..16].try_into().unwrap()) as u64);
        assert_eq!(call, page);
        let back = (page + stub as u64 + 21)
            .wrapping_add(i32::from_le_bytes(s[17..21].try_into().unwrap()) as u64);
        assert_eq!(back, site.addr + 7);
    }

    #[test]
    fn a_site_out_of_reach_is_refused() {
        let far = Site {
            addr: 0x5555_5555_0000,
            lead: Lead::LoadNr(202),
        };
        assert!(rewrite(0x10_2000, &[far]).is_none());
    }
}
