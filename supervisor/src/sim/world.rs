//! The supervisor's model of the simulated processes: every thread and
//! process it traces, what each stopped thread will do when it is next
//! resumed, and what a parked thread waits for.

use std::collections::{BTreeMap, BTreeSet};

use crate::sim::fdkind::FdKind;
use crate::sim::memory::Regs;

/// Virtual thread id: the order of creation, starting at 1. Deterministic,
/// unlike host tids, so it is what traces and reports use.
pub type Vtid = u32;

/// How a stopped, runnable thread continues when the scheduler picks it.
#[derive(Debug, Clone)]
pub enum Resume {
    /// A new thread at its first stop, or a thread at an event stop.
    Continue,
    /// At a seccomp stop: skip the call and return this value.
    Return(i64),
    /// At a seccomp stop: re-execute the call later (after a signal handler
    /// runs), which is how SA_RESTART semantics are emulated.
    Restart,
    /// At a seccomp stop: let the kernel execute the call.
    Pass,
    /// At a seccomp stop: install these registers (changed arguments), let the
    /// kernel execute the call, and run `hook` at its exit.
    PassThenExit(Option<Box<Regs>>, ExitHook),
    /// At a signal-delivery-stop: deliver this signal.
    Signal(i32),
}

/// Work done at the syscall-exit-stop of a passed-through call.
#[derive(Debug, Clone)]
pub enum ExitHook {
    /// The dynamic loader opened the LD_PRELOAD library: remember its
    /// descriptor, so its reads and close are passed unrecorded.
    LoaderOpen,
    /// Put back the caller's argument registers (we changed a timeout).
    RestoreArgs(Box<Regs>),
    /// The call opened a file faultline treats specially (/dev/urandom,
    /// a /proc file): remember the descriptor as this kind.
    Mark(FdKind),
    /// statfs/fstatfs: write the simulated figures into the `struct
    /// statfs` at `buf`, of this node's disk or of another file system.
    Statfs {
        /// The caller's buffer.
        buf: u64,
        /// The simulated disk the path or descriptor is on.
        disk: Option<usize>,
    },
    /// The stat family: write the file's simulated identity and times into
    /// the caller's buffer.
    Stat {
        /// The caller's buffer.
        buf: u64,
        /// `struct stat` or `struct statx`.
        layout: crate::sim::fileids::StatLayout,
        /// The file, if it is on a simulated disk.
        disk: Option<crate::sim::fileids::DiskFile>,
    },
    /// getdents/getdents64: write the simulated inode numbers into the
    /// listing.
    Dirents(Box<crate::sim::fileids::Listing>),
    /// Replace the host name in the `struct utsname` at this address.
    PatchUname(u64),
    /// A non-blocking probe of wait4/waitid: if nothing was reaped, rewind the
    /// call and park the thread until a child exits.
    ParkUnlessReaped(Box<Regs>),
    /// The call was turned into eventfd2 to get a placeholder descriptor for
    /// a virtual socket (see [`NewSocket`]).
    NewSocket(NewSocket),
    /// socket(AF_NETLINK) was turned into eventfd2: mark the placeholder and
    /// put back the caller's registers.
    NewNetlink(Box<Regs>),
    /// timerfd_create was turned into eventfd2: make the eventfd a timer on
    /// this clock and put back the caller's registers.
    NewTimerFd {
        /// The timer's clock.
        clock: i32,
        /// The registers at the original call.
        restore: Box<Regs>,
    },
    /// pipe2 with O_NONBLOCK made the placeholder pair of a simulated
    /// pipe, at this address of the caller's memory: bind it.
    NewPipe {
        /// The caller's `int[2]`.
        fds: u64,
    },
    /// dup/F_DUPFD of a descriptor faultline tracks: the new one is the same.
    DupFd(FdKind),
    /// open/openat of a path on a node's disk: map the descriptor to its file.
    DiskOpen {
        /// Which disk.
        disk: usize,
        /// The path relative to the disk's root.
        rel: std::path::PathBuf,
        /// The open flags.
        flags: i32,
    },
    /// A write to a file on a disk: record the bytes the kernel took.
    DiskWrite {
        /// Which disk.
        disk: usize,
        /// Which file.
        ino: vfs::Ino,
        /// Where in the file.
        offset: u64,
        /// What was written (the kernel may take a prefix).
        data: Vec<u8>,
    },
    /// A namespace or size change on a disk, recorded if the call succeeds.
    DiskChange {
        /// Which disk.
        disk: usize,
        /// The change.
        op: DiskOp,
        /// The caller's registers, if the call was rewritten (a fallocate
        /// made as an ftruncate) and they must be put back.
        restore: Option<Box<Regs>>,
    },
    /// epoll_wait ran in the kernel for the real descriptors; append the
    /// ready virtual sockets' events after the kernel's.
    AppendEpollEvents {
        /// The caller's event buffer.
        buf: u64,
        /// (events, data) of the ready virtual sockets.
        events: Vec<(u32, u64)>,
        /// The registers at the original call.
        restore: Box<Regs>,
    },
}

