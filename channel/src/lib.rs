//! The shared-memory channel between the supervisor and `preload/`, the
//! LD_PRELOAD library (and the stub a patched Go runtime calls, which
//! speaks the same protocol): one memfd per run, inherited by every
//! simulated process on descriptor [`FD`] and mapped by the library at
//! start-up, or by the supervisor at a Go program's exec.
//!
//! A thread that makes a hot call (a read or write, a wait, a sleep, a
//! futex call) writes it to its [`Slot`] instead of trapping, rings the
//! doorbell and spins or sleeps on its slot's state word; the supervisor
//! dispatches the call exactly as if it had stopped in ptrace and answers
//! in the slot: a result, or "pass it to the kernel", which the thread
//! does at the [`PASS_GATE`]. The futex calls and the gate are in the
//! [`TRAMPOLINE`] page, which the seccomp filter lets through, so a round
//! trip costs no ptrace stop at all.
//!
//! `no_std` and dependency-free, because the library must not pull anything
//! into the programs it is loaded into.
#![no_std]

use core::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// The descriptor the channel's memfd is inherited on (named again in
/// `FAULTLINE_CHANNEL_FD`). High, so it never takes a number the program's
/// own `open` would have got.
pub const FD: i32 = 1000;

/// The environment variable that names [`FD`] to the library.
pub const FD_ENV: &str = "FAULTLINE_CHANNEL_FD";

/// Written first in the header; the library uses the channel only while it
/// is there, so a program that overwrites the region falls back to ptrace.
/// The region's size is folded in: a library built for another layout
/// (an older build left next to a newer faultline) finds no channel and
/// uses ptrace, instead of posting where the supervisor never looks.
pub const MAGIC: u32 = 0x464c_4348 ^ SIZE as u32;

/// The third argument of the `getcpu` call (otherwise unused since Linux
/// 2.6.24) with which the library announces itself in a process before its
/// first request: the supervisor watches the channel only for processes
/// that did, so others pay nothing for it.
pub const HELLO: u64 = 0x464c_4845_4c4c_4f21;

/// Threads that can use the channel at once; the rest use ptrace.
pub const SLOTS: usize = 1024;

/// Where the library maps its futex trampoline. Fixed, because the seccomp
/// filter that lets the trampoline's `futex` calls through is built before
/// the program's exec. Below the 4 MiB where non-PIE programs are linked.
pub const TRAMPOLINE: u64 = 0x10_2000;

/// The trampoline: `futex(rdi, rsi, rdx, rcx)` with the syscall number fixed,
/// so the page can make no other call. `mov rax, 202; mov r10, rcx; syscall; ret`.
pub const TRAMPOLINE_CODE: [u8; 13] = [
    0x48, 0xc7, 0xc0, 0xca, 0x00, 0x00, 0x00, 0x49, 0x89, 0xca, 0x0f, 0x05, 0xc3,
];

/// The pass gate: `syscall; ret` at a fixed place in the trampoline page,
/// the one instruction the seccomp filter lets make any call. A call the
/// supervisor has decided to pass to the kernel ([`REPLY_PASS`]) is made
/// there, without a second stop; every other call the program makes still
/// traps.
pub const PASS_GATE: u64 = TRAMPOLINE + 0x800;

/// The gate's code: `syscall; ret`.
pub const PASS_GATE_CODE: [u8; 3] = [0x0f, 0x05, 0xc3];

/// The bytes of the trampoline page up to the end of its pass gate: the
/// trampoline at its start, the gate at [`PASS_GATE`], `int3` between.
/// The library writes them as it starts; the supervisor, at a dynamic
/// program's exec, so that its loader's calls can be patched too.
pub const fn trampoline_page() -> [u8; TRAMPOLINE_PAGE_BYTES] {
    let mut page = [0xcc; TRAMPOLINE_PAGE_BYTES];
    let mut i = 0;
    while i < TRAMPOLINE_CODE.len() {
        page[i] = TRAMPOLINE_CODE[i];
        i += 1;
    }
    let gate = (PASS_GATE - TRAMPOLINE) as usize;
    let mut j = 0;
    while j < PASS_GATE_CODE.len() {
        page[gate + j] = PASS_GATE_CODE[j];
        j += 1;
    }
    page
}

