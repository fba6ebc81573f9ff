/* A service that guards its data directory with a lock file and removes it
 * only on a clean exit (SIGTERM): after a kill the file is still there and
 * the restarted service refuses to start ("STALE LOCK", exit 1). A power
 * cut (crash) hides the bug: the lock file's directory entry was never
 * fsynced, so the crash model reverts its creation.
 *
 *   pidlock DIR      creates DIR/LOCK exclusively, then ticks every 100 ms */
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "common.h"

static char lock_path[512];

static void on_term(int sig) {
    (void)sig;
    unlink(lock_path);
    _exit(0);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: pidlock DIR\n");
        return 2;
    }
    snprintf(lock_path, sizeof lock_path, "%s/LOCK", argv[1]);
    int fd = open(lock_path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
        fprintf(stderr, "STALE LOCK: %s exists, another instance may be running\n", lock_path);
        return 1;
    }
    CHECK(fd >= 0);
    CHECK(close(fd) == 0);
    signal(SIGTERM, on_term);
    printf("locked %s\n", lock_path);
    for (;;) sleep_ns(100 * 1000000LL);
}
