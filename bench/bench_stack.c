/* bench_stack cuda|malloc EVENTS [DEPTH] [WARMUP] [ALT]: allocations made from the bottom of a
 * DEPTH-deep call chain, for the side-by-side with heaptrack (issue 7, "allocation with stack").
 *
 *   cuda    EVENTS cuMemAlloc(4096) + cuMemFree pairs (what gputrace records, with the allocation's
 *           host stack when GPUTRACE_STACKS includes alloc, the default)
 *   malloc  EVENTS malloc(4096) + free pairs (what heaptrack records, with the malloc's stack)
 *
 * Each event calls down the same chain of DEPTH frames (chain_N ... chain_1, each its own function
 * so every frame has its own return address, none a tail call) and allocates and frees at the
 * bottom, so a tracer unwinding the allocation walks DEPTH frames plus main and the C start-up
 * frames. Both tracers intern stacks in a tree (heaptrack's trace tree; gputrace's gt_rec_stack),
 * so after the first event each one unwinds the full stack and finds it already known.
 * Timed from inside the process after a warm-up (start-up and the tracers' exit work excluded).
 * ALT=1: consecutive events alternate between two copies of the chain (every level's function
 * twice), so no event has the previous one's stack: a tracer that reuses its previous walk where
 * the stack has not changed (gputrace's unwinder) walks the DEPTH frames again each time.
 *
 * Prints one line: mode= depth= frames= (the frames glibc's backtrace() sees at the bottom of the
 * chain, main and start-up included) events= warmup= wall_ns= ns_per_op= cpu_ns_per_op= */
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#define BENCH_PROG "bench_stack"
#include "bench_util.h"

#define MAX_DEPTH  32
#define ALLOC_SIZE 4096

static int use_cuda;
static void *volatile sink; /* keeps the compiler from eliding malloc+free */
static volatile int frames_seen;

__attribute__((noinline)) static void bottom(int probe)
{
    if (probe) {
        void *ips[256];
        frames_seen = backtrace(ips, 256);
        return;
    }
    if (use_cuda) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, ALLOC_SIZE));
        CHECK(cuMemFree(p));
    } else {
        void *p = malloc(ALLOC_SIZE);
        if (!p) exit(1);
        sink = p;
        free(sink);
    }
}

typedef void chain_fn(int probe, int depth);
static chain_fn *chain[MAX_DEPTH + 1], *chainb[MAX_DEPTH + 1];

/* One function per level: the same function called recursively would give every frame the same
 * return address, which a stack tree dedupes differently from real code. The asm after the call
 * keeps it from being a tail call (the frame would vanish). */
#define LEVEL_OF(tab, n)                                                                           \
    __attribute__((noinline)) static void tab##_##n(int probe, int depth)                          \
    {                                                                                              \
        if (depth <= 1)                                                                            \
            bottom(probe);                                                                         \
        else                                                                                       \
            tab[depth - 1](probe, depth - 1);                                                      \
        __asm__ volatile("" ::: "memory");                                                         \
    }
#define LEVEL(n) LEVEL_OF(chain, n) LEVEL_OF(chainb, n)
LEVEL(1)
LEVEL(2)
LEVEL(3)
LEVEL(4)
LEVEL(5)
LEVEL(6)
LEVEL(7)
LEVEL(8)
LEVEL(9)
LEVEL(10)
LEVEL(11)
LEVEL(12)
LEVEL(13)
LEVEL(14)
LEVEL(15)
LEVEL(16)
LEVEL(17)
LEVEL(18)
LEVEL(19)
LEVEL(20)
LEVEL(21)
LEVEL(22)
LEVEL(23)
LEVEL(24)
LEVEL(25)
LEVEL(26)
LEVEL(27)
LEVEL(28)
LEVEL(29)
LEVEL(30)
LEVEL(31)
LEVEL(32)

static void chain_init(void)
{
    chain_fn *const all[MAX_DEPTH + 1] = {
        NULL,     chain_1,  chain_2,  chain_3,  chain_4,  chain_5,  chain_6,  chain_7,  chain_8,
        chain_9,  chain_10, chain_11, chain_12, chain_13, chain_14, chain_15, chain_16, chain_17,
        chain_18, chain_19, chain_20, chain_21, chain_22, chain_23, chain_24, chain_25, chain_26,
        chain_27, chain_28, chain_29, chain_30, chain_31, chain_32,
    };
    chain_fn *const all_b[MAX_DEPTH + 1] = {
        NULL,      chainb_1,  chainb_2,  chainb_3,  chainb_4,  chainb_5,  chainb_6,
        chainb_7,  chainb_8,  chainb_9,  chainb_10, chainb_11, chainb_12, chainb_13,
        chainb_14, chainb_15, chainb_16, chainb_17, chainb_18, chainb_19, chainb_20,
        chainb_21, chainb_22, chainb_23, chainb_24, chainb_25, chainb_26, chainb_27,
        chainb_28, chainb_29, chainb_30, chainb_31, chainb_32,
    };
    memcpy(chain, all, sizeof(all));
    memcpy(chainb, all_b, sizeof(all_b));
}

/* Each event: chain_DEPTH .. chain_1 (DEPTH frames), then bottom() makes the call. */
static void run(long n, int depth, int alt)
{
    for (long i = 0; i < n; i++)
        (alt && (i & 1) ? chainb : chain)[depth](0, depth);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_stack cuda|malloc EVENTS [DEPTH] [WARMUP] [ALT]\n");
        return 2;
    }
    if (strcmp(argv[1], "cuda") == 0)
        use_cuda = 1;
    else if (strcmp(argv[1], "malloc") != 0) {
        fprintf(stderr, "bench_stack: unknown mode %s (cuda|malloc)\n", argv[1]);
        return 2;
    }
    long events = atol(argv[2]);
    int depth = argc > 3 ? atoi(argv[3]) : 32;
    long warmup = argc > 4 ? atol(argv[4]) : 100000;
    int alt = argc > 5 ? atoi(argv[5]) : 0;
    if (events < 1 || depth < 1 || depth > MAX_DEPTH || warmup < 0 || alt < 0 || alt > 1) return 2;
    chain_init();
    if (use_cuda) {
        CUdevice dev;
        CUcontext ctx;
        CHECK(cuInit(0));
        CHECK(cuDeviceGet(&dev, 0));
        CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
        CHECK(cuCtxSetCurrent(ctx));
    }
    chain[depth](1, depth); /* count the frames once (loads the unwinder before timing) */
    run(warmup, depth, alt);

    uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    run(events, depth, alt);
    uint64_t t1 = clock_ns(CLOCK_MONOTONIC);
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    printf("mode=%s depth=%d frames=%d events=%ld warmup=%ld wall_ns=%llu ns_per_op=%.1f "
           "cpu_ns_per_op=%.1f%s\n",
           argv[1], depth, frames_seen, events, warmup, (unsigned long long)(t1 - t0),
           (double)(t1 - t0) / (double)events, (double)cpu / (double)events, alt ? " alt=1" : "");
    return 0;
}
