/* Prints the process and thread ids the program sees. Under faultline they
 * come from its PID namespace, in creation order, so they are the same on
 * every run: the program is pid 2 (pid 1 is faultline's init). */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg) {
    (void)arg;
    printf("thread tid %ld\n", (long)syscall(SYS_gettid));
    fflush(stdout);
    return NULL;
}

int main(void) {
    printf("pid %d ppid %d\n", (int)getpid(), (int)getppid());
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    pid_t child = fork();
    if (child == 0) {
        printf("child pid %d ppid %d\n", (int)getpid(), (int)getppid());
        return 0;
    }
    int status;
    waitpid(child, &status, 0);
    printf("parent saw child %d exit %d\n", (int)child, WEXITSTATUS(status));
    return 0;
}
