/* timerfd on virtual time: a periodic CLOCK_MONOTONIC timer waited for
 * with epoll (three ticks 100 ms apart, then three expirations counted by
 * one read after a sleep), timerfd_gettime while armed; a one-shot
 * TFD_NONBLOCK timer (read fails EAGAIN before it expires, poll waits for
 * it); an absolute CLOCK_REALTIME timer waited for with select; a blocking
 * read of a CLOCK_BOOTTIME timer; write fails EINVAL; TFD_CLOEXEC sets
 * FD_CLOEXEC. Prints each wake-up's virtual time since the start. */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common.h"

static double secs(clockid_t clock) {
    struct timespec ts;
    CHECK(clock_gettime(clock, &ts) == 0);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t expirations(int fd) {
    uint64_t n = 0;
    CHECK(read(fd, &n, sizeof n) == sizeof n);
    return n;
}

int main(void) {
    double start = secs(CLOCK_MONOTONIC);

    int tick = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    CHECK(tick >= 0);
    printf("cloexec %d\n", (fcntl(tick, F_GETFD) & FD_CLOEXEC) != 0);
    struct itimerspec every = {.it_value = {0, 100000000}, .it_interval = {0, 100000000}};
    CHECK(timerfd_settime(tick, 0, &every, NULL) == 0);
    struct itimerspec cur;
    CHECK(timerfd_gettime(tick, &cur) == 0);
    printf("armed interval_ms %ld\n", cur.it_interval.tv_nsec / 1000000);
    int ep = epoll_create1(0);
    CHECK(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 7};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, tick, &ev) == 0);
    for (int i = 1; i <= 3; i++) {
        struct epoll_event got;
        CHECK(epoll_wait(ep, &got, 1, -1) == 1 && got.data.u32 == 7);
        uint64_t n = expirations(tick);
        printf("tick %d at %.3f count %llu\n", i, secs(CLOCK_MONOTONIC) - start,
               (unsigned long long)n);
    }
    struct timespec nap = {0, 350000000};
    CHECK(nanosleep(&nap, NULL) == 0);
    printf("after sleep count %llu\n", (unsigned long long)expirations(tick));
    struct itimerspec off = {0};
    CHECK(timerfd_settime(tick, 0, &off, &cur) == 0);
    printf("old interval_ms %ld\n", cur.it_interval.tv_nsec / 1000000);
    CHECK(timerfd_gettime(tick, &cur) == 0);
    printf("disarmed %d\n", cur.it_value.tv_sec == 0 && cur.it_value.tv_nsec == 0);

    int once = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    CHECK(once >= 0);
    struct itimerspec in50 = {.it_value = {0, 50000000}};
    CHECK(timerfd_settime(once, 0, &in50, NULL) == 0);
    double armed = secs(CLOCK_MONOTONIC);
    uint64_t n;
    printf("eagain %d\n", read(once, &n, sizeof n) == -1 && errno == EAGAIN);
    struct pollfd pfd = {.fd = once, .events = POLLIN};
    CHECK(poll(&pfd, 1, -1) == 1 && (pfd.revents & POLLIN));
    printf("oneshot after %.3f count %llu\n", secs(CLOCK_MONOTONIC) - armed,
           (unsigned long long)expirations(once));
    printf("spent eagain %d\n", read(once, &n, sizeof n) == -1 && errno == EAGAIN);

    int wall = timerfd_create(CLOCK_REALTIME, 0);
    CHECK(wall >= 0);
    struct timespec now;
    CHECK(clock_gettime(CLOCK_REALTIME, &now) == 0);
    struct itimerspec at = {.it_value = {now.tv_sec + 1, now.tv_nsec}};
    armed = secs(CLOCK_MONOTONIC);
    CHECK(timerfd_settime(wall, TFD_TIMER_ABSTIME, &at, NULL) == 0);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(wall, &rd);
    CHECK(select(wall + 1, &rd, NULL, NULL, NULL) == 1 && FD_ISSET(wall, &rd));
    printf("abstime after %.3f count %llu\n", secs(CLOCK_MONOTONIC) - armed,
           (unsigned long long)expirations(wall));

    int boot = timerfd_create(CLOCK_BOOTTIME, 0);
    CHECK(boot >= 0);
    struct itimerspec in200 = {.it_value = {0, 200000000}};
    armed = secs(CLOCK_MONOTONIC);
    CHECK(timerfd_settime(boot, 0, &in200, NULL) == 0);
    n = expirations(boot);
    printf("blocking read after %.3f count %llu\n", secs(CLOCK_MONOTONIC) - armed,
           (unsigned long long)n);
    printf("write einval %d\n", write(boot, &n, sizeof n) == -1 && errno == EINVAL);
    printf("elapsed %.3f\n", secs(CLOCK_MONOTONIC) - start);
    return 0;
}
