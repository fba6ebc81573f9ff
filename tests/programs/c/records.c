/* A log of fixed-size records on a node's disk, for the disk fault tests.
 *
 *   records append DIR COUNT ignore|retry
 *       appends COUNT 64-byte records to DIR/log, 20 ms apart, then fsyncs
 *       and counts the records the file holds. `ignore` does not look at
 *       write's result (the bug): a write that failed with ENOSPC counts as
 *       done, and the count is short: "LOST RECORDS", exit 1. `retry` sees
 *       ENOSPC, prints what statfs says of the free space, waits 100 ms and
 *       writes the record again.
 *   records rot DIR COUNT plain|crc
 *       writes COUNT records (key, value = 7 * key + 3; with `crc` also a
 *       checksum), fsyncs them, waits 1 s, reads them back and serves them.
 *       `plain` trusts what it reads: a record that rotted is served with a
 *       wrong value ("WRONG DATA", exit 1). `crc` checks each record and
 *       drops a bad one ("CORRUPT record N detected").
 *   records crashy DIR COUNT
 *       on a fresh disk: creates DIR/log durably, then appends COUNT
 *       1024-byte records (two sectors each), 10 ms apart, never synced,
 *       and idles. After a restart (the log exists): prints which records
 *       survived the crash, one character each ('1' intact, 't' torn: only
 *       its first sector, '0' missing or zeros), and idles. */
#include <fcntl.h>
#include <stdint.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common.h"

static void path_in(char *out, size_t cap, const char *dir, const char *name) {
    snprintf(out, cap, "%s/%s", dir, name);
}

static void fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(fd >= 0);
    CHECK(fsync(fd) == 0);
    CHECK(close(fd) == 0);
}

static void idle(void) {
    for (;;) sleep_ns(1000000000LL);
}

#define SMALL 64

static int append(const char *dir, long count, int retry) {
    char path[4096];
    path_in(path, sizeof path, dir, "log");
    int fd = open(path, O_CREAT | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    for (long i = 0; i < count; i++) {
        char rec[SMALL];
        memset(rec, '.', sizeof rec);
        int n = snprintf(rec, sizeof rec, "record %ld", i);
        rec[n] = ' ';
        rec[SMALL - 1] = '\n';
        if (!retry) {
            (void)!write(fd, rec, sizeof rec);
        } else {
            while (write(fd, rec, sizeof rec) != (ssize_t)sizeof rec) {
                CHECK(errno == ENOSPC);
                struct statfs st;
                CHECK(fstatfs(fd, &st) == 0);
                printf("record %ld: ENOSPC, statfs bavail=%lu; retrying\n", i,
                       (unsigned long)st.f_bavail);
                sleep_ns(100 * 1000000LL);
            }
        }
        sleep_ns(20 * 1000000LL);
    }
    CHECK(fsync(fd) == 0);
    off_t size = lseek(fd, 0, SEEK_END);
    CHECK(size >= 0);
    long held = (long)(size / SMALL);
    if (held != count) {
        fprintf(stderr, "LOST RECORDS: wrote %ld, the log holds %ld\n", count, held);
        return 1;
    }
    printf("append: %ld records written and held\n", count);
    return 0;
}

/* FNV-1a over a record's key and value. */
static uint32_t checksum(const uint32_t *kv) {
    const unsigned char *p = (const unsigned char *)kv;
    uint32_t h = 2166136261u;
    for (int i = 0; i < 8; i++) h = (h ^ p[i]) * 16777619u;
    return h;
}

static int rot(const char *dir, long count, int crc) {
    char path[4096];
    path_in(path, sizeof path, dir, "table");
    size_t width = crc ? 3 : 2;
    int fd = open(path, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    for (long i = 0; i < count; i++) {
        uint32_t rec[3] = {(uint32_t)i, (uint32_t)(7 * i + 3), 0};
        rec[2] = checksum(rec);
        CHECK(write(fd, rec, width * 4) == (ssize_t)(width * 4));
    }
    CHECK(fsync(fd) == 0);
    fsync_dir(dir);
    sleep_ns(1000000000LL);
    long served = 0, detected = 0;
    for (long i = 0; i < count; i++) {
        uint32_t rec[3] = {0, 0, 0};
        CHECK(pread(fd, rec, width * 4, (off_t)(i * width * 4)) == (ssize_t)(width * 4));
        if (crc && checksum(rec) != rec[2]) {
            printf("CORRUPT record %ld detected by its checksum; dropped\n", i);
            detected++;
            continue;
        }
        if (rec[0] != (uint32_t)i || rec[1] != (uint32_t)(7 * i + 3)) {
            fprintf(stderr, "WRONG DATA: record %ld served as key %u value %u\n", i, rec[0],
                    rec[1]);
            return 1;
        }
        served++;
    }
    printf("rot: %ld records served, %ld dropped as corrupt\n", served, detected);
    return 0;
}

#define BIG 1024

static int crashy(const char *dir, long count) {
    char path[4096];
    path_in(path, sizeof path, dir, "log");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char rec[BIG];
        char pattern[1024];
        long i = 0;
        for (; i < count && i + 1 < (long)sizeof pattern; i++) {
            ssize_t n = pread(fd, rec, BIG, (off_t)(i * BIG));
            CHECK(n >= 0);
            char want[BIG];
            memset(want, 'a' + (int)(i % 26), BIG);
            int head = n >= BIG / 2 && memcmp(rec, want, BIG / 2) == 0;
            int tail = n == BIG && memcmp(rec + BIG / 2, want + BIG / 2, BIG / 2) == 0;
            pattern[i] = head && tail ? '1' : head ? 't' : '0';
        }
        pattern[i] = '\0';
        printf("survived: %s\n", pattern);
        idle();
    }
    fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    CHECK(fsync(fd) == 0);
    fsync_dir(dir);
    for (long i = 0; i < count; i++) {
        char rec[BIG];
        memset(rec, 'a' + (int)(i % 26), BIG);
        CHECK(write(fd, rec, BIG) == BIG);
        sleep_ns(10 * 1000000LL);
    }
    printf("crashy: %ld records written, none synced\n", count);
    idle();
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 5 && strcmp(argv[1], "append") == 0)
        return append(argv[2], atol(argv[3]), strcmp(argv[4], "retry") == 0);
    if (argc == 5 && strcmp(argv[1], "rot") == 0)
        return rot(argv[2], atol(argv[3]), strcmp(argv[4], "crc") == 0);
    if (argc == 4 && strcmp(argv[1], "crashy") == 0) return crashy(argv[2], atol(argv[3]));
    fprintf(stderr,
            "usage: records append DIR COUNT ignore|retry | records rot DIR COUNT plain|crc | "
            "records crashy DIR COUNT\n");
    return 2;
}
