/* Shared helpers for the network test programs (IPv4, TCP unless noted). */
#ifndef FAULTLINE_TEST_NET_H
#define FAULTLINE_TEST_NET_H

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

/* Resolves `host` (a name or dotted quad) to an IPv4 address with `port`.
 * Returns 0, or the getaddrinfo error code. */
static inline int resolve4(const char *host, int port, struct sockaddr_in *out) {
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0) return rc;
    *out = *(struct sockaddr_in *)res->ai_addr;
    out->sin_port = htons((unsigned short)port);
    freeaddrinfo(res);
    return 0;
}

/* The dotted-quad address of `sa` (static buffer, one call at a time). */
static inline const char *ip_of(const struct sockaddr_in *sa) {
    static char buf[INET_ADDRSTRLEN];
    CHECK(inet_ntop(AF_INET, &sa->sin_addr, buf, sizeof buf) != NULL);
    return buf;
}

/* Two connected TCP sockets over loopback, since socketpair() is not
 * simulated: pair[0] connected, pair[1] accepted; the listener is closed. */
static inline void tcp_pair(int pair[2]) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(l, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(l, 1) == 0);
    socklen_t len = sizeof sa;
    CHECK(getsockname(l, (struct sockaddr *)&sa, &len) == 0);
    pair[0] = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(pair[0], (struct sockaddr *)&sa, sizeof sa) == 0);
    pair[1] = accept(l, NULL, NULL);
    CHECK(pair[1] >= 0);
    close(l);
}

/* Writes all `len` bytes (blocking fd), without SIGPIPE. */
static inline void send_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        CHECK(n > 0);
        buf += n;
        len -= (size_t)n;
    }
}

/* Reads one '\n'-terminated line (blocking fd) into buf, NUL-terminated,
 * newline included. Returns its length, or 0 at EOF before any byte. */
static inline size_t recv_line(int fd, char *buf, size_t cap) {
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t n = read(fd, buf + got, 1);
        if (n < 0 && errno == EINTR) continue;
        CHECK(n >= 0);
        if (n == 0) break;
        if (buf[got++] == '\n') break;
    }
    buf[got] = '\0';
    return got;
}

/* Connects a new TCP socket to `sa`, retrying (every `interval_ms`, at most
 * `attempts` times) while the connection is refused: a peer node may not be
 * listening yet. Returns the connected fd. */
static inline int connect_retry(const struct sockaddr_in *sa, int attempts, long interval_ms) {
    for (int i = 1;; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(fd >= 0);
        if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0) return fd;
        int err = errno;
        CHECK(close(fd) == 0);
        errno = err;
        CHECK(err == ECONNREFUSED && i < attempts);
        sleep_ns(interval_ms * 1000000LL);
    }
}

#endif
