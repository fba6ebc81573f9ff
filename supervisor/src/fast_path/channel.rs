//! The supervisor's end of the fast path (layout and protocol in
//! `faultline-channel`): the memfd every simulated process inherits, the wait
//! for "the running thread stopped in ptrace *or* posted a request", and the
//! answers.
//!
//! Waiting for both needs one thing to sleep on: the doorbell word. The
//! library (or a patched Go runtime's stub) bumps it when it posts; a
//! SIGCHLD handler bumps it when a tracee stops (the kernel sends the tracer
//! SIGCHLD for every ptrace stop), so the loop `seen = doorbell;
//! waitpid(WNOHANG); posted?; futex_wait(seen)` cannot miss either.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use faultline_channel as ch;

use crate::sim::memory::{offset_within, overlaps};
use crate::sim::peek::Peek;
use crate::sim::world::ChannelRequest;

/// The doorbell the SIGCHLD handler rings (null: no channel in this process).
static DOORBELL: AtomicPtr<AtomicU32> = AtomicPtr::new(std::ptr::null_mut());

/// What the running thread did next.
pub enum Event {
    /// A ptrace stop (or exit) of some tracee: (tid, wait status).
    Stop(i32, i32),
    /// The running thread posted a request.
    Request(ChannelRequest),
    /// The running thread made a notified call (`host::notify`).
    Notified(crate::host::notify::Notification),
}

/// The descriptors whose calls a patched Go runtime's stub answers itself
/// while the readiness version holds (`engine::quiet_polls`); negative:
/// the complement of a descriptor whose calls it does not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietFds {
    /// An epoll instance whose zero-timeout waits find nothing.
    pub epfd: i32,
    /// A socket whose reads fail with EAGAIN.
    pub read_fd: i32,
}

/// The channel of one run.
pub struct Channel {
    memfd: OwnedFd,
    base: *mut u8,
    /// The slot of the request taken last while it is not yet answered
    /// and its thread may still spin for the answer: the thread that can
    /// hand the turn on in the programs' CPU.
    poster: Cell<Option<usize>>,
    /// A slot answered through another thread's handoff: if the supervisor
    /// is about to sleep and its thread has not posted meanwhile, it wakes
    /// that thread itself (the handing thread may have been killed first).
    handed_to: Cell<Option<usize>>,
    /// Turns handed over so far.
    handoffs: Cell<u64>,
    /// Futex wakes taken from the slots ([`ch::Slot::wakes`]).
    noted_wakes: Cell<u64>,
}

