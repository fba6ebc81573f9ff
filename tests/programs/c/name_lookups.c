/* Resolves "localhost" with getaddrinfo N times: each lookup makes glibc
 * open /etc/hosts (and read /etc/resolv.conf's state) with its own inline
 * calls (__open_nocancel), past any LD_PRELOAD function. Prints the count
 * and the first address found.
 * Usage: name_lookups [lookups=100] */
#include <arpa/inet.h>
#include <netdb.h>

#include "common.h"

int main(int argc, char **argv) {
    long lookups = (long)arg_or(argc, argv, 1, 100);
    char first[INET6_ADDRSTRLEN] = "";
    for (long i = 0; i < lookups; i++) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        int rc = getaddrinfo("localhost", "80", &hints, &res);
        CHECK(rc == 0);
        if (i == 0) {
            struct sockaddr_in *sin = (struct sockaddr_in *)res->ai_addr;
            CHECK(inet_ntop(AF_INET, &sin->sin_addr, first, sizeof first) != NULL);
        }
        freeaddrinfo(res);
    }
    printf("lookups %ld first %s\n", lookups, first);
    return 0;
}
