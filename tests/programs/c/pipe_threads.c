/* A pipe between two threads: the writer sleeps before each fixed-size
 * record, so the reader (main thread) blocks on an empty pipe every time.
 * Prints every record received, then EOF. */
#include <pthread.h>
#include <unistd.h>

#include "common.h"

#define RECORDS 10
#define RECORD_LEN 8 /* "msg 000\n" */

static int fds[2];

static void *writer(void *arg) {
    (void)arg;
    char rec[RECORD_LEN + 1];
    for (int i = 0; i < RECORDS; i++) {
        sleep_ns(1000 * 1000);
        snprintf(rec, sizeof rec, "msg %03d\n", i);
        CHECK(write(fds[1], rec, RECORD_LEN) == RECORD_LEN);
    }
    CHECK(close(fds[1]) == 0);
    return NULL;
}

/* Reads exactly one record; returns 0 at EOF. */
static int read_record(char *rec) {
    size_t got = 0;
    while (got < RECORD_LEN) {
        ssize_t n = read(fds[0], rec + got, RECORD_LEN - got);
        CHECK(n >= 0);
        if (n == 0) {
            CHECK(got == 0);
            return 0;
        }
        got += (size_t)n;
    }
    return 1;
}

int main(void) {
    CHECK(pipe(fds) == 0);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, writer, NULL));
    char rec[RECORD_LEN];
    while (read_record(rec)) printf("got %.*s", RECORD_LEN, rec);
    printf("eof\n");
    CHECK_RC(pthread_join(t, NULL));
    return 0;
}
