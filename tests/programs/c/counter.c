/* Deliberately non-deterministic across runs: reads a counter n from the file
 * named by argv[1] (missing = 0), makes n+1 nanosleep calls, then stores
 * n+1. Two runs therefore differ in their syscalls, which --check-determinism
 * must detect. */
#include "common.h"

int main(int argc, char **argv) {
    CHECK(argc == 2);
    long n = 0;
    FILE *f = fopen(argv[1], "r");
    if (f != NULL) {
        CHECK(fscanf(f, "%ld", &n) == 1);
        CHECK(fclose(f) == 0);
    }
    for (long i = 0; i <= n; i++) sleep_ns(1000 * 1000);
    f = fopen(argv[1], "w");
    CHECK(f != NULL);
    fprintf(f, "%ld\n", n + 1);
    CHECK(fclose(f) == 0);
    printf("run %ld\n", n);
    return 0;
}
