//! The LD_PRELOAD fast path, supervisor side: which programs get the
//! library and the channel, which posted calls it answers (the same handler
//! and trace event as the trapped call) and which it sends back to ptrace,
//! and keeping the dynamic loader's own work on the library out of the
//! trace, so a run is the same with the fast path on and off.

pub mod channel;
pub mod go_runtime;
pub mod go_stub;
pub mod libc_sites;

use std::path::PathBuf;

use faultline_channel as ch;

use crate::engine::syscall_exit::Finish;
use crate::engine::{StepEnd, Supervisor};
use crate::fast_path::channel::{Channel, Event};
use crate::host::launch::{self, LaunchSpec};
use crate::host::tracee;
use crate::sim::fdkind::FdKind;
use crate::sim::memory::Memory;
use crate::sim::peek::Peek;
use crate::sim::world::ChannelRequest;
use crate::sim::world::{ExitHook, Resume, Vtid};
use crate::sys::table as syscalls;
use crate::sys::Call;

/// Events of programs with the library between two placement decisions.
const PLACEMENT_WINDOW: u64 = 4096;
/// Requests per thousand events above which the programs get a CPU of
/// their own. Measured on the etcd harness (83% of its events come over
/// the channel, 60-93% per window): splitting above 900 left it at the
/// default's speed, above 750 4% faster, above 600 7% faster.
const SPLIT_ABOVE_PER_MILLE: u64 = 600;
/// Requests per thousand events below which they come back.
const JOIN_BELOW_PER_MILLE: u64 = 500;
/// How long a poster spins for its answer while the programs have a CPU of
/// their own (about 100 µs). A poster that is not to run next is told at
/// once (it hands the turn over, or gives way), so a long spin keeps no
/// thread from the CPU; it saves the cross-CPU wake of a poster asleep
/// when its answer comes. On the etcd harness 3000 ran 10% faster than
/// 300 (6 pairs); 10,000 and 30,000 no faster.
const LIBRARY_SPINS: u32 = 3000;

/// Whether `nr` reads a clock the vDSO answers.
fn is_clock_read(nr: i64) -> bool {
    matches!(
        nr,
        libc::SYS_clock_gettime | libc::SYS_gettimeofday | libc::SYS_time
    )
}

/// Whether a call from `rip` was made by the stub page a patched Go
/// program's calls go through (at `ch::TRAMPOLINE`): a clock read made
/// there is one faultline's vDSO counted and sent, as one it trapped
/// itself (the stub makes the real call when the channel is busy).
pub(crate) fn made_by_stub(rip: u64) -> bool {
    (ch::TRAMPOLINE..ch::TRAMPOLINE + 4096).contains(&rip)
}

/// The library's file name, looked for next to the faultline binary.
const LIBRARY: &str = "libfaultline_preload.so";

/// Why the fast path is off for a run (the run goes on without it).
#[derive(Debug, thiserror::Error)]
pub enum FastPathOff {
    /// faultline cannot find its own binary, next to which the library lives.
    #[error("cannot find faultline's own path: {0}")]
    OwnPath(std::io::Error),
    /// The library is not where it should be.
    #[error(
        "{path}: {err} (build it with scripts/build-preload, or name it in FAULTLINE_PRELOAD)"
    )]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
        /// What the lookup said.
        err: std::io::Error,
    },
    /// LD_PRELOAD separates entries by ':' and ' ', so the path cannot hold them.
    #[error("{0}: LD_PRELOAD cannot name a path with ':' or ' '")]
    Unnamable(PathBuf),
    /// The shared-memory channel could not be made.
    #[error("cannot create the channel: {0}")]
    Channel(std::io::Error),
}

/// The library to preload: `$FAULTLINE_PRELOAD`, else next to faultline.
fn library_path() -> Result<String, FastPathOff> {
    let path = match std::env::var_os("FAULTLINE_PRELOAD") {
        Some(p) => PathBuf::from(p),
        None => std::env::current_exe()
            .map_err(FastPathOff::OwnPath)?
            .with_file_name(LIBRARY),
    };
    let path = path.canonicalize().map_err(|err| FastPathOff::Missing {
        path: path.clone(),
        err,
    })?;
    let text = path.to_str().unwrap_or_default().to_string();
    if text.is_empty() || text.contains([':', ' ']) {
        return Err(FastPathOff::Unnamable(path));
    }
    Ok(text)
}

