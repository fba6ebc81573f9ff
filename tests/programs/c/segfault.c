/* Prints a line, then writes through a NULL pointer (SIGSEGV). */
#include "common.h"

int main(void) {
    printf("about to segfault\n");
    fflush(stdout);
    *(volatile int *)NULL = 42;
    printf("unreachable\n");
    return 0;
}
