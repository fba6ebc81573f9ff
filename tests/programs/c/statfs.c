/* statfs.c DIR: prints what statfs and fstatfs report for DIR (a node's
 * data_dir under faultline run) before and after writing 1 MiB into it, and
 * for / and /proc. The host's free space changes from run to run; under
 * faultline a data_dir reports its simulated disk and other file systems
 * report fixed figures. */
#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common.h"

static void show(const char *label, const struct statfs *st) {
    printf("%s type=%#lx bsize=%ld blocks=%lu bfree=%lu bavail=%lu files=%lu ffree=%lu\n",
           label, (unsigned long)st->f_type, (long)st->f_bsize, (unsigned long)st->f_blocks,
           (unsigned long)st->f_bfree, (unsigned long)st->f_bavail, (unsigned long)st->f_files,
           (unsigned long)st->f_ffree);
}

static void show_path(const char *label, const char *path) {
    struct statfs st;
    CHECK(statfs(path, &st) == 0);
    show(label, &st);
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    const char *dir = argv[1];
    show_path("before", dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/blob", dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    static char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 16; i++)
        CHECK(write(fd, chunk, sizeof chunk) == (ssize_t)sizeof chunk);
    struct statfs st;
    CHECK(fstatfs(fd, &st) == 0);
    show("after_fstatfs", &st);
    CHECK(close(fd) == 0);
    show_path("after", dir);
    show_path("root", "/");
    show_path("proc", "/proc");
    errno = 0;
    printf("missing %d\n", statfs("/no/such/dir", &st) == -1 && errno == ENOENT);
    return 0;
}
