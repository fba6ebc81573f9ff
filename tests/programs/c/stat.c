/* stat.c DIR: prints the identity and times stat, fstat, lstat, fstatat and
 * statx report for a read-only host file and for a file the program creates
 * in DIR and changes 2 s later (a node's data_dir under faultline run). On
 * the host the inode numbers of new files and every time differ from run to
 * run; under faultline they come from the simulated disk and virtual time. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common.h"

static void show(const char *label, const struct stat *st) {
    printf("%s dev=%lu ino=%lu size=%ld atime=%ld.%09ld mtime=%ld.%09ld ctime=%ld.%09ld\n", label,
           (unsigned long)st->st_dev, (unsigned long)st->st_ino, (long)st->st_size,
           (long)st->st_atim.tv_sec, st->st_atim.tv_nsec, (long)st->st_mtim.tv_sec,
           st->st_mtim.tv_nsec, (long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    struct stat st;
    CHECK(stat("/etc/passwd", &st) == 0);
    show("host_stat", &st);
    CHECK(lstat("/etc/passwd", &st) == 0);
    show("host_lstat", &st);
    struct timespec now;
    CHECK(clock_gettime(CLOCK_REALTIME, &now) == 0);
    printf("created_at %ld\n", (long)now.tv_sec);
    char path[4096];
    snprintf(path, sizeof path, "%s/file", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, "hello", 5) == 5);
    CHECK(fstat(fd, &st) == 0);
    show("new_fstat", &st);
    CHECK(stat(path, &st) == 0);
    show("new_stat", &st);
    CHECK(stat(argv[1], &st) == 0);
    show("dir_stat", &st);
    sleep_ns(2000000000LL);
    CHECK(write(fd, " world", 6) == 6);
    CHECK(fstatat(AT_FDCWD, path, &st, 0) == 0);
    show("changed_fstatat", &st);
    struct statx sx;
    CHECK(statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &sx) == 0);
    printf("changed_statx dev=%lu ino=%lu size=%lu mtime=%lld.%09u\n",
           (unsigned long)makedev(sx.stx_dev_major, sx.stx_dev_minor), (unsigned long)sx.stx_ino,
           (unsigned long)sx.stx_size, (long long)sx.stx_mtime.tv_sec, sx.stx_mtime.tv_nsec);
    CHECK(close(fd) == 0);
    return 0;
}