/// The channel and library of a run with the fast path on; a reason it is
/// off otherwise (the run goes on without it).
pub fn open() -> Result<(Channel, String), FastPathOff> {
    let lib = library_path()?;
    let chan = Channel::create().map_err(FastPathOff::Channel)?;
    Ok((chan, lib))
}

impl Supervisor {
    /// `spec` as launched in this run: with the fast path on, the library in
    /// LD_PRELOAD (ahead of the program's own; not for a Go program, whose
    /// runtime is patched instead), the channel on its descriptor, and the
    /// trampoline's futex calls let through.
    pub(crate) fn launch_spec(&mut self, spec: &LaunchSpec) -> LaunchSpec {
        let mut spec = spec.clone();
        let (Some(fd), Some(lib)) = (
            self.channel.as_ref().map(Channel::fd),
            self.preload_lib.clone(),
        ) else {
            return spec;
        };
        spec.filter = syscalls::seccomp_filter(Some(crate::host::seccomp::FastPath {
            page: ch::TRAMPOLINE,
            stubs: ch::LIBC_STUBS_AT,
            gate: ch::PASS_GATE,
        }));
        spec.channel_fd = Some(fd);
        // Keyed as at exec (/proc/PID/exe names the canonical path).
        let program = launch::resolve_program(&spec.program).and_then(|p| Ok(p.canonicalize()?));
        if program.is_ok_and(|p| self.go_image(&p).is_some()) {
            return spec;
        }
        let theirs = spec
            .env
            .iter()
            .find(|(k, _)| k == "LD_PRELOAD")
            .map(|(_, v)| v.clone());
        spec.env
            .retain(|(k, _)| k != "LD_PRELOAD" && k != ch::FD_ENV);
        let preload = match theirs {
            Some(t) if !t.is_empty() => format!("{lib}:{t}"),
            _ => lib,
        };
        spec.env.push(("LD_PRELOAD".into(), preload));
        spec.env.push((ch::FD_ENV.into(), ch::FD.to_string()));
        spec
    }

    /// The next thing the running thread `vtid` did: a ptrace stop of some
    /// tracee, or — if its process has the library — a posted request, or
    /// — if its calls are notified — a notified call.
    pub(crate) fn next_event(&mut self, vtid: Vtid) -> std::io::Result<Event> {
        // The thread runs: the trace is written while it does (over the
        // channel, an event at a time between looks for its next call).
        let channel_user = self
            .sim
            .threads
            .get(&vtid)
            .and_then(|t| self.sim.procs.get(&t.pid))
            .is_some_and(|p| p.channel_user);
        if !channel_user || self.notify.is_some() {
            self.sim.trace.write_pending();
        }
        if let Some(event) = self.next_notified_event(vtid)? {
            return Ok(event);
        }
        let target = self.wait_target(vtid);
        let trace = &mut self.sim.trace;
        match &self.channel {
            Some(chan) if channel_user => {
                // Only the running thread stops, as on the plain wait.
                let event = chan.wait(target, &mut || trace.write_one())?;
                let stop = matches!(event, Event::Stop(..));
                if stop {
                    self.stops += 1;
                }
                self.reconsider_placement(stop);
                Ok(event)
            }
            _ => self
                .wait_on(self.wait_target(vtid))
                .map(|(who, status)| Event::Stop(who, status)),
        }
    }

    /// Counts one event of a program with the library (a ptrace stop if
    /// `stop`, else a request) and, every [`PLACEMENT_WINDOW`] events, puts
    /// the programs on a CPU of their own while requests are nearly all of
    /// them (both ends then spin instead of sleeping), and back on the
    /// supervisor's while ptrace stops, which cost more across CPUs, are
    /// not rare. Where threads run never changes what they do.
    fn reconsider_placement(&mut self, stop: bool) {
        let w = &mut self.placement_window;
        if stop {
            w.1 += 1;
        } else {
            w.0 += 1;
        }
        let (fast, stops) = *w;
        if fast + stops < PLACEMENT_WINDOW || !self.placement.can_split() {
            return;
        }
        *w = (0, 0);
        let share = fast * 1000 / (fast + stops);
        let Some(chan) = &self.channel else {
            return;
        };
        let tids = self.sim.threads.values().map(|t| t.tid);
        if share >= SPLIT_ABOVE_PER_MILLE && !self.placement.is_split() {
            self.placement.split(tids);
            chan.set_spin(LIBRARY_SPINS);
        } else if share < JOIN_BELOW_PER_MILLE && self.placement.is_split() {
            chan.set_spin(0);
            self.placement.join(tids);
        }
    }

