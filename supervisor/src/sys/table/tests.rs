//! The table against the kernel's own list and against what faultline
//! trapped before the table covered every call.

use super::*;

/// The calls trapped before the table listed every call: trapping one more
/// or one fewer changes traces, so it must be on purpose.
const TRAPPED_BEFORE: &str = "accept accept4 alarm bind clock_gettime clock_nanosleep clone \
clone3 close close_range connect creat dup dup2 dup3 epoll_ctl epoll_pwait epoll_pwait2 \
epoll_wait exit exit_group fallocate fcntl fdatasync fork fsync ftruncate futex futex_waitv \
getcpu getpeername getrandom getsockname getsockopt gettimeofday io_uring_enter \
io_uring_register io_uring_setup ioctl kill link linkat listen mkdir mkdirat nanosleep open \
openat pause perf_event_open poll ppoll process_vm_writev pselect6 ptrace pwrite64 pwritev \
read readv recvfrom recvmmsg recvmsg rename renameat renameat2 rmdir rseq rt_sigaction \
rt_sigqueueinfo rt_sigsuspend rt_sigtimedwait rt_tgsigqueueinfo sched_getaffinity sched_yield \
select sendmmsg sendmsg sendto set_tid_address setitimer setsockopt shutdown socket sync \
syncfs tgkill time timer_create timerfd_create tkill truncate uname unlink unlinkat \
userfaultfd vfork wait4 waitid write writev";

/// The calls newly trapped because they escaped the disk, network or futex
/// models.
const NEWLY_TRAPPED: &str = "sendfile symlink mknod symlinkat mknodat splice tee vmsplice \
open_by_handle_at copy_file_range preadv2 pwritev2 openat2 futex_wake futex_wait futex_requeue";

/// The calls newly trapped because they returned host state: CPU time,
/// machine state, file identity and free space are simulated, POSIX timers
/// run on virtual time, and the rest are reported.
const HOST_STATE_TRAPPED: &str = "stat fstat lstat newfstatat statx statfs fstatfs getrusage \
times sysinfo getitimer timer_settime timer_gettime timer_getoverrun timer_delete adjtimex \
clock_adjtime mincore syslog";

/// The calls newly trapped because their answers named host inodes and
/// pids: directory listings and `/proc` links.
const IDENTITY_TRAPPED: &str = "getdents getdents64 readlink readlinkat";

/// The calls newly trapped because resource limits and clock resolutions
/// are simulated, and the rest of the calls that answered with host state
/// are reported (none passes silently).
const RLIMIT_TRAPPED: &str = "getrlimit setrlimit prlimit64 clock_getres getpriority \
sched_getparam sched_getscheduler sched_rr_get_interval ioprio_get sched_getattr get_mempolicy \
kcmp ustat sysfs quotactl quotactl_fd lookup_dcookie cachestat statmount listmount \
lsm_get_self_attr lsm_list_modules io_getevents io_pgetevents semtimedop mq_timedsend \
mq_timedreceive";

/// The calls newly trapped because timerfds run on virtual time.
const TIMERFD_TRAPPED: &str = "timerfd_settime timerfd_gettime";

/// The call newly trapped because the timer slack is simulated.
const SLACK_TRAPPED: &str = "prctl";

/// Trapped since pipe2 with O_NONBLOCK makes a simulated pipe.
const PIPE_TRAPPED: &str = "pipe2";

#[test]
fn every_call_of_the_kernel_header_has_its_row() {
    let header = std::fs::read_to_string("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
        .expect("the kernel's syscall header (Debian's linux-libc-dev, with libc6-dev)");
    let mut seen = 0;
    for line in header.lines() {
        let Some(rest) = line.strip_prefix("#define __NR_") else {
            continue;
        };
        let (name, nr) = rest.split_once(' ').expect("#define __NR_name number");
        let nr: i64 = nr.trim().parse().expect("a number");
        let row = row(nr).unwrap_or_else(|| panic!("no row for {name} ({nr})"));
        assert_eq!(row.name(), name, "row {nr}");
        seen += 1;
    }
    assert!(seen >= 360, "the header lost its calls: {seen}");
}

#[test]
fn numbers_and_names_are_unique_and_cover_every_call() {
    assert_eq!(ROWS.len(), 373);
    let numbers: std::collections::BTreeSet<i64> = ROWS.iter().map(|r| r.nr).collect();
    let names: std::collections::BTreeSet<&str> = ROWS.iter().map(Row::name).collect();
    assert_eq!(numbers.len(), COUNT);
    assert_eq!(names.len(), COUNT);
    let expected: std::collections::BTreeSet<i64> = (0..=334).chain(424..=LAST).collect();
    assert_eq!(numbers, expected);
    assert!(ROWS
        .iter()
        .all(|r| row(r.nr).map(|found| found.nr) == Some(r.nr)));
    for unknown in [-1, 335, 423, LAST + 1] {
        assert!(row(unknown).is_none(), "{unknown}");
    }
    assert_eq!(row(libc::SYS_pwrite64).map(Row::name), Some("pwrite64"));
    assert_eq!(name(libc::SYS_futex), "futex");
    assert_eq!(name(400), "unknown");
}

#[test]
fn the_trapped_set_is_the_old_one_plus_the_calls_that_escaped() {
    let mut expected: Vec<&str> = TRAPPED_BEFORE
        .split_whitespace()
        .chain(NEWLY_TRAPPED.split_whitespace())
        .chain(HOST_STATE_TRAPPED.split_whitespace())
        .chain(TIMERFD_TRAPPED.split_whitespace())
        .chain(IDENTITY_TRAPPED.split_whitespace())
        .chain(RLIMIT_TRAPPED.split_whitespace())
        .chain(SLACK_TRAPPED.split_whitespace())
        .chain(PIPE_TRAPPED.split_whitespace())
        .collect();
    expected.sort_unstable();
    let mut trapped: Vec<&str> = trapped_numbers().into_iter().map(name).collect();
    trapped.sort_unstable();
    assert_eq!(trapped, expected);
    assert!(trapped_numbers().windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn calls_past_the_table_are_refused() {
    assert!(matches!(
        support(LAST + 1),
        Support::Refused {
            errno: libc::ENOSYS,
            ..
        }
    ));
    assert_eq!(support(libc::SYS_read), Support::Modelled);
    assert_eq!(support(libc::SYS_getpid), Support::Passed);
    assert_eq!(support(libc::SYS_fstat), Support::Modelled);
    assert_eq!(support(libc::SYS_getpriority), Support::Reported);
    assert_eq!(support(libc::SYS_mincore), Support::Reported);
}

#[test]
fn the_markdown_names_every_call_once_and_every_refusal_with_its_errno() {
    let md = markdown();
    let (levels, refusals) = md.split_once("\n\n").expect("two tables");
    for r in &ROWS {
        let quoted = format!("`{}`", r.name());
        assert_eq!(
            levels.matches(&format!("{quoted},")).count()
                + levels.matches(&format!("{quoted} |")).count(),
            1,
            "{quoted}"
        );
        if let Support::Refused { errno, .. } | Support::Guarded { errno, .. } = r.support {
            let line = refusals
                .lines()
                .find(|l| l.starts_with(&format!("| {quoted} |")))
                .unwrap_or_else(|| panic!("{quoted} has no refusal line"));
            assert!(line.contains(crate::sys::errno_name(errno)), "{line}");
        }
    }
}
