/* samples: driver calls whose samples (gt_rec_meminfo, gt_rec_pool_usage) tests/cases/samples_*.sh
 * check against figures derived from the simulated driver's rules. Prints the handles it got.
 *   samples meminfo: cuMemAlloc 10 MiB (a), 20 MiB (b), free a, a 2 GiB allocation that fails,
 *                    free b.
 *   samples pool:    (run with GTSIM_ALLOC_GRANULARITY=2 MiB) pool P = cuMemPoolCreate on device 0;
 *                    from P: a 3 MiB, b 1 MiB; free a; c 2 MiB; cuMemPoolTrimTo(P, 0); a failing
 *                    100 MiB request from P; d 1 MiB by cuMemAllocAsync (device's current pool D);
 *                    free d, b, c; synchronize; destroy P. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#define MiB (1ull << 20)
/* Each call must succeed (or fail, EXPECT_FAIL) and leave errno as it found it: the samples the
 * shim takes inside it must not show. */
#define CALL(x, want_ok)                                                                           \
    do {                                                                                           \
        errno = 4321;                                                                              \
        CUresult r_ = (x);                                                                         \
        if ((r_ == CUDA_SUCCESS) != (want_ok)) {                                                   \
            printf("%s returned %d\n", #x, (int)r_);                                               \
            return 1;                                                                              \
        }                                                                                          \
        if (errno != 4321) {                                                                       \
            printf("%s changed errno to %d\n", #x, errno);                                         \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CHECK(x) CALL(x, 1)
/* Set-up calls: the simulated cuInit itself sets errno (reading its environment). */
#define SETUP(x)                                                                                   \
    do {                                                                                           \
        if ((x) != CUDA_SUCCESS) return 1;                                                         \
    } while (0)
#define EXPECT_FAIL(x) CALL(x, 0)

static int meminfo(void)
{
    CUdeviceptr a, b, c;
    CHECK(cuMemAlloc(&a, 10 * MiB));
    CHECK(cuMemAlloc(&b, 20 * MiB));
    CHECK(cuMemFree(a));
    EXPECT_FAIL(cuMemAlloc(&c, 2048 * MiB));
    CHECK(cuMemFree(b));
    return 0;
}

static int pool(void)
{
    CUstream s;
    CUmemoryPool p, d;
    CUmemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CUdeviceptr a, b, c, e, f;
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuDeviceGetMemPool(&d, 0));
    CHECK(cuMemPoolCreate(&p, &props));
    printf("pool=0x%llx current=0x%llx\n", (unsigned long long)(uintptr_t)p,
           (unsigned long long)(uintptr_t)d);
    CHECK(cuMemAllocFromPoolAsync(&a, 3 * MiB, p, s));
    CHECK(cuMemAllocFromPoolAsync(&b, 1 * MiB, p, s));
    CHECK(cuMemFreeAsync(a, s));
    CHECK(cuMemAllocFromPoolAsync(&c, 2 * MiB, p, s));
    CHECK(cuMemPoolTrimTo(p, 0));
    EXPECT_FAIL(cuMemAllocFromPoolAsync(&e, 100 * MiB, p, s));
    CHECK(cuMemAllocAsync(&f, 1 * MiB, s));
    CHECK(cuMemFreeAsync(f, s));
    CHECK(cuMemFreeAsync(b, s));
    CHECK(cuMemFreeAsync(c, s));
    CHECK(cuStreamSynchronize(s));
    CHECK(cuMemPoolDestroy(p));
    CHECK(cuStreamDestroy(s));
    return 0;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    SETUP(cuInit(0));
    SETUP(cuDeviceGet(&dev, 0));
    SETUP(cuDevicePrimaryCtxRetain(&ctx, dev));
    SETUP(cuCtxSetCurrent(ctx));
    int rc = argc > 1 && !strcmp(argv[1], "pool") ? pool() : meminfo();
    if (rc == 0) printf("ok\n");
    return rc;
}
