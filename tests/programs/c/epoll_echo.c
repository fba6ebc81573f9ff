/* A non-blocking, edge-triggered epoll TCP echo server: it listens on
 * 0.0.0.0:PORT, echoes every byte back to its sender, and exits 0 once
 * CLIENTS connections have been closed by their peers (EOF or reset).
 *
 * Prints `listening on port PORT` at start and, at the end,
 * `served CLIENTS clients LINES lines` (LINES: newlines echoed in total).
 *
 * Usage: epoll_echo PORT CLIENTS */
#define _GNU_SOURCE /* accept4 */
#include <sys/epoll.h>

#include "net.h"

#define MAX_FDS 1024
#define OUT_CAP 65536

struct conn {
    int open;
    int eof;
    size_t out_len;
    long lines;
    char out[OUT_CAP];
};

static struct conn conns[MAX_FDS];
static int served;
static long total_lines;

static void finish(int epfd, int fd) {
    struct conn *c = &conns[fd];
    CHECK(epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL) == 0);
    CHECK(close(fd) == 0);
    total_lines += c->lines;
    c->open = 0;
    served++;
}

/* Writes what is pending until done or EAGAIN. Returns 0 if the peer is gone. */
static int flush(int fd) {
    struct conn *c = &conns[fd];
    size_t off = 0;
    while (off < c->out_len) {
        ssize_t n = send(fd, c->out + off, c->out_len - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return 0;
        CHECK(n > 0);
        off += (size_t)n;
    }
    memmove(c->out, c->out + off, c->out_len - off);
    c->out_len -= off;
    return 1;
}

/* Reads until EAGAIN or EOF, queueing the bytes. Returns 0 if the peer reset. */
static int drain(int fd) {
    struct conn *c = &conns[fd];
    for (;;) {
        if (c->out_len == OUT_CAP) return 1; /* read the rest after a flush */
        ssize_t n = read(fd, c->out + c->out_len, OUT_CAP - c->out_len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
        if (n < 0 && errno == ECONNRESET) return 0;
        CHECK(n >= 0);
        if (n == 0) {
            c->eof = 1;
            return 1;
        }
        for (ssize_t i = 0; i < n; i++) c->lines += c->out[c->out_len + (size_t)i] == '\n';
        c->out_len += (size_t)n;
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 3) {
        fprintf(stderr, "usage: epoll_echo PORT CLIENTS\n");
        return 2;
    }
    int port = atoi(argv[1]);
    int clients = atoi(argv[2]);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    CHECK(lfd >= 0);
    int one = 1;
    CHECK(setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((unsigned short)port),
                             .sin_addr.s_addr = htonl(INADDR_ANY)};
    CHECK(bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(lfd, 64) == 0);
    printf("listening on port %d\n", port);

    int epfd = epoll_create1(EPOLL_CLOEXEC);
    CHECK(epfd >= 0);
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.fd = lfd};
    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev) == 0);

    while (served < clients) {
        struct epoll_event evs[16];
        int n = epoll_wait(epfd, evs, 16, -1);
        if (n < 0 && errno == EINTR) continue;
        CHECK(n > 0);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == lfd) {
                for (;;) {
                    int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (cfd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                    if (cfd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
                    CHECK(cfd >= 0 && cfd < MAX_FDS);
                    memset(&conns[cfd], 0, sizeof conns[cfd]);
                    conns[cfd].open = 1;
                    struct epoll_event cev = {
                        .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.fd = cfd};
                    CHECK(epoll_ctl(epfd, EPOLL_CTL_ADD, cfd, &cev) == 0);
                }
                continue;
            }
            if (!conns[fd].open) continue;
            /* Edge-triggered: on any event, read until EAGAIN and write until
             * EAGAIN; a full buffer that drained completely means more to read. */
            int alive = 1;
            for (;;) {
                if (!drain(fd)) {
                    alive = 0;
                    break;
                }
                int full = conns[fd].out_len == OUT_CAP;
                size_t before = conns[fd].out_len;
                if (!flush(fd)) {
                    alive = 0;
                    break;
                }
                if (!full || conns[fd].out_len == before) break;
            }
            if (!alive || (conns[fd].eof && conns[fd].out_len == 0) ||
                (evs[i].events & EPOLLERR)) {
                finish(epfd, fd);
            }
        }
    }
    CHECK(close(epfd) == 0);
    CHECK(close(lfd) == 0);
    printf("served %d clients %ld lines\n", served, total_lines);
    return 0;
}
