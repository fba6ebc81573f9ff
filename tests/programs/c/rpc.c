/* A request/response pair for the link and reset fault tests.
 *
 *   rpc server PORT tcp|udp   answers every "PING n" line (a TCP stream,
 *                             one connection after another; or UDP
 *                             datagrams) with "PONG n"
 *   rpc client HOST PORT tcp|udp TIMEOUT_MS COUNT [reconnect]
 *                             sends COUNT pings 50 ms apart, each waiting
 *                             TIMEOUT_MS for its pong; no retries: a late
 *                             or lost answer is "TIMEOUT", exit 1. Over TCP
 *                             an error on the connection (ECONNRESET) ends
 *                             it with "RESET", exit 1, unless `reconnect`:
 *                             then it connects again and sends that ping
 *                             again. An answer to another ping (a
 *                             datagram that arrived twice) is "STALE",
 *                             exit 1.
 *
 * The timeout is short but ample for the default 1-5 ms links: only a
 * slower or lossy link (a `link` fault) exposes it, and only a reset breaks
 * a client that does not reconnect. */
#include <poll.h>

#include "net.h"

#define GAP_MS 50

static int listen_on(int port, int type) {
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    int one = 1;
    CHECK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    if (type == SOCK_STREAM) CHECK(listen(fd, 4) == 0);
    return fd;
}

static int serve_tcp(int port) {
    int ls = listen_on(port, SOCK_STREAM);
    for (;;) {
        int fd = accept(ls, NULL, NULL);
        CHECK(fd >= 0);
        char line[128];
        for (;;) {
            ssize_t got = 0;
            /* recv_line aborts on errors; a reset connection just ends here. */
            char c;
            size_t len = 0;
            while (len + 1 < sizeof line && (got = read(fd, &c, 1)) == 1) {
                line[len++] = c;
                if (c == '\n') break;
            }
            if (got <= 0) break;
            line[len] = '\0';
            long n = atol(line + 5);
            int m = snprintf(line, sizeof line, "PONG %ld\n", n);
            if (send(fd, line, (size_t)m, MSG_NOSIGNAL) != m) break;
        }
        close(fd);
    }
}

static int serve_udp(int port) {
    int fd = listen_on(port, SOCK_DGRAM);
    for (;;) {
        char buf[128];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(fd, buf, sizeof buf - 1, 0, (struct sockaddr *)&from, &fl);
        CHECK(n > 0);
        buf[n] = '\0';
        int m = snprintf(buf, sizeof buf, "PONG %ld\n", atol(buf + 5));
        CHECK(sendto(fd, buf, (size_t)m, 0, (struct sockaddr *)&from, fl) == m);
    }
}

/* Waits up to `ms` for `fd` to become readable: 1 ready, 0 timed out. */
static int wait_readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r;
    while ((r = poll(&p, 1, ms)) < 0 && errno == EINTR) {
    }
    CHECK(r >= 0);
    return r;
}

static int client(const char *host, int port, int tcp, int timeout_ms, long count,
                  int reconnect) {
    struct sockaddr_in sa;
    CHECK(resolve4(host, port, &sa) == 0);
    int fd;
    if (tcp) {
        fd = connect_retry(&sa, 50, 20);
    } else {
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        CHECK(fd >= 0);
        CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    }
    long reconnects = 0;
    for (long i = 0; i < count; i++) {
        char line[128];
        int m = snprintf(line, sizeof line, "PING %ld\n", i);
        ssize_t sent = send(fd, line, (size_t)m, MSG_NOSIGNAL);
        ssize_t got = -1;
        if (sent == m) {
            if (!wait_readable(fd, timeout_ms)) {
                fprintf(stderr, "TIMEOUT: no answer to ping %ld within %d ms\n", i, timeout_ms);
                return 1;
            }
            got = recv(fd, line, sizeof line - 1, 0);
        }
        if (got <= 0) {
            if (!tcp) CHECK(got > 0);
            if (!reconnect) {
                fprintf(stderr, "RESET: ping %ld: %s\n", i,
                        got == 0 ? "connection closed" : strerror(errno));
                return 1;
            }
            close(fd);
            fd = connect_retry(&sa, 50, 20);
            reconnects++;
            i--;
            continue;
        }
        line[got] = '\0';
        if (atol(line + 5) != i) {
            fprintf(stderr, "STALE: ping %ld answered by pong %ld\n", i, atol(line + 5));
            return 1;
        }
        sleep_ns(GAP_MS * 1000000LL);
    }
    printf("client: %ld pongs, %ld reconnect(s)\n", count, reconnects);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 4 && strcmp(argv[1], "server") == 0) {
        int port = atoi(argv[2]);
        return strcmp(argv[3], "tcp") == 0 ? serve_tcp(port) : serve_udp(port);
    }
    if ((argc == 7 || argc == 8) && strcmp(argv[1], "client") == 0) {
        int reconnect = argc == 8 && strcmp(argv[7], "reconnect") == 0;
        return client(argv[2], atoi(argv[3]), strcmp(argv[4], "tcp") == 0, atoi(argv[5]),
                      atol(argv[6]), reconnect);
    }
    fprintf(stderr,
            "usage: rpc server PORT tcp|udp | rpc client HOST PORT tcp|udp TIMEOUT_MS COUNT "
            "[reconnect]\n");
    return 2;
}
