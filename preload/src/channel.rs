//! The library's end of the channel: mapping it, finding this thread's slot,
//! and one request/answer round trip.

use core::ptr::{null, null_mut};
use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

use faultline_channel as ch;

/// The mapped region, or null when the fast path is off in this process.
static REGION: AtomicPtr<u8> = AtomicPtr::new(null_mut());

/// The channel's memfd, as inherited: what the library `pread`s the bytes
/// an answer carries from ([`copy_out`]).
static CHANNEL_FD: AtomicI32 = AtomicI32::new(-1);

/// Whether this process has announced itself to the supervisor.
static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// Set while a vfork child runs (see `hooks::vfork`): it shares this
/// memory, the parent's slot and announcement, but is another process to
/// the supervisor, which does not look for its posts, so its calls are
/// made for real until it execs or exits.
pub static IN_VFORK: AtomicBool = AtomicBool::new(false);

/// The pthread key holding this thread's slot index + 1.
static SLOT_KEY: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Descriptors (below 4096) the supervisor said the channel does not serve
/// (/proc files): their calls trap directly until they are closed.
static UNSERVED: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

/// How the supervisor answered.
pub enum Answer {
    /// The call's raw result (`-errno` on failure).
    Done(i64),
    /// Make the real call (it traps, and the supervisor handles it there).
    Trap,
}

/// A thread's posting of requests in its slot.
struct Post<'a> {
    header: &'a ch::Header,
    base: *mut u8,
    index: usize,
    slot: &'a ch::Slot,
}

impl Post<'_> {
    /// Posts `nr(args)` (the caller's signal mask `mask` with it), waits for
    /// the answer and returns its kind; the rest is in the slot.
    ///
    /// # Safety
    /// The slot is this thread's, in the mapped region.
    unsafe fn round_trip(&self, nr: i64, args: [u64; 6], mask: u64) -> u32 {
        let slot_mut = self.slot as *const ch::Slot as *mut ch::Slot;
        let seq = (*slot_mut).seq.wrapping_add(1);
        (*slot_mut).seq = seq;
        (*slot_mut).nr = nr;
        (*slot_mut).args = args;
        (*slot_mut).mask = mask;
        (*slot_mut).sp = scratch_sp();
        (*slot_mut).caller = ch::CALLER_LIBRARY;
        self.slot.handoff.store(0, Ordering::Relaxed);
        self.slot.state.store(ch::REQUEST, Ordering::Release);
        self.header
            .posted
            .store(self.index as u32 + 1, Ordering::Release);
        self.header.doorbell.fetch_add(1, Ordering::SeqCst);
        if self.header.sleeping.load(Ordering::SeqCst) != 0 {
            futex(&self.header.doorbell, libc::FUTEX_WAKE, 1);
        }
        let base = self.base;
        ch::await_reply(
            self.slot,
            seq,
            self.header.spin.load(Ordering::Relaxed),
            |i| &*(base.add(ch::slot_offset(i)) as *const ch::Slot),
            |word, val| {
                futex(word, libc::FUTEX_WAIT, val);
            },
            |word| {
                futex(word, libc::FUTEX_WAKE, 1);
            },
        );
        core::ptr::read_volatile(&(*slot_mut).reply)
    }
}

/// How far below its own stack pointer the library says the caller's is:
/// data a handler puts for a passed call below that (and its red zone)
/// stays clear of the frames the library uses until it makes the call.
const SCRATCH_BELOW: u64 = 1024;

/// The stack pointer a request names (see [`SCRATCH_BELOW`]).
fn scratch_sp() -> u64 {
    let sp: u64;
    // SAFETY: reads a register.
    unsafe { core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack)) };
    sp - SCRATCH_BELOW
}

// `syscall; ret` in the library's own code, where the seccomp filter traps
// every call it traps anywhere: the real call's twin of the pass gate.
core::arch::global_asm!(
    ".pushsection .text.faultline_trap_gate, \"ax\"",
    ".globl faultline_trap_gate",
    ".hidden faultline_trap_gate",
    "faultline_trap_gate:",
    "syscall",
    "ret",
    ".popsection",
);

