/* Prints every CPU-time reading a program can make: the CPU-time clocks
 * (process, thread, and the ids of clock_getcpuclockid and
 * pthread_getcpuclockid), getrusage (self, thread, children), times, and
 * utime/stime of /proc/self/stat, around a burst of computation with no
 * system call, a thread that yields, and a child that yields. On the host
 * every value depends on the machine's speed and load; under faultline it is
 * the step time charged to the thread or process, the same on every run. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static volatile unsigned long sink;

static long long clock_ns(clockid_t id) {
    struct timespec ts;
    CHECK(clock_gettime(id, &ts) == 0);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long usage_ns(int who) {
    struct rusage ru;
    CHECK(getrusage(who, &ru) == 0);
    return ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
           ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* Computation without a system call: tens of milliseconds of host CPU. */
static void burn(void) {
    for (unsigned long i = 0; i < 100000000UL; i++)
        sink += i;
}

static void yield_n(int n) {
    for (int i = 0; i < n; i++)
        sched_yield();
}

static void *worker(void *arg) {
    (void)arg;
    yield_n(50);
    burn();
    printf("worker_thread_cputime %lld\n", clock_ns(CLOCK_THREAD_CPUTIME_ID));
    fflush(stdout);
    return NULL;
}

/* Fields 14 and 15 (utime, stime, in clock ticks) of /proc/self/stat. */
static void proc_stat_times(long *utime, long *stime) {
    FILE *f = fopen("/proc/self/stat", "r");
    CHECK(f != NULL);
    char buf[1024];
    CHECK(fgets(buf, sizeof buf, f) != NULL);
    fclose(f);
    char *p = strrchr(buf, ')');
    CHECK(p != NULL);
    /* After ") ": state is field 3; utime is field 14. */
    CHECK(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", utime,
                 stime) == 2);
}

int main(void) {
    printf("start_process_cputime %lld\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID));
    burn();
    printf("after_burn_process_cputime %lld\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID));
    printf("after_burn_thread_cputime %lld\n", clock_ns(CLOCK_THREAD_CPUTIME_ID));

    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, worker, NULL));
    clockid_t tclock;
    CHECK_RC(pthread_getcpuclockid(t, &tclock));
    printf("worker_clock_negative %d\n", tclock < 0);
    printf("worker_via_clockid %lld\n", clock_ns(tclock));
    CHECK_RC(pthread_join(t, NULL));

    clockid_t pclock;
    CHECK_RC(clock_getcpuclockid(getpid(), &pclock));
    printf("process_via_clockid %lld\n", clock_ns(pclock));
    printf("rusage_self %lld\n", usage_ns(RUSAGE_SELF));
    printf("rusage_thread %lld\n", usage_ns(RUSAGE_THREAD));

    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        yield_n(100);
        burn();
        _exit(0);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    printf("rusage_children %lld\n", usage_ns(RUSAGE_CHILDREN));

    struct tms tms;
    clock_t ticks = times(&tms);
    CHECK(ticks != (clock_t)-1);
    printf("times_utime %ld\n", (long)tms.tms_utime);
    printf("times_cutime %ld\n", (long)tms.tms_cutime);
    printf("times_elapsed %ld\n", (long)ticks);

    long utime, stime;
    proc_stat_times(&utime, &stime);
    printf("proc_stat_utime %ld\n", utime);
    printf("proc_stat_stime %ld\n", stime);
    printf("end_process_cputime %lld\n", clock_ns(CLOCK_PROCESS_CPUTIME_ID));
    return 0;
}