/// Bytes of [`trampoline_page`].
pub const TRAMPOLINE_PAGE_BYTES: usize = (PASS_GATE - TRAMPOLINE) as usize + PASS_GATE_CODE.len();

/// Where the supervisor maps the channel in Go programs whose runtime it
/// patches (`supervisor/src/fast_path/go_runtime.rs`): fixed, because the
/// patched code reaches the header by absolute address. Below the 4 MiB
/// where non-PIE programs are linked, above the trampoline.
pub const GO_CHANNEL_AT: u64 = 0x20_0000;

/// Where the supervisor maps the stubs of glibc's patched `syscall`
/// sites in a dynamic program (`supervisor/src/fast_path/libc_sites.rs`):
/// fixed, because the seccomp filter that lets the stubs' futex calls
/// through is built before the program's exec; within a 32-bit jump of
/// where the loader puts the libraries (just below 0x7fff_f800_0000 when
/// address randomization is off, as it is under faultline).
pub const LIBC_STUBS_AT: u64 = 0x7fff_f000_0000;

/// `state` of a slot no request is pending in.
pub const IDLE: u32 = 0;
/// `state`: the owner has written a request and waits.
pub const REQUEST: u32 = 1;
/// `state`: the supervisor has answered.
pub const REPLY: u32 = 2;

/// `reply`: the call is done; its raw result (`-errno` on failure) is `ret`.
pub const REPLY_RETURN: u32 = 1;
/// `reply`: ask again (a wait ended, or a signal handler with SA_RESTART ran).
pub const REPLY_RESTART: u32 = 2;
/// `reply`: not a call the channel handles; make it as a real (trapped) call.
pub const REPLY_TRAP: u32 = 3;
/// `reply`: as [`REPLY_TRAP`], and this descriptor is not one the channel
/// serves (a /proc file, a netlink socket): trap its calls without asking
/// until it is closed.
pub const REPLY_TRAP_FD: u32 = 4;
/// `reply`: the supervisor passes the call to the kernel (its trace event
/// is recorded): make it, with [`Slot::pass_args`], at [`PASS_GATE`]
/// before giving back the signal mask (as after a ptrace stop, a pending
/// signal comes after the call), and return its result.
pub const REPLY_PASS: u32 = 5;
/// `reply`: as [`REPLY_PASS`], and the supervisor has work to do at the
/// call's exit: post its result (in `ret`) as a request numbered
/// [`EXIT_REPORT`], signals still blocked; the answer to that is what the
/// call returns.
pub const REPLY_PASS_REPORT: u32 = 6;

/// The `nr` of a request that reports a passed call's result
/// ([`REPLY_PASS_REPORT`]); no system call has it.
pub const EXIT_REPORT: i64 = 0x7fff_fffe;

/// [`Slot::handoff`]: the owner sleeps (or is about to) on its state word,
/// so whoever answers it must wake it.
pub const ASLEEP: u32 = u32::MAX;
/// [`Slot::handoff`]: the supervisor has let another thread run (one in a
/// ptrace stop): the owner stops spinning and sleeps until it is answered.
pub const GIVE_WAY: u32 = u32::MAX - 1;

