/* execloop N [masked|fail]: makes driver calls and spins on CPU for 50 ms (a loaded machine's
 * sampler misses rounds) (a thread the host sampler signals), then execs itself with N-1, down to
 * 0, which prints "execloop ok". With `masked` every signal is blocked for 2 ms more of spinning
 * and the exec (the mask is inherited; the new image unblocks them first thing, as a shell or a
 * service manager would): a signal pending at the exec would then arrive in the new program. Under
 * the shim, image k traces into imgk.trace (the pid, which names files, stays the same across
 * exec). `fail`: an exec that fails (ENOENT), then 100 ms more on CPU, then "execloop ok". Used by
 * tests/cases/hostsample_exec.sh. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int masked = argc > 2 && !strcmp(argv[2], "masked");
    int failing = argc > 2 && !strcmp(argv[2], "fail");
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    open_primary(&dev, &ctx);
    CHECK(cuMemAlloc(&p, 4096));
    CHECK(cuMemFree(p));
    volatile unsigned long spin = 0;
    for (double end = now() + 0.05; now() < end;)
        spin++;
    CHECK(cuMemAlloc(&p, 4096)); /* the samples are written at the thread's next hooked call */
    CHECK(cuMemFree(p));
    if (n <= 0) {
        printf("execloop ok\n");
        return 0;
    }
    if (masked) {
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (double end = now() + 0.002; now() < end;)
            spin++;
    }
    if (failing) {
        int r = execl("/nonexistent/execloop", "execloop", (char *)NULL);
        printf("execl: %d %s\n", r, strerror(errno));
        CHECK(cuMemAlloc(&p, 8192)); /* marks the time in the trace */
        CHECK(cuMemFree(p));
        for (double end = now() + 0.1; now() < end;)
            spin++;
        printf("execloop ok\n");
        return 0;
    }
    char next[16];
    snprintf(next, sizeof(next), "%d", n - 1);
    char out[64]; /* each image traces into a file of its own (the pid stays the same) */
    snprintf(out, sizeof(out), "img%d.trace", n - 1);
    if (getenv("GPUTRACE_OUTPUT")) setenv("GPUTRACE_OUTPUT", out, 1);
    execl("/proc/self/exe", argv[0], next, masked ? "masked" : NULL, (char *)NULL);
    perror("execl");
    return 1;
}