    /// A request the running thread posted: dispatched like the trapped
    /// call (a scheduling point), or sent back to be made as one.
    pub(crate) fn on_request(&mut self, vtid: Vtid, mut req: ChannelRequest) -> StepEnd {
        req.signal_generation = self.signal_generation;
        self.decide_request(vtid, req)
    }

    /// The request `vtid` waits on, whose wait ended, decided again as if
    /// its thread had asked again (what it does when answered "restart",
    /// with nothing between). Memory the call copied with it may be stale
    /// by now: its handler reads the thread's memory instead.
    pub(crate) fn redecide_request(&mut self, vtid: Vtid, mut req: ChannelRequest) -> StepEnd {
        req.peek = Peek::default();
        req.sent = false;
        self.decide_request(vtid, req)
    }

    /// [`Supervisor::on_request`] and [`Supervisor::redecide_request`].
    fn decide_request(&mut self, vtid: Vtid, mut req: ChannelRequest) -> StepEnd {
        let Some(th) = self.sim.threads.get_mut(&vtid) else {
            return StepEnd::Done;
        };
        if th.gs_slot != Some(req.slot) {
            th.channel_slot = Some(req.slot);
        }
        let pid = th.pid;
        if req.nr == ch::EXIT_REPORT {
            return self.on_exit_report(vtid, req);
        }
        if let Some(reply) = self.trap_reply(pid, &req) {
            if let Some(chan) = &self.channel {
                chan.answer(req.slot, req.seq, reply, 0);
            }
            return StepEnd::Running;
        }
        let in_place = self.answer_go_wake(vtid, req.nr, &req.args);
        if let Some(v) = in_place.or_else(|| self.answer_quiet_call(vtid, req.nr, &req.args)) {
            self.fast_calls += 1;
            if let Some(chan) = &self.channel {
                chan.answer(req.slot, req.seq, ch::REPLY_RETURN, v);
            }
            return StepEnd::Running;
        }
        let held = self
            .sim
            .threads
            .get_mut(&vtid)
            .and_then(|t| t.held_mask.take());
        if let Some(held) = held {
            // Signals held since a preemption come back at this call, and
            // the clock reads since then are forgotten, as at a trapped one.
            self.forget_spin_reads(pid);
            if req.mask == crate::engine::HOLD_ALL {
                req.mask = held;
                if let Some(chan) = &self.channel {
                    chan.set_mask(req.slot, held);
                }
            }
        }
        let mut regs = self.regs_for_call(vtid, req.nr, req.args);
        regs.rsp = req.sp;
        if is_clock_read(req.nr) {
            // Made by the vDSO through the stub: a read it counted and
            // chose to send (see `made_by_stub`).
            regs.rip = ch::TRAMPOLINE;
        }
        self.sim
            .threads
            .get_mut(&vtid)
            .expect("running thread")
            .channel_wait = Some(req);
        self.fast_calls += 1;
        // Only a patched Go runtime's stub copies memory with its calls
        // (what the library's slots hold there is another request's). What
        // the handlers write into the caller's memory waits in the slot for
        // the Go code's own calls, whose buffers are valid where the call
        // writes, and for the library's, which copies it with a call the
        // kernel fails with EFAULT on a bad pointer; not for a patched
        // glibc site's, whose caller may pass any pointer.
        let go = self.sim.procs.get(&pid).is_some_and(|p| p.go_patched);
        let (peek, pokes) = match &self.channel {
            Some(chan) if req.caller == ch::CALLER_LIBRARY => {
                (Peek::default(), Some(chan.pokes(req.slot, false)))
            }
            Some(chan) if go => {
                let pokes = (req.caller != ch::CALLER_LIBC).then(|| chan.pokes(req.slot, req.sent));
                (req.peek, pokes)
            }
            _ => (Peek::default(), None),
        };
        // Always a scheduling point: clock reads are answered in place only
        // when the vDSO did not count them, and these it did.
        self.dispatch(vtid, regs, peek, pokes);
        StepEnd::Done
    }

