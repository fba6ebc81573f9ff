/* A vfork child that closes, duplicates and writes through libc before it
 * execs /bin/true (as shells do), three times. The child runs in the
 * parent's memory until the exec: its calls must not go to the parent's
 * channel slot; the parent's, once the child has exec'd, go over the
 * channel again (a stat of /). Prints each child's exit; exits 1 if a
 * step fails. */
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

/* One child; a function of its own, so no variable of the caller's loop
 * lives across the vfork. */
static void run_child(int i) {
    pid_t p = vfork();
    CHECK(p >= 0);
    if (p == 0) {
        close(100);
        dup2(1, 5);
        write(5, "child\n", 6);
        execl("/bin/true", "true", (char *)0);
        _exit(127);
    }
    int st;
    CHECK(waitpid(p, &st, 0) == p);
    printf("child %d exited %d\n", i, WEXITSTATUS(st));
    /* Over the channel again, once the child has exec'd. */
    struct stat root;
    CHECK(stat("/", &root) == 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 0; i < 3; i++) run_child(i);
    return 0;
}
