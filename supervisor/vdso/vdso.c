/*
 * The faultline vDSO: the image the supervisor copies over the kernel's vDSO
 * of every simulated process, so clock reads need no ptrace stop.
 *
 * The clocks come from the time page, a read-write page (shared with the
 * supervisor) mapped at `fl_page_addr` in each process at exec (the kernel's
 * vDSO cannot be made writable: it is sealed) and rewrites while every thread
 * is stopped. Only one thread runs at a time and virtual time moves only
 * between steps, so a plain read is exact. Every `every`-th clock read of an
 * address space still makes the real system call, which the supervisor
 * traps: that read is a scheduling point and costs the step time, exactly as
 * on the trapping path, so loops that poll the clock see time move and both
 * paths give one trace.
 *
 * Built freestanding: no libc, no relocations, one PT_LOAD (vdso.lds).
 */
#include <stdint.h>

#define SYS_gettimeofday 96
#define SYS_time 201
#define SYS_clock_gettime 228
#define NS 1000000000LL
#define TAI_OFFSET_NS (37LL * NS)

struct timespec_k { int64_t sec; int64_t nsec; };
struct timeval_k { int64_t sec; int64_t usec; };

/* Layout shared with supervisor/src/vdso.rs (OFF_* constants). */
struct fl_time {
    uint64_t mono_ns;
    int64_t real_ns;
    uint32_t reads; /* clock reads since the last one that trapped */
    uint32_t every;
    /* Where a patched Go runtime's channel stub is (0: none): the reads
     * that must reach the supervisor go over the fast path's channel
     * instead of trapping (supervisor/src/fast_path/go_stub.rs). */
    uint64_t channel_call;
};

/* Where the supervisor maps the time page: low, below every executable's
 * load address, where the kernel's top-down mmap never reaches, so the
 * program's own layout is the same as without it. */
__attribute__((used, visibility("hidden")))
const uint64_t fl_page_addr = 0x100000;

#define PAGE ((volatile struct fl_time *)fl_page_addr)

/* The supervisor runs system calls here to map the time page (memfd_create,
 * mmap, close):
 * the number in r12 (rax is overwritten by execve's return value), the
 * arguments in their registers; the int3 hands control back. */
__attribute__((naked, used, visibility("hidden"))) void fl_inject(void) {
    __asm__ volatile("mov %r12, %rax\n\tsyscall\n\tint3\n");
}

static inline long raw2(long nr, long a, long b) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

/* A read that must reach the supervisor: over the channel where the
 * supervisor put its stub (the stub takes the number in rax and the
 * arguments in their registers, as the runtime's own wrappers do; it
 * restores the argument registers from its slot and clobbers rcx and r11
 * as `syscall` does), else as a trapped call. */
static inline long trap2(long nr, long a, long b) {
    uint64_t stub = PAGE->channel_call;
    if (!stub)
        return raw2(nr, a, b);
    long ret = nr;
    __asm__ volatile("call *%[stub]"
                     : "+a"(ret), "+D"(a), "+S"(b)
                     : [stub] "r"(stub)
                     : "rcx", "r11", "rdx", "r8", "r9", "r10", "cc", "memory");
    return ret;
}

/* True when this read must trap. */
static int must_trap(void) {
    uint32_t n = PAGE->reads + 1;
    if (n >= PAGE->every) {
        PAGE->reads = 0;
        return 1;
    }
    PAGE->reads = n;
    return 0;
}

static int is_realtime(int clk) {
    /* REALTIME, REALTIME_COARSE, REALTIME_ALARM, TAI */
    return clk == 0 || clk == 5 || clk == 8 || clk == 11;
}

static void split(int64_t ns, int64_t *sec, int64_t *rem) {
    int64_t s = ns / NS, r = ns % NS;
    if (r < 0) {
        r += NS;
        s -= 1;
    }
    *sec = s;
    *rem = r;
}

/* CPU-time clocks (PROCESS/THREAD_CPUTIME_ID and the negative ids of
 * clock_getcpuclockid): the supervisor keeps the virtual CPU time, so they
 * always trap, outside the read count. */
static int is_cpu_clock(int clk) {
    return clk < 0 || clk == 2 || clk == 3;
}

int __vdso_clock_gettime(int clk, struct timespec_k *ts) {
    if (is_cpu_clock(clk) || must_trap())
        return (int)trap2(SYS_clock_gettime, clk, (long)ts);
    int64_t ns = (int64_t)PAGE->mono_ns;
    if (is_realtime(clk))
        ns = PAGE->real_ns + (clk == 11 ? TAI_OFFSET_NS : 0);
    split(ns, &ts->sec, &ts->nsec);
    return 0;
}

int __vdso_gettimeofday(struct timeval_k *tv, int32_t *tz) {
    if (must_trap())
        return (int)trap2(SYS_gettimeofday, (long)tv, (long)tz);
    if (tv) {
        int64_t rem;
        split(PAGE->real_ns, &tv->sec, &rem);
        tv->usec = rem / 1000;
    }
    if (tz) {
        tz[0] = 0;
        tz[1] = 0;
    }
    return 0;
}

int64_t __vdso_time(int64_t *t) {
    if (must_trap())
        return trap2(SYS_time, (long)t, 0);
    int64_t sec, rem;
    split(PAGE->real_ns, &sec, &rem);
    if (t)
        *t = sec;
    return sec;
}

/* Always CPU 0, node 0, as the trapping path answers. */
int __vdso_getcpu(uint32_t *cpu, uint32_t *node, void *cache) {
    (void)cache;
    if (cpu)
        *cpu = 0;
    if (node)
        *node = 0;
    return 0;
}
