/* Reads the clocks every way a C program can — through libc (the vDSO when
 * there is one), by a direct system call, from threads and from a forked
 * child — and polls the clock until 100 µs have passed. Prints each reading,
 * so a run with faultline's vDSO and one with trapped reads can be compared
 * line by line. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static long long ns_of(struct timespec ts) {
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *reader(void *arg) {
    long id = (long)arg;
    struct timespec ts;
    long long first = 0;
    for (int i = 0; i < 5000; i++) {
        CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
        if (i == 0)
            first = ns_of(ts);
    }
    usleep(1000 * (id + 1));
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    printf("thread %ld read from %lld to %lld\n", id, first, ns_of(ts));
    return NULL;
}

int main(void) {
    static const clockid_t ids[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
                                    CLOCK_REALTIME_COARSE, CLOCK_TAI};
    struct timespec ts, start;
    for (unsigned i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        CHECK(clock_gettime(ids[i], &ts) == 0);
        printf("clock %d %lld\n", (int)ids[i], ns_of(ts));
    }
    struct timeval tv;
    CHECK(gettimeofday(&tv, NULL) == 0);
    printf("gettimeofday %lld.%06ld time %lld cpu %d\n", (long long)tv.tv_sec,
           (long)tv.tv_usec, (long long)time(NULL), sched_getcpu());
    CHECK(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts) == 0);
    printf("direct %lld\n", ns_of(ts));

    CHECK(clock_gettime(CLOCK_MONOTONIC, &start) == 0);
    long reads = 0;
    do {
        CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
        reads++;
    } while (ns_of(ts) - ns_of(start) < 100000);
    printf("polled 100us in %ld reads\n", reads);

    pthread_t threads[3];
    for (long i = 0; i < 3; i++)
        CHECK_RC(pthread_create(&threads[i], NULL, reader, (void *)i));
    for (int i = 0; i < 3; i++)
        CHECK_RC(pthread_join(threads[i], NULL));

    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        for (int i = 0; i < 100; i++)
            CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
        printf("child %lld\n", ns_of(ts));
        fflush(stdout);
        _exit(0);
    }
    CHECK(waitpid(child, NULL, 0) == child);
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    printf("end %lld\n", ns_of(ts));
    return 0;
}