    /// None if the channel answers `req`; else how to send it back: the
    /// calls [`channel_may_take`] names, reads and writes only on sockets
    /// and pipes of the simulation, the kernel's pipes, eventfds and the like, files (on the
    /// simulated disks too), /dev/urandom and timerfds. What their handlers
    /// pass to the kernel the thread makes at the pass gate, with the
    /// number and arguments the handler gave (a simulated socket is an
    /// eventfd to the kernel); a pass with work at its exit reports its
    /// result back ([`ch::REPLY_PASS_REPORT`]).
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn trap_reply(&mut self, pid: i32, req: &ChannelRequest) -> Option<u32> {
        use libc::*;
        if self.library_owned(pid, req.nr, req.args) || !channel_may_take(req.nr) {
            return Some(ch::REPLY_TRAP);
        }
        match req.nr {
            SYS_read | SYS_write | SYS_readv | SYS_writev | SYS_recvfrom | SYS_sendto => {
                match self.sim.fd_kind(&self.host_fds, pid, req.args[0] as i32) {
                    Some(
                        FdKind::Socket(_)
                        | FdKind::Pipe(_)
                        | FdKind::Pollable
                        | FdKind::File
                        | FdKind::Random
                        | FdKind::Timer(_)
                        | FdKind::Disk { .. },
                    ) => None,
                    _ => Some(ch::REPLY_TRAP_FD),
                }
            }
            SYS_pwrite64 => match self.sim.fd_kind(&self.host_fds, pid, req.args[0] as i32) {
                Some(FdKind::File | FdKind::Disk { .. }) => None,
                _ => Some(ch::REPLY_TRAP),
            },
            // A passed call could not be cut short by a signal there.
            SYS_fcntl if fcntl_waits(req.args[1]) => Some(ch::REPLY_TRAP),
            _ => None,
        }
    }

    /// Resumes a thread that waits on the channel: the answer its handler
    /// decided, delivered in its slot.
    pub(crate) fn answer_request(
        &mut self,
        vtid: Vtid,
        req: ChannelRequest,
        resume: Resume,
        ahead: u64,
    ) {
        let (mut pass_nr, mut pass_args) = (req.nr, req.args);
        let (reply, ret) = match resume {
            Resume::Return(v) => (ch::REPLY_RETURN, v),
            Resume::Restart => (ch::REPLY_RESTART, 0),
            Resume::Pass => (ch::REPLY_PASS, 0),
            Resume::PassThenExit(regs, hook) => {
                // Its exit is the stub's report of the result (the next
                // event of this thread, which runs with signals blocked
                // until then), as the syscall-exit stop is on the ptrace path.
                if let Some(r) = regs {
                    pass_nr = r.orig_rax as i64;
                    pass_args = crate::sim::memory::syscall_args(&r);
                }
                self.exit_hook = Some(hook);
                (ch::REPLY_PASS_REPORT, 0)
            }
            other => {
                eprintln!(
                    "faultline: internal error: {} for a fast-path {} of thread {vtid}",
                    crate::sim::world::resume_label(&other),
                    syscalls::name(req.nr)
                );
                (ch::REPLY_RETURN, -(libc::ENOSYS as i64))
            }
        };
        if reply == ch::REPLY_RETURN && ret > 0 {
            self.note_socket_read(vtid, req.nr, req.args[0] as i32);
        }
        let th = &self.sim.threads[&vtid];
        let (pid, tid) = (th.pid, th.tid);
        let release = !self.may_stay_held(vtid, &req, reply);
        self.runs_ahead(pid, tid, ahead);
        if let Some(chan) = &self.channel {
            if matches!(reply, ch::REPLY_PASS | ch::REPLY_PASS_REPORT) {
                chan.set_pass(req.slot, pass_nr, pass_args);
            }
            chan.answer_releasing(req.slot, req.seq, reply, ret, release);
        }
    }

