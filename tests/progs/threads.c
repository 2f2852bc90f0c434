/* threads [NTHREADS] [PER_THREAD]: each thread allocates and frees PER_THREAD buffers of
 * 4096 bytes and launches a kernel every 10th iteration. The report must count every one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

static CUcontext ctx;
static CUfunction fn;
static long per_thread = 10000;

#include "check.h"

static void *worker(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    for (long i = 0; i < per_thread; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 4096));
        if (i % 10 == 0) CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        CHECK(cuMemFree(p));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    if (argc > 2) per_thread = atol(argv[2]);
    CUdevice dev;
    CUmodule mod;
    pthread_t th[256];
    if (n < 1 || n > 256) return 2;
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel tick 1000\n"));
    CHECK(cuModuleGetFunction(&fn, mod, "tick"));
    for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    printf("ok %d threads x %ld\n", n, per_thread);
    return 0;
}
