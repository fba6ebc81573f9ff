/* A blocking TCP echo client: resolves HOST, connects to PORT (retrying for
 * up to 2 s while the connection is refused, as the server may still be
 * starting), sends LINES lines `NAME line I`, reads each echo back and checks
 * it, half-closes and waits for the server's EOF.
 *
 * Prints `echo: NAME line I` per line, then `closed`. Exits 1 if an echo
 * differs from what was sent.
 *
 * Usage: echo_client HOST PORT NAME LINES */
#include "net.h"

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 5) {
        fprintf(stderr, "usage: echo_client HOST PORT NAME LINES\n");
        return 2;
    }
    const char *name = argv[3];
    int lines = atoi(argv[4]);
    struct sockaddr_in sa;
    int rc = resolve4(argv[1], atoi(argv[2]), &sa);
    if (rc != 0) {
        fprintf(stderr, "cannot resolve %s: %s\n", argv[1], gai_strerror(rc));
        return 2;
    }
    int fd = connect_retry(&sa, 200, 10);
    for (int i = 1; i <= lines; i++) {
        char msg[128], echo[128];
        int m = snprintf(msg, sizeof msg, "%s line %d\n", name, i);
        send_all(fd, msg, (size_t)m);
        CHECK(recv_line(fd, echo, sizeof echo) > 0);
        if (strcmp(msg, echo) != 0) {
            printf("mismatch: sent %s got %s\n", msg, echo);
            return 1;
        }
        printf("echo: %s", echo);
    }
    CHECK(shutdown(fd, SHUT_WR) == 0);
    char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR) {
    }
    CHECK(n == 0);
    CHECK(close(fd) == 0);
    printf("closed\n");
    return 0;
}
