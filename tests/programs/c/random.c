/* Prints the randomness a process can obtain: getrandom (blocking and
 * GRND_NONBLOCK), reads of /dev/urandom and /dev/random, and the AT_RANDOM
 * auxv bytes. Under faultline every one of them derives from the seed. */
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <unistd.h>

#include "common.h"

static void from_device(const char *label, const char *path) {
    unsigned char buf[16];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t n = read(fd, buf + got, sizeof buf - got);
        CHECK(n > 0);
        got += (size_t)n;
    }
    CHECK(close(fd) == 0);
    print_hex(label, buf, sizeof buf);
}

int main(void) {
    unsigned char buf[16];
    CHECK(getrandom(buf, sizeof buf, 0) == (ssize_t)sizeof buf);
    print_hex("getrandom", buf, sizeof buf);
    CHECK(getrandom(buf, sizeof buf, GRND_NONBLOCK) == (ssize_t)sizeof buf);
    print_hex("getrandom_nonblock", buf, sizeof buf);
    from_device("urandom", "/dev/urandom");
    from_device("random", "/dev/random");
    const unsigned char *at_random = (const unsigned char *)getauxval(AT_RANDOM);
    CHECK(at_random != NULL);
    print_hex("at_random", at_random, 16);
    return 0;
}
