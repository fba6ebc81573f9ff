/* Signals on virtual time: alarm() interrupts a long sleep, an interval
 * setitimer fires three times, and a SIGTERM sent by `faultline --signal-at`
 * ends pause(). Every line carries the virtual time it happened at. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t alarms, terms;

static void on_alarm(int sig) { (void)sig; alarms++; }
static void on_term(int sig) { (void)sig; terms++; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    static double start = -1;
    double t = ts.tv_sec + ts.tv_nsec / 1e9;
    if (start < 0) start = t;
    return t - start;
}

int main(void) {
    now();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: sleep must be interrupted */
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);

    alarm(2);
    unsigned left = sleep(100);
    printf("alarm at %.3f, sleep left %u, alarms %d\n", now(), left, (int)alarms);

    struct itimerval it = {{0, 500000}, {0, 500000}};
    setitimer(ITIMER_REAL, &it, NULL);
    while (alarms < 4) pause();
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("interval timer done at %.3f, alarms %d\n", now(), (int)alarms);

    while (!terms) pause();
    printf("SIGTERM at %.3f\n", now());
    return 0;
}