/// A virtual socket whose placeholder descriptor the kernel is making: at
/// the call's exit, bind them, write the peer address (accept), and put
/// back the caller's registers.
#[derive(Debug, Clone)]
pub struct NewSocket {
    /// The vnet socket.
    pub net: vnet::SocketId,
    /// SOCK_NONBLOCK.
    pub nonblocking: bool,
    /// The registers at the original call.
    pub restore: Box<Regs>,
}

/// A change to a disk's files, told to vfs once the kernel has made it.
#[derive(Debug, Clone)]
pub enum DiskOp {
    /// rename(from, to).
    Rename(std::path::PathBuf, std::path::PathBuf),
    /// unlink(path).
    Unlink(std::path::PathBuf),
    /// rmdir(path).
    Rmdir(std::path::PathBuf),
    /// mkdir(path).
    Mkdir(std::path::PathBuf),
    /// mknod(path) of a regular file: a create without a descriptor.
    Create(std::path::PathBuf),
    /// link(existing, new).
    Link(std::path::PathBuf, std::path::PathBuf),
    /// ftruncate/truncate to a length.
    Truncate(vfs::Ino, u64),
    /// fallocate(mode 0).
    Fallocate(vfs::Ino, u64, u64),
}

/// What a parked thread waits for, and what happens when it comes.
#[derive(Debug, Clone)]
pub struct Wait {
    /// The condition.
    pub kind: WaitKind,
    /// Scheduler time at which the wait times out, if it does.
    pub deadline: Option<u64>,
    /// What the thread does on timeout.
    pub on_timeout: Resume,
    /// Whether a signal makes the call restart (true) or fail with EINTR.
    pub restartable: bool,
}

/// The condition a parked thread waits on.
#[derive(Debug, Clone)]
pub enum WaitKind {
    /// futex wait on (address space, address) with a wake bitset.
    Futex { key: (u32, u64), bitset: u32 },
    /// A sleep; the deadline ends it, a signal interrupts it and the time
    /// left is written to `rem` (a `struct timespec *`, 0 for none).
    Sleep { rem: u64 },
    /// Readiness of real descriptors (pipes, eventfds, epoll fds, ttys).
    Fds {
        fds: Vec<(i32, i16)>,
        on_ready: Resume,
    },
    /// A child of this process changing state (wait4/waitid).
    Child,
    /// A deliverable signal (pause/sigsuspend/sigtimedwait); `mask` overrides
    /// the thread's blocked set while waiting, `set` is what sigtimedwait takes.
    Signal { mask: Option<u64>, set: Option<u64> },
    /// A vfork parent waiting for its child to exec or exit.
    Vfork { child: i32 },
    /// Readiness of real descriptors, virtual sockets (with an event mask)
    /// or an epoll instance's virtual registrations; the call re-executes.
    Net {
        real: Vec<(i32, i16)>,
        virt: Vec<(crate::sim::netstate::VsId, u32)>,
        epoll: Option<(i32, i32)>,
        /// The network's generation (`NetState::generation`) when the
        /// virtual sockets and registrations were last found not ready; 0
        /// before the first look. Until it moves they are not looked at
        /// again.
        seen: u64,
    },
}

