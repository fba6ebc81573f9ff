/* Calls that move data or make names inside the kernel, made on a node's
 * simulated disk and on a simulated socket, where faultline must either
 * model them or refuse them with a report (and pass them elsewhere).
 *
 * First boot (no DIR/a yet): prints one line per call, `name rc=N` or
 * `name rc=-1 errno=ENAME`, fsyncs what it made and waits to be crashed.
 * After the restart: prints what survived the crash (what the disk model
 * saw and was made durable) and exits 0.
 *
 * Usage: escapes DIR OUTSIDE   (DIR is the data_dir, OUTSIDE is not) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"

/* The futex2 wait (Linux 6.7), newer than glibc 2.36's headers. */
#define NR_FUTEX_WAIT 455
/* A number past faultline's syscall table (461 is its last). */
#define NR_PAST_THE_TABLE 470

static const char *errno_name(int e) {
    switch (e) {
    case EINVAL: return "EINVAL";
    case EPERM: return "EPERM";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ENOSYS: return "ENOSYS";
    case ENOENT: return "ENOENT";
    default: return strerror(e);
    }
}

/* Runs `expr` and prints its result (and errno when it failed). */
#define SHOW(what, expr)                                                        \
    do {                                                                        \
        errno = 0;                                                              \
        long rc_ = (long)(expr);                                                \
        int e_ = errno;                                                         \
        if (rc_ < 0)                                                            \
            printf("%s rc=%ld errno=%s\n", what, rc_, errno_name(e_));          \
        else                                                                    \
            printf("%s rc=%ld\n", what, rc_);                                   \
    } while (0)

static char *at(char *buf, const char *dir, const char *name) {
    snprintf(buf, 4096, "%s/%s", dir, name);
    return buf;
}

/* The first bytes of DIR/name, or "missing". */
static void show_file(const char *dir, const char *name) {
    char p[4096], buf[16] = {0};
    int fd = open(at(p, dir, name), O_RDONLY);
    if (fd < 0) {
        printf("%s missing\n", name);
        return;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    CHECK(n >= 0);
    printf("%s \"%s\"\n", name, buf);
    CHECK(close(fd) == 0);
}

static void restarted(const char *dir) {
    printf("restarted\n");
    show_file(dir, "a");
    show_file(dir, "b");
    show_file(dir, "c");
    show_file(dir, "e");
    char p[4096];
    struct stat st;
    SHOW("link_after_crash", lstat(at(p, dir, "link"), &st));
    SHOW("fifo_after_crash", lstat(at(p, dir, "fifo"), &st));
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: escapes DIR OUTSIDE\n");
        return 2;
    }
    const char *dir = argv[1], *outside = argv[2];
    char p[4096], q[4096];
    if (access(at(p, dir, "a"), F_OK) == 0) {
        restarted(dir);
        return 0;
    }
    int a = open(at(p, dir, "a"), O_RDWR | O_CREAT, 0600);
    CHECK(a >= 0);

    /* Modelled: pwritev2 as a write, openat2 as openat, mknod of a
     * regular file as a create. */
    struct iovec head = {"PWV2", 4}, tail = {"tail", 4};
    SHOW("pwritev2_at_0", pwritev2(a, &head, 1, 0, 0));
    SHOW("pwritev2_append", pwritev2(a, &tail, 1, -1, RWF_APPEND));
    CHECK(fsync(a) == 0);
    struct open_how how = {.flags = O_RDWR | O_CREAT, .mode = 0600};
    long b = syscall(SYS_openat2, AT_FDCWD, at(p, dir, "b"), &how, sizeof how);
    SHOW("openat2", b < 0 ? b : 0);
    CHECK(b >= 0);
    CHECK(write((int)b, "OPEN2", 5) == 5);
    CHECK(fsync((int)b) == 0);
    SHOW("mknod_regular", mknod(at(p, dir, "c"), S_IFREG | 0600, 0));

    /* Refused on the data_dir, passed elsewhere. */
    SHOW("mknod_fifo", mknod(at(p, dir, "fifo"), S_IFIFO | 0600, 0));
    SHOW("mknod_raw_fifo", syscall(SYS_mknod, at(p, dir, "fifo"), S_IFIFO | 0600, 0));
    SHOW("mknod_fifo_outside", mknod(at(p, outside, "fifo"), S_IFIFO | 0600, 0));
    SHOW("symlink", symlink("a", at(p, dir, "link")));
    SHOW("symlinkat", symlinkat("a", AT_FDCWD, at(p, dir, "link")));
    SHOW("symlink_outside", symlink("a", at(p, outside, "link")));
    int d = open(at(p, dir, "d"), O_RDWR | O_CREAT, 0600);
    CHECK(d >= 0);
    loff_t off = 0;
    SHOW("copy_file_range_into_data_dir", copy_file_range(a, &off, d, NULL, 4, 0));
    off = 0;
    SHOW("sendfile_into_data_dir", sendfile(d, a, &off, 4));
    int p1[2], p2[2];
    CHECK(pipe(p1) == 0 && pipe(p2) == 0);
    off = 0;
    SHOW("sendfile_data_dir_into_pipe", sendfile(p1[1], a, &off, 4));
    SHOW("tee_pipe_into_pipe", tee(p1[0], p2[1], 4, 0));
    SHOW("splice_pipe_into_data_dir", splice(p1[0], NULL, d, NULL, 4, 0));
    struct iovec gift = {"VMSP", 4};
    SHOW("vmsplice_into_pipe", vmsplice(p2[1], &gift, 1, 0));
    SHOW("renameat2_exchange",
         renameat2(AT_FDCWD, at(p, dir, "a"), AT_FDCWD, at(q, dir, "d"), RENAME_EXCHANGE));
    SHOW("renameat2_noreplace",
         renameat2(AT_FDCWD, at(p, dir, "d"), AT_FDCWD, at(q, dir, "e"), RENAME_NOREPLACE));

    /* A simulated socket: its descriptor is a placeholder the kernel must
     * never read or write. */
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(u >= 0);
    off = 0;
    SHOW("sendfile_into_socket", sendfile(u, a, &off, 4));
    SHOW("splice_socket_into_pipe", splice(u, NULL, p2[1], NULL, 4, SPLICE_F_NONBLOCK));
    char buf[8];
    struct iovec into = {buf, sizeof buf};
    SHOW("preadv2_socket", preadv2(u, &into, 1, -1, 0));
    SHOW("pwritev2_socket", pwritev2(u, &head, 1, -1, 0));
    into.iov_len = 4;
    SHOW("preadv2_data_dir", preadv2(a, &into, 1, 0, 0));

    /* Calls that would escape the futex model, or that faultline does not know. */
    SHOW("futex_wait", syscall(NR_FUTEX_WAIT, &u, 1L, 0L, 0L, NULL, 0L));
    SHOW("past_the_table", syscall(NR_PAST_THE_TABLE, 0L, 0L, 0L));

    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(dfd >= 0);
    CHECK(fsync(dfd) == 0);
    printf("waiting\n");
    fflush(stdout);
    for (;;) sleep_ns(1000000000LL);
}
