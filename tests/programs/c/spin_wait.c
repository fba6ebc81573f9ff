/* A thread that spins, without system calls, until another thread sets a
 * flag: under faultline only one thread runs at a time, so the spinner waits
 * for a thread that is stopped until the watchdog preempts it (Go's
 * background sweeper does this in etcd). While it spins it reads the clock
 * now and then (answered in place by faultline's vDSO), and a third thread
 * sends it SIGUSR1s. Every run of a seed must still be the same: the signal
 * must arrive where the spinner next stops at a system call, never at the
 * instruction the watchdog happened to stop it at, and the in-place clock
 * reads of the spin must not move later scheduling points.
 *
 * Afterwards the main thread reads the clock 200 times: which of those
 * reads are scheduling points (every 64th of the process) shows whether the
 * spin's reads were counted.
 *
 * Prints how many signals landed inside the spin loop (must be 0) and
 * whether any landed after it. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include "common.h"

static volatile int flag, in_spin;
static volatile sig_atomic_t during_spin, after_spin;
static pthread_t spinner_thread;

static void on_usr1(int sig) {
    (void)sig;
    if (in_spin) during_spin++;
    else after_spin++;
}

static void *spinner(void *arg) {
    (void)arg;
    unsigned long n = 0;
    in_spin = 1;
    while (!flag) {
        if ((++n & 0xffffff) == 0) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
        }
    }
    in_spin = 0;
    /* The first system call after the spin: with `--preload` it goes over
     * the fast path's channel, without it traps. */
    struct timespec us = {.tv_nsec = 1000};
    nanosleep(&us, NULL);
    return NULL;
}

static void *setter(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) sched_yield();
    flag = 1;
    return NULL;
}

static void *signaller(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        CHECK_RC(pthread_kill(spinner_thread, SIGUSR1));
        sched_yield();
    }
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    pthread_t s, k;
    CHECK_RC(pthread_create(&spinner_thread, NULL, spinner, NULL));
    CHECK_RC(pthread_create(&k, NULL, signaller, NULL));
    CHECK_RC(pthread_create(&s, NULL, setter, NULL));
    CHECK_RC(pthread_join(k, NULL));
    CHECK_RC(pthread_join(s, NULL));
    CHECK_RC(pthread_join(spinner_thread, NULL));
    for (int i = 0; i < 200; i++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
    }
    printf("signals during the spin: %d\n", (int)during_spin);
    printf("signals after it: %s\n", after_spin > 0 ? "yes" : "no");
    return 0;
}