impl WaitKind {
    /// A short description for deadlock reports.
    pub fn describe(&self) -> String {
        match self {
            WaitKind::Futex { key, bitset } => {
                format!("futex 0x{:x} (bitset 0x{bitset:x})", key.1)
            }
            WaitKind::Sleep { .. } => "sleep".into(),
            WaitKind::Fds { fds, .. } => {
                let list: Vec<String> = fds.iter().map(|(fd, _)| fd.to_string()).collect();
                format!("readiness of fd {}", list.join(","))
            }
            WaitKind::Child => "a child process (wait)".into(),
            WaitKind::Signal { .. } => "a signal".into(),
            WaitKind::Vfork { child } => format!("vfork child {child}"),
            WaitKind::Net {
                real, virt, epoll, ..
            } => {
                let mut parts: Vec<String> =
                    real.iter().map(|(fd, _)| format!("fd {fd}")).collect();
                parts.extend(virt.iter().map(|(vs, _)| format!("socket #{vs}")));
                if let Some((_, epfd)) = epoll {
                    parts.push(format!("epoll fd {epfd}"));
                }
                format!("readiness of {}", parts.join(", "))
            }
        }
    }
}

/// Where a thread is in its life, as the scheduler sees it.
#[derive(Debug, Clone)]
pub enum ThreadState {
    /// Stopped and runnable.
    Ready(Resume),
    /// Stopped and waiting in the supervisor.
    Parked(Wait),
    /// Exiting or killed: never scheduled again.
    Dying,
}

/// How a thread announced its exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// exit(2): this thread only.
    Thread,
    /// exit_group(2) or a fatal signal: the whole process.
    Group,
}

/// A call the LD_PRELOAD library posted over the shared-memory channel
/// (read from its slot by `fast_path::channel`); its thread waits in the
/// library for the answer.
#[derive(Debug, Clone, Copy)]
pub struct ChannelRequest {
    /// The slot it came in.
    pub slot: usize,
    /// Its sequence number, repeated in the answer.
    pub seq: u32,
    /// Syscall number.
    pub nr: i64,
    /// Arguments.
    pub args: [u64; 6],
    /// The caller's signal mask (it blocks everything while it waits).
    pub mask: u64,
    /// A passed call's result, in an exit report (`ch::EXIT_REPORT`).
    pub result: i64,
    /// The caller's stack pointer (`ch::Slot::sp`).
    pub sp: u64,
    /// Memory the caller copied with the call (`ch::Slot::peek`).
    pub peek: crate::sim::peek::Peek,
    /// Which kind of site made it, in a patched Go program
    /// (`ch::Slot::caller`).
    pub caller: u32,
    /// The bytes a `write` sends came with it (`ch::Slot::send`), as the
    /// caller's memory held them when it posted.
    pub sent: bool,
    /// The engine's signal generation when it took the request
    /// (`Supervisor::signal_generation`; 0 until then).
    pub signal_generation: u64,
}

/// The patched glibc call sites of a process (`fast_path::libc_sites`).
#[derive(Debug, Clone, Default)]
pub struct LibcStubs {
    /// libc's code in this process (start, end), once looked up; None
    /// inside when it has none.
    pub text: Option<Option<(u64, u64)>>,
    /// Whether the LD_PRELOAD library's pass gate is mapped, once found:
    /// the shared code makes passed calls there.
    pub gate: bool,
    /// The sites left alone for good (not of the expected shape, out of
    /// libc's code or of the page's room).
    pub refused: BTreeSet<u64>,
    /// The patched sites and their stubs, in the page in the order they
    /// were patched: a call of such a site rewound to run again (its
    /// `syscall` now part of the jump) runs its stub.
    pub patched: BTreeMap<u64, u64>,
}

