/* dir_links.c DIR: creates files in DIR (a node's data_dir under faultline
 * run, or any folder), lists DIR with readdir and prints each entry's d_ino
 * next to the inode stat shows for it; then prints what readlink reads for
 * /proc/self, /proc/thread-self and the /proc/self/fd links of a pipe and a
 * socketpair, next to their fstat inodes. On the host the new files' inode
 * numbers, the pids and the pipe inodes differ from run to run; under
 * faultline they are the simulated ones, the same in every run. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static void show_link(const char *label, const char *path) {
    char buf[256];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    CHECK(n > 0);
    buf[n] = 0;
    printf("%s %s\n", label, buf);
}

static void show_fd(const char *label, int fd) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    show_link(label, path);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    printf("%s_ino %lu\n", label, (unsigned long)st.st_ino);
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    const char *names[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
        CHECK(fd >= 0);
        CHECK(close(fd) == 0);
    }
    DIR *d = opendir(argv[1]);
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        struct stat st;
        CHECK(stat(path, &st) == 0);
        printf("entry %s d_ino=%lu stat_ino=%lu\n", e->d_name, (unsigned long)e->d_ino,
               (unsigned long)st.st_ino);
    }
    CHECK(closedir(d) == 0);
    printf("getpid %d\n", (int)getpid());
    printf("gettid %d\n", (int)gettid());
    show_link("self", "/proc/self");
    show_link("thread_self", "/proc/thread-self");
    int p[2];
    CHECK(pipe(p) == 0);
    show_fd("pipe", p[0]);
    int s[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, s) == 0);
    show_fd("socket", s[0]);
    return 0;
}
