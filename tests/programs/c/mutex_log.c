/* N threads append their id to a shared log under a mutex, yielding or
 * sleeping briefly between appends; prints the interleaving and per-thread
 * counts. Usage: mutex_log [threads=4] [iterations=25] */
#include <pthread.h>
#include <sched.h>

#include "common.h"

#define MAX_THREADS 8
#define MAX_ITERS 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char log_buf[MAX_THREADS * MAX_ITERS + 1];
static int log_len;
static int iterations;

static void *worker(void *arg) {
    int id = (int)(long)arg;
    for (int i = 0; i < iterations; i++) {
        CHECK_RC(pthread_mutex_lock(&lock));
        log_buf[log_len++] = (char)('0' + id);
        CHECK_RC(pthread_mutex_unlock(&lock));
        if (i % 3 == 2) {
            sleep_ns(50 * 1000);
        } else {
            CHECK(sched_yield() == 0);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = (int)arg_or(argc, argv, 1, 4);
    iterations = (int)arg_or(argc, argv, 2, 25);
    CHECK(threads > 0 && threads <= MAX_THREADS);
    CHECK(iterations > 0 && iterations <= MAX_ITERS);

    pthread_t tids[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        CHECK_RC(pthread_create(&tids[t], NULL, worker, (void *)(long)t));
    }
    for (int t = 0; t < threads; t++) CHECK_RC(pthread_join(tids[t], NULL));

    printf("order %s\n", log_buf);
    printf("counts");
    for (int t = 0; t < threads; t++) {
        int n = 0;
        for (int i = 0; i < log_len; i++) n += log_buf[i] == '0' + t;
        printf(" %d", n);
    }
    printf("\n");
    return 0;
}
