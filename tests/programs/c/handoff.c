/* What one hand-off between a program and a supervisor costs on this
 * machine, without faultline: the floor under each of faultline's events.
 * Every event is a round trip (the program stops, the supervisor answers,
 * the program goes on), made N times in one of four ways:
 *
 *   ptrace  a seccomp RET_TRACE stop: wait4, PTRACE_GETREGS,
 *           PTRACE_SETREGS (the answer), PTRACE_CONT — faultline's
 *           default path
 *   notify  a seccomp user notification: NOTIF_RECV, NOTIF_SEND — `--notify`
 *   futex   a futex wake and wait each way, in shared memory — the
 *           LD_PRELOAD channel's path
 *   spin    a store and a busy wait each way, in shared memory, on two
 *           CPUs — what an in-process shim that spins could do
 *   wake    futex as above, but the two sides on two CPUs: each wake
 *           reaches a CPU that went idle — what a side that sleeps
 *           instead of spinning pays on the fast path
 *   wake-polled  the same while this process holds the kernel's wake-up
 *           latency at 0 (/dev/cpu_dma_latency, root only): idle CPUs
 *           poll instead of halting (measured for README step 23;
 *           faultline does not hold it)
 *
 * The first three run both sides on one CPU (as faultline pins them); the
 * others need two. Prints "MODE: X us per round trip". Used by
 * scripts/bench. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Installs a filter that gives getppid `action`; returns what seccomp
 * returned (a listener for RET_USER_NOTIF). */
static int filter_getppid(unsigned action, unsigned flags) {
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {4, f};
    CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
    int r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    CHECK(r >= 0);
    return r;
}

static void calls(int n) {
    for (int i = 0; i < n; i++) syscall(SYS_getppid);
    _exit(0);
}

static double ptrace_trips(int n) {
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        CHECK(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0);
        raise(SIGSTOP);
        filter_getppid(SECCOMP_RET_TRACE, 0);
        calls(n);
    }
    int st;
    CHECK(waitpid(p, &st, 0) == p);
    CHECK(ptrace(PTRACE_SETOPTIONS, p, 0, PTRACE_O_TRACESECCOMP) == 0);
    double t0 = now_us();
    CHECK(ptrace(PTRACE_CONT, p, 0, 0) == 0);
    for (;;) {
        CHECK(waitpid(p, &st, __WALL) == p);
        if (WIFEXITED(st)) break;
        struct user_regs_struct r;
        CHECK(ptrace(PTRACE_GETREGS, p, 0, &r) == 0);
        r.orig_rax = -1;
        r.rax = 1;
        CHECK(ptrace(PTRACE_SETREGS, p, 0, &r) == 0);
        CHECK(ptrace(PTRACE_CONT, p, 0, 0) == 0);
    }
    return (now_us() - t0) / n;
}

static double notify_trips(int n) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0) {
        int fd = filter_getppid(SECCOMP_RET_USER_NOTIF, SECCOMP_FILTER_FLAG_NEW_LISTENER);
        CHECK(write(sv[1], &fd, sizeof fd) == sizeof fd);
        calls(n);
    }
    int child_fd;
    CHECK(read(sv[0], &child_fd, sizeof child_fd) == sizeof child_fd);
    int pidfd = syscall(SYS_pidfd_open, p, 0);
    CHECK(pidfd >= 0);
    int fd = syscall(SYS_pidfd_getfd, pidfd, child_fd, 0);
    CHECK(fd >= 0);
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        struct seccomp_notif req;
        memset(&req, 0, sizeof req);
        CHECK(ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0);
        struct seccomp_notif_resp resp = {.id = req.id, .val = 1};
        CHECK(ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0);
    }
    double per = (now_us() - t0) / n;
    CHECK(waitpid(p, NULL, 0) == p);
    return per;
}

static void futex_call(atomic_int *word, int op, int val) {
    syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/* Two processes pass the turn back and forth n times; with `spin` they
 * busy-wait for it, else they sleep on a futex; with `apart` they run on
 * CPUs 0 and 1, else both on the caller's. */
static double turn_trips(int n, int spin, int apart) {
    atomic_int *turn = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(turn != MAP_FAILED);
    double t0 = now_us();
    pid_t p = fork();
    CHECK(p >= 0);
    int me = p == 0;
    if (apart) pin(me);
    for (int i = 0; i < n; i++) {
        while (atomic_load(turn) != me) {
            if (spin) __builtin_ia32_pause();
            else futex_call(turn, FUTEX_WAIT, !me);
        }
        atomic_store(turn, !me);
        if (!spin) futex_call(turn, FUTEX_WAKE, 1);
    }
    if (p == 0) _exit(0);
    CHECK(waitpid(p, NULL, 0) == p);
    return (now_us() - t0) / n;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: handoff ptrace|notify|futex|spin|wake|wake-polled N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    CHECK(n > 0);
    const char *mode = argv[1];
    double per;
    int spin = strcmp(mode, "spin") == 0, wake = strcmp(mode, "wake") == 0;
    int polled = strcmp(mode, "wake-polled") == 0;
    if (spin || wake || polled) {
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
            printf("%s: needs two CPUs\n", mode);
            return 0;
        }
        /* Held until exit: the request lasts while the descriptor is open. */
        int latency = polled ? open("/dev/cpu_dma_latency", O_WRONLY) : -1;
        int zero = 0;
        if (polled && (latency < 0 || write(latency, &zero, sizeof zero) != sizeof zero)) {
            printf("%s: cannot hold /dev/cpu_dma_latency (not root?)\n", mode);
            return 0;
        }
        per = turn_trips(n, spin, 1);
    } else {
        pin(0);
        if (strcmp(mode, "ptrace") == 0) per = ptrace_trips(n);
        else if (strcmp(mode, "notify") == 0) per = notify_trips(n);
        else if (strcmp(mode, "futex") == 0) per = turn_trips(n, 0, 0);
        else {
            fprintf(stderr, "handoff: unknown mode %s\n", mode);
            return 2;
        }
    }
    printf("%s: %.2f us per round trip\n", mode, per);
    return 0;
}
