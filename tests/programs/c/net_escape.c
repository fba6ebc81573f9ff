/* Tries to reach the host network: a TCP connect and a UDP datagram to the
 * port given in argv[1], on 127.0.0.1 (which under faultline is the simulated
 * host itself) and on 127.0.0.2 (not a simulated host: must fail closed).
 * Then a raw socket, which must be refused. Nothing may reach the real
 * listeners the test holds on both addresses. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void attempt(int type, const char *label, const char *ip, int port) {
    int fd = socket(AF_INET, type, 0);
    if (fd < 0) {
        printf("%s %s socket: %s\n", label, ip, strerror(errno));
        return;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    if (type == SOCK_STREAM) {
        int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
        printf("%s %s connect: %s\n", label, ip, rc == 0 ? "connected" : strerror(errno));
    } else {
        ssize_t n = sendto(fd, "x", 1, 0, (struct sockaddr *)&sa, sizeof sa);
        printf("%s %s sendto: %s\n", label, ip, n == 1 ? "sent" : strerror(errno));
    }
    close(fd);
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 9;
    const char *ips[] = {"127.0.0.1", "127.0.0.2"};
    for (int i = 0; i < 2; i++) {
        attempt(SOCK_STREAM, "tcp", ips[i], port);
        attempt(SOCK_DGRAM, "udp", ips[i], port);
    }
    attempt(SOCK_RAW, "raw", ips[1], port);
    return 0;
}
