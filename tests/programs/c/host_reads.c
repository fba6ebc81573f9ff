/* Reads host state faultline does not simulate — adjtimex (the host clock's
 * discipline), getitimer(ITIMER_VIRTUAL) (host CPU time), getpriority (the
 * nice value faultline was started with), /proc/cpuinfo and /proc/self/io
 * — twice each, and prints only what is simulated: how many CPUs glibc
 * counts and the coarse clock's resolution. faultline must report every
 * kind of read, not pass it silently. */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <unistd.h>

#include "common.h"

static void read_file(const char *path) {
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    char buf[256];
    CHECK(read(fd, buf, sizeof buf) > 0);
    CHECK(close(fd) == 0);
}

int main(void) {
    for (int i = 0; i < 2; i++) {
        struct timex tx = {.modes = 0};
        CHECK(adjtimex(&tx) >= 0);
        struct itimerval it;
        CHECK(getitimer(ITIMER_VIRTUAL, &it) == 0);
        errno = 0;
        CHECK(getpriority(PRIO_PROCESS, 0) != -1 || errno == 0);
        read_file("/proc/cpuinfo");
        read_file("/proc/self/io");
    }
    printf("nprocs_conf %d\n", get_nprocs_conf());
    struct timespec res;
    CHECK(clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0);
    printf("coarse_resolution_ns %ld\n", res.tv_sec * 1000000000L + res.tv_nsec);
    return 0;
}
