/* bench_sample spin|sleep SECONDS: the cost of host stack samples (GPUTRACE_SAMPLE_HZ) on one
 * thread that makes CUDA calls (bench/sample.sh runs it traced with and without sampling).
 * spin: the thread computes, with a cuCtxSynchronize every ~10 ms; prints the work done per
 * second (sampling steals it: the handler runs on this thread). sleep: the thread sleeps 10 ms
 * between calls; prints the process' CPU time per second (the sampler thread's reads and walks).
 * Output: "work_per_s=N cpu_ns_per_s=N". */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int spin = strcmp(argv[1], "spin") == 0;
    double secs = atof(argv[2]);
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx))
        return 3;
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    uint64_t t0 = now_ns(CLOCK_MONOTONIC), end = t0 + (uint64_t)(secs * 1e9), work = 0;
    volatile uint64_t x = 1;
    while (now_ns(CLOCK_MONOTONIC) < end) {
        if (spin) {
            uint64_t until = now_ns(CLOCK_MONOTONIC) + 10000000;
            while (now_ns(CLOCK_MONOTONIC) < until) {
                for (int i = 0; i < 1000; i++)
                    x = x * 6364136223846793005u + 1442695040888963407u;
                work++;
            }
        } else
            usleep(10000);
        cuCtxSynchronize();
    }
    uint64_t t1 = now_ns(CLOCK_MONOTONIC);
    getrusage(RUSAGE_SELF, &r1);
    double cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec + r1.ru_stime.tv_sec -
                          r0.ru_stime.tv_sec) *
                     1e9 +
                 (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec + r1.ru_stime.tv_usec -
                          r0.ru_stime.tv_usec) *
                     1e3;
    double s = (double)(t1 - t0) / 1e9;
    printf("work_per_s=%.0f cpu_ns_per_s=%.0f\n", (double)work / s, cpu / s);
    return 0;
}