    /// Whether the answer `reply` to `req` may leave `vtid`'s signals held
    /// (`ch::Slot::held`): a plain result for a patched Go runtime's own
    /// call (a glibc site's caller may change its mask itself), with no
    /// signal sent since the thread last gave its mask back, and none held
    /// since a preemption. Any other answer gives the mask back, and so
    /// marks the thread.
    fn may_stay_held(&mut self, vtid: Vtid, req: &ChannelRequest, reply: u32) -> bool {
        let generation = self.signal_generation;
        let Some(th) = self.sim.threads.get_mut(&vtid) else {
            return false;
        };
        let go = self.sim.procs.get(&th.pid).is_some_and(|p| p.go_patched);
        let hold = go
            && reply == ch::REPLY_RETURN
            && req.caller != ch::CALLER_LIBC
            && th.gs_slot == Some(req.slot)
            && th.held_mask.is_none()
            && th.mask_given_back_at == generation;
        if !hold {
            th.mask_given_back_at = generation;
        }
        hold
    }

    /// The stub's report of the result of a call passed with work at its
    /// exit: that work done (as at the call's syscall-exit stop), the
    /// call's final result goes back, and the thread runs on.
    fn on_exit_report(&mut self, vtid: Vtid, req: ChannelRequest) -> StepEnd {
        // It stands for the call's syscall-exit stop.
        self.fast_calls += 1;
        let hook = self.exit_hook.take();
        let ret = match self.finish_passed(vtid, hook, req.result as u64) {
            Finish::Return(v) | Finish::PutBack(_, v) => v as i64,
            Finish::Rewind(_) => {
                // Only wait4's hook rewinds, and wait4 never comes here.
                eprintln!(
                    "faultline: internal error: a rewind for a fast-path call of thread {vtid}"
                );
                -(libc::ENOSYS as i64)
            }
        };
        if let Some(chan) = &self.channel {
            chan.answer(req.slot, req.seq, ch::REPLY_RETURN, ret);
        }
        StepEnd::Running
    }

    /// Frees a departed thread's channel slot.
    pub(crate) fn release_slot(&self, slot: Option<usize>) {
        if let (Some(chan), Some(slot)) = (&self.channel, slot) {
            chan.release(slot);
        }
    }

    /// Calls that belong to the library, not the program: the dynamic
    /// loader opening, reading and closing it (the kernel does them), and
    /// the library announcing itself. Handled in place, without a trace
    /// event or a scheduling point, as on a run without the fast path.
    /// True if `c` was such a call.
    pub(crate) fn library_call(&mut self, c: &Call<impl Memory>) -> bool {
        if self.preload_lib.is_none() {
            return false;
        }
        if c.nr == libc::SYS_getcpu && c.a[..3] == [0, 0, ch::HELLO] {
            self.sim
                .procs
                .get_mut(&c.pid)
                .expect("process")
                .channel_user = true;
            crate::engine::return_in_place(c.tid, c.regs, 0);
            return true;
        }
        if !self.library_owned(c.pid, c.nr, c.a) {
            return false;
        }
        match c.nr {
            libc::SYS_open | libc::SYS_openat => {
                self.exit_hook = Some(ExitHook::LoaderOpen);
                let _ = tracee::cont_to_syscall_exit(c.tid);
            }
            libc::SYS_close => {
                self.sim.procs.get_mut(&c.pid).expect("process").loader_fd = None;
                let _ = tracee::cont(c.tid, 0);
            }
            _ => {
                let _ = tracee::cont(c.tid, 0);
            }
        }
        true
    }

    /// Whether `nr(args)` of process `pid` is the library's, not the
    /// program's: the dynamic loader's open of the library and its calls on
    /// the descriptor it got (the kernel does them), or a stat of the
    /// channel's descriptor in /proc (a program that looks at each of its
    /// open descriptors, as etcd does: a run without the fast path has no
    /// such descriptor). These are left out of the trace, so they are made
    /// at a ptrace stop, never over the channel.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn library_owned(&self, pid: i32, nr: i64, args: [u64; 6]) -> bool {
        use libc::*;
        let Some(lib) = &self.preload_lib else {
            return false;
        };
        let path =
            |at: u64, len: usize| tracee::Process(pid).read_cstr(at, len).unwrap_or_default();
        let stats_the_channel = |at: u64| {
            let path = path(at, 64);
            path.starts_with(b"/proc/") && path.ends_with(format!("/fd/{}", ch::FD).as_bytes())
        };
        let on_loader_fd = || {
            let loader_fd = self.sim.procs.get(&pid).and_then(|p| p.loader_fd);
            loader_fd == Some(args[0] as i32)
        };
        match nr {
            SYS_open => path(args[0], lib.len() + 1) == lib.as_bytes(),
            SYS_openat => path(args[1], lib.len() + 1) == lib.as_bytes(),
            SYS_read | SYS_close | SYS_fstat | SYS_newfstatat if on_loader_fd() => true,
            SYS_stat | SYS_lstat => stats_the_channel(args[0]),
            SYS_newfstatat | SYS_statx => stats_the_channel(args[1]),
            _ => false,
        }
    }

    /// At the exit of the loader's open of the library.
    pub(crate) fn loader_opened(&mut self, pid: i32, fd: i64) {
        if let (Some(p), Ok(fd)) = (self.sim.procs.get_mut(&pid), i32::try_from(fd)) {
            if fd >= 0 {
                p.loader_fd = Some(fd);
            }
        }
    }
}

