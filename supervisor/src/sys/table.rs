//! The table of system calls faultline traps, with their names for traces and
//! reports. One list drives both the seccomp filter and the dispatcher, so a
//! call cannot be trapped without a handler (or handled without being trapped).

use libc::*;

/// Every syscall the seccomp filter sends to the supervisor.
pub const TRAPPED: &[(i64, &str)] = &[
    // time
    (SYS_clock_gettime, "clock_gettime"),
    (SYS_gettimeofday, "gettimeofday"),
    (SYS_time, "time"),
    (SYS_nanosleep, "nanosleep"),
    (SYS_clock_nanosleep, "clock_nanosleep"),
    (SYS_alarm, "alarm"),
    (SYS_setitimer, "setitimer"),
    (SYS_timer_create, "timer_create"),
    (SYS_timerfd_create, "timerfd_create"),
    // scheduling and threads
    (SYS_sched_yield, "sched_yield"),
    (SYS_futex, "futex"),
    (SYS_futex_waitv, "futex_waitv"),
    (SYS_sched_getaffinity, "sched_getaffinity"),
    (SYS_getcpu, "getcpu"),
    (SYS_rseq, "rseq"),
    (SYS_set_tid_address, "set_tid_address"),
    (SYS_clone, "clone"),
    (SYS_clone3, "clone3"),
    (SYS_fork, "fork"),
    (SYS_vfork, "vfork"),
    (SYS_exit, "exit"),
    (SYS_exit_group, "exit_group"),
    (SYS_wait4, "wait4"),
    (SYS_waitid, "waitid"),
    // signals
    (SYS_kill, "kill"),
    (SYS_tkill, "tkill"),
    (SYS_tgkill, "tgkill"),
    (SYS_rt_sigqueueinfo, "rt_sigqueueinfo"),
    (SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo"),
    (SYS_rt_sigaction, "rt_sigaction"),
    (SYS_pause, "pause"),
    (SYS_rt_sigsuspend, "rt_sigsuspend"),
    (SYS_rt_sigtimedwait, "rt_sigtimedwait"),
    // randomness and identity
    (SYS_getrandom, "getrandom"),
    (SYS_uname, "uname"),
    // files and descriptors
    (SYS_open, "open"),
    (SYS_openat, "openat"),
    (SYS_close, "close"),
    (SYS_close_range, "close_range"),
    (SYS_dup2, "dup2"),
    (SYS_dup3, "dup3"),
    (SYS_read, "read"),
    (SYS_readv, "readv"),
    (SYS_write, "write"),
    (SYS_writev, "writev"),
    (SYS_recvfrom, "recvfrom"),
    (SYS_recvmsg, "recvmsg"),
    (SYS_accept, "accept"),
    (SYS_accept4, "accept4"),
    (SYS_socket, "socket"),
    (SYS_bind, "bind"),
    (SYS_listen, "listen"),
    (SYS_connect, "connect"),
    (SYS_getsockname, "getsockname"),
    (SYS_getpeername, "getpeername"),
    (SYS_setsockopt, "setsockopt"),
    (SYS_getsockopt, "getsockopt"),
    (SYS_shutdown, "shutdown"),
    (SYS_sendto, "sendto"),
    (SYS_sendmsg, "sendmsg"),
    (SYS_sendmmsg, "sendmmsg"),
    (SYS_recvmmsg, "recvmmsg"),
    (SYS_fcntl, "fcntl"),
    (SYS_ioctl, "ioctl"),
    (SYS_dup, "dup"),
    (SYS_epoll_ctl, "epoll_ctl"),
    // the simulated disks
    (SYS_creat, "creat"),
    (SYS_pwrite64, "pwrite64"),
    (SYS_pwritev, "pwritev"),
    (SYS_fsync, "fsync"),
    (SYS_fdatasync, "fdatasync"),
    (SYS_ftruncate, "ftruncate"),
    (SYS_truncate, "truncate"),
    (SYS_fallocate, "fallocate"),
    (SYS_rename, "rename"),
    (SYS_renameat, "renameat"),
    (SYS_renameat2, "renameat2"),
    (SYS_unlink, "unlink"),
    (SYS_unlinkat, "unlinkat"),
    (SYS_rmdir, "rmdir"),
    (SYS_mkdir, "mkdir"),
    (SYS_mkdirat, "mkdirat"),
    (SYS_link, "link"),
    (SYS_linkat, "linkat"),
    (SYS_sync, "sync"),
    (SYS_syncfs, "syncfs"),
    // readiness
    (SYS_poll, "poll"),
    (SYS_ppoll, "ppoll"),
    (SYS_select, "select"),
    (SYS_pselect6, "pselect6"),
    (SYS_epoll_wait, "epoll_wait"),
    (SYS_epoll_pwait, "epoll_pwait"),
    (SYS_epoll_pwait2, "epoll_pwait2"),
    // calls that would escape the sandbox
    (SYS_io_uring_setup, "io_uring_setup"),
    (SYS_io_uring_enter, "io_uring_enter"),
    (SYS_io_uring_register, "io_uring_register"),
    (SYS_ptrace, "ptrace"),
    (SYS_perf_event_open, "perf_event_open"),
    (SYS_userfaultfd, "userfaultfd"),
    (SYS_process_vm_writev, "process_vm_writev"),
];

/// Numbers only, for the filter.
pub fn trapped_numbers() -> Vec<i64> {
    TRAPPED.iter().map(|&(nr, _)| nr).collect()
}

/// The name of a trapped call, for traces and reports.
pub fn name(nr: i64) -> &'static str {
    TRAPPED
        .iter()
        .find(|&&(n, _)| n == nr)
        .map(|&(_, name)| name)
        .unwrap_or("unknown")
}