/// The start of the region.
#[repr(C, align(64))]
pub struct Header {
    /// [`MAGIC`].
    pub magic: u32,
    /// Bumped (and futex-woken if [`Header::sleeping`]) by the library or
    /// the Go stub when it posts a request, and (always woken) by
    /// the supervisor's SIGCHLD handler when a tracee stops: the supervisor
    /// sleeps on it waiting for either.
    pub doorbell: AtomicU32,
    /// Index + 1 of the slot last posted to. Only the thread the supervisor
    /// is running can post, so one word is enough.
    pub posted: AtomicU32,
    /// How many times a poster looks for its answer before it sleeps on
    /// its slot: non-zero only while the supervisor runs on another CPU
    /// than the programs, where the answer comes without a context switch
    /// (on one CPU a spin would only keep the supervisor from answering).
    pub spin: AtomicU32,
    /// Non-zero while the supervisor sleeps (or is about to) on the
    /// doorbell: only then does a poster make the futex call that wakes
    /// it. Set before the supervisor's last look at the doorbell and read
    /// after the poster's bump, both with full barriers, so a bump is
    /// either seen or woken for.
    pub sleeping: AtomicU32,
    /// The version of what every epoll instance would report, as of the
    /// running thread's answer: the supervisor's count of the changes to
    /// the simulated network and to its memory of real descriptors, or
    /// [`UNSETTLED`] while a change may be under way. A patched Go
    /// runtime's stub answers a zero-timeout epoll wait itself when it is
    /// still the version its slot's [`Slot::quiet_version`] was found
    /// quiet at.
    pub readiness: AtomicU64,
}

/// [`Header::readiness`]: a change that may make a descriptor ready is
/// under way (a call passed to the kernel, a process being killed): every
/// zero-timeout epoll wait goes to the supervisor.
pub const UNSETTLED: u64 = 0;