extern "C" {
    fn faultline_trap_gate();
}

/// The call made with a plain `syscall` instruction, which traps as usual;
/// its raw result (`-errno` on failure). Not libc's `syscall`, which the
/// library replaces.
pub fn raw_syscall(nr: i64, a: [u64; 6]) -> i64 {
    call_gate(faultline_trap_gate as *const () as u64, nr, a)
}

/// The call made at the pass gate, which the seccomp filter lets through
/// (the supervisor has recorded it and passed it to the kernel); its raw
/// result.
fn at_gate(nr: i64, a: [u64; 6]) -> i64 {
    call_gate(ch::PASS_GATE, nr, a)
}

/// Calls the `syscall; ret` at `gate` with `nr(a)`; the raw result.
fn call_gate(gate: u64, nr: i64, a: [u64; 6]) -> i64 {
    let r: i64;
    // SAFETY: `gate` is `syscall; ret`; the arguments are the caller's, the
    // kernel clobbers rcx and r11. Not `nostack`: the call pushes.
    unsafe {
        core::arch::asm!(
            "call {gate}",
            gate = in(reg) gate,
            inlateout("rax") nr => r,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
        );
    }
    r
}

/// Writes what the supervisor left in `slot` (index `index`) for the
/// caller's memory ([`ch::Slot::poke`]: a read's data, an epoll wait's
/// events, a clock's time) to where it goes, and clears it; false if the
/// caller's memory there cannot be written. The copy is a `pread` of the
/// channel's memfd, made at the pass gate: the kernel fails it with
/// EFAULT where the pointer is bad, as it would have failed the call,
/// where a plain copy would crash the program inside the library. If the
/// program closed the memfd's descriptor or put another file there (the
/// bytes read are not the slot's), the copy is made again from the
/// library's own mapping with `process_vm_readv`, which the kernel checks
/// the same way.
///
/// # Safety
/// The slot is this thread's, answered, in the mapped region.
unsafe fn copy_out(slot: *mut ch::Slot, index: usize) -> bool {
    let len = core::ptr::read_volatile(&(*slot).poke_len) as usize;
    if len == 0 {
        return true;
    }
    core::ptr::write_volatile(&mut (*slot).poke_len, 0);
    let len = len.min(ch::POKE_BYTES);
    let to = core::ptr::read_volatile(&(*slot).poke_at);
    let from = core::ptr::addr_of!((*slot).poke) as *const u8;
    let at = ch::slot_offset(index) + core::mem::offset_of!(ch::Slot, poke);
    let fd = CHANNEL_FD.load(Ordering::Relaxed) as u64;
    let n = at_gate(libc::SYS_pread64, [fd, to, len as u64, at as u64, 0, 0]);
    if n == len as i64
        && core::slice::from_raw_parts(to as *const u8, len)
            == core::slice::from_raw_parts(from, len)
    {
        return true;
    }
    let local = libc::iovec {
        iov_base: to as *mut libc::c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: from as *mut libc::c_void,
        iov_len: len,
    };
    let pid = at_gate(libc::SYS_getpid, [0; 6]) as u64;
    let args = [
        pid,
        &local as *const _ as u64,
        1,
        &remote as *const _ as u64,
        1,
        0,
    ];
    at_gate(libc::SYS_process_vm_readv, args) == len as i64
}

/// Maps the channel named by `FAULTLINE_CHANNEL_FD` and the futex
/// trampoline; leaves the fast path off if either is not there.
///
/// # Safety
/// Call once, before other threads exist.
pub unsafe fn open() {
    let Some(fd) = env_fd() else {
        return;
    };
    let base = libc::mmap(
        null_mut(),
        ch::SIZE,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_SHARED,
        fd,
        0,
    );
    if base == libc::MAP_FAILED {
        return;
    }
    let magic = core::ptr::read_volatile(base as *const u32);
    if magic != ch::MAGIC || !map_trampoline() {
        libc::munmap(base, ch::SIZE);
        return;
    }
    let mut key: libc::pthread_key_t = 0;
    if libc::pthread_key_create(&mut key, None) != 0 {
        libc::munmap(base, ch::SIZE);
        return;
    }
    SLOT_KEY.store(key as usize, Ordering::Relaxed);
    CHANNEL_FD.store(fd, Ordering::Relaxed);
    // A forked child's thread is a new thread: it must not share its
    // parent's slot.
    libc::pthread_atfork(None, None, Some(forget_slot));
    REGION.store(base as *mut u8, Ordering::Release);
}

