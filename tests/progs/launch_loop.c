/* launch_loop N: N launches of one kernel (the driver's default duration) in a tight loop on
 * the primary context's default stream, then exit without synchronizing: the shortest path from
 * a burst of GPU work to process exit (tests/cases/cupti_exit.sh). Prints "N launches". */
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#include "check.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel tick\n"));
    CHECK(cuModuleGetFunction(&fn, mod, "tick"));
    for (long i = 0; i < n; i++)
        CHECK(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    printf("%ld launches\n", n);
    return 0;
}