/// One thread's mailbox.
#[repr(C, align(128))]
pub struct Slot {
    /// Host tid of the thread that owns the slot; 0 when free. The
    /// supervisor frees the slots of threads it reaps.
    pub owner: AtomicI32,
    /// [`IDLE`], [`REQUEST`] or [`REPLY`]; the owner sleeps on it.
    pub state: AtomicU32,
    /// Sequence number of the request; a reply counts only if it repeats it.
    pub seq: u32,
    /// The `seq` the supervisor answered.
    pub reply_seq: u32,
    /// How it answered: `REPLY_*`.
    pub reply: u32,
    /// Set by a patched Go runtime's stub while it uses the slot: a signal
    /// handler that interrupts it and makes a patched call makes the real
    /// (trapped) call instead of overwriting the slot.
    pub busy: u32,
    /// The syscall number.
    pub nr: i64,
    /// Its arguments, in the syscall's order.
    pub args: [u64; 6],
    /// The result, for [`REPLY_RETURN`]; a passed call's, in an
    /// [`EXIT_REPORT`].
    pub ret: i64,
    /// The arguments a passed call is made with (the supervisor may have
    /// changed some: a timeout, a count); `args` are the caller's, which
    /// its registers hold again afterwards.
    pub pass_args: [u64; 6],
    /// The number a passed call is made with: the caller's, or the one the
    /// supervisor put in its place (a simulated socket's descriptor is an
    /// eventfd the kernel makes).
    pub pass_nr: i64,
    /// The caller's stack pointer, posted with the call: a handler may put
    /// data a passed call reads below its red zone (a path turned into a
    /// node's own copy of the file), as it does below a stopped thread's.
    pub sp: u64,
    /// The caller's signal mask; the library blocks every signal while it
    /// waits, so the supervisor reads the mask that counts from here, and
    /// the library restores the mask found here when it is answered.
    pub mask: u64,
    /// The slot's own address where Go programs map the channel
    /// ([`GO_CHANNEL_AT`]): a patched Go thread finds its slot through its
    /// GS base and needs the address to point system calls at it.
    pub home: u64,
    /// The slot's index + 1, what a patched Go thread posts to
    /// [`Header::posted`].
    pub index1: u32,
    /// The turn, handed over in the programs' CPU: 0 while the owner spins
    /// for its answer; [`ASLEEP`] once it sleeps; or, written by the
    /// supervisor while the owner still spins, the index + 1 of the slot
    /// whose thread runs next (already answered), which the owner wakes
    /// before it sleeps, or [`GIVE_WAY`]. A wake from the spinning thread's
    /// own CPU is one context switch; one from the supervisor's CPU wakes
    /// an idle CPU, which costs several times more. Reset by the owner
    /// before each post; see [`await_reply`].
    pub handoff: AtomicU32,
    /// Memory the call reads, copied by a patched Go runtime's wrapper
    /// before it posts (the time a sleep takes, a futex word and the
    /// timeout of its wait), so the supervisor need not read it out of the
    /// process: where each copy came from (0: none), its length and bytes.
    /// Only the runtime's own wrappers fill them, whose pointers are always
    /// valid; every post sets the addresses anew.
    pub peek_at: [u64; 2],
    /// The lengths of the copies in [`Slot::peek`].
    pub peek_len: [u32; 2],
    /// The copies.
    pub peek: [[u8; PEEK_BYTES]; 2],
    /// Which patched site of the shared stub made the call, for the
    /// length of one call: [`CALLER_LIBC`], [`CALLER_RUNTIME`] or
    /// [`CALLER_SYSCALL`]; or [`CALLER_LIBRARY`], written by the
    /// LD_PRELOAD library with each of its posts. It says whose pointers
    /// the call carries, and how they are written.
    pub caller: u32,
    /// Bytes of [`Slot::poke`] to copy to [`Slot::poke_at`] (0: none): what
    /// the supervisor wrote into the caller's memory while it decided a
    /// patched Go thread's call ([`CALLER_RUNTIME`], [`CALLER_SYSCALL`]:
    /// the events of an epoll wait, the data of a read, a clock's time) or
    /// one of the library's ([`CALLER_LIBRARY`]), which the stub or the
    /// library copies out itself as soon as it sees the answer, before it
    /// makes a passed call or gives back the signal mask, instead of the
    /// supervisor writing it into the process with a system call. Cleared
    /// by the stub or the library once copied.
    pub poke_len: u32,
    /// Where [`Slot::poke`] goes in the caller's memory.
    pub poke_at: u64,
    /// The bytes.
    pub poke: [u8; POKE_BYTES],
    /// Bytes of [`Slot::send`] (0: none): a `write` of package syscall
    /// ([`CALLER_SYSCALL`]) of at most [`SEND_BYTES`] copies what it
    /// sends, its buffer's first `send_len` bytes, with the call, so the
    /// supervisor need not read them out of the process.
    pub send_len: u32,
    /// The bytes.
    pub send: [u8; SEND_BYTES],
    /// How many of [`Slot::wakes`] hold a wake not yet taken.
    pub wakes_len: u32,
    /// Written by the supervisor with each answer: non-zero if the owner
    /// gives back its signal mask ([`Slot::mask`]) as it takes the answer;
    /// 0 if no signal can be pending for it, so a patched Go runtime's
    /// stub may leave its signals held ([`Slot::held`]) and save two
    /// system calls a round trip.
    pub release: u32,
    /// Set by a patched Go runtime's stub while the thread runs with its
    /// signals still held ([`HOLD_MASK`]) after an answer, its own mask in
    /// [`Slot::mask`]: its next post blocks nothing, and the runtime's own
    /// `rt_sigprocmask` gives the mask back first. The supervisor gives it
    /// back at any ptrace stop of the thread.
    pub held: u32,
    /// Futex wakes a patched Go runtime made without a round trip: its
    /// wrapper's `FUTEX_WAKE`s are not scheduling points, and the runtime
    /// ignores their count, so the stub notes each here and returns 0 at
    /// once (while fewer than [`WAKES`] wait). The supervisor takes them,
    /// in order, at the thread's next request or stop, before anything
    /// else of it: only this thread ran meanwhile, so they come where
    /// their trapped twins would have, and the trace is the same.
    pub wakes: [Wake; WAKES],
    /// An epoll descriptor of the owner's process whose zero-timeout wait
    /// found nothing ready at readiness version [`Slot::quiet_version`]
    /// (negative: the complement of the one last found so, which was not
    /// at that version): while [`Header::readiness`] is still that version, the
    /// same wait (no signal mask, at least one event asked for) finds
    /// nothing again, so a patched Go runtime's stub answers it 0 itself,
    /// without a round trip or a trace event, as the supervisor answers it
    /// in place.
    pub quiet_epfd: i32,
    /// How many more such waits and reads ([`Slot::empty_fd`]) the stub
    /// may answer before one goes to the supervisor as a scheduling point
    /// (every 64th does, so a thread that polls in a loop still gives
    /// way). Written by the supervisor, counted down by the stub.
    pub quiet_budget: u32,
    /// How many the stub answered since the supervisor last took the
    /// count, at the thread's next request or stop: the quiet waits in the
    /// low 16 bits, the empty reads in the high 16 (each fewer than the
    /// budget between two takes).
    pub quiet_taken: u32,
    /// A simulated socket of the owner's process with nothing to read at
    /// readiness version [`Slot::quiet_version`] (negative: the complement
    /// of the one last found so, as for [`Slot::quiet_epfd`]): while that
    /// version holds, a `read` of it through package syscall fails with
    /// EAGAIN again, so the stub answers that itself, as the supervisor
    /// answers it in place.
    pub empty_fd: i32,
    /// The readiness version at which [`Slot::quiet_epfd`] was found quiet
    /// and [`Slot::empty_fd`] empty (never [`UNSETTLED`]).
    pub quiet_version: u64,
}

