/* Forks a child that sleeps (virtually) forever, prints the child's pid, then
 * blocks reading stdin. On EOF it kills and reaps the child and exits 0; the
 * test instead kills the supervisor and checks that no process survives. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

int main(void) {
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        for (;;) sleep(3600);
    }
    printf("child %d\n", (int)child);
    fflush(stdout);
    char c;
    while (read(0, &c, 1) > 0) {
    }
    CHECK(kill(child, SIGKILL) == 0);
    CHECK(waitpid(child, NULL, 0) == child);
    printf("stdin closed\n");
    return 0;
}
