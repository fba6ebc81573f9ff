//! The syscall handlers, on the simulation (`Sim`): each trapped call is
//! emulated, passed to the kernel, or parked. Handlers live in one module
//! per family of calls; what only the host can tell them (descriptors the
//! kernel owns, pending signals) comes through `HostProbe`, and the
//! engine's `dispatch` builds the `Call` and applies the answer.

pub mod table;
#[cfg(test)]
mod testing;

mod clock_res;
mod cputime;
mod dirents;
mod disk;
mod fd;
mod futex;
mod guard;
pub(crate) mod host_state;
mod iovec;
mod itimer;
mod machine;
mod output;
mod pipe;
mod poll;
mod proc_links;
mod process;
mod rlimit;
mod rtnetlink;
mod signal;
mod slack;
mod socket;
mod stat;
mod statfs;
mod time;
mod timerfd;
pub(crate) mod timers;

pub(crate) use poll::append_epoll_events;

use crate::sim::fdkind::FdKind;
use crate::sim::host_probe::HostProbe;
use crate::sim::memory::{Memory, Regs};
use crate::sim::state::Sim;
use crate::sim::vclock::Timespec;
use crate::sim::world::{Resume, Vtid, Wait};

/// A trapped call as the handlers see it. `M` is the caller's address
/// space: the process itself, or a fake one in a handler's unit test.
pub struct Call<M: Memory = crate::host::tracee::Process> {
    /// Virtual thread id of the caller.
    pub vtid: Vtid,
    /// Host thread id.
    pub tid: i32,
    /// Host process id.
    pub pid: i32,
    /// Syscall number.
    pub nr: i64,
    /// Arguments: rdi, rsi, rdx, r10, r8, r9.
    pub a: [u64; 6],
    /// The registers at the stop (for calls whose arguments we change).
    pub regs: Regs,
    /// The caller's memory.
    mem: M,
}

impl<M: Memory> Call<M> {
    /// The call thread `vtid` (host thread `tid` of process `pid`) is
    /// stopped at: its number and arguments are in `regs`.
    pub fn at_stop(vtid: Vtid, tid: i32, pid: i32, regs: Regs, mem: M) -> Call<M> {
        Call {
            vtid,
            tid,
            pid,
            nr: regs.orig_rax as i64,
            a: crate::sim::memory::syscall_args(&regs),
            regs,
            mem,
        }
    }

    /// The caller's address space: the only way handlers touch its memory.
    pub fn mem(&self) -> &M {
        &self.mem
    }
}

/// What a handler decided.
pub enum Action {
    /// Resume (when scheduled) this way.
    Now(Resume),
    /// Park the thread.
    Park(Wait),
}

/// Shorthand for an emulated return value.
fn ret(v: i64) -> Action {
    Action::Now(Resume::Return(v))
}

/// Answers 0 with `ns` written as a `struct timespec` at `addr` (none
/// when `addr` is null), or EFAULT.
fn ret_timespec<M: Memory>(c: &Call<M>, addr: u64, ns: i128) -> Action {
    if addr != 0 && c.mem().write_val(addr, &Timespec::from_ns(ns)).is_err() {
        return err(libc::EFAULT);
    }
    ret(0)
}

/// Shorthand for an emulated error.
fn err(errno: i32) -> Action {
    ret(-(errno as i64))
}

/// Shorthand for letting the kernel run the call.
fn pass() -> Action {
    Action::Now(Resume::Pass)
}