/// What one of a stub's empty reads adds to [`Slot::quiet_taken`].
pub const EMPTY_READ_TAKEN: u32 = 1 << 16;

/// One of [`Slot::wakes`]: `futex(addr, FUTEX_WAKE, count)`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Wake {
    /// The futex word.
    pub addr: u64,
    /// How many waiters to wake.
    pub count: u64,
}

/// Entries of [`Slot::wakes`]: wakes between two requests are one or two
/// (a runtime lock released, an idle thread started).
pub const WAKES: usize = 6;

// The stub finds entry `i` at `i << 4`.
const _: () = assert!(core::mem::size_of::<Wake>() == 16);

/// The signals a waiting (or held, [`Slot::held`]) thread blocks: all but
/// those the kernel raises for a faulting instruction (a blocked one would
/// be forced through with its handler reset: Go turns SIGSEGV into nil
/// pointer panics, and faultline's rdtsc and breakpoints raise SIGSEGV and
/// SIGTRAP). SIGKILL and SIGSTOP cannot be blocked anyway.
pub const HOLD_MASK: u64 =
    !(sig_bit(4) | sig_bit(5) | sig_bit(7) | sig_bit(8) | sig_bit(11) | sig_bit(31));

/// The bit of signal `sig` in a kernel signal mask.
const fn sig_bit(sig: u32) -> u64 {
    1 << (sig - 1)
}

/// [`Slot::caller`]: a patched glibc site, whose caller may pass any
/// pointer (the kernel would answer a bad one with `EFAULT`).
pub const CALLER_LIBC: u32 = 0;
/// [`Slot::caller`]: a Go runtime wrapper, whose pointers are always valid:
/// the stub copies what its sleep and futex wait read ([`Slot::peek`]),
/// and the answer may carry what the call writes ([`Slot::poke`]).
pub const CALLER_RUNTIME: u32 = 1;
/// [`Slot::caller`]: package syscall's `Syscall6`, every other call of a Go
/// program, whose buffers are the program's own slices: the answer may
/// carry what the call writes ([`Slot::poke`]).
pub const CALLER_SYSCALL: u32 = 2;

/// [`Slot::caller`]: the LD_PRELOAD library's own functions, whose caller
/// may pass any pointer: the library copies what the answer carries
/// ([`Slot::poke`]) with a `pread` of the channel's memfd, which the kernel
/// fails with `EFAULT` where the pointer is bad, as it fails the call.
pub const CALLER_LIBRARY: u32 = 3;

