/* POSIX timers on virtual time: an interval timer (SIGEV_SIGNAL, SIGUSR1)
 * whose handler checks the siginfo (SI_TIMER, the sigev_value) and counts 5
 * ticks 100 ms apart; timer_gettime while armed; a SIGEV_THREAD timer whose
 * callback runs on glibc's helper thread; timer_delete. Prints the virtual
 * time of each tick. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "common.h"

static volatile sig_atomic_t ticks, bad_info;
static volatile int thread_calls;

static void on_tick(int sig, siginfo_t *si, void *ctx) {
    (void)sig;
    (void)ctx;
    if (si->si_code != SI_TIMER || si->si_value.sival_int != 42)
        bad_info = 1;
    ticks++;
}

static void on_thread(union sigval v) {
    thread_calls += v.sival_int;
}

static double now_secs(void) {
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void) {
    struct sigaction sa = {.sa_sigaction = on_tick, .sa_flags = SA_SIGINFO};
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
    ev.sigev_value.sival_int = 42;
    timer_t t;
    CHECK(timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
    struct itimerspec its = {.it_value = {0, 100000000}, .it_interval = {0, 100000000}};
    double start = now_secs();
    CHECK(timer_settime(t, 0, &its, NULL) == 0);
    struct itimerspec cur;
    CHECK(timer_gettime(t, &cur) == 0);
    printf("armed_left_ms %ld\n", cur.it_value.tv_nsec / 1000000);
    while (ticks < 5) {
        int seen = ticks;
        pause();
        if (ticks != seen)
            printf("tick %d at %.3f\n", (int)ticks, now_secs() - start);
    }
    CHECK(timer_delete(t) == 0);
    printf("bad_info %d\n", (int)bad_info);

    struct sigevent tev = {.sigev_notify = SIGEV_THREAD, .sigev_notify_function = on_thread};
    tev.sigev_value.sival_int = 7;
    timer_t tt;
    CHECK(timer_create(CLOCK_REALTIME, &tev, &tt) == 0);
    struct itimerspec once = {.it_value = {1, 0}};
    CHECK(timer_settime(tt, 0, &once, NULL) == 0);
    sleep_ns(2000000000LL);
    printf("thread_calls %d\n", thread_calls);
    CHECK(timer_delete(tt) == 0);
    printf("elapsed %.3f\n", now_secs() - start);
    return 0;
}
