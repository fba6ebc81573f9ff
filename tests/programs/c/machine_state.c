/* Prints what a program learns about its machine and its own process:
 * sysinfo, /proc/uptime, /proc/loadavg, /proc/meminfo, /proc/stat,
 * /proc/self/stat, /proc/self/status, /proc/<getpid()>/stat and the online
 * CPUs, after sleeping 5 s. On the host every one of these changes between
 * runs; under faultline they describe the simulated machine. */
#include <sys/sysinfo.h>
#include <unistd.h>

#include "common.h"

/* Prints the first line of `path` that starts with `prefix`, as
 * "<label> <rest of line>". */
static void show_line(const char *label, const char *path, const char *prefix) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, prefix, strlen(prefix)) == 0) {
            printf("%s %s", label, line + strlen(prefix));
            fclose(f);
            return;
        }
    }
    fclose(f);
    printf("%s missing\n", label);
}

int main(void) {
    sleep_ns(5000000000LL);
    struct sysinfo si;
    CHECK(sysinfo(&si) == 0);
    printf("sysinfo_uptime %ld\n", si.uptime);
    printf("sysinfo_totalram %lu\n", si.totalram * si.mem_unit);
    printf("sysinfo_freeram %lu\n", si.freeram * si.mem_unit);
    printf("sysinfo_procs %u\n", si.procs);
    show_line("proc_uptime", "/proc/uptime", "");
    show_line("proc_loadavg", "/proc/loadavg", "");
    show_line("meminfo_total", "/proc/meminfo", "MemTotal:");
    show_line("meminfo_free", "/proc/meminfo", "MemFree:");
    show_line("stat_cpu", "/proc/stat", "cpu ");
    show_line("stat_btime", "/proc/stat", "btime ");
    show_line("self_stat", "/proc/self/stat", "");
    show_line("self_pid", "/proc/self/status", "Pid:");
    show_line("self_tracer", "/proc/self/status", "TracerPid:");
    show_line("self_rss", "/proc/self/status", "VmRSS:");
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)getpid());
    show_line("pid_stat", path, "");
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)getpid());
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char cmd[256] = {0};
    CHECK(fread(cmd, 1, sizeof cmd - 1, f) > 0);
    fclose(f);
    const char *base = strrchr(cmd, '/');
    printf("pid_cmdline %s\n", base ? base + 1 : cmd);
    show_line("cpus_online", "/sys/devices/system/cpu/online", "");
    printf("nprocs %d\n", get_nprocs());
    return 0;
}
