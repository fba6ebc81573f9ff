//! The fast path for Go programs: their runtime makes raw system calls, so
//! instead of a library, the supervisor patches the runtime's futex,
//! sleep, yield, epoll, read and write wrappers and package syscall's
//! `Syscall6` at exec to make their calls over the channel through
//! `go_stub`. Only the calls whose handlers need no registers are taken
//! (the rest are sent back and made as trapped calls), and they are
//! dispatched by the same handlers with the same trace events as the
//! trapped calls, so a run is the same with the fast path on and off (Go
//! programs also get no LD_PRELOAD in their environment, which would change
//! their memory layout).

use faultline_channel as ch;

use crate::engine::Supervisor;
use crate::fast_path::go_stub::{self, Lead, Site};
use crate::host::gosym::GoFunctions;
use crate::host::{inject, tracee};
use crate::sim::diagnostics::DiagKind;
use crate::sim::memory::Memory;
use crate::sim::world::Vtid;

/// The runtime wrappers routed over the channel, with the instruction
/// before each one's `syscall`. A program has those of its Go release
/// (`Syscall6` moved to `internal/runtime/syscall` in Go 1.23).
pub const GO_CALLS: [(&str, Lead); 11] = [
    ("runtime.futex", Lead::LoadNr(libc::SYS_futex as u32)),
    ("runtime.usleep", Lead::LoadNr(libc::SYS_nanosleep as u32)),
    (
        "runtime.osyield",
        Lead::LoadNr(libc::SYS_sched_yield as u32),
    ),
    (
        "runtime.epollwait",
        Lead::LoadNr(libc::SYS_epoll_pwait as u32),
    ),
    ("runtime.epollctl", Lead::LoadNr(libc::SYS_epoll_ctl as u32)),
    // The netpoller's wake-ups (an eventfd written and drained).
    ("runtime.write1", Lead::LoadNr(libc::SYS_write as u32)),
    ("runtime.read", Lead::LoadNr(libc::SYS_read as u32)),
    // Each start sets the handlers of all 65 signals, reading each first.
    (
        "runtime.rt_sigaction",
        Lead::LoadNr(libc::SYS_rt_sigaction as u32),
    ),
    // Not posted: the stub gives back a mask it left held, then makes it.
    (
        "runtime.rtsigprocmask",
        Lead::LoadNr(libc::SYS_rt_sigprocmask as u32),
    ),
    ("runtime/internal/syscall.Syscall6", Lead::MoveRdiRbx),
    ("internal/runtime/syscall.Syscall6", Lead::MoveRdiRbx),
];

/// How many bytes of a wrapper are searched for its call (each is a few
/// argument loads, then the call).
const WRAPPER_BYTES: usize = 64;

