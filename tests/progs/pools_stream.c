/* pools_stream: a CUDA stream-ordered pool (tests/cases/pools_stream.sh), on a 16 MiB card
 * (GTSIM_MEM_BYTES). Pool on device 0 that keeps what it reserved (release threshold = max):
 * A 4 MiB, B 2 MiB, C 1 MiB from the pool (reserved 7, used 7); B freed (used 5); D 1 MiB
 * (used 6, no growth); trim to 0 (reserved 6); A, C, D freed (reserved 6, used 0); E 12 MiB
 * (reserved 12, used 12: the process peak); E freed (reserved 12, used 0); then cuMemAlloc of
 * 8 MiB fails (4 MiB free on the device: the pool caches 12 MiB); trim to 0 and the same
 * cuMemAlloc succeeds; freed; pool destroyed; then 3 MiB from the device's current pool with
 * cuMemAllocAsync (no pool handle), freed. Sizes are multiples of the simulated driver's
 * 512-byte granularity, so its reserved/used figures are exact. */
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>

#define MiB (1ull << 20)
#include "check.h"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUmemoryPool pool;
    CUdeviceptr a, b, c, d, e, big;
    open_primary(&dev, &ctx);
    CHECK(cuStreamCreate(&s, 0));
    CUmemPoolProps props = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                            .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CHECK(cuMemPoolCreate(&pool, &props));
    cuuint64_t keep = UINT64_MAX;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
    printf("pool=0x%llx\n", (unsigned long long)(uintptr_t)pool);
    CHECK(cuMemAllocFromPoolAsync(&a, 4 * MiB, pool, s));
    CHECK(cuMemAllocFromPoolAsync(&b, 2 * MiB, pool, s));
    CHECK(cuMemAllocFromPoolAsync(&c, 1 * MiB, pool, s));
    CHECK(cuMemFreeAsync(b, s));
    CHECK(cuMemAllocFromPoolAsync(&d, 1 * MiB, pool, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemPoolTrimTo(pool, 0));
    CHECK(cuMemFreeAsync(a, s));
    CHECK(cuMemFreeAsync(c, s));
    CHECK(cuMemFreeAsync(d, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemAllocFromPoolAsync(&e, 12 * MiB, pool, s));
    CHECK(cuMemFreeAsync(e, s));
    CHECK(cuStreamSynchronize(s));
    printf("first=%d\n", (int)cuMemAlloc(&big, 8 * MiB));
    CHECK(cuMemPoolTrimTo(pool, 0));
    CHECK(cuMemAlloc(&big, 8 * MiB));
    CHECK(cuMemFree(big));
    CHECK(cuMemPoolDestroy(pool));
    CHECK(cuMemAllocAsync(&a, 3 * MiB, s)); /* the device's current (default) pool */
    CHECK(cuMemFreeAsync(a, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuStreamDestroy(s));
    printf("ok\n");
    return 0;
}
