/* Timer slack: how long short sleeps, a futex wait with a timeout and a
 * poll with a timeout take, by CLOCK_MONOTONIC, with the thread's default
 * slack, after prctl(PR_SET_TIMERSLACK, 1), and in a thread created after
 * that (which inherits it). Prints one line per measurement, in µs.
 * Natively (Linux, 50 µs default slack) a 20 µs nanosleep takes about
 * 70-80 µs, and about 20-30 µs with a 1 ns slack. */
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

enum { ROUNDS = 20 };

static double now_us(void) {
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Average µs of ROUNDS nanosleeps of 20 µs. */
static double sleeps(void) {
    struct timespec req = {0, 20000};
    double start = now_us();
    for (int i = 0; i < ROUNDS; i++) {
        CHECK(nanosleep(&req, NULL) == 0);
    }
    return (now_us() - start) / ROUNDS;
}

static void measure(const char *label) {
    printf("%s_slack_ns %d\n", label, prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    printf("%s_nanosleep_20us %.0f\n", label, sleeps());

    unsigned word = 0;
    struct timespec timeout = {0, 100000};
    double start = now_us();
    long rc = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &timeout, NULL, 0);
    CHECK(rc == -1 && errno == ETIMEDOUT);
    printf("%s_futex_100us %.0f\n", label, now_us() - start);

    start = now_us();
    CHECK(poll(NULL, 0, 200) == 0);
    printf("%s_poll_200ms %.0f\n", label, now_us() - start);
}

static void *child(void *arg) {
    (void)arg;
    measure("thread");
    return NULL;
}

int main(void) {
    measure("default");
    CHECK(prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0) == 0);
    measure("one_ns");
    pthread_t t;
    CHECK(pthread_create(&t, NULL, child, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(prctl(PR_SET_TIMERSLACK, 0, 0, 0, 0) == 0);
    printf("reset_slack_ns %d\n", prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
    return 0;
}
