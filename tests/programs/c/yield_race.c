/* A lost-update race: N threads each add 1 to a shared counter K times,
 * reading it, making a call (a scheduling point: sched_yield, or with
 * CALL "getrandom" a call that does not give the CPU away), then writing
 * it back, with no lock. Prints the final count (N*K when no update was
 * lost) and which thread made each write, so the interleaving the
 * scheduler chose is the output.
 * Usage: yield_race [threads=3] [iterations=40] [yield|getrandom] */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/random.h>

#include "common.h"

#define MAX_THREADS 8
#define MAX_ITERS 200

static volatile long counter;
static char order[MAX_THREADS * MAX_ITERS + 1];
static int order_len;
static int iterations;
static int use_getrandom;

static void *worker(void *arg) {
    int id = (int)(long)arg;
    for (int i = 0; i < iterations; i++) {
        long seen = counter;
        if (use_getrandom) {
            char byte;
            CHECK(getrandom(&byte, 1, 0) == 1);
        } else {
            CHECK(sched_yield() == 0);
        }
        counter = seen + 1;
        order[order_len++] = (char)('0' + id);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 3;
    iterations = argc > 2 ? atoi(argv[2]) : 40;
    use_getrandom = argc > 3 && strcmp(argv[3], "getrandom") == 0;
    if (threads < 1 || threads > MAX_THREADS || iterations < 1 || iterations > MAX_ITERS ||
        (argc > 3 && !use_getrandom && strcmp(argv[3], "yield") != 0)) {
        fprintf(stderr, "usage: yield_race [threads<=%d] [iterations<=%d] [yield|getrandom]\n",
                MAX_THREADS, MAX_ITERS);
        return 2;
    }
    pthread_t tids[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        CHECK_RC(pthread_create(&tids[t], NULL, worker, (void *)(long)t));
    }
    for (int t = 0; t < threads; t++) {
        CHECK_RC(pthread_join(tids[t], NULL));
    }
    printf("order %s\ncount %ld of %d\n", order, counter, threads * iterations);
    return 0;
}
