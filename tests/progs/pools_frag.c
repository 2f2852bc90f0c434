/* pools_frag: fragmentation inside an annotated sub-allocator (tests/cases/pools_frag.sh).
 * A 32 MiB driver segment becomes pool 0xf4a6 ("arena") on device 0, cut into eight 4 MiB
 * blocks; blocks 1, 3 and 5 are freed: 12 MiB free in three holes of 4 MiB. An 8 MiB request
 * then fails in the pool (block_fail: free 12 MiB >= 8 MiB > largest hole 4 MiB) and the
 * allocator asks the driver, which fails too on a 36 MiB card (GTSIM_MEM_BYTES) holding the
 * 32 MiB segment. Then everything is given back. Prints the segment's address and each
 * driver call's result. */
#include <stdio.h>

#include <cuda.h>

#include "gputrace/annotate.h"

#define MiB  (1ull << 20)
#define POOL 0xf4a6ull
#include "check.h"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr seg, big = 0;
    open_primary(&dev, &ctx);
    CHECK(cuMemAlloc(&seg, 32 * MiB));
    printf("seg=0x%llx\n", (unsigned long long)seg);

    gputrace_pool_create(POOL, 0, "arena");
    gputrace_pool_add_range(POOL, seg, 32 * MiB);
    for (unsigned i = 0; i < 8; i++)
        gputrace_block_alloc(POOL, seg + i * 4 * MiB, 4 * MiB);
    for (unsigned i = 1; i <= 5; i += 2)
        gputrace_block_free(POOL, seg + i * 4 * MiB, 4 * MiB);

    gputrace_block_fail(POOL, 8 * MiB); /* no hole of 8 MiB: ask the driver */
    CUresult r = cuMemAlloc(&big, 8 * MiB);
    printf("driver_alloc=%d\n", (int)r);

    for (unsigned i = 0; i < 8; i += 1)
        if (i != 1 && i != 3 && i != 5) gputrace_block_free(POOL, seg + i * 4 * MiB, 4 * MiB);
    gputrace_pool_remove_range(POOL, seg, 32 * MiB);
    gputrace_pool_destroy(POOL);
    CHECK(cuMemFree(seg));
    printf("ok\n");
    return 0;
}
