/* flood NTHREADS ITERATIONS: produce traced events as fast as the driver takes them. Each thread
 * runs ITERATIONS rounds of cuMemAlloc(4096), cuLaunchKernel, cuMemFree (3 events a round).
 * Prints the counts on stdout ("flood: N allocations, N frees, N launches") and, on stderr, the
 * resident set size after start-up (tracing started, before the threads) and the peak of the
 * whole run: "rss_baseline_kb=B rss_peak_kb=P" (from /proc/self/status VmRSS and VmHWM). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define MAX_THREADS 64

#include "check.h"

static CUcontext ctx;
static CUfunction fn;
static long iterations;

static long status_kb(const char *key)
{
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, k) && line[k] == ':') v = atol(line + k + 1);
    fclose(f);
    return v;
}

static void *worker(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    for (long i = 0; i < iterations; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 4096));
        CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        CHECK(cuMemFree(p));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    iterations = argc > 2 ? atol(argv[2]) : 100000;
    pthread_t th[MAX_THREADS];
    CUdevice dev;
    CUmodule mod;
    CUdeviceptr p;
    if (n < 1 || n > MAX_THREADS || iterations < 0) return 2;
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel flood_k 100\n"));
    CHECK(cuModuleGetFunction(&fn, mod, "flood_k"));
    CHECK(cuMemAlloc(&p, 4096)); /* the main thread's first events: its buffer exists now */
    CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuMemFree(p));
    long baseline = status_kb("VmRSS");
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, worker, NULL) != 0) return 3;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    long peak = status_kb("VmHWM");
    long total = (long)n * iterations + 1;
    printf("flood: %ld allocations, %ld frees, %ld launches\n", total, total, total);
    fprintf(stderr, "rss_baseline_kb=%ld rss_peak_kb=%ld\n", baseline, peak);
    return 0;
}