/// The descriptor in `FAULTLINE_CHANNEL_FD`, parsed without allocating.
unsafe fn env_fd() -> Option<i32> {
    let v = libc::getenv(c"FAULTLINE_CHANNEL_FD".as_ptr());
    if v.is_null() {
        return None;
    }
    let mut fd: i32 = 0;
    let mut p = v as *const u8;
    if *p == 0 {
        return None;
    }
    while *p != 0 {
        let d = (*p).wrapping_sub(b'0');
        if d > 9 || fd > 100_000 {
            return None;
        }
        fd = fd * 10 + d as i32;
        p = p.add(1);
    }
    Some(fd)
}

/// Puts the futex trampoline at its fixed address, or finds it there (the
/// supervisor maps it at the program's exec, for the loader's calls).
unsafe fn map_trampoline() -> bool {
    let code = ch::trampoline_page();
    let page = libc::mmap(
        ch::TRAMPOLINE as *mut libc::c_void,
        4096,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
        -1,
        0,
    );
    if page == libc::MAP_FAILED && *libc::__errno_location() == libc::EEXIST {
        // Mapped already: it must be the trampoline, byte for byte.
        let there = core::slice::from_raw_parts(ch::TRAMPOLINE as *const u8, code.len());
        return there == code;
    }
    if page as u64 != ch::TRAMPOLINE {
        if page != libc::MAP_FAILED {
            libc::munmap(page, 4096);
        }
        return false;
    }
    core::ptr::copy_nonoverlapping(code.as_ptr(), page as *mut u8, code.len());
    libc::mprotect(page, 4096, libc::PROT_READ | libc::PROT_EXEC) == 0
}

/// `futex(addr, op, val, NULL)` from the trampoline: the seccomp filter lets
/// it through, so waiting for the supervisor costs no ptrace stop.
unsafe fn futex(addr: &AtomicU32, op: i32, val: u32) -> i64 {
    let call: extern "C" fn(*const AtomicU32, i32, u32, *const libc::timespec) -> i64 =
        core::mem::transmute(ch::TRAMPOLINE as usize);
    call(addr, op, val, null())
}

extern "C" fn forget_slot() {
    // A forked child is a new process to the supervisor, too.
    ANNOUNCED.store(false, Ordering::Relaxed);
    let key = SLOT_KEY.load(Ordering::Relaxed);
    // SAFETY: the key was created before pthread_atfork registered us.
    unsafe { libc::pthread_setspecific(key as libc::pthread_key_t, null()) };
}

/// This thread's slot, claimed on first use.
unsafe fn my_slot(base: *mut u8) -> Option<(usize, &'static ch::Slot)> {
    let key = SLOT_KEY.load(Ordering::Relaxed) as libc::pthread_key_t;
    let slot = |i: usize| &*(base.add(ch::slot_offset(i)) as *const ch::Slot);
    let cached = libc::pthread_getspecific(key) as usize;
    if cached != 0 {
        return Some((cached - 1, slot(cached - 1)));
    }
    let tid = libc::syscall(libc::SYS_gettid) as i32;
    let i = ch::claim_slot(tid, 1, |i| &slot(i).owner)?;
    libc::pthread_setspecific(key, (i + 1) as *const libc::c_void);
    Some((i, slot(i)))
}

/// Whether calls on `fd` should go to the channel at all.
pub fn may_be_served(fd: i32) -> bool {
    fd >= 0 && unserved_bit(fd).is_none_or(|(word, bit)| word.load(Ordering::Relaxed) & bit == 0)
}

/// `fd` was closed: it may be served next time.
pub fn forget_fd(fd: i32) {
    if let Some((word, bit)) = unserved_bit(fd) {
        word.fetch_and(!bit, Ordering::Relaxed);
    }
}

