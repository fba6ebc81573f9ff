/* Tries to reach the host network: a TCP connect to the port given in argv[1]
 * on 127.0.0.1, and a UDP datagram to it. Under faultline both must fail
 * before anything leaves the process. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void attempt(int type, const char *label, int port) {
    int fd = socket(AF_INET, type, 0);
    if (fd < 0) {
        printf("%s socket: %s\n", label, strerror(errno));
        return;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (type == SOCK_STREAM) {
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        printf("%s connect: %s\n", label, rc == 0 ? "connected" : strerror(errno));
    } else {
        ssize_t n = sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof sa);
        printf("%s sendto: %s\n", label, n == 1 ? "sent" : strerror(errno));
    }
    close(fd);
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 9;
    attempt(SOCK_STREAM, "tcp", port);
    attempt(SOCK_DGRAM, "udp", port);
    return 0;
}