/// Why a Go program's runtime was left unpatched.
#[derive(Debug, thiserror::Error)]
enum PatchError {
    /// No wrapper is where the function table says and shaped as expected
    /// (another Go release).
    #[error("none of its runtime's wrappers has a `syscall` of the expected shape")]
    NoWrapper,
    /// The program is loaded too far from the trampoline page (a PIE).
    #[error("its runtime is out of a 32-bit jump's reach of the trampoline page")]
    Reach,
    /// faultline's vDSO is not in the process (`--no-vdso`), so nothing can
    /// be run in it.
    #[error("faultline's vDSO is not installed, so no call can be injected")]
    NoVdso,
    /// The stub page or the channel could not be mapped.
    #[error(transparent)]
    Map(#[from] MapError),
    /// Its memory could not be read or written.
    #[error("its memory: {0}")]
    Memory(#[from] std::io::Error),
}

/// Why a stub page and the channel could not be mapped in a process.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MapError {
    /// An injected call could not be run, or failed.
    #[error(transparent)]
    Injected(#[from] inject::CallError),
    /// Its memory could not be written.
    #[error("its memory: {0}")]
    Memory(#[from] std::io::Error),
}

/// Maps a page of stub code `code` at `at` and the channel at
/// [`ch::GO_CHANNEL_AT`] in `pid`, with the calls run at `stub`,
/// faultline's vDSO's injection point: what patched code (a Go runtime's
/// wrappers, glibc's call sites) needs to post its calls.
pub(crate) fn map_stub_page(pid: i32, stub: u64, at: u64, code: &[u8]) -> Result<(), MapError> {
    map_code_page(pid, stub, at, code)?;
    let len = ch::SIZE.div_ceil(4096) as u64 * 4096;
    let rw = (libc::PROT_READ | libc::PROT_WRITE) as u64;
    let shared = (libc::MAP_SHARED | libc::MAP_FIXED_NOREPLACE) as u64;
    inject::mmap_at(
        pid,
        stub,
        "mmap of the channel",
        [ch::GO_CHANNEL_AT, len, rw, shared, ch::FD as u64, 0],
    )?;
    Ok(())
}

/// Maps a page of stub code `code` at `at` in `pid` (calls run at
/// `stub`): a second stub page, in a process whose channel is mapped.
pub(crate) fn map_code_page(pid: i32, stub: u64, at: u64, code: &[u8]) -> Result<(), MapError> {
    let prot = (libc::PROT_READ | libc::PROT_EXEC) as u64;
    let anon = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE) as u64;
    inject::mmap_at(
        pid,
        stub,
        "mmap of the stub page",
        [at, 4096, prot, anon, u64::MAX, 0],
    )?;
    tracee::Process(pid).write_mem(at, code)?;
    Ok(())
}

impl Supervisor {
    /// After the exec of a Go program `go` (stopped at its exec event),
    /// with the channel on: maps the stub and the channel, patches the
    /// runtime's wrappers, and gives the thread its slot. Any failure is
    /// reported once and leaves the program on ptrace stops.
    pub(crate) fn patch_go_runtime(&mut self, vtid: Vtid, pid: i32, mm: u32, go: &GoFunctions) {
        if !self.channel_inherited(pid) {
            return;
        }
        let Some(stub) = self.vdso_pages.get(&mm).map(|p| p.inject_stub()) else {
            self.report_unpatched(pid, "the Go runtime", &PatchError::NoVdso.to_string());
            return;
        };
        match patch(pid, stub, go) {
            Ok(odd) => {
                let p = self.sim.procs.get_mut(&pid).expect("exec'd process");
                p.channel_user = true;
                p.go_patched = true;
                // The vDSO's trapping reads go over the channel too (the
                // stub's common part is at the start of its page).
                if let Some(page) = self.vdso_pages.get_mut(&mm) {
                    let _ = page.set_channel_call(pid, ch::TRAMPOLINE);
                }
                self.give_go_slot(vtid);
                for name in odd {
                    self.report_unpatched(pid, name, "its `syscall` is not of the expected shape");
                }
            }
            Err(e) => self.report_unpatched(pid, "the Go runtime", &e.to_string()),
        }
    }

    /// Whether the channel is on and process `pid` holds its descriptor,
    /// which patched code needs mapped. A program exec'd by a patched Go
    /// program has none (that one closed it): it stays on ptrace stops.
    pub(crate) fn channel_inherited(&self, pid: i32) -> bool {
        self.channel.is_some()
            && std::fs::symlink_metadata(format!("/proc/{pid}/fd/{}", ch::FD)).is_ok()
    }

    /// Says once that `what` of `pid`'s program is left on ptrace stops.
    pub(crate) fn report_unpatched(&mut self, pid: i32, what: &str, why: &str) {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap_or_default();
        self.sim.report_once(
            DiagKind::InternalError,
            format!(
                "{what} of {} is not patched for the fast path ({why}); its calls stop in ptrace",
                exe.display()
            ),
        );
    }

    /// Gives thread `vtid` of a patched process (its Go runtime, or glibc's
    /// call sites) a channel slot, through its GS base, if it has none (a
    /// new thread, or a forked child's, before it first runs).
    pub(crate) fn give_go_slot(&mut self, vtid: Vtid) {
        let (Some(chan), Some(th)) = (&self.channel, self.sim.threads.get(&vtid)) else {
            return;
        };
        let patched = self
            .sim
            .procs
            .get(&th.pid)
            .is_some_and(|p| p.go_patched || p.libc_stubs.is_some());
        if !patched || th.gs_slot.is_some() {
            return;
        }
        let tid = th.tid;
        let Some(slot) = chan.claim(tid) else {
            self.sim.report_once(
                DiagKind::InternalError,
                format!("no free channel slot for thread {tid}"),
            );
            return;
        };
        let home = ch::go_slot_home(slot);
        let set = tracee::get_regs(tid).and_then(|mut regs| {
            regs.gs_base = home;
            tracee::set_regs(tid, &regs)
        });
        let th = self.sim.threads.get_mut(&vtid).expect("thread");
        match set {
            Ok(()) => {
                th.regs.gs_base = home;
                th.gs_slot = Some(slot);
            }
            Err(_) => chan.release(slot),
        }
    }
}

/// Maps the stub page and the channel in `pid` (with calls run at `stub`,
/// faultline's vDSO's injection point) and patches the wrappers of `go`.
/// Returns the wrappers left alone because their `syscall` is not shaped
/// as expected (wrappers its Go release does not have are skipped).
fn patch(pid: i32, stub: u64, go: &GoFunctions) -> Result<Vec<&'static str>, PatchError> {
    if go.pie {
        return Err(PatchError::Reach);
    }
    let mem = tracee::Process(pid);
    let mut sites: Vec<Site> = Vec::new();
    let mut odd = Vec::new();
    for (name, lead) in GO_CALLS {
        let Some(&(_, addr)) = go.found.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let mut code = [0u8; WRAPPER_BYTES];
        mem.read_mem(addr, &mut code)?;
        match go_stub::find_site(&code, addr, lead) {
            Some(site) => sites.push(site),
            None => odd.push(name),
        }
    }
    if sites.is_empty() {
        return Err(PatchError::NoWrapper);
    }
    let (page, jumps) = go_stub::rewrite(ch::TRAMPOLINE, &sites).ok_or(PatchError::Reach)?;
    map_stub_page(pid, stub, ch::TRAMPOLINE, &page)?;
    // The program never sees the descriptor, as on a run without the fast
    // path (etcd counts its open descriptors; that count is in its metrics).
    let _ = inject::syscall(pid, stub, libc::SYS_close, [ch::FD as u64, 0, 0, 0, 0, 0]);
    for (addr, jump) in jumps {
        mem.write_mem(addr, &jump)?;
    }
    Ok(odd)
}
