/* bench_syscall [N]: the cost of syscall(2) through the shim's wrapper (preload/waits.c). Times N
 * calls of syscall(SYS_getpid) (a number forwarded as it came) and N of syscall(SYS_ppoll) of no
 * descriptors and zero time (a wait's number, run quiet), best of 5 batches each, and prints
 * "getpid NS ppoll0 NS" in ns per call. Run untraced and traced (bench/syscall.sh): the difference
 * is the wrapper's. The thread makes one driver call first, so that it is a sampled thread when
 * traced. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double best(long nr, long n)
{
    static const struct timespec zero = {0, 0};
    double b = 1e30;
    for (int k = 0; k < 5; k++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            if (nr == SYS_getpid)
                syscall(SYS_getpid);
            else
                syscall(SYS_ppoll, NULL, 0, &zero, NULL, 8);
        double t = (now_ns() - t0) / (double)n;
        if (t < b) b = t;
    }
    return b;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    CUdevice dev;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS) return 1;
    printf("getpid %.1f ppoll0 %.1f\n", best(SYS_getpid, n), best(SYS_ppoll, n));
    return 0;
}
