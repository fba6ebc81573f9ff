/* Spins a fixed number of iterations with no syscall. With argument 1, a
 * second thread keeps calling sched_yield meanwhile, so a supervisor that runs
 * one thread at a time must preempt the spinner to let it run.
 * Usage: spin [yielder=0|1] [iterations=1200000000] */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "common.h"

static atomic_int done;

static void *yielder(void *arg) {
    (void)arg;
    while (!atomic_load(&done)) CHECK(sched_yield() == 0);
    return NULL;
}

int main(int argc, char **argv) {
    int with_yielder = (int)arg_or(argc, argv, 1, 0);
    long long iterations = arg_or(argc, argv, 2, 1200000000LL);
    pthread_t t;
    if (with_yielder) CHECK_RC(pthread_create(&t, NULL, yielder, NULL));

    unsigned long long x = 88172645463325252ULL;
    for (long long i = 0; i < iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        __asm__ volatile("" : "+r"(x));
    }
    atomic_store(&done, 1);
    if (with_yielder) CHECK_RC(pthread_join(t, NULL));
    printf("spin done %llx\n", x);
    return 0;
}
