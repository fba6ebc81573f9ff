/* Reads the time-stamp counter twice with a 10 ms nanosleep between and
 * prints both readings. Under faultline rdtsc traps and returns virtual time. */
#include <x86intrin.h>

#include "common.h"

int main(void) {
    unsigned long long t1 = __rdtsc();
    sleep_ns(10 * 1000 * 1000);
    unsigned long long t2 = __rdtsc();
    printf("tsc1 %llu\n", t1);
    printf("tsc2 %llu\n", t2);
    printf("advanced %s\n", t2 > t1 ? "yes" : "no");
    return 0;
}