fn mark_unserved(fd: i32) {
    if let Some((word, bit)) = unserved_bit(fd) {
        word.fetch_or(bit, Ordering::Relaxed);
    }
}

/// Where `fd`'s bit of [`UNSERVED`] is; None for descriptors it has none
/// for (negative, or 4096 and above).
fn unserved_bit(fd: i32) -> Option<(&'static AtomicU64, u64)> {
    let i = usize::try_from(fd).ok().filter(|&i| i < 64 * 64)?;
    Some((&UNSERVED[i / 64], 1 << (i % 64)))
}

/// Puts syscall `nr` to the supervisor and waits for its answer. Every
/// signal is blocked meanwhile: a handler running now would run while the
/// supervisor has another thread going. The mask the caller had travels in
/// the slot, and comes back (so pending signals arrive) before returning.
pub fn ask(nr: i64, args: [u64; 6]) -> Answer {
    let base = REGION.load(Ordering::Acquire);
    if base.is_null() || IN_VFORK.load(Ordering::Relaxed) {
        return Answer::Trap;
    }
    // SAFETY: the region is mapped for the life of the process; a program
    // that overwrote it fails the magic check and gets the real call.
    unsafe {
        let header = &*(base as *const ch::Header);
        if core::ptr::read_volatile(&header.magic) != ch::MAGIC {
            return Answer::Trap;
        }
        let Some((index, slot)) = my_slot(base) else {
            return Answer::Trap;
        };
        let slot_mut = slot as *const ch::Slot as *mut ch::Slot;
        if !ANNOUNCED.swap(true, Ordering::Relaxed) {
            // A trapped call the supervisor answers in place, unrecorded.
            libc::syscall(libc::SYS_getcpu, 0usize, 0usize, ch::HELLO);
        }
        loop {
            let all: u64 = !0;
            let mut old: u64 = 0;
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                &all as *const u64,
                &mut old as *mut u64,
                8usize,
            );
            let post = Post {
                header,
                base,
                index,
                slot,
            };
            let mut reply = post.round_trip(nr, args, old);
            let mut ret = core::ptr::read_volatile(&(*slot_mut).ret);
            // Before a passed call, which may read what was written (a
            // path put below the caller's stack pointer).
            let mut written = copy_out(slot_mut, index);
            if matches!(reply, ch::REPLY_PASS | ch::REPLY_PASS_REPORT) {
                // A passed call is made before the mask comes back, as the
                // kernel makes it before delivering a signal after a stop.
                ret = at_gate(
                    core::ptr::read_volatile(&(*slot_mut).pass_nr),
                    core::ptr::read_volatile(&(*slot_mut).pass_args),
                );
                if reply == ch::REPLY_PASS_REPORT {
                    core::ptr::write_volatile(&mut (*slot_mut).ret, ret);
                    let mask = core::ptr::read_volatile(&(*slot_mut).mask);
                    post.round_trip(ch::EXIT_REPORT, args, mask);
                    ret = core::ptr::read_volatile(&(*slot_mut).ret);
                    written &= copy_out(slot_mut, index);
                }
                reply = ch::REPLY_RETURN;
            }
            // The supervisor may have changed it (it gives back signals it
            // held while the watchdog had the thread stopped).
            let mask = core::ptr::read_volatile(&(*slot_mut).mask);
            slot.state.store(ch::IDLE, Ordering::Release);
            libc::syscall(
                libc::SYS_rt_sigprocmask,
                libc::SIG_SETMASK,
                &mask as *const u64,
                null_mut::<u64>(),
                8usize,
            );
            if !written {
                // The kernel's own copy would have failed the call so.
                return Answer::Done(-(libc::EFAULT as i64));
            }
            match reply {
                ch::REPLY_RETURN => return Answer::Done(ret),
                ch::REPLY_RESTART => continue,
                ch::REPLY_TRAP_FD => {
                    mark_unserved(args[0] as i32);
                    return Answer::Trap;
                }
                _ => return Answer::Trap,
            }
        }
    }
}
