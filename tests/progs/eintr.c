/* eintr N: N rounds of 200 us on CPU then a 100 us nanosleep (a system call that SA_RESTART never
 * restarts), after driver calls that make the thread one the host sampler samples. Prints
 * "eintr K" where K is how many of the sleeps returned EINTR. Used by
 * tests/cases/hostsample_eintr.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

#include "check.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, eintr = 0;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    volatile unsigned long spin = 0;
    for (int i = 0; i < n; i++) {
        for (long long end = now_ns() + 200000; now_ns() < end;)
            spin++;
        struct timespec d = {0, 100000};
        if (nanosleep(&d, NULL) != 0 && errno == EINTR) eintr++;
        if (i % 10 == 0) { /* the samples are written at the thread's hooked calls */
            CHECK(cuMemAlloc(&p, 4096));
            CHECK(cuMemFree(p));
        }
    }
    printf("eintr %d\n", eintr);
    return 0;
}
