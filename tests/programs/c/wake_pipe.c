/* An event loop's wake-up pipe (pipe2 with O_NONBLOCK), which faultline
 * simulates, used every way a program may: EAGAIN when empty, epoll and
 * poll readiness, a wake from another thread, FIONREAD and the pipe's
 * capacity, a full pipe, a blocking read once O_NONBLOCK is cleared, end
 * of file when the last writer closes (in this process, in a forked child
 * that exits, and in a child whose exec closes its O_CLOEXEC copy), dup,
 * and EPIPE with SIGPIPE when no reader is left. Prints one line per
 * step, with the virtual milliseconds a wait took. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static int p[2];
static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig) {
    (void)sig;
    sigpipes++;
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Writes one byte to the pipe after `arg` milliseconds. */
static void *waker(void *arg) {
    sleep_ns((long long)(long)arg * 1000000LL);
    CHECK(write(p[1], "w", 1) == 1);
    return NULL;
}

static void wake_after(pthread_t *t, long ms) {
    CHECK_RC(pthread_create(t, NULL, waker, (void *)ms));
}

static void set_blocking(int fd) {
    int fl = fcntl(fd, F_GETFL);
    CHECK(fl >= 0 && (fl & O_NONBLOCK));
    CHECK(fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0);
}

int main(void) {
    char buf[64];
    CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);

    /* Empty: EAGAIN, and an epoll wait that times out. */
    CHECK(read(p[0], buf, sizeof buf) == -1 && errno == EAGAIN);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 42};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
    long long t0 = now_ms();
    CHECK(epoll_wait(ep, &ev, 1, 30) == 0);
    printf("empty: EAGAIN, epoll timed out after %lld ms\n", now_ms() - t0);

    /* A wake from another thread ends the epoll wait. */
    pthread_t t;
    t0 = now_ms();
    wake_after(&t, 20);
    CHECK(epoll_wait(ep, &ev, 1, -1) == 1);
    printf("woken after %lld ms: events %#x data %llu\n", now_ms() - t0, ev.events,
           (unsigned long long)ev.data.u64);
    CHECK_RC(pthread_join(t, NULL));
    int pending = -1;
    CHECK(ioctl(p[0], FIONREAD, &pending) == 0);
    CHECK(read(p[0], buf, sizeof buf) == 1);
    printf("FIONREAD %d, drained '%c', still level-ready: %d\n", pending, buf[0],
           epoll_wait(ep, &ev, 1, 0));

    /* Capacity and a full pipe. */
    int capacity = fcntl(p[1], F_GETPIPE_SZ);
    printf("capacity %d, set to 5000: %d\n", capacity, fcntl(p[1], F_SETPIPE_SZ, 5000));
    static char big[8192];
    CHECK(write(p[1], big, sizeof big) == (ssize_t)sizeof big);
    errno = 0;
    ssize_t full = write(p[1], "x", 1);
    const char *why = errno == EAGAIN ? "EAGAIN" : "other";
    struct pollfd pf = {.fd = p[1], .events = POLLOUT};
    printf("full: write %zd %s, poll POLLOUT %d\n", full, why, poll(&pf, 1, 0));
    ssize_t got = 0;
    while (got < (ssize_t)sizeof big) {
        ssize_t n = read(p[0], big, sizeof big);
        CHECK(n > 0);
        got += n;
    }

    /* Blocking once O_NONBLOCK is cleared: the read waits for the wake. */
    set_blocking(p[0]);
    t0 = now_ms();
    wake_after(&t, 15);
    CHECK(read(p[0], buf, sizeof buf) == 1);
    printf("blocking read waited %lld ms\n", now_ms() - t0);
    CHECK_RC(pthread_join(t, NULL));

    /* A dup writes into the same pipe; a forked child's copy keeps it
     * open until the child exits. */
    int w2 = dup(p[1]);
    CHECK(w2 >= 0 && close(p[1]) == 0);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        sleep_ns(10 * 1000000LL);
        CHECK(write(w2, "child\n", 6) == 6);
        _exit(0);
    }
    CHECK(close(w2) == 0);
    t0 = now_ms();
    got = 0;
    ssize_t n;
    while ((n = read(p[0], buf + got, sizeof buf - got)) > 0) got += n;
    CHECK(n == 0);
    printf("from the child: %.*s", (int)got, buf);
    printf("end of file after %lld ms\n", now_ms() - t0);
    CHECK(waitpid(child, NULL, 0) == child);
    pf = (struct pollfd){.fd = p[0], .events = POLLIN};
    CHECK(poll(&pf, 1, 0) == 1);
    printf("poll revents %#x\n", pf.revents);
    CHECK(close(p[0]) == 0);

    /* An exec closes the child's O_CLOEXEC copy: end of file. */
    CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);
    child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        sleep_ns(5 * 1000000LL);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    CHECK(close(p[1]) == 0);
    set_blocking(p[0]);
    CHECK(read(p[0], buf, sizeof buf) == 0);
    printf("exec closed the child's copy: end of file\n");
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* No reader: EPIPE and SIGPIPE. */
    CHECK(pipe2(p, O_NONBLOCK) == 0);
    signal(SIGPIPE, on_sigpipe);
    CHECK(close(p[0]) == 0);
    errno = 0;
    n = write(p[1], "x", 1);
    why = errno == EPIPE ? "EPIPE" : "other";
    printf("no reader: write %zd %s, SIGPIPEs %d\n", n, why, (int)sigpipes);
    return 0;
}
