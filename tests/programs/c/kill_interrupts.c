/* A signal one thread sends another interrupts the call it is blocked in,
 * when it is sent: two readers block (one on a pipe, one on a TCP socket),
 * the main thread sends each SIGUSR1 (a handler without SA_RESTART) after
 * 1 ms, and only 500 ms later writes to both. Each reader prints what its
 * call returned and when; natively both get EINTR at 0.001 s. */
#include <pthread.h>
#include <signal.h>

#include "net.h"

static int pipe_fds[2];
static int sock_pair[2];
static volatile sig_atomic_t usr1s;
static double start;

static void on_usr1(int sig) {
    (void)sig;
    usr1s++;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *what, ssize_t n, int err) {
    printf("%s: %s at %.3f s\n", what, n < 0 ? strerror(err) : "data", now() - start);
}

static void *pipe_reader(void *arg) {
    (void)arg;
    char b[8];
    ssize_t n = read(pipe_fds[0], b, sizeof b);
    report("pipe read", n, errno);
    return NULL;
}

static void *socket_reader(void *arg) {
    (void)arg;
    char b[8];
    ssize_t n = recv(sock_pair[1], b, sizeof b, 0);
    report("socket recv", n, errno);
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    CHECK(pipe(pipe_fds) == 0);
    tcp_pair(sock_pair);
    start = now();
    pthread_t readers[2];
    CHECK_RC(pthread_create(&readers[0], NULL, pipe_reader, NULL));
    CHECK_RC(pthread_create(&readers[1], NULL, socket_reader, NULL));
    struct timespec ms = {.tv_nsec = 1000000};
    nanosleep(&ms, NULL);
    for (int i = 0; i < 2; i++) CHECK_RC(pthread_kill(readers[i], SIGUSR1));
    struct timespec half = {.tv_nsec = 500000000};
    nanosleep(&half, NULL);
    CHECK(write(pipe_fds[1], "x", 1) == 1);
    CHECK(send(sock_pair[0], "x", 1, 0) == 1);
    for (int i = 0; i < 2; i++) CHECK_RC(pthread_join(readers[i], NULL));
    printf("handlers %d\n", (int)usr1s);
    return 0;
}
