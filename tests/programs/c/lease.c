/* A lease holder and the store it writes to, for the pause and clock tests.
 *
 *   lease server PORT         grants 1 s leases; a WRITE after the lease
 *                             expired (by the server's monotonic clock) is a
 *                             stale write: "STALE WRITE", exit 1.
 *   lease client HOST PORT wall|mono WRITES
 *                             acquires a lease, then repeatedly: checks it
 *                             still has 300 ms left on its own clock, "works"
 *                             100 ms, writes. No fencing token: the store
 *                             trusts the holder's check.
 *
 * Without faults every write lands with 200 ms to spare. A pause of the
 * client between its check and its write (a GC pause), or, with `wall`, a
 * backward step of its wall clock, makes a write arrive after the lease
 * expired. With `mono` the clock step is harmless. */
#include <stdint.h>

#include "net.h"

#define TTL_MS 1000
#define MARGIN_MS 300
#define WORK_MS 100

static int64_t now_ms(clockid_t clock) {
    struct timespec ts;
    CHECK(clock_gettime(clock, &ts) == 0);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int serve(int port) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(ls >= 0);
    int one = 1;
    CHECK(setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    CHECK(bind(ls, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(ls, 4) == 0);
    int fd = accept(ls, NULL, NULL);
    CHECK(fd >= 0);
    int64_t expiry = 0;
    long writes = 0;
    char line[128];
    while (recv_line(fd, line, sizeof line) > 0) {
        int64_t now = now_ms(CLOCK_MONOTONIC);
        if (strncmp(line, "ACQUIRE", 7) == 0) {
            expiry = now + TTL_MS;
            send_all(fd, "OK\n", 3);
        } else if (strncmp(line, "WRITE", 5) == 0) {
            if (now > expiry) {
                fprintf(stderr, "STALE WRITE %s: the lease expired %lld ms ago\n",
                        strtok(line + 6, "\n"), (long long)(now - expiry));
                return 1;
            }
            writes++;
            send_all(fd, "DONE\n", 5);
        } else {
            break;
        }
    }
    printf("server: %ld writes, none stale\n", writes);
    return 0;
}

static int client(const char *host, int port, clockid_t clock, long writes) {
    struct sockaddr_in sa;
    CHECK(resolve4(host, port, &sa) == 0);
    int fd = connect_retry(&sa, 50, 20);
    char line[128];
    long done = 0, leases = 0;
    while (done < writes) {
        int64_t asked = now_ms(clock);
        send_all(fd, "ACQUIRE\n", 8);
        CHECK(recv_line(fd, line, sizeof line) > 0 && strcmp(line, "OK\n") == 0);
        leases++;
        int64_t expiry = asked + TTL_MS;
        while (done < writes && now_ms(clock) < expiry - MARGIN_MS) {
            sleep_ns(WORK_MS * 1000000LL);
            int n = snprintf(line, sizeof line, "WRITE %ld\n", done);
            send_all(fd, line, (size_t)n);
            CHECK(recv_line(fd, line, sizeof line) > 0 && strcmp(line, "DONE\n") == 0);
            done++;
        }
    }
    send_all(fd, "BYE\n", 4);
    printf("client: %ld writes under %ld leases\n", done, leases);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && strcmp(argv[1], "server") == 0) return serve(atoi(argv[2]));
    if (argc == 6 && strcmp(argv[1], "client") == 0) {
        clockid_t clock = strcmp(argv[4], "wall") == 0 ? CLOCK_REALTIME : CLOCK_MONOTONIC;
        return client(argv[2], atoi(argv[3]), clock, atol(argv[5]));
    }
    fprintf(stderr, "usage: lease server PORT | lease client HOST PORT wall|mono WRITES\n");
    return 2;
}
