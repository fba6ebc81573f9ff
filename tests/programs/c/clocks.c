/* Prints one reading of every clock the program can see: clock_gettime for
 * each clock id, gettimeofday and time(). Under faultline all are virtual. */
#include <sys/time.h>

#include "common.h"

static void show(const char *name, clockid_t id) {
    struct timespec ts;
    CHECK(clock_gettime(id, &ts) == 0);
    printf("%s %lld.%09ld\n", name, (long long)ts.tv_sec, ts.tv_nsec);
}

int main(void) {
    show("realtime", CLOCK_REALTIME);
    show("realtime_coarse", CLOCK_REALTIME_COARSE);
    show("monotonic", CLOCK_MONOTONIC);
    show("monotonic_coarse", CLOCK_MONOTONIC_COARSE);
    show("monotonic_raw", CLOCK_MONOTONIC_RAW);
    show("boottime", CLOCK_BOOTTIME);
    show("process_cputime", CLOCK_PROCESS_CPUTIME_ID);
    show("thread_cputime", CLOCK_THREAD_CPUTIME_ID);

    struct timeval tv;
    CHECK(gettimeofday(&tv, NULL) == 0);
    printf("gettimeofday %lld.%06ld\n", (long long)tv.tv_sec, (long)tv.tv_usec);
    printf("time %lld\n", (long long)time(NULL));
    return 0;
}