/// Bytes of each copy in [`Slot::peek`]: a `timespec`.
pub const PEEK_BYTES: usize = 16;

/// Bytes a call's answer can carry into its caller's memory
/// ([`Slot::poke`]): a few epoll events, a read of a small message. Larger
/// writes are made by the supervisor as before.
pub const POKE_BYTES: usize = 1024;

/// Bytes a `write` can carry with it ([`Slot::send`]): most messages
/// between a cluster's members and their clients.
pub const SEND_BYTES: usize = 512;

/// Bytes of the whole region.
pub const SIZE: usize = core::mem::size_of::<Header>() + SLOTS * core::mem::size_of::<Slot>();

// A Go program maps the region at GO_CHANNEL_AT, below the 4 MiB where
// non-PIE programs are linked.
const _: () = assert!(GO_CHANNEL_AT as usize + SIZE <= 0x40_0000);

/// Byte offset of slot `i`.
pub const fn slot_offset(i: usize) -> usize {
    core::mem::size_of::<Header>() + i * core::mem::size_of::<Slot>()
}

/// Where slot `i` is in a Go program's mapping of the channel
/// ([`GO_CHANNEL_AT`]): its [`Slot::home`], the GS base of the thread that
/// owns it.
pub const fn go_slot_home(i: usize) -> u64 {
    GO_CHANNEL_AT + slot_offset(i) as u64
}

/// The slot a thread looks for first: the search goes on linearly from here.
pub const fn home_slot(tid: i32) -> usize {
    (tid as u32 as usize) % SLOTS
}

/// The owner's wait for the answer to its request `seq` in `slot`: spins
/// `spins` times, then sleeps on the state word; a turn handed over in
/// [`Slot::handoff`] is passed on first (the library and the patched Go
/// runtime's stub, in machine code, follow the same steps). `slot_at(i)` is
/// slot `i`; `wait` and `wake` are futex calls the seccomp filter lets
/// through.
pub fn await_reply<'a>(
    slot: &Slot,
    seq: u32,
    mut spins: u32,
    slot_at: impl Fn(usize) -> &'a Slot,
    wait: impl Fn(&AtomicU32, u32),
    wake: impl Fn(&AtomicU32),
) {
    loop {
        // SAFETY: a plain field of a live slot, written before the Release
        // store of `state` that was Acquired.
        let answered = slot.state.load(Ordering::Acquire) == REPLY
            && unsafe { core::ptr::read_volatile(&slot.reply_seq) } == seq;
        if answered {
            return;
        }
        match slot.handoff.load(Ordering::Acquire) {
            0 if spins > 0 => {
                spins -= 1;
                core::hint::spin_loop();
            }
            0 => {
                // Lost to a handoff just written: it is read next round.
                let _ =
                    slot.handoff
                        .compare_exchange(0, ASLEEP, Ordering::SeqCst, Ordering::Relaxed);
            }
            ASLEEP => wait(&slot.state, REQUEST),
            next => {
                if let Some(i) = (next as usize).checked_sub(1).filter(|&i| i < SLOTS) {
                    wake(&slot_at(i).state);
                }
                slot.handoff.swap(ASLEEP, Ordering::SeqCst);
            }
        }
    }
}

/// Takes the first free slot from thread `tid`'s [`home_slot`] on, writing
/// `owner` into its owner word (`owner_word(i)` is slot `i`'s); None if all
/// are taken. The library claims for its own threads, the supervisor for
/// patched Go threads.
pub fn claim_slot<'a>(
    tid: i32,
    owner: i32,
    owner_word: impl Fn(usize) -> &'a AtomicI32,
) -> Option<usize> {
    let start = home_slot(tid);
    (0..SLOTS).map(|k| (start + k) % SLOTS).find(|&i| {
        owner_word(i)
            .compare_exchange(0, owner, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })
}
