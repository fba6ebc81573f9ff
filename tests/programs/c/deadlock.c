/* Two threads lock two mutexes in opposite order; a barrier makes sure each
 * holds its first mutex before it asks for the second, so the program always
 * deadlocks (natively it hangs forever). */
#include <pthread.h>

#include "common.h"

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static void *lock_pair(pthread_mutex_t *first, pthread_mutex_t *second) {
    CHECK_RC(pthread_mutex_lock(first));
    int rc = pthread_barrier_wait(&both_hold_one);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_RC(pthread_mutex_lock(second));
    printf("unreachable: got both mutexes\n");
    return NULL;
}

static void *a_then_b(void *arg) { (void)arg; return lock_pair(&a, &b); }
static void *b_then_a(void *arg) { (void)arg; return lock_pair(&b, &a); }

int main(void) {
    CHECK_RC(pthread_barrier_init(&both_hold_one, NULL, 2));
    pthread_t t1, t2;
    CHECK_RC(pthread_create(&t1, NULL, a_then_b, NULL));
    CHECK_RC(pthread_create(&t2, NULL, b_then_a, NULL));
    printf("threads started\n");
    fflush(stdout);
    CHECK_RC(pthread_join(t1, NULL));
    CHECK_RC(pthread_join(t2, NULL));
    return 0;
}
