/* A request/response pair for the link and reset fault tests.
 *
 *   rpc server PORT tcp|udp   answers every "PING n" line (a TCP stream,
 *                             one connection after another; or UDP
 *                             datagrams) with "PONG n"
 *   rpc client HOST PORT tcp|udp TIMEOUT_MS COUNT [reconnect] [hang] [history]
 *                             sends COUNT pings 50 ms apart, each waiting
 *                             TIMEOUT_MS for its pong; no retries: a late
 *                             or lost answer is "TIMEOUT", exit 1. Over TCP
 *                             an error on the connection (ECONNRESET) ends
 *                             it with "RESET", exit 1, unless `reconnect`:
 *                             then it connects again and sends that ping
 *                             again. An answer to another ping (a
 *                             datagram that arrived twice) is "STALE",
 *                             exit 1. With `hang` a TIMEOUT or RESET does
 *                             not end it: it stops sending and idles (a
 *                             client stuck for good). With `history` each
 *                             ping is a put in $FAULTLINE_HISTORY: ok when
 *                             its pong came, unknown when not.
 *
 * The timeout is short but ample for the default 1-5 ms links: only a
 * slower or lossy link (a `link` fault) exposes it, and only a reset breaks
 * a client that does not reconnect. */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>

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
            /* Not recv_line, which aborts on an error: a reset connection just
             * ends here, and the next one is accepted. */
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

/* The client's switches. */
struct opts {
    int reconnect, hang, history;
};

static int64_t mono_ns(void) {
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Appends ping `i` as a put to the history (fd < 0: none kept). */
static void record(int fd, long i, int64_t invoke, int ok) {
    if (fd < 0) return;
    char line[256];
    int n;
    if (ok) {
        n = snprintf(line, sizeof line,
                     "{\"process\":1,\"op\":\"put\",\"key\":\"p%ld\",\"value\":\"v\","
                     "\"invoke\":%lld,\"complete\":%lld,\"outcome\":\"ok\"}\n",
                     i, (long long)invoke, (long long)mono_ns());
    } else {
        n = snprintf(line, sizeof line,
                     "{\"process\":1,\"op\":\"put\",\"key\":\"p%ld\",\"value\":\"v\","
                     "\"invoke\":%lld,\"complete\":null,\"outcome\":\"unknown\"}\n",
                     i, (long long)invoke);
    }
    CHECK(write(fd, line, (size_t)n) == n);
}

/* A TIMEOUT or RESET: fatal, or with `hang` the client stops for good. */
static int give_up(const struct opts *o, const char *what) {
    if (!o->hang) {
        fprintf(stderr, "%s", what);
        return 1;
    }
    printf("hanging after: %s", what);
    for (;;) sleep_ns(1000000000LL);
}

static int client(const char *host, int port, int tcp, int timeout_ms, long count,
                  const struct opts *o) {
    int history = -1;
    if (o->history) {
        const char *path = getenv("FAULTLINE_HISTORY");
        CHECK(path != NULL);
        history = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        CHECK(history >= 0);
    }
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
        int64_t invoke = mono_ns();
        ssize_t sent = send(fd, line, (size_t)m, MSG_NOSIGNAL);
        ssize_t got = -1;
        if (sent == m) {
            if (!wait_readable(fd, timeout_ms)) {
                record(history, i, invoke, 0);
                snprintf(line, sizeof line, "TIMEOUT: no answer to ping %ld within %d ms\n", i,
                         timeout_ms);
                return give_up(o, line);
            }
            got = recv(fd, line, sizeof line - 1, 0);
        }
        if (got <= 0) {
            if (!tcp) CHECK(got > 0);
            record(history, i, invoke, 0);
            if (!o->reconnect) {
                snprintf(line, sizeof line, "RESET: ping %ld: %s\n", i,
                         got == 0 ? "connection closed" : strerror(errno));
                return give_up(o, line);
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
        record(history, i, invoke, 1);
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
    if (argc >= 7 && strcmp(argv[1], "client") == 0) {
        struct opts o = {0, 0, 0};
        for (int i = 7; i < argc; i++) {
            if (strcmp(argv[i], "reconnect") == 0) o.reconnect = 1;
            else if (strcmp(argv[i], "hang") == 0) o.hang = 1;
            else if (strcmp(argv[i], "history") == 0) o.history = 1;
            else goto usage;
        }
        return client(argv[2], atoi(argv[3]), strcmp(argv[4], "tcp") == 0, atoi(argv[5]),
                      atol(argv[6]), &o);
    }
usage:
    fprintf(stderr,
            "usage: rpc server PORT tcp|udp | rpc client HOST PORT tcp|udp TIMEOUT_MS COUNT "
            "[reconnect] [hang] [history]\n");
    return 2;
}
