/* Reads its own executable (argv[0]) through stdio with a 64-byte buffer:
 * each refill is a read(2) glibc makes inside itself (`xor eax, eax;
 * syscall`), past the LD_PRELOAD library's functions. Prints the byte
 * count and a checksum, so a read that went wrong shows. */
#include "common.h"

int main(int argc, char **argv) {
    (void)argc;
    FILE *f = fopen(argv[0], "rb");
    CHECK(f != NULL);
    static char buf[64];
    CHECK(setvbuf(f, buf, _IOFBF, sizeof buf) == 0);
    unsigned long bytes = 0, sum = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        bytes++;
        sum = sum * 31 + (unsigned char)c;
    }
    CHECK(ferror(f) == 0);
    CHECK(fclose(f) == 0);
    printf("bytes %lu sum %lu\n", bytes, sum);
    return 0;
}
