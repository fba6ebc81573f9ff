/* Child processes three ways: fork + execv("/bin/true"), fork + _exit(7),
 * and posix_spawn("/bin/false") (clone with CLONE_VFORK in glibc); waits for
 * each with waitpid and prints how it ended. */
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char **environ;

static void report(const char *what, pid_t pid) {
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status)) {
        printf("%s exited %d\n", what, WEXITSTATUS(status));
    } else {
        printf("%s ended with status 0x%x\n", what, status);
    }
}

int main(void) {
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char *argv[] = {"/bin/true", NULL};
        execv(argv[0], argv);
        _exit(127);
    }
    report("/bin/true", pid);

    fflush(stdout);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(7);
    report("forked child", pid);

    char *argv[] = {"/bin/false", NULL};
    CHECK_RC(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ));
    report("/bin/false", pid);
    return 0;
}
