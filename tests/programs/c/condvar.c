/* Bounded-buffer producer/consumer with a mutex and two condition variables:
 * 2 producers x 20 items, 2 consumers. Prints who consumed what, in order,
 * then the total count and sum (fixed: every item exactly once). */
#include <pthread.h>

#include "common.h"

#define CAPACITY 4
#define PRODUCERS 2
#define CONSUMERS 2
#define ITEMS 20
#define DONE (-1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static int queue[CAPACITY];
static int head, count;
static int consumed_total;
static long consumed_sum;

static void put(int item) {
    CHECK_RC(pthread_mutex_lock(&lock));
    while (count == CAPACITY) CHECK_RC(pthread_cond_wait(&not_full, &lock));
    queue[(head + count) % CAPACITY] = item;
    count++;
    CHECK_RC(pthread_cond_signal(&not_empty));
    CHECK_RC(pthread_mutex_unlock(&lock));
}

static void *producer(void *arg) {
    int id = (int)(long)arg;
    for (int i = 0; i < ITEMS; i++) put(id * 100 + i);
    return NULL;
}

static void *consumer(void *arg) {
    int id = (int)(long)arg;
    for (;;) {
        CHECK_RC(pthread_mutex_lock(&lock));
        while (count == 0) CHECK_RC(pthread_cond_wait(&not_empty, &lock));
        int item = queue[head];
        head = (head + 1) % CAPACITY;
        count--;
        if (item != DONE) {
            consumed_total++;
            consumed_sum += item;
            printf("consumer %d got %d\n", id, item);
        }
        CHECK_RC(pthread_cond_signal(&not_full));
        CHECK_RC(pthread_mutex_unlock(&lock));
        if (item == DONE) return NULL;
    }
}

int main(void) {
    pthread_t p[PRODUCERS], c[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++)
        CHECK_RC(pthread_create(&c[i], NULL, consumer, (void *)(long)i));
    for (int i = 0; i < PRODUCERS; i++)
        CHECK_RC(pthread_create(&p[i], NULL, producer, (void *)(long)i));
    for (int i = 0; i < PRODUCERS; i++) CHECK_RC(pthread_join(p[i], NULL));
    for (int i = 0; i < CONSUMERS; i++) put(DONE);
    for (int i = 0; i < CONSUMERS; i++) CHECK_RC(pthread_join(c[i], NULL));
    printf("total %d sum %ld\n", consumed_total, consumed_sum);
    return 0;
}
