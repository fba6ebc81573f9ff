/* A TCP server thread and a client thread in one process, on one host.
 *
 * The server binds 0.0.0.0 on an ephemeral port and waits for its client
 * with select(); the client resolves TARGET (a name or address of this host),
 * connects non-blocking (EINPROGRESS, poll for POLLOUT, SO_ERROR), switches to
 * blocking, sends LINES lines and reads each echo, then half-closes and waits
 * for the server's EOF. Before that, a connect to a port nobody listens on
 * must be refused. Only the main thread prints, after joining both, so the
 * output does not depend on the interleaving:
 *
 *   port <ephemeral port>
 *   refused: Connection refused
 *   client local <ip> peer <ip>:port        ("other-port" if not the server's)
 *   server peer <ip> matches client local: yes|no
 *   reply 1: echo line 1
 *   ...
 *   client eof: yes
 *   server echoed <n> lines <bytes> bytes
 *
 * Only the first 64 replies are printed (the benchmark sends thousands).
 *
 * Usage: loopback_pair [TARGET=127.0.0.1] [LINES=3] */
#define _GNU_SOURCE /* accept4 */
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/select.h>

#include "net.h"

#define MAX_LINES 1000000
#define KEPT_REPLIES 64 /* replies printed; the rest are only checked */

static int listen_fd;
static int port;
static const char *target;
static int lines;

/* Filled by the server thread. */
static struct sockaddr_in server_peer;
static int server_lines;
static long server_bytes;

/* Filled by the client thread. */
static struct sockaddr_in client_local, client_peer;
static char replies[KEPT_REPLIES][64];
static int client_eof;

static void *server(void *arg) {
    (void)arg;
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(listen_fd, &rd);
    struct timeval tv = {.tv_sec = 10};
    CHECK(select(listen_fd + 1, &rd, NULL, NULL, &tv) == 1);
    CHECK(FD_ISSET(listen_fd, &rd));
    socklen_t len = sizeof server_peer;
    int fd = accept4(listen_fd, (struct sockaddr *)&server_peer, &len, SOCK_CLOEXEC);
    CHECK(fd >= 0);
    char line[64];
    size_t n;
    while ((n = recv_line(fd, line, sizeof line)) > 0) {
        char reply[80];
        int m = snprintf(reply, sizeof reply, "echo %s", line);
        send_all(fd, reply, (size_t)m);
        server_lines++;
        server_bytes += (long)n;
    }
    CHECK(close(fd) == 0);
    return NULL;
}

static void *client(void *arg) {
    (void)arg;
    struct sockaddr_in sa;
    int rc = resolve4(target, port, &sa);
    if (rc != 0) {
        fprintf(stderr, "cannot resolve %s: %s\n", target, gai_strerror(rc));
        exit(2);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        CHECK(errno == EINPROGRESS);
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        CHECK(poll(&p, 1, 10000) == 1);
        CHECK(p.revents & POLLOUT);
    }
    int err = -1;
    socklen_t elen = sizeof err;
    CHECK(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0);
    CHECK(err == 0);
    int flags = fcntl(fd, F_GETFL);
    CHECK(flags >= 0);
    CHECK(fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0);
    int one = 1;
    CHECK(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) == 0);
    socklen_t len = sizeof client_local;
    CHECK(getsockname(fd, (struct sockaddr *)&client_local, &len) == 0);
    len = sizeof client_peer;
    CHECK(getpeername(fd, (struct sockaddr *)&client_peer, &len) == 0);

    for (int i = 1; i <= lines; i++) {
        char msg[32];
        int m = snprintf(msg, sizeof msg, "line %d\n", i);
        send_all(fd, msg, (size_t)m);
        char spare[sizeof replies[0]];
        char *into = i <= KEPT_REPLIES ? replies[i - 1] : spare;
        CHECK(recv_line(fd, into, sizeof spare) > 0);
    }
    CHECK(shutdown(fd, SHUT_WR) == 0);
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR) {
    }
    client_eof = n == 0;
    CHECK(close(fd) == 0);
    return NULL;
}

/* A port that was bound and released: nothing listens there. */
static int unused_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    socklen_t len = sizeof sa;
    CHECK(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    CHECK(close(fd) == 0);
    return ntohs(sa.sin_port);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    target = argc > 1 ? argv[1] : "127.0.0.1";
    lines = (int)arg_or(argc, argv, 2, 3);
    CHECK(lines >= 1 && lines <= MAX_LINES);

    int closed = unused_port();
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(listen_fd >= 0);
    int one = 1;
    CHECK(setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    CHECK(bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(listen_fd, 8) == 0);
    socklen_t len = sizeof sa;
    CHECK(getsockname(listen_fd, (struct sockaddr *)&sa, &len) == 0);
    port = ntohs(sa.sin_port);
    printf("port %d\n", port);

    struct sockaddr_in refused;
    CHECK(resolve4("127.0.0.1", closed, &refused) == 0);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    int rc = connect(fd, (struct sockaddr *)&refused, sizeof refused);
    printf("refused: %s\n", rc == 0 ? "connected" : strerror(errno));
    CHECK(close(fd) == 0);

    pthread_t s, c;
    CHECK_RC(pthread_create(&s, NULL, server, NULL));
    CHECK_RC(pthread_create(&c, NULL, client, NULL));
    CHECK_RC(pthread_join(c, NULL));
    CHECK_RC(pthread_join(s, NULL));
    CHECK(close(listen_fd) == 0);

    printf("client local %s", ip_of(&client_local));
    printf(" peer %s:%s\n", ip_of(&client_peer),
           ntohs(client_peer.sin_port) == port ? "port" : "other-port");
    int same = server_peer.sin_addr.s_addr == client_local.sin_addr.s_addr &&
               server_peer.sin_port == client_local.sin_port;
    printf("server peer %s matches client local: %s\n", ip_of(&server_peer), same ? "yes" : "no");
    for (int i = 0; i < lines && i < KEPT_REPLIES; i++) printf("reply %d: %s", i + 1, replies[i]);
    printf("client eof: %s\n", client_eof ? "yes" : "no");
    printf("server echoed %d lines %ld bytes\n", server_lines, server_bytes);
    return 0;
}
