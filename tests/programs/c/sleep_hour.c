/* Sleeps one hour with sleep(), then until half an hour later with an
 * absolute clock_nanosleep, printing elapsed MONOTONIC and REALTIME seconds
 * after each. Under faultline this takes no wall time.
 * Usage: sleep_hour [seconds=3600] */
#include <unistd.h>

#include "common.h"

static void report(const char *label, const struct timespec *mono0, const struct timespec *real0) {
    struct timespec mono, real;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &mono) == 0);
    CHECK(clock_gettime(CLOCK_REALTIME, &real) == 0);
    printf("%s monotonic %.6f realtime %.6f\n", label, elapsed_s(mono0, &mono),
           elapsed_s(real0, &real));
}

int main(int argc, char **argv) {
    unsigned seconds = (unsigned)arg_or(argc, argv, 1, 3600);
    struct timespec mono0, real0;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &mono0) == 0);
    CHECK(clock_gettime(CLOCK_REALTIME, &real0) == 0);

    CHECK(sleep(seconds) == 0);
    report("after_sleep", &mono0, &real0);

    struct timespec deadline = mono0;
    deadline.tv_sec += seconds + seconds / 2;
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) == EINTR) {
    }
    CHECK_RC(rc);
    report("after_abstime", &mono0, &real0);
    return 0;
}
