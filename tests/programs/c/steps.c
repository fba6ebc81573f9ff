/* Runs commands one after another, each retried until it exits 0: for
 * client nodes that must wait for a server to come up (such as etcdctl
 * against etcd). A command's stdout and stderr are inherited; attempts that
 * fail are reported on stderr. Exits 0 when every command succeeded, else
 * with the last attempt's exit code (or 128+N if a signal killed it).
 *
 * Usage: steps ATTEMPTS INTERVAL_MS -- CMD [ARGS...] [-- CMD [ARGS...]]... */
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static int run(char **argv) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "steps: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) CHECK(errno == EINTR);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

int main(int argc, char **argv) {
    if (argc < 5 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: steps ATTEMPTS INTERVAL_MS -- CMD [ARGS...] [-- CMD...]\n");
        return 2;
    }
    int attempts = atoi(argv[1]);
    long long interval_ms = atoll(argv[2]);
    int i = 4;
    while (i < argc) {
        int end = i;
        while (end < argc && strcmp(argv[end], "--") != 0) end++;
        argv[end < argc ? end : argc] = NULL; /* terminate this command */
        char **cmd = &argv[i];
        int code = 0;
        for (int attempt = 1; attempt <= attempts; attempt++) {
            code = run(cmd);
            if (code == 0) break;
            fprintf(stderr, "steps: %s: attempt %d of %d exited %d\n", cmd[0], attempt, attempts,
                    code);
            if (attempt < attempts) sleep_ns(interval_ms * 1000000LL);
        }
        if (code != 0) return code;
        i = end + 1;
    }
    return 0;
}