impl Channel {
    /// Creates the region and installs the SIGCHLD doorbell handler.
    pub fn create() -> io::Result<Channel> {
        let fd = unsafe { libc::memfd_create(c"faultline-channel".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let memfd = unsafe { OwnedFd::from_raw_fd(fd) };
        if unsafe { libc::ftruncate(fd, ch::SIZE as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ch::SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let chan = Channel {
            memfd,
            base: base as *mut u8,
            poster: Cell::new(None),
            handed_to: Cell::new(None),
            handoffs: Cell::new(0),
            noted_wakes: Cell::new(0),
        };
        // SAFETY: the header is at the start of the mapping.
        unsafe { std::ptr::write_volatile(base as *mut u32, ch::MAGIC) };
        for i in 0..ch::SLOTS {
            let p = chan.slot(i);
            // SAFETY: inside the fresh mapping, before any process maps it.
            unsafe {
                (*p).home = ch::go_slot_home(i);
                (*p).index1 = i as u32 + 1;
            }
        }
        DOORBELL.store(
            &chan.header().doorbell as *const AtomicU32 as *mut AtomicU32,
            Ordering::Release,
        );
        install_sigchld_handler()?;
        // Blocked except while waiting on the channel, so a plain waitpid
        // pays no signal delivery per stop. Threads started later (the
        // watchdog) inherit the block.
        sigchld_mask(libc::SIG_BLOCK);
        Ok(chan)
    }

    /// The memfd, to be put on [`ch::FD`] in each launched program.
    pub fn fd(&self) -> i32 {
        self.memfd.as_raw_fd()
    }

    /// Whether the header still starts with [`ch::MAGIC`]: a program may
    /// map the channel's descriptor and overwrite it, and then nothing
    /// uses the channel that the library would not use either.
    pub fn intact(&self) -> bool {
        // SAFETY: a plain field of the mapped header.
        unsafe { std::ptr::read_volatile(&self.header().magic) == ch::MAGIC }
    }

    fn header(&self) -> &ch::Header {
        // SAFETY: mapped and aligned for the life of `self`.
        unsafe { &*(self.base as *const ch::Header) }
    }

    fn slot(&self, i: usize) -> *mut ch::Slot {
        // SAFETY: i < SLOTS, inside the mapping.
        unsafe { self.base.add(ch::slot_offset(i)) as *mut ch::Slot }
    }

    /// Waits until tracee `who` (-1: any) changes state or a request is
    /// posted, and returns that; `waitpid` statuses come first, as they
    /// would without the channel. While the programs have a CPU of their
    /// own it first spins, looking for both, with SIGCHLD blocked: a signal
    /// to a spinning supervisor would interrupt it across CPUs for nothing.
    /// Only to sleep does it let SIGCHLD ring the doorbell. `chore` is work
    /// that can wait (the trace's writing): done a piece at a time between
    /// looks, as long as it returns true, so a request that comes meanwhile
    /// waits for one piece at most; all of it before sleeping.
    pub fn wait(&self, who: i32, chore: &mut dyn FnMut() -> bool) -> io::Result<Event> {
        if self.header().spin.load(Ordering::Relaxed) != 0 {
            if let Some(event) = self.spin_for_event(who, chore)? {
                return Ok(event);
            }
        }
        if let Some(slot) = self.handed_to.take() {
            self.wake(slot);
        }
        while chore() {}
        sigchld_mask(libc::SIG_UNBLOCK);
        let event = self.sleep_for_event(who);
        sigchld_mask(libc::SIG_BLOCK);
        event
    }

    /// The event if one comes within [`SUPERVISOR_SPINS`] looks, with a
    /// piece of `chore` after each look while it has any.
    fn spin_for_event(
        &self,
        who: i32,
        chore: &mut dyn FnMut() -> bool,
    ) -> io::Result<Option<Event>> {
        let doorbell = &self.header().doorbell;
        let mut seen = doorbell.load(Ordering::Acquire);
        let mut chores = true;
        for spin in 0..SUPERVISOR_SPINS {
            // The doorbell first: the next call is the usual event, and
            // often already posted (a thread answered ahead), so it is
            // not kept waiting behind a `waitpid`.
            let now = doorbell.load(Ordering::Acquire);
            if spin == 0 || now != seen {
                seen = now;
                if let Some(req) = self.take_request() {
                    return Ok(Some(Event::Request(req)));
                }
            }
            if spin % STOP_LOOK_EVERY == STOP_LOOK_EVERY - 1 {
                if let Some((tid, status)) = crate::host::tracee::try_wait(who)? {
                    return Ok(Some(Event::Stop(tid, status)));
                }
            }
            if chores {
                chores = chore();
            } else {
                std::hint::spin_loop();
            }
        }
        Ok(None)
    }

    /// The event, sleeping on the doorbell until one comes (SIGCHLD
    /// unblocked, so its handler rings it for a stop).
    fn sleep_for_event(&self, who: i32) -> io::Result<Event> {
        let doorbell = &self.header().doorbell;
        loop {
            let seen = doorbell.load(Ordering::Acquire);
            if let Some((tid, status)) = crate::host::tracee::try_wait(who)? {
                return Ok(Event::Stop(tid, status));
            }
            if let Some(req) = self.take_request() {
                return Ok(Event::Request(req));
            }
            // Posters wake it only while this is set (`Header::sleeping`).
            let sleeping = &self.header().sleeping;
            sleeping.swap(1, Ordering::SeqCst);
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    doorbell as *const AtomicU32,
                    libc::FUTEX_WAIT,
                    seen,
                    std::ptr::null::<libc::timespec>(),
                )
            };
            sleeping.store(0, Ordering::SeqCst);
        }
    }

    /// The posted request, if the posted slot holds one.
    fn take_request(&self) -> Option<ChannelRequest> {
        let posted = self.header().posted.swap(0, Ordering::AcqRel) as usize;
        if posted == 0 || posted > ch::SLOTS {
            return None;
        }
        let slot = posted - 1;
        self.handed_to.set(None);
        self.poster.set(Some(slot));
        let p = self.slot(slot);
        // SAFETY: inside the mapping; the poster waits for the answer.
        unsafe { std::ptr::write_volatile(&mut (*p).poke_len, 0) };
        // SAFETY: inside the mapping; the poster wrote the fields before
        // the Release store of `state`, which we Acquire.
        unsafe {
            if (*p).state.load(Ordering::Acquire) != ch::REQUEST {
                return None;
            }
            Some(ChannelRequest {
                slot,
                seq: std::ptr::read_volatile(&(*p).seq),
                nr: std::ptr::read_volatile(&(*p).nr),
                args: std::ptr::read_volatile(&(*p).args),
                mask: std::ptr::read_volatile(&(*p).mask),
                result: std::ptr::read_volatile(&(*p).ret),
                sp: std::ptr::read_volatile(&(*p).sp),
                caller: std::ptr::read_volatile(&(*p).caller),
                sent: std::ptr::read_volatile(&(*p).send_len) != 0,
                peek: Peek {
                    at: std::ptr::read_volatile(&(*p).peek_at),
                    len: std::ptr::read_volatile(&(*p).peek_len),
                    bytes: std::ptr::read_volatile(&(*p).peek),
                },
                signal_generation: 0,
            })
        }
    }

    /// Answers request `seq` in `slot` and wakes its thread: directly, or
    /// through the thread still spinning for its own answer, which then
    /// wakes it from the programs' CPU and sleeps ([`ch::Slot::handoff`]).
    pub fn answer(&self, slot: usize, seq: u32, reply: u32, ret: i64) {
        self.answer_releasing(slot, seq, reply, ret, true);
    }

    /// As [`Channel::answer`], saying whether the thread gives back its
    /// signal mask as it takes the answer ([`ch::Slot::release`]; a
    /// patched Go runtime's stub may otherwise leave its signals held).
    pub fn answer_releasing(&self, slot: usize, seq: u32, reply: u32, ret: i64, release: bool) {
        let p = self.slot(slot);
        // SAFETY: inside the mapping; the waiter reads after the Release.
        unsafe {
            std::ptr::write_volatile(&mut (*p).release, u32::from(release));
            std::ptr::write_volatile(&mut (*p).reply, reply);
            std::ptr::write_volatile(&mut (*p).ret, ret);
            std::ptr::write_volatile(&mut (*p).reply_seq, seq);
            // SeqCst: ordered before the look at a handoff word below, as
            // the owner's mark of sleeping is before its look at this one.
            (*p).state.store(ch::REPLY, Ordering::SeqCst);
        }
        match self.poster.take() {
            Some(poster) if poster == slot => {
                if self.handoff(slot).load(Ordering::SeqCst) == ch::ASLEEP {
                    self.wake(slot);
                }
            }
            Some(poster) if self.hand_over(poster, slot as u32 + 1) => {
                self.handed_to.set(Some(slot));
                self.handoffs.set(self.handoffs.get() + 1);
            }
            _ => self.wake(slot),
        }
    }

    /// Futex wakes patched Go runtimes made without a round trip, so far.
    pub fn noted_wakes(&self) -> u64 {
        self.noted_wakes.get()
    }

    /// Turns handed from a thread that gave way to the next, so far.
    pub fn handoffs(&self) -> u64 {
        self.handoffs.get()
    }

    /// Tells the thread that may still spin for its answer that another
    /// thread, resumed from a ptrace stop, runs next: it sleeps at once
    /// and leaves the programs' CPU to that thread.
    pub fn give_way(&self) {
        if let Some(poster) = self.poster.take() {
            self.hand_over(poster, ch::GIVE_WAY);
        }
    }

    /// Writes `what` in `poster`'s handoff word if its thread still spins.
    fn hand_over(&self, poster: usize, what: u32) -> bool {
        self.handoff(poster)
            .compare_exchange(0, what, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
    }

    fn handoff(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: inside the mapping for the life of `self`.
        unsafe { &(*self.slot(slot)).handoff }
    }

    fn wake(&self, slot: usize) {
        // SAFETY: inside the mapping.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                &(*self.slot(slot)).state as *const AtomicU32,
                libc::FUTEX_WAKE,
                1,
            );
        }
    }

    /// Sets the call a passed call in `slot` is made as
    /// ([`ch::REPLY_PASS`]): its number and arguments, before the answer.
    pub fn set_pass(&self, slot: usize, nr: i64, args: [u64; 6]) {
        // SAFETY: inside the mapping; the owner reads them after the answer.
        unsafe {
            std::ptr::write_volatile(&mut (*self.slot(slot)).pass_nr, nr);
            std::ptr::write_volatile(&mut (*self.slot(slot)).pass_args, args);
        }
    }

    /// Sets how long posters spin for their answers ([`ch::Header::spin`];
    /// 0: they sleep at once), and so whether the supervisor spins for
    /// their requests.
    pub fn set_spin(&self, spins: u32) {
        self.header().spin.store(spins, Ordering::Relaxed);
    }

    /// Changes the mask the waiting thread of `slot` restores when answered.
    pub fn set_mask(&self, slot: usize, mask: u64) {
        // SAFETY: inside the mapping; the owner reads it after the answer.
        unsafe { std::ptr::write_volatile(&mut (*self.slot(slot)).mask, mask) };
    }

    /// Takes a free slot for thread `tid` (a patched Go thread, which has no
    /// library to take one itself); None if all are taken.
    pub fn claim(&self, tid: i32) -> Option<usize> {
        // SAFETY: every index is below SLOTS, inside the mapping.
        ch::claim_slot(tid, tid, |i| unsafe { &(*self.slot(i)).owner })
    }

    /// The poke area of `slot`, whose request is being decided: the
    /// handlers' writes into the caller's memory wait there for its stub
    /// ([`ch::Slot::poke`]), and their reads of what it sends come from
    /// there if `sent` ([`ch::Slot::send`]).
    pub fn pokes(&self, slot: usize, sent: bool) -> SlotPokes {
        SlotPokes {
            slot: self.slot(slot),
            sent: Cell::new(sent),
        }
    }

    /// Takes the futex wakes `slot`'s thread noted without a round trip
    /// ([`ch::Slot::wakes`]), oldest first. Its thread does not run: it is
    /// stopped, or waits for an answer.
    pub fn take_wakes(&self, slot: usize) -> impl Iterator<Item = ch::Wake> {
        let p = self.slot(slot);
        let mut wakes = [ch::Wake { addr: 0, count: 0 }; ch::WAKES];
        // SAFETY: inside the mapping; the owner does not run.
        let n = unsafe {
            let n = std::ptr::read_volatile(&(*p).wakes_len) as usize;
            if n > 0 {
                wakes = std::ptr::read_volatile(&(*p).wakes);
                std::ptr::write_volatile(&mut (*p).wakes_len, 0);
            }
            n.min(ch::WAKES)
        };
        self.noted_wakes.set(self.noted_wakes.get() + n as u64);
        wakes.into_iter().take(n)
    }

    /// Publishes the readiness version the running thread's stub compares
    /// with its slot's ([`ch::Header::readiness`]; [`ch::UNSETTLED`]: none).
    pub fn publish_readiness(&self, version: u64) {
        self.header().readiness.store(version, Ordering::Release);
    }

    /// Tells `slot`'s thread which of its calls find nothing while the
    /// readiness version is `version` (`fds`), and how many such calls
    /// its stub may answer itself ([`ch::Slot::quiet_epfd`]). The thread
    /// does not run.
    pub fn set_quiet(&self, slot: usize, fds: QuietFds, version: u64, budget: u32) {
        let p = self.slot(slot);
        // SAFETY: inside the mapping; the owner does not run.
        unsafe {
            std::ptr::write_volatile(&mut (*p).quiet_epfd, fds.epfd);
            std::ptr::write_volatile(&mut (*p).empty_fd, fds.read_fd);
            std::ptr::write_volatile(&mut (*p).quiet_version, version);
            std::ptr::write_volatile(&mut (*p).quiet_budget, budget);
        }
    }

    /// What `slot`'s thread was last told finds nothing, and the readiness
    /// version it was at ([`ch::UNSETTLED`]: never told). The thread does
    /// not run.
    pub fn quiet(&self, slot: usize) -> (QuietFds, u64) {
        let p = self.slot(slot);
        // SAFETY: inside the mapping; the owner does not run.
        unsafe {
            let fds = QuietFds {
                epfd: std::ptr::read_volatile(&(*p).quiet_epfd),
                read_fd: std::ptr::read_volatile(&(*p).empty_fd),
            };
            (fds, std::ptr::read_volatile(&(*p).quiet_version))
        }
    }

    /// Takes the counts of quiet waits and empty reads `slot`'s stub
    /// answered itself since the last take ([`ch::Slot::quiet_taken`]).
    /// The thread does not run.
    pub fn take_quiet(&self, slot: usize) -> (u32, u32) {
        let p = self.slot(slot);
        // SAFETY: inside the mapping; the owner does not run.
        unsafe {
            let taken = std::ptr::read_volatile(&(*p).quiet_taken);
            if taken != 0 {
                std::ptr::write_volatile(&mut (*p).quiet_taken, 0);
            }
            (taken % ch::EMPTY_READ_TAKEN, taken / ch::EMPTY_READ_TAKEN)
        }
    }

    /// The mask of `slot`'s thread if its stub left its signals held
    /// ([`ch::Slot::held`]), which the caller now gives back: no longer
    /// held. The thread does not run.
    pub fn take_held_mask(&self, slot: usize) -> Option<u64> {
        let p = self.slot(slot);
        // SAFETY: inside the mapping; the owner does not run.
        unsafe {
            if std::ptr::read_volatile(&(*p).held) == 0 {
                return None;
            }
            std::ptr::write_volatile(&mut (*p).held, 0);
            Some(std::ptr::read_volatile(&(*p).mask))
        }
    }

    /// Frees a slot whose thread is gone.
    pub fn release(&self, slot: usize) {
        for mark in [&self.poster, &self.handed_to] {
            if mark.get() == Some(slot) {
                mark.set(None);
            }
        }
        // SAFETY: inside the mapping.
        unsafe {
            (*self.slot(slot)).state.store(ch::IDLE, Ordering::Release);
            (*self.slot(slot)).busy = 0;
            (*self.slot(slot)).poke_len = 0;
            (*self.slot(slot)).send_len = 0;
            (*self.slot(slot)).wakes_len = 0;
            (*self.slot(slot)).held = 0;
            (*self.slot(slot)).quiet_budget = 0;
            (*self.slot(slot)).quiet_taken = 0;
            (*self.slot(slot)).quiet_version = ch::UNSETTLED;
            (*self.slot(slot)).owner.store(0, Ordering::Release);
        }
    }
}

/// A slot's poke area, for the request its thread waits on.
pub struct SlotPokes {
    slot: *mut ch::Slot,
    /// Whether the slot's copy of what the call sends still counts.
    sent: Cell<bool>,
}

impl SlotPokes {
    /// Where the bytes the call sends are in the caller's memory (a
    /// `write`'s buffer), and how many the slot holds.
    fn sent_range(&self) -> Option<(u64, usize)> {
        // SAFETY: inside the mapping; the poster wrote them before posting.
        let (at, len) = unsafe { ((*self.slot).args[1], (*self.slot).send_len as usize) };
        (self.sent.get() && len != 0).then_some((at, len.min(ch::SEND_BYTES)))
    }
}

impl crate::sim::poke::PokeArea for SlotPokes {
    fn waiting(&self) -> Option<(u64, usize)> {
        // SAFETY: inside the mapping, which lives as long as the run; its
        // thread reads the area only once answered.
        let (at, len) = unsafe { ((*self.slot).poke_at, (*self.slot).poke_len) };
        (len != 0).then_some((at, len as usize))
    }

