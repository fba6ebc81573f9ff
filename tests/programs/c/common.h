/* Shared helpers for the C test programs of faultline's end-to-end suite. */
#ifndef FAULTLINE_TEST_COMMON_H
#define FAULTLINE_TEST_COMMON_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Abort with a message naming the failed expression and errno. */
#define CHECK(expr)                                                          \
    do {                                                                     \
        if (!(expr)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s (errno %d: %s)\n",      \
                    __FILE__, __LINE__, #expr, errno, strerror(errno));      \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

/* Check a pthread-style return code (0 on success, error number otherwise). */
#define CHECK_RC(expr)                                                       \
    do {                                                                     \
        int rc_ = (expr);                                                    \
        if (rc_ != 0) {                                                      \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,   \
                    #expr, strerror(rc_));                                   \
            exit(2);                                                         \
        }                                                                    \
    } while (0)

/* Sleep for the given number of nanoseconds (relative nanosleep). */
static inline void sleep_ns(long long ns) {
    struct timespec ts = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (nanosleep(&ts, &ts) != 0) {
        CHECK(errno == EINTR);
    }
}

/* Seconds (with fraction) between two timespecs. */
static inline double elapsed_s(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Print `len` bytes as lowercase hex after `label`, one line. */
static inline void print_hex(const char *label, const unsigned char *buf, size_t len) {
    printf("%s ", label);
    for (size_t i = 0; i < len; i++) printf("%02x", buf[i]);
    printf("\n");
}

/* Integer argument `argv[i]`, or `def` when absent. */
static inline long long arg_or(int argc, char **argv, int i, long long def) {
    return argc > i ? atoll(argv[i]) : def;
}

#endif
