/* Preallocates a log segment the way etcd's WAL does, on a node's simulated
 * disk, and reports what it sees after a crash and restart.
 *
 * First boot (no segment yet): fallocate 64 MiB, write a record at offset 0,
 * fdatasync it and fsync the directory; then grow the segment to 128 MiB with
 * a second fallocate that is never synced, print the sizes, and wait to be
 * crashed. Later boots print the size, whether the record survived and
 * whether the segment's last page reads as zeros, preallocate a second
 * 64 MiB segment (which no crash rewrites), and exit 0.
 * Also prints the kernel's answers to a fallocate inside the file (no
 * growth), to a zero-length one (EINVAL) and to one on a read-only
 * descriptor (EBADF).
 *
 * Usage: prealloc DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define MIB (1024LL * 1024LL)

static long long size_of(int fd) {
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    return (long long)st.st_size;
}

static int tail_is_zero(int fd) {
    char page[4096];
    CHECK(pread(fd, page, sizeof page, size_of(fd) - (off_t)sizeof page) == sizeof page);
    for (size_t i = 0; i < sizeof page; i++)
        if (page[i] != 0) return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: prealloc DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/segment", argv[1]);
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    CHECK(fd >= 0);
    if (size_of(fd) > 0) {
        char head[5] = {0};
        CHECK(pread(fd, head, 4, 0) == 4);
        printf("restarted size=%lld head=%s tail_zero=%d\n", size_of(fd), head,
               tail_is_zero(fd));
        snprintf(path, sizeof path, "%s/segment2", argv[1]);
        int next = open(path, O_RDWR | O_CREAT, 0600);
        CHECK(next >= 0);
        CHECK(fallocate(next, 0, 0, 64 * MIB) == 0);
        CHECK(fdatasync(next) == 0);
        printf("next size=%lld tail_zero=%d\n", size_of(next), tail_is_zero(next));
        return 0;
    }
    CHECK(fallocate(fd, 0, 0, 64 * MIB) == 0);
    CHECK(pwrite(fd, "REC1", 4, 0) == 4);
    CHECK(fdatasync(fd) == 0);
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
    CHECK(dir >= 0);
    CHECK(fsync(dir) == 0);
    printf("fresh size=%lld tail_zero=%d\n", size_of(fd), tail_is_zero(fd));
    CHECK(fallocate(fd, 0, 4096, 4096) == 0);
    printf("inside size=%lld\n", size_of(fd));
    int rc = fallocate(fd, 0, 0, 0);
    printf("zero_length rc=%d errno=%s\n", rc, rc == 0 ? "none" : strerror(errno));
    int reader = open(path, O_RDONLY);
    CHECK(reader >= 0);
    rc = fallocate(reader, 0, 0, 128 * MIB);
    printf("read_only rc=%d errno=%s size=%lld\n", rc, rc == 0 ? "none" : strerror(errno),
           size_of(fd));
    CHECK(close(reader) == 0);
    CHECK(fallocate(fd, 0, 64 * MIB, 64 * MIB) == 0);
    printf("grown size=%lld\n", size_of(fd));
    fflush(stdout);
    for (;;) sleep_ns(1000000000LL);
}
