/* stress NTHREADS ITERATIONS: every thread runs ITERATIONS rounds of
 *   cuMemAlloc(size_of(i)); [cuLaunchKernel when i is odd]; cuMemFree
 * so a thread makes ITERATIONS allocations, ITERATIONS frees and ITERATIONS / 2 launches
 * (ITERATIONS = 400,000: 1 M traced events per thread). The size of allocation i is
 * 512 * (1 + i % 1024): a checker reading the trace knows which iteration each allocation was,
 * so it can tell whether one thread's records come out in the order the thread made them.
 * All threads start together (a barrier) to make them contend for the tracer's file.
 * Prints one line per thread ("thread K: A allocations, F frees, L launches") and exits 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#define MAX_THREADS 64

#include "check.h"

static CUcontext ctx;
static CUfunction fn;
static long iterations;
static pthread_barrier_t start;

struct counts {
    long allocs, frees, launches;
};

static void *worker(void *arg)
{
    struct counts *c = arg;
    CHECK(cuCtxSetCurrent(ctx));
    pthread_barrier_wait(&start);
    for (long i = 0; i < iterations; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 512 * (size_t)(1 + i % 1024)));
        c->allocs++;
        if (i & 1) {
            CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
            c->launches++;
        }
        CHECK(cuMemFree(p));
        c->frees++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 16;
    iterations = argc > 2 ? atol(argv[2]) : 400000;
    pthread_t th[MAX_THREADS];
    struct counts c[MAX_THREADS] = {{0}};
    CUdevice dev;
    CUmodule mod;
    if (n < 1 || n > MAX_THREADS || iterations < 0) return 2;
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel stress_tick 100\n"));
    CHECK(cuModuleGetFunction(&fn, mod, "stress_tick"));
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, &c[i]) != 0) return 3;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < n; i++)
        printf("thread %d: %ld allocations, %ld frees, %ld launches\n", i, c[i].allocs, c[i].frees,
               c[i].launches);
    return 0;
}