/// One traced thread.
#[derive(Debug)]
pub struct Thread {
    /// Host thread id.
    pub tid: i32,
    /// The thread id the program sees (in faultline's PID namespace).
    pub ns_tid: i32,
    /// Virtual thread id.
    pub vtid: Vtid,
    /// Host process id (thread group).
    pub pid: i32,
    /// Scheduler state.
    pub state: ThreadState,
    /// Registers at the last seccomp stop.
    pub regs: Regs,
    /// CLONE_CHILD_CLEARTID / set_tid_address: woken on exit like the kernel does.
    pub clear_tid: u64,
    /// Flags of the clone/fork this thread is executing.
    pub pending_clone: Option<(u64, u64)>,
    /// Set when the thread called exit/exit_group.
    pub exit_kind: Option<ExitKind>,
    /// Whether its initial ptrace stop has been seen (new threads only).
    pub started: bool,
    /// The last fatal-looking signal, for the crash report.
    pub last_signal: Option<String>,
    /// The deadline of a wait whose call is being re-executed.
    pub restart_deadline: Option<u64>,
    /// A blocking connect on this virtual socket is waiting for its outcome.
    pub connect_pending: Option<crate::sim::netstate::VsId>,
    /// The fast-path request it waits on an answer to (it is then blocked in
    /// the LD_PRELOAD library, not stopped in ptrace).
    pub channel_wait: Option<ChannelRequest>,
    /// The channel slot the LD_PRELOAD library posts in for it, freed
    /// when it is gone.
    pub channel_slot: Option<usize>,
    /// The slot the supervisor gave it, named by its GS base, that patched
    /// code posts in (a Go runtime's wrappers, glibc's call sites); freed
    /// when it is gone or execs.
    pub gs_slot: Option<usize>,
    /// The seccomp notification it waits on an answer to (it is then
    /// waiting in the kernel, not stopped in ptrace).
    pub notified: Option<u64>,
    /// Its notified call was sent back to be decided at the ptrace stop
    /// it was asked to make before making the call again.
    pub notified_redo: bool,
    /// Its signal mask when the watchdog preempted it. Until it next stops
    /// at a system call every signal stays blocked, so that none is
    /// delivered at the instruction wall time happened to stop it at.
    pub held_mask: Option<u64>,
    /// `Supervisor::signal_generation` when its patched Go runtime's stub
    /// last gave back its signal mask: while it is still that, no signal
    /// can be pending for the thread, and an answer may leave its signals
    /// held (`ch::Slot::held`).
    pub mask_given_back_at: u64,
    /// Stopped on a Go yield breakpoint at this address: the instruction
    /// under it runs (single-stepped) before the thread goes on.
    pub step_over: Option<u64>,
    /// Its own timer slack, set by `prctl(PR_SET_TIMERSLACK)` and inherited
    /// by the threads and processes it creates; None: the run's
    /// `--timer-slack` (see `sys::slack`).
    pub timer_slack: Option<u64>,
    /// Its quiet calls (zero-timeout epoll waits, empty socket reads)
    /// answered in place since its last one that was a scheduling point
    /// (`engine/quiet_polls.rs`).
    pub quiet_calls: u32,
}

impl Thread {
    /// A thread just seen, to continue where it stands once scheduled, with
    /// nothing pending: how the engine adds a thread, and handler tests theirs.
    pub fn new(vtid: Vtid, pid: i32, tid: i32, ns_tid: i32) -> Thread {
        Thread {
            tid,
            ns_tid,
            vtid,
            pid,
            state: ThreadState::Ready(Resume::Continue),
            // SAFETY: plain old data, filled at the first seccomp stop.
            regs: unsafe { std::mem::zeroed() },
            clear_tid: 0,
            pending_clone: None,
            exit_kind: None,
            started: false,
            last_signal: None,
            restart_deadline: None,
            connect_pending: None,
            channel_wait: None,
            channel_slot: None,
            gs_slot: None,
            notified: None,
            notified_redo: false,
            held_mask: None,
            mask_given_back_at: 0,
            step_over: None,
            timer_slack: None,
            quiet_calls: 0,
        }
    }
}

