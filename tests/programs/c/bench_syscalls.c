/* Benchmark load: many clock_gettime calls, then two threads handing a token
 * back and forth through a mutex and condition variable (futex-heavy).
 * Usage: bench_syscalls [clock_reads=200000] [handoffs=20000] */
#include <pthread.h>

#include "common.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static long handoffs;

static void *player(void *arg) {
    int me = (int)(long)arg;
    for (long i = 0; i < handoffs; i++) {
        CHECK_RC(pthread_mutex_lock(&lock));
        while (turn != me) CHECK_RC(pthread_cond_wait(&turn_changed, &lock));
        turn = 1 - me;
        CHECK_RC(pthread_cond_signal(&turn_changed));
        CHECK_RC(pthread_mutex_unlock(&lock));
    }
    return NULL;
}

int main(int argc, char **argv) {
    long reads = (long)arg_or(argc, argv, 1, 200000);
    handoffs = (long)arg_or(argc, argv, 2, 20000);
    struct timespec ts;
    long long acc = 0;
    for (long i = 0; i < reads; i++) {
        CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
        acc += ts.tv_nsec & 1;
    }
    pthread_t a, b;
    CHECK_RC(pthread_create(&a, NULL, player, (void *)0L));
    CHECK_RC(pthread_create(&b, NULL, player, (void *)1L));
    CHECK_RC(pthread_join(a, NULL));
    CHECK_RC(pthread_join(b, NULL));
    printf("clock reads %ld handoffs %ld (odd %lld)\n", reads, handoffs, acc);
    return 0;
}
