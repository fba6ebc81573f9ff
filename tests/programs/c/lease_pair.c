/* A two-node leader lease with an election-safety bug that heals by itself,
 * and the invariant probe that catches it while it lasts.
 *
 *   lease_pair node NAME PEER [--leader] [--bug]
 *   lease_pair probe
 *
 * node: the leader (--leader: from the start, term 1) sends "HB <term>
 * <name>" datagrams to PEER:7001 every 100 ms; a follower that hears none
 * for 500 ms takes over with term+1 (with --bug: with the SAME term, so two
 * leaders share a term while the old one is cut off). A leader steps down
 * when it hears a heartbeat of a higher term, or of its own term from a
 * peer whose name sorts first: once the network heals, one leader is left,
 * and nothing at the end shows the bug. Every node answers a TCP connection
 * on port 7000 with "<role> <term>\n".
 *
 * probe: asks every node of $FAULTLINE_NODES (name=address,...) for its
 * role and term, prints one line with $FAULTLINE_VTIME, and exits 1 if two
 * nodes are leaders of the same term (nodes that do not answer are
 * skipped). */
#define _GNU_SOURCE
#include <poll.h>

#include "net.h"

enum { STATUS_PORT = 7000, HB_PORT = 7001 };

static long long now_ns(void) {
    struct timespec ts;
    CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int bound_socket(int type, int port) {
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    int one = 1;
    CHECK(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    return fd;
}

static int node(const char *name, const char *peer, int leader, int bug) {
    long term = 1;
    int listener = bound_socket(SOCK_STREAM, STATUS_PORT);
    CHECK(listen(listener, 16) == 0);
    int udp = bound_socket(SOCK_DGRAM, HB_PORT);
    struct sockaddr_in peer_addr;
    for (int i = 0; resolve4(peer, HB_PORT, &peer_addr) != 0; i++) CHECK(i < 10);
    long long last_hb = now_ns(), next_send = now_ns();
    for (;;) {
        long long now = now_ns();
        if (leader && now >= next_send) {
            char msg[64];
            int n = snprintf(msg, sizeof msg, "HB %ld %s", term, name);
            sendto(udp, msg, (size_t)n, 0, (struct sockaddr *)&peer_addr, sizeof peer_addr);
            next_send = now + 100000000LL;
        }
        if (!leader && now - last_hb > 500000000LL) {
            leader = 1;
            if (!bug) term++;
            printf("%s: leader of term %ld\n", name, term);
            fflush(stdout);
            next_send = now;
            continue;
        }
        struct pollfd fds[2] = {{.fd = listener, .events = POLLIN}, {.fd = udp, .events = POLLIN}};
        CHECK(poll(fds, 2, 20) >= 0);
        if (fds[0].revents & POLLIN) {
            int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0) {
                char line[64];
                int n = snprintf(line, sizeof line, "%s %ld\n", leader ? "leader" : "follower", term);
                send(c, line, (size_t)n, MSG_NOSIGNAL);
                close(c);
            }
        }
        if (fds[1].revents & POLLIN) {
            char msg[64];
            ssize_t n = recv(udp, msg, sizeof msg - 1, 0);
            long t;
            char from[32];
            if (n > 0) {
                msg[n] = '\0';
                if (sscanf(msg, "HB %ld %31s", &t, from) == 2 && t >= term) {
                    last_hb = now_ns();
                    if (leader && (t > term || strcmp(from, name) < 0)) {
                        printf("%s: follower in term %ld (heard %s)\n", name, t, from);
                        fflush(stdout);
                        leader = 0;
                    }
                    if (!leader) term = t;
                }
            }
        }
    }
}

static int probe(void) {
    const char *nodes = getenv("FAULTLINE_NODES");
    const char *vtime = getenv("FAULTLINE_VTIME");
    CHECK(nodes != NULL && vtime != NULL);
    char list[512];
    snprintf(list, sizeof list, "%s", nodes);
    char seen[8][32];
    long terms[8];
    int leaders[8], count = 0;
    printf("vtime=%s nodes=%s:", vtime, nodes);
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item && count < 8;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        CHECK(eq != NULL);
        *eq = '\0';
        struct sockaddr_in sa;
        CHECK(resolve4(eq + 1, STATUS_PORT, &sa) == 0);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(fd >= 0);
        char line[64], role[16];
        long term;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && recv_line(fd, line, sizeof line) > 0 &&
            sscanf(line, "%15s %ld", role, &term) == 2) {
            printf(" %s=%s/%ld", item, role, term);
            snprintf(seen[count], sizeof seen[count], "%s", item);
            terms[count] = term;
            leaders[count] = strcmp(role, "leader") == 0;
            count++;
        } else {
            printf(" %s=unreachable", item);
        }
        close(fd);
    }
    printf("\n");
    for (int i = 0; i < count; i++)
        for (int j = i + 1; j < count; j++)
            if (leaders[i] && leaders[j] && terms[i] == terms[j]) {
                printf("two leaders of term %ld: %s and %s\n", terms[i], seen[i], seen[j]);
                return 1;
            }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && strcmp(argv[1], "probe") == 0) return probe();
    CHECK(argc >= 4 && strcmp(argv[1], "node") == 0);
    int leader = 0, bug = 0;
    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--leader") == 0) leader = 1;
        else if (strcmp(argv[i], "--bug") == 0) bug = 1;
        else CHECK(!"unknown flag");
    }
    return node(argv[2], argv[3], leader, bug);
}