/// Whether an `fcntl` with command `cmd` may block in the kernel: a lock
/// wait (`F_SETLKW`, `F_OFD_SETLKW`); its other commands answer at once.
pub(crate) fn fcntl_waits(cmd: u64) -> bool {
    matches!(cmd as i32, libc::F_SETLKW | libc::F_OFD_SETLKW)
}

/// Whether the channel takes call `nr` at all (`trap_reply` then looks at
/// its descriptor for some). Only calls whose handlers need no more of the
/// caller's registers than the call, its arguments and its stack pointer
/// qualify: reads and writes, sleeps, futex calls, yields, epoll waits and
/// polls, the calls that make, use and close descriptors (sockets and
/// their connections, options and names, files and directories, timerfds,
/// dups), a few questions about the machine, the clock reads faultline's
/// vDSO posts, `rt_sigaction` (a handler's flags are read from memory; the
/// call never waits), and `fcntl` (`trap_reply` sends back the lock waits,
/// which may block in the kernel). Not ioctl, which may block too, nor
/// getdents: a passed call is made with every signal blocked, and the
/// kernel lists a directory in full then, where after a ptrace stop a
/// pending signal cuts the listing short. Not the calls that start, end or
/// wait for threads and processes, send or wait for signals, or map
/// memory.
#[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
pub(crate) fn channel_may_take(nr: i64) -> bool {
    use libc::*;
    matches!(
        nr,
        SYS_clock_nanosleep
            | SYS_futex
            | SYS_nanosleep
            | SYS_sched_yield
            | SYS_epoll_wait
            | SYS_epoll_pwait
            | SYS_clock_gettime
            | SYS_gettimeofday
            | SYS_time
            | SYS_read
            | SYS_write
            | SYS_readv
            | SYS_writev
            | SYS_recvfrom
            | SYS_sendto
            | SYS_pwrite64
            | SYS_setsockopt
            | SYS_getsockopt
            | SYS_getsockname
            | SYS_getpeername
            | SYS_epoll_ctl
            | SYS_fdatasync
            | SYS_fsync
            | SYS_close
            | SYS_close_range
            | SYS_dup
            | SYS_dup2
            | SYS_dup3
            | SYS_socket
            | SYS_connect
            | SYS_accept
            | SYS_accept4
            | SYS_bind
            | SYS_listen
            | SYS_shutdown
            | SYS_sendmsg
            | SYS_recvmsg
            | SYS_sendmmsg
            | SYS_recvmmsg
            | SYS_poll
            | SYS_ppoll
            | SYS_select
            | SYS_pselect6
            | SYS_epoll_pwait2
            | SYS_timerfd_create
            | SYS_timerfd_settime
            | SYS_timerfd_gettime
            | SYS_open
            | SYS_openat
            | SYS_openat2
            | SYS_creat
            | SYS_stat
            | SYS_lstat
            | SYS_newfstatat
            | SYS_statx
            | SYS_fstat
            | SYS_statfs
            | SYS_fstatfs
            | SYS_readlink
            | SYS_readlinkat
            | SYS_mkdir
            | SYS_mkdirat
            | SYS_rmdir
            | SYS_unlink
            | SYS_unlinkat
            | SYS_rename
            | SYS_renameat
            | SYS_renameat2
            | SYS_link
            | SYS_linkat
            | SYS_truncate
            | SYS_ftruncate
            | SYS_fallocate
            | SYS_sync
            | SYS_syncfs
            | SYS_uname
            | SYS_sysinfo
            | SYS_getrandom
            | SYS_sched_getaffinity
            | SYS_rt_sigaction
            | SYS_fcntl
    )
}
