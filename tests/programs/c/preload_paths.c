/* Everything the LD_PRELOAD fast path answers, and the ways a program can
 * take it away from its children. Run with and without `faultline
 * --preload`, it must print the same and leave the same trace.
 *
 * 1. A TCP exchange between two threads: the client sends LINES lines,
 *    cycling through write(), send() and sendto(); the server reads them with
 *    read(), recv() and recvfrom() and echoes each; the client reads the
 *    echoes with read().
 * 2. A SIGALRM handler without SA_RESTART interrupts a 5 s nanosleep after
 *    1 s: EINTR, with the time left in *rem. clock_nanosleep gets the same.
 * 3. A SIGUSR1 handler with SA_RESTART: a thread blocked in recv() gets the
 *    signal, runs the handler, and its recv() goes on to get the data.
 * 4. MODE, then fork + exec of this program as "child", which does the
 *    exchange again: "inherit" leaves the channel alone; "close" closes its
 *    descriptor (1000) first; "scribble" maps it and overwrites its header;
 *    "unset" drops LD_PRELOAD from the child's environment. Each must fall
 *    back to ptrace and run the same.
 *
 * Usage: preload_paths [inherit|close|scribble|unset|child] [LINES=50] */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "net.h"

static int lines = 50;
static int listen_fd;

static void *server(void *arg) {
    (void)arg;
    int fd = accept(listen_fd, NULL, NULL);
    CHECK(fd >= 0);
    char buf[64];
    for (int i = 0; i < lines; i++) {
        size_t got = 0;
        while (got == 0 || buf[got - 1] != '\n') {
            ssize_t n;
            switch (i % 3) {
            case 0: n = read(fd, buf + got, sizeof buf - got); break;
            case 1: n = recv(fd, buf + got, sizeof buf - got, 0); break;
            default: n = recvfrom(fd, buf + got, sizeof buf - got, 0, NULL, NULL); break;
            }
            CHECK(n > 0);
            got += (size_t)n;
        }
        send_all(fd, buf, got);
    }
    CHECK(close(fd) == 0);
    return NULL;
}

/* Part 1: returns the bytes echoed back. */
static long exchange(void) {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(listen_fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(listen_fd, 1) == 0);
    socklen_t len = sizeof sa;
    CHECK(getsockname(listen_fd, (struct sockaddr *)&sa, &len) == 0);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, server, NULL));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    long total = 0;
    for (int i = 0; i < lines; i++) {
        char line[64], back[64];
        int m = snprintf(line, sizeof line, "line %d\n", i);
        ssize_t n;
        switch (i % 3) {
        case 0: n = write(fd, line, (size_t)m); break;
        case 1: n = send(fd, line, (size_t)m, 0); break;
        default: n = sendto(fd, line, (size_t)m, 0, NULL, 0); break;
        }
        CHECK(n == m);
        CHECK(recv_line(fd, back, sizeof back) == (size_t)m);
        CHECK(strcmp(line, back) == 0);
        total += m;
    }
    CHECK(close(fd) == 0);
    CHECK_RC(pthread_join(t, NULL));
    CHECK(close(listen_fd) == 0);
    return total;
}

static volatile sig_atomic_t alarms, usr1s;
static void on_alarm(int sig) { (void)sig; alarms++; }
static void on_usr1(int sig) { (void)sig; usr1s++; }

/* Part 2. */
static void interrupted_sleeps(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    alarm(1);
    struct timespec req = {.tv_sec = 5}, rem = {0};
    int rc = nanosleep(&req, &rem);
    printf("nanosleep: %s, %ld s left, alarms %d\n", rc == -1 && errno == EINTR ? "EINTR" : "done",
           (long)rem.tv_sec, (int)alarms);
    alarm(1);
    rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
    printf("clock_nanosleep: %s, %ld s left, alarms %d\n", rc == EINTR ? "EINTR" : "done",
           (long)rem.tv_sec, (int)alarms);
}

static int pair[2];
static char received[16];

static void *blocked_reader(void *arg) {
    (void)arg;
    ssize_t n = recv(pair[1], received, sizeof received - 1, 0);
    CHECK(n > 0);
    return NULL;
}

/* Part 3. */
static void restarted_recv(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    tcp_pair(pair);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, blocked_reader, NULL));
    struct timespec ms = {.tv_nsec = 1000000};
    nanosleep(&ms, NULL);
    CHECK_RC(pthread_kill(t, SIGUSR1));
    nanosleep(&ms, NULL);
    CHECK(write(pair[0], "ping", 4) == 4);
    CHECK_RC(pthread_join(t, NULL));
    printf("recv after SA_RESTART handler: '%s', handlers %d\n", received, (int)usr1s);
    close(pair[0]);
    close(pair[1]);
}

/* Part 4: what MODE does before the child is started. */
static void take_away(const char *mode) {
    if (strcmp(mode, "close") == 0) {
        close(1000);
    } else if (strcmp(mode, "scribble") == 0) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 1000, 0);
        if (p != MAP_FAILED) memset(p, 0xff, 4096);
    } else if (strcmp(mode, "unset") == 0) {
        unsetenv("LD_PRELOAD");
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "inherit";
    if (argc > 2) lines = atoi(argv[2]);
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(mode, "child") == 0) {
        printf("child echoed %ld bytes\n", exchange());
        return 0;
    }
    printf("echoed %ld bytes\n", exchange());
    interrupted_sleeps();
    restarted_recv();
    take_away(mode);
    char n[16];
    snprintf(n, sizeof n, "%d", lines);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "child", n, (char *)NULL);
        _exit(127);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