impl Sim {
    /// Answers call `c`: emulated, passed to the kernel, or parked, by its
    /// family, with `host` for what only the host knows. What the engine
    /// must act on is left in `signals_let_go` and `failed_disk_calls`.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    pub(crate) fn handle(
        &mut self,
        c: &Call<impl Memory>,
        host: &impl HostProbe,
        targs: &mut Vec<i64>,
    ) -> Action {
        use libc::*;
        // The object a descriptor call acts on, looked up once: its family
        // answers. Other calls go by number.
        match self.fd_object(c) {
            Some(FdKind::Socket(vs)) => return self.sys_vsock(c, vs, targs),
            Some(FdKind::Pipe(vs)) => return self.sys_pipe_end(c, vs, targs),
            Some(FdKind::Netlink) => return self.sys_netlink(c),
            Some(FdKind::Timer(id)) => return self.sys_on_timerfd(c, host, id, targs),
            _ => {}
        }
        if let Some(action) = self.sys_disk(c, host, targs) {
            return action;
        }
        match c.nr {
            SYS_clock_gettime if crate::sim::vclock::is_cpu_clock(c.a[0] as i32) => {
                self.sys_cpu_clock(c, targs)
            }
            SYS_clock_gettime | SYS_gettimeofday | SYS_time => self.sys_clock_read(c, targs),
            SYS_getrusage => self.sys_getrusage(c, targs),
            SYS_times => self.sys_times(c, targs),
            SYS_sysinfo => self.sys_sysinfo(c, targs),
            SYS_statfs | SYS_fstatfs => self.sys_statfs(c, targs),
            SYS_getitimer => self.sys_getitimer(c, targs),
            SYS_clock_getres => self.sys_clock_getres(c, targs),
            SYS_stat | SYS_fstat | SYS_lstat | SYS_newfstatat | SYS_statx => {
                self.sys_stat(c, targs)
            }
            SYS_getdents | SYS_getdents64 => self.sys_getdents(c, targs),
            SYS_getrlimit | SYS_setrlimit | SYS_prlimit64 => self.sys_rlimit(c, targs),
            SYS_readlink | SYS_readlinkat => self.sys_readlink(c, targs),
            SYS_nanosleep | SYS_clock_nanosleep => self.sys_sleep(c, targs),
            SYS_sched_yield => {
                self.sched.yielded();
                ret(0)
            }
            SYS_futex => self.sys_futex(c, targs),
            SYS_sched_getaffinity => self.sys_getaffinity(c),
            SYS_getcpu => self.sys_getcpu(c),
            SYS_prctl => self.sys_prctl(c, targs),
            SYS_getrandom => self.sys_getrandom(c, targs),
            SYS_uname => Action::Now(Resume::PassThenExit(
                None,
                crate::sim::world::ExitHook::PatchUname(c.a[0]),
            )),
            SYS_set_tid_address => {
                self.threads.get_mut(&c.vtid).expect("thread").clear_tid = c.a[0];
                pass()
            }
            SYS_clone | SYS_clone3 | SYS_fork | SYS_vfork => self.sys_clone(c, targs),
            SYS_exit | SYS_exit_group => self.sys_exit(c, targs),
            SYS_wait4 | SYS_waitid => self.sys_wait(c),
            SYS_kill | SYS_tkill | SYS_tgkill | SYS_rt_sigqueueinfo | SYS_rt_tgsigqueueinfo => {
                self.sys_kill(c, targs)
            }
            SYS_rt_sigaction => self.sys_sigaction(c),
            SYS_pause | SYS_rt_sigsuspend | SYS_rt_sigtimedwait => self.sys_sigwait(c, host),
            SYS_open | SYS_openat | SYS_openat2 => self.sys_open(c),
            SYS_close | SYS_close_range | SYS_dup2 | SYS_dup3 => self.sys_close(c, host, targs),
            SYS_read | SYS_readv | SYS_recvfrom | SYS_recvmsg | SYS_accept | SYS_accept4 => {
                self.sys_read(c, host, targs)
            }
            SYS_write | SYS_writev | SYS_sendto | SYS_sendmsg => self.sys_write(c, targs),
            SYS_socket => self.sys_socket(c, targs),
            SYS_pipe2 => self.sys_pipe2(c, targs),
            SYS_bind | SYS_listen | SYS_connect | SYS_getsockname | SYS_getpeername
            | SYS_setsockopt | SYS_getsockopt | SYS_shutdown | SYS_sendmmsg | SYS_recvmmsg
            | SYS_fcntl | SYS_ioctl | SYS_dup => pass(),
            SYS_fsync | SYS_fdatasync | SYS_syncfs => self.sys_host_sync(c, host),
            SYS_sync => ret(0),
            SYS_creat | SYS_pwrite64 | SYS_pwritev | SYS_ftruncate | SYS_truncate
            | SYS_fallocate | SYS_rename | SYS_renameat | SYS_renameat2 | SYS_unlink
            | SYS_unlinkat | SYS_rmdir | SYS_mkdir | SYS_mkdirat | SYS_link | SYS_linkat => pass(),
            SYS_poll | SYS_ppoll | SYS_select | SYS_pselect6 => self.sys_poll(c, host, targs),
            SYS_epoll_wait | SYS_epoll_pwait | SYS_epoll_pwait2 => {
                self.sys_epoll_wait(c, host, targs)
            }
            SYS_epoll_ctl => self.sys_epoll_ctl(c, host, targs),
            SYS_rseq | SYS_futex_waitv => err(ENOSYS),
            SYS_alarm | SYS_setitimer => self.sys_real_timer(c, targs),
            SYS_timer_create | SYS_timer_settime | SYS_timer_gettime | SYS_timer_getoverrun
            | SYS_timer_delete => self.sys_posix_timer(c, targs),
            SYS_timerfd_create | SYS_timerfd_settime | SYS_timerfd_gettime => {
                self.sys_timerfd(c, host, targs)
            }
            SYS_sendfile | SYS_copy_file_range | SYS_splice | SYS_tee | SYS_vmsplice
            | SYS_preadv2 | SYS_pwritev2 => self.sys_guarded(c),
            // Off the simulated disks (sys_disk answered those on one).
            SYS_symlink | SYS_symlinkat | SYS_mknod | SYS_mknodat => pass(),
            _ if table::support(c.nr) == table::Support::Reported => self.sys_host_state(c, targs),
            _ => self.refuse_by_table(c),
        }
    }

    /// What faultline knows of the descriptor a socket-style call (fd in
    /// the first argument) is made on: its family answers a virtual
    /// socket's, a simulated pipe end's, a netlink socket's or a timerfd's. close/dup2/dup3 are handled with the
    /// descriptor cache instead.
    fn fd_object(&self, c: &Call<impl Memory>) -> Option<FdKind> {
        if !self.fd_call_on_vsock_kind(c) {
            return None;
        }
        self.procs.get(&c.pid)?.fds.get(&(c.a[0] as i32)).cloned()
    }

    /// Whether the call takes a socket descriptor in its first argument.
    #[allow(non_upper_case_globals)] // libc names its syscall numbers SYS_name
    fn fd_call_on_vsock_kind(&self, c: &Call<impl Memory>) -> bool {
        use libc::*;
        matches!(
            c.nr,
            SYS_read
                | SYS_readv
                | SYS_write
                | SYS_writev
                | SYS_recvfrom
                | SYS_recvmsg
                | SYS_sendto
                | SYS_sendmsg
                | SYS_sendmmsg
                | SYS_recvmmsg
                | SYS_accept
                | SYS_accept4
                | SYS_connect
                | SYS_bind
                | SYS_listen
                | SYS_shutdown
                | SYS_getsockname
                | SYS_getpeername
                | SYS_getsockopt
                | SYS_setsockopt
                | SYS_fcntl
                | SYS_ioctl
                | SYS_dup
        )
    }

    /// Fails a call the sandbox does not model, with one report line per kind.
    pub(crate) fn unsupported(&mut self, c: &Call<impl Memory>, why: &str, errno: i32) -> Action {
        let name = self.proc_of(c.vtid).name.clone();
        self.report_once(
            crate::sim::diagnostics::DiagKind::RefusedCall,
            format!(
                "unsupported syscall {} in {:?}: {why}; returning {}",
                table::name(c.nr),
                name,
                errno_name(errno)
            ),
        );
        err(errno)
    }
}

/// The symbolic name of an errno value, for reports.
pub fn errno_name(e: i32) -> &'static str {
    match e {
        libc::ENOSYS => "ENOSYS",
        libc::EPERM => "EPERM",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::EPROTONOSUPPORT => "EPROTONOSUPPORT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::EINVAL => "EINVAL",
        _ => "an error",
    }
}

#[cfg(test)]
mod tests {
    use super::errno_name;

    #[test]
    fn every_errno_the_sandbox_refuses_with_has_its_name() {
        for (errno, name) in [
            (libc::ENOSYS, "ENOSYS"),
            (libc::EPERM, "EPERM"),
            (libc::EAFNOSUPPORT, "EAFNOSUPPORT"),
            (libc::EPROTONOSUPPORT, "EPROTONOSUPPORT"),
            (libc::EOPNOTSUPP, "EOPNOTSUPP"),
            (libc::ENETUNREACH, "ENETUNREACH"),
            (libc::EINVAL, "EINVAL"),
        ] {
            assert_eq!(errno_name(errno), name);
        }
    }
}