    fn hold(&self, addr: u64, data: &[u8]) -> bool {
        if data.is_empty() || data.len() > ch::POKE_BYTES || self.waiting().is_some() {
            return false;
        }
        // SAFETY: as above; the length fits the area.
        unsafe {
            (&mut (*self.slot).poke)[..data.len()].copy_from_slice(data);
            (*self.slot).poke_at = addr;
            (*self.slot).poke_len = data.len() as u32;
        }
        true
    }

    fn take(&self) -> Option<(u64, Vec<u8>)> {
        let (at, len) = self.waiting()?;
        // SAFETY: as above.
        unsafe {
            (*self.slot).poke_len = 0;
            Some((at, (&(*self.slot).poke)[..len].to_vec()))
        }
    }

    fn sent(&self, addr: u64, buf: &mut [u8]) -> bool {
        let Some(from) = self
            .sent_range()
            .and_then(|(at, have)| offset_within(at, have, addr, buf.len()))
        else {
            return false;
        };
        // SAFETY: as above; within the copy's length.
        buf.copy_from_slice(unsafe { &(&(*self.slot).send)[from..from + buf.len()] });
        true
    }

    fn forget_sent(&self, addr: u64, len: usize) {
        if self
            .sent_range()
            .is_some_and(|(at, sent)| overlaps(at, sent, addr, len))
        {
            self.sent.set(false);
        }
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        DOORBELL.store(std::ptr::null_mut(), Ordering::Release);
        sigchld_mask(libc::SIG_UNBLOCK);
        unsafe { libc::munmap(self.base as *mut libc::c_void, ch::SIZE) };
    }
}

/// How many times the supervisor looks at the doorbell before it sleeps on
/// it, while it spins (a few tens of microseconds: a call's round trip in
/// the program, with room to spare).
const SUPERVISOR_SPINS: u32 = 4000;

/// How many of those looks also ask `waitpid` for a stop: the last of every
/// this many. Stops are rare where the supervisor spins (a few percent of
/// events), and each `waitpid` delays the sight of a posted request: on the
/// etcd harness one in 256 ran 10% faster than one in 32 (one in 1024:
/// slower). Not the first look: the thread just answered usually posts its
/// next call within a microsecond or two, while that `waitpid` (which
/// scans every tracee) still runs; asking it last made 1,000,000
/// `sched_yield`s 12% faster and the 60 s etcd seed 3%.
const STOP_LOOK_EVERY: u32 = 256;

/// Blocks or unblocks SIGCHLD in the calling thread.
fn sigchld_mask(how: libc::c_int) {
    // SAFETY: plain signal-set calls on a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::pthread_sigmask(how, &set, std::ptr::null_mut());
    }
}

/// Rings the doorbell on every SIGCHLD. SA_RESTART, so the supervisor's
/// other blocking calls do not see EINTR; no SA_NOCLDSTOP, because the
/// stops are what it is for.
fn install_sigchld_handler() -> io::Result<()> {
    extern "C" fn on_sigchld(_: libc::c_int) {
        let errno = unsafe { *libc::__errno_location() };
        let bell = DOORBELL.load(Ordering::Acquire);
        if !bell.is_null() {
            // SAFETY: cleared before the mapping goes away.
            unsafe {
                (*bell).fetch_add(1, Ordering::AcqRel);
                libc::syscall(libc::SYS_futex, bell, libc::FUTEX_WAKE, 1);
            }
        }
        unsafe { *libc::__errno_location() = errno };
    }
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = on_sigchld as *const () as usize;
    sa.sa_flags = libc::SA_RESTART;
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    if unsafe { libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