/// One traced process (thread group).
#[derive(Debug)]
pub struct Process {
    /// Host pid.
    pub pid: i32,
    /// The pid the program sees (in its node's PID namespace).
    pub ns_pid: i32,
    /// The launched program whose PID namespace it lives in (host pid).
    pub ns_root: i32,
    /// The simulated host it runs on.
    pub host: vnet::HostId,
    /// Virtual process number (creation order, from 1).
    pub vpid: u32,
    /// The traced parent, if any.
    pub parent: Option<i32>,
    /// Address-space id: futex keys are (mm, address).
    pub mm: u32,
    /// What faultline knows about its descriptors (ordered: closing them
    /// at exit must happen in the same order every run).
    pub fds: BTreeMap<i32, FdKind>,
    /// Signals whose handler was installed with SA_RESTART.
    pub restart_mask: u64,
    /// The program name (argv[0] of the last exec), for reports.
    pub name: String,
    /// A vfork parent thread waiting for this process to exec or exit.
    pub vfork_parent: Option<i32>,
    /// The LD_PRELOAD library announced itself in this process (or its
    /// parent): its threads may post fast-path requests, so waits for them
    /// watch the channel too.
    pub channel_user: bool,
    /// Its Go runtime's wrappers make their calls over the channel
    /// (`fast_path::go_runtime`; a forked child's copy is patched too): its
    /// threads need a slot, named by their GS base, before they first run.
    pub go_patched: bool,
    /// glibc's `syscall` sites are patched in it as they are first reached
    /// (`fast_path::libc_sites`; a forked child's copy too): its threads
    /// need a slot, named by their GS base, before they first run.
    pub libc_stubs: Option<LibcStubs>,
    /// The loader's descriptor of that library while it is open: its calls
    /// on it are not the program's and are neither recorded nor scheduled.
    pub loader_fd: Option<i32>,
    /// The address range of its dynamic loader (the ELF interpreter).
    pub interp: Option<(u64, u64)>,
    /// Scheduler time it was created at (its start time in /proc).
    pub start_ns: u64,
    /// Its resource limits, as getrlimit shows them.
    pub rlimits: crate::sim::rlimits::Rlimits,
}

impl Process {
    /// A process of its own namespace with no parent, descriptors or name
    /// yet: the engine fills in what a child inherits, handler tests use it
    /// as it is.
    pub fn new(pid: i32, host: vnet::HostId, vpid: u32, mm: u32, start_ns: u64) -> Process {
        Process {
            pid,
            ns_pid: pid,
            ns_root: pid,
            host,
            vpid,
            parent: None,
            mm,
            fds: BTreeMap::new(),
            restart_mask: 0,
            name: String::new(),
            vfork_parent: None,
            channel_user: false,
            go_patched: false,
            libc_stubs: None,
            loader_fd: None,
            interp: None,
            start_ns,
            rlimits: Default::default(),
        }
    }
}

/// Who armed a signal timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerOwner {
    /// The program, with alarm(2) or setitimer(ITIMER_REAL).
    RealTimer,
    /// faultline itself (`--signal-at`).
    Faultline,
    /// The program, with timer_create and timer_settime: the signal carries
    /// SI_TIMER, the timer id and the sigevent's value.
    Posix {
        /// The timer id timer_create returned.
        id: i32,
        /// SIGEV_THREAD_ID: the host tid it goes to (0: the process).
        tid: i32,
        /// sigev_value.
        value: u64,
    },
}

/// A signal to send at a virtual time.
#[derive(Debug, Clone)]
pub struct SignalTimer {
    /// Host pid of the target process.
    pub pid: i32,
    /// Signal number.
    pub sig: i32,
    /// When (scheduler ns).
    pub at: u64,
    /// Re-arm period (0 = one-shot).
    pub interval: u64,
    /// Who armed it.
    pub owner: TimerOwner,
}

/// A short label of how a thread resumes, for the trace.
pub fn resume_label(r: &Resume) -> String {
    match r {
        Resume::Return(v) => v.to_string(),
        Resume::Continue => "continue".into(),
        Resume::Restart => "restart".into(),
        Resume::Pass | Resume::PassThenExit(..) => "pass".into(),
        Resume::Signal(s) => format!("signal {s}"),
    }
}
