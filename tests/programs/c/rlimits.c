/* rlimits.c: prints the resource limits getrlimit and prlimit64 report,
 * raises the open-file limit, and prints what a forked child sees. On the
 * host the limits are the machine's and the shell's (a CI runner's
 * open-file limit is not a laptop's); under faultline they are a fixed
 * table, the same on every machine. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void show(const char *label, int resource) {
    struct rlimit r;
    CHECK(getrlimit(resource, &r) == 0);
    printf("%s cur=%llu max=%llu\n", label, (unsigned long long)r.rlim_cur,
           (unsigned long long)r.rlim_max);
}

int main(void) {
    show("nofile", RLIMIT_NOFILE);
    show("stack", RLIMIT_STACK);
    show("core", RLIMIT_CORE);
    show("nproc", RLIMIT_NPROC);
    struct rlimit raised = {4096, 524288}, old;
    CHECK(prlimit(0, RLIMIT_NOFILE, &raised, &old) == 0);
    printf("prlimit_old cur=%llu max=%llu\n", (unsigned long long)old.rlim_cur,
           (unsigned long long)old.rlim_max);
    show("raised", RLIMIT_NOFILE);
    /* /proc/self/limits agrees with getrlimit. */
    FILE *f = fopen("/proc/self/limits", "r");
    CHECK(f != NULL);
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Max open files", 14) == 0) {
            unsigned long long soft, hard;
            CHECK(sscanf(line + 14, "%llu %llu", &soft, &hard) == 2);
            printf("proc_limits_nofile cur=%llu max=%llu\n", soft, hard);
        }
    CHECK(fclose(f) == 0);
    struct rlimit bad = {10, 5};
    printf("cur_above_max %s\n", setrlimit(RLIMIT_NOFILE, &bad) == -1 && errno == EINVAL ? "EINVAL" : "accepted");
    struct rlimit r;
    printf("no_such_resource %s\n", getrlimit(99, &r) == -1 && errno == EINVAL ? "EINVAL" : "answered");
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        show("child", RLIMIT_NOFILE);
        /* The host enforces a lowered limit: dup fails at descriptor 64. */
        struct rlimit low = {64, 524288};
        CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
        int fd, last = -1;
        while ((fd = dup(0)) >= 0)
            last = fd;
        printf("lowered_to_64 last_fd=%d %s\n", last, errno == EMFILE ? "EMFILE" : "other");
        return 0;
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    return WEXITSTATUS(status);
}
