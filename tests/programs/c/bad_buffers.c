/* Reads and waits whose answer goes into memory: the data of a TCP
 * socket's and a wake-up pipe's reads (small and large), an epoll wait's
 * events, an accept's address. Each is made once into good memory and once
 * into memory the program cannot write (an address in the first page, a
 * read-only page, an unmapped page), where the call fails with EFAULT and
 * the program goes on.
 *
 * It does it all twice: with the descriptors it inherited, then after
 * closing every descriptor above stderr (as a daemon does) and putting
 * /dev/zero on descriptor 1000, a high number such a program may pick.
 *
 * An accept whose address cannot be written has taken the connection off
 * the queue and closes it: its peer reads end of file.
 *
 * Where a read failed, the kernel leaves the bytes it would have read, so
 * the program drains what is left before the next message; it prints only
 * what does not depend on that:
 *
 *   <phase>: tcp 'ping 1' pipe 'wake 1' big 3000 ok
 *   <phase>: tcp EFAULT EFAULT EFAULT, pipe EFAULT EFAULT EFAULT
 *   <phase>: after: tcp 'ping 2' pipe 'wake 2'
 *   <phase>: epoll 1 event data 7, into a bad pointer EFAULT
 *   <phase>: accept into a bad address EFAULT, its peer reads 0
 *
 * Usage: bad_buffers */
#define _GNU_SOURCE /* pipe2 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "net.h"

/* A listening socket on loopback, and its address. */
static int listener(struct sockaddr_in *sa) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    *sa = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(fd, (struct sockaddr *)sa, sizeof *sa) == 0);
    CHECK(listen(fd, 4) == 0);
    socklen_t len = sizeof *sa;
    CHECK(getsockname(fd, (struct sockaddr *)sa, &len) == 0);
    return fd;
}

/* Waits until `fd` has something to read. */
static void wait_readable(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CHECK(poll(&p, 1, 5000) == 1);
}

/* Reads what `fd` (non-blocking) has left, whatever it is. */
static void drain(int fd) {
    char junk[4096];
    while (read(fd, junk, sizeof junk) > 0) {
    }
}

/* "EFAULT" if `rc` failed so, else what it was. */
static const char *outcome(ssize_t rc) {
    static char other[64];
    if (rc < 0 && errno == EFAULT) return "EFAULT";
    snprintf(other, sizeof other, "rc %zd errno %d", rc, rc < 0 ? errno : 0);
    return other;
}

/* Sends `msg` on `to`, waits for it at `from` and reads it into good
 * memory: what was read, quoted. */
static const char *exchange(int to, int from, const char *msg, char *out, size_t cap) {
    CHECK(write(to, msg, strlen(msg)) == (ssize_t)strlen(msg));
    wait_readable(from);
    ssize_t n = read(from, out, cap - 1);
    CHECK(n > 0);
    out[n] = '\0';
    return out;
}

/* Sends a byte on `to`, then reads from `from` into each bad place in
 * turn; prints each outcome after `label`, then drains `from`. */
static void bad_reads(const char *label, int to, int from, void *const bad[3]) {
    printf("%s", label);
    for (int i = 0; i < 3; i++) {
        CHECK(write(to, "x", 1) == 1);
        wait_readable(from);
        printf(" %s", outcome(read(from, bad[i], 16)));
        drain(from);
    }
}

static void phase(const char *name) {
    /* The bad places: an address in the first page, a read-only page, an
     * unmapped page. */
    long page = sysconf(_SC_PAGESIZE);
    char *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(ro != MAP_FAILED);
    char *gone = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(gone != MAP_FAILED);
    CHECK(munmap(gone, (size_t)page) == 0);
    void *const bad[3] = {(void *)8, ro, gone};

    struct sockaddr_in sa;
    int lfd = listener(&sa);
    int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(client >= 0);
    CHECK(connect(client, (struct sockaddr *)&sa, sizeof sa) == 0);
    wait_readable(lfd);
    int server = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    CHECK(server >= 0);
    int p[2];
    CHECK(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);

    char tcp[64], pipe_msg[64];
    printf("%s: tcp '%s'", name, exchange(client, server, "ping 1", tcp, sizeof tcp));
    printf(" pipe '%s'", exchange(p[1], p[0], "wake 1", pipe_msg, sizeof pipe_msg));
    /* More than an answer carries in shared memory. */
    static char big_out[3000], big_in[3000];
    for (size_t i = 0; i < sizeof big_out; i++) big_out[i] = (char)('a' + i % 26);
    send_all(client, big_out, sizeof big_out);
    size_t got = 0;
    while (got < sizeof big_in) {
        wait_readable(server);
        ssize_t n = read(server, big_in + got, sizeof big_in - got);
        CHECK(n > 0);
        got += (size_t)n;
    }
    printf(" big %zu %s\n", got, memcmp(big_in, big_out, got) == 0 ? "ok" : "differs");

    printf("%s:", name);
    bad_reads(" tcp", client, server, bad);
    bad_reads(", pipe", p[1], p[0], bad);
    printf("\n");
    printf("%s: after: tcp '%s'", name, exchange(client, server, "ping 2", tcp, sizeof tcp));
    printf(" pipe '%s'\n", exchange(p[1], p[0], "wake 2", pipe_msg, sizeof pipe_msg));

    int ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 7};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
    CHECK(write(p[1], "e", 1) == 1);
    struct epoll_event out[4];
    int n = epoll_wait(ep, out, 4, 1000);
    CHECK(n == 1);
    printf("%s: epoll %d event data %llu", name, n, (unsigned long long)out[0].data.u64);
    printf(", into a bad pointer %s\n", outcome(epoll_wait(ep, bad[1], 4, 1000)));

    int second = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(second >= 0);
    CHECK(connect(second, (struct sockaddr *)&sa, sizeof sa) == 0);
    wait_readable(lfd);
    socklen_t len = sizeof(struct sockaddr_in);
    printf("%s: accept into a bad address %s", name,
           outcome(accept4(lfd, bad[1], &len, SOCK_CLOEXEC)));
    wait_readable(second);
    char byte;
    printf(", its peer reads %zd\n", read(second, &byte, 1));

    for (int fd = 3; fd < 1024; fd++) {
        if (fd != 1000) close(fd);
    }
    CHECK(munmap(ro, (size_t)page) == 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    phase("inherited");
    for (int fd = 3; fd < 1024; fd++) close(fd);
    int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
    CHECK(zero >= 0);
    CHECK(dup2(zero, 1000) == 1000);
    CHECK(close(zero) == 0);
    phase("closed");
    return 0;
}
