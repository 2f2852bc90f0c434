/* Memory-analysis scenarios (tests/cases/mem_*.sh). Each scenario's figures follow from its
 * construction and the simulated driver's knobs the test sets (GTSIM_MEM_BYTES, ...); every
 * allocation comes from a function of its own, so the report's call sites can be checked.
 *
 *   mem_scenarios exhausted   hold_weights 3 x 4 GiB, then try_batch 4 GiB (fails when the
 *                             card has less than 16 GiB free at the start)
 *   mem_scenarios others      hold_weights 3 x 4 GiB, then try_batch 10 GiB (fails when other
 *                             processes hold most of the card)
 *   mem_scenarios cached      a caching allocator: cache_segments 4 x 3 GiB, three of them
 *                             "freed" into its cache; try_batch 6 GiB fails; the allocator
 *                             frees its 3 cached segments (release_cache) and retries: ok
 *   mem_scenarios refill      hold_weights 3 x 4 GiB, try_batch 4 GiB fails, release_weights
 *                             frees 2 of them, other_line allocates 4 GiB, try_batch 1 GiB:
 *                             neither retries the failed call (another line; smaller)
 *   mem_scenarios peak        load_weights 3 x 100 MiB (never freed), scratch 10 x (1 MiB alloc
 *                             + free), activations 5 x 8 MiB (the peak: 340 MiB), free them,
 *                             later_buffers 2 x 10 MiB (freed)
 * Exit status 0 when the program did what it meant to (the failed allocation included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "check.h"

#define NOINLINE __attribute__((noinline))
#define MiB      (1ull << 20)
#define GiB      (1ull << 30)

static CUdeviceptr held[8], act[5], seg[4];

NOINLINE static void hold_weights(size_t n, size_t bytes)
{
    for (size_t i = 0; i < n; i++)
        CHECK(cuMemAlloc(&held[i], bytes));
}

/* Returns the driver's result: the scenarios expect out of memory here. */
NOINLINE static CUresult try_batch(CUdeviceptr *p, size_t bytes)
{
    CUresult r = cuMemAlloc(p, bytes);
    __asm__ volatile("" ::: "memory"); /* no tail call: keep this frame in the stack */
    return r;
}

NOINLINE static void release_weights(size_t n)
{
    for (size_t i = 0; i < n; i++)
        CHECK(cuMemFree(held[i]));
}

NOINLINE static void other_line(CUdeviceptr *p, size_t bytes)
{
    CHECK(cuMemAlloc(p, bytes));
}

NOINLINE static void cache_segments(void)
{
    for (int i = 0; i < 4; i++)
        CHECK(cuMemAlloc(&seg[i], 3 * GiB));
}

NOINLINE static void release_cache(void)
{
    for (int i = 1; i < 4; i++)
        CHECK(cuMemFree(seg[i]));
}

NOINLINE static void scratch(void)
{
    for (int i = 0; i < 10; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 1 * MiB));
        CHECK(cuMemFree(p));
    }
}

NOINLINE static void activations(void)
{
    for (int i = 0; i < 5; i++)
        CHECK(cuMemAlloc(&act[i], 8 * MiB));
}

NOINLINE static void later_buffers(void)
{
    CUdeviceptr p[2];
    for (int i = 0; i < 2; i++)
        CHECK(cuMemAlloc(&p[i], 10 * MiB));
    for (int i = 0; i < 2; i++)
        CHECK(cuMemFree(p[i]));
}

/* Six call sites holding memory, one of them (site_a) reached by two stacks: grouped by site it
 * holds the most, though each of its stacks alone holds less than site_b. */
static CUdeviceptr sites[7];
NOINLINE static void site_a(int i, size_t bytes)
{
    CHECK(cuMemAlloc(&sites[i], bytes));
    __asm__ volatile("" ::: "memory");
}
NOINLINE static void via_x(void)
{
    site_a(0, 300 * MiB);
    __asm__ volatile("" ::: "memory");
}
NOINLINE static void via_y(void)
{
    site_a(1, 250 * MiB);
    __asm__ volatile("" ::: "memory");
}
#define SITE(name, i, mib)                                                                         \
    NOINLINE static void name(void)                                                                \
    {                                                                                              \
        CHECK(cuMemAlloc(&sites[i], (mib) * MiB));                                                 \
        __asm__ volatile("" ::: "memory");                                                         \
    }
SITE(site_b, 2, 500)
SITE(site_c, 3, 400)
SITE(site_d, 4, 350)
SITE(site_e, 5, 200)
SITE(site_f, 6, 100)

static int expect_oom(CUresult r)
{
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return 0;
    fprintf(stderr, "expected CUDA_ERROR_OUT_OF_MEMORY, got %d\n", (int)r);
    return 1;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    open_primary(&dev, &ctx);
    int rc = 0;
    if (strcmp(what, "exhausted") == 0) {
        hold_weights(3, 4 * GiB);
        rc = expect_oom(try_batch(&p, 4 * GiB));
    } else if (strcmp(what, "others") == 0) {
        hold_weights(3, 4 * GiB);
        rc = expect_oom(try_batch(&p, 10 * GiB));
    } else if (strcmp(what, "cached") == 0) {
        cache_segments(); /* segments 1..3 now sit in the allocator's cache, unused */
        rc = expect_oom(try_batch(&p, 6 * GiB));
        release_cache();
        CHECK(try_batch(&p, 6 * GiB));
    } else if (strcmp(what, "refill") == 0) {
        hold_weights(3, 4 * GiB);
        rc = expect_oom(try_batch(&p, 4 * GiB));
        release_weights(2);
        other_line(&p, 4 * GiB);
        CHECK(try_batch(&p, 1 * GiB));
    } else if (strcmp(what, "holders") == 0) {
        via_x();
        via_y();
        site_b();
        site_c();
        site_d();
        site_e();
        site_f();
        rc = expect_oom(try_batch(&p, 16 * GiB));
        CHECK(cuMemFree(sites[6])); /* the caching allocator's pattern: free a little, retry */
        rc |= expect_oom(try_batch(&p, 16 * GiB));
    } else if (strcmp(what, "peak") == 0) {
        hold_weights(3, 100 * MiB);
        scratch();
        activations();
        for (int i = 0; i < 5; i++)
            CHECK(cuMemFree(act[i]));
        later_buffers();
    } else {
        fprintf(stderr, "usage: mem_scenarios exhausted|others|cached|refill|holders|peak\n");
        return 2;
    }
    printf("%s done\n", what);
    return rc;
}
