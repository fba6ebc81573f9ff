/* The libc calls a C server makes around its requests, each ROUNDS times:
 * a loopback listener with a client connected, accepted, looked at (names,
 * options, a poll) and shut; a file created, written, synced, stat-ed
 * (stat, lstat, fstat, fstatat), duplicated, truncated, renamed and
 * removed with its directory; random bytes and a readlink. Prints what it
 * saw; exits 1 if a step fails.
 *
 * Usage: fd_calls [ROUNDS=20] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static void sockets(int port) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(l >= 0);
    int one = 1;
    CHECK(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(l, 4) == 0);
    int c = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(c >= 0);
    CHECK(connect(c, (struct sockaddr *)&a, sizeof a) == 0);
    int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    CHECK(s >= 0);
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    CHECK(getpeername(s, (struct sockaddr *)&peer, &len) == 0);
    len = sizeof peer;
    CHECK(getsockname(c, (struct sockaddr *)&peer, &len) == 0);
    int got = 0;
    len = sizeof got;
    CHECK(getsockopt(l, SOL_SOCKET, SO_REUSEADDR, &got, &len) == 0 && got);
    CHECK(write(c, "x", 1) == 1);
    struct pollfd p = {.fd = s, .events = POLLIN};
    CHECK(poll(&p, 1, 1000) == 1);
    CHECK(shutdown(c, SHUT_WR) == 0);
    CHECK(close(s) == 0 && close(c) == 0 && close(l) == 0);
}

static void files(const char *dir) {
    char path[256], moved[256];
    snprintf(path, sizeof path, "%s/file", dir);
    snprintf(moved, sizeof moved, "%s/moved", dir);
    CHECK(mkdir(dir, 0755) == 0);
    int f = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(f >= 0);
    CHECK(write(f, "data\n", 5) == 5);
    CHECK(fsync(f) == 0 && fdatasync(f) == 0);
    struct stat st;
    CHECK(fstat(f, &st) == 0 && st.st_size == 5);
    CHECK(stat(path, &st) == 0 && lstat(path, &st) == 0);
    CHECK(fstatat(AT_FDCWD, path, &st, 0) == 0);
    int d = dup(f);
    CHECK(d >= 0 && dup2(f, 40) == 40);
    CHECK(ftruncate(d, 2) == 0);
    CHECK(close(d) == 0 && close(40) == 0 && close(f) == 0);
    CHECK(rename(path, moved) == 0);
    CHECK(unlink(moved) == 0);
    CHECK(rmdir(dir) == 0);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/faultline-fd-calls-%d", (int)getpid());
    for (int i = 0; i < rounds; i++) {
        sockets(7400 + i);
        files(dir);
    }
    unsigned char r[8];
    CHECK(getrandom(r, sizeof r, 0) == sizeof r);
    char link[256];
    ssize_t n = readlink("/proc/self/exe", link, sizeof link - 1);
    CHECK(n > 0);
    printf("%d rounds, random %02x%02x%02x%02x\n", rounds, r[0], r[1], r[2], r[3]);
    return 0;
}
