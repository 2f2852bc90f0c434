/* sigchain: the program's own handler for the real-time signal the host sampler took
 * (SIGRTMAX while free at trace start) is kept and run. After a CUDA call (tracing started), it
 * installs a handler for SIGRTMAX, reads back the action it set, raises the signal three times
 * from itself, and sleeps 50 ms while being sampled: its handler ran exactly three times and the
 * sleep was not cut short; then it computes 50 ms, signalled by the sampler, whose signals its
 * handler must not see. Prints "sigchain ok N". */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static volatile sig_atomic_t hits;

static void on_rt(int sig)
{
    (void)sig;
    hits++;
}

int main(void)
{
    CHECK(cuInit(0));
    struct sigaction act, back;
    memset(&act, 0, sizeof(act));
    act.sa_handler = on_rt;
    sigemptyset(&act.sa_mask);
    if (sigaction(SIGRTMAX, &act, NULL) != 0) return 3;
    if (sigaction(SIGRTMAX, NULL, &back) != 0 || back.sa_handler != on_rt) {
        fprintf(stderr, "sigaction read back another action\n");
        return 4;
    }
    for (int i = 0; i < 3; i++)
        raise(SIGRTMAX);
    struct timespec t = {0, 50000000}, rem;
    if (nanosleep(&t, &rem) != 0) {
        fprintf(stderr, "nanosleep interrupted\n");
        return 5;
    }
    /* 50 ms on CPU: the sampler signals this running thread; the program's handler must not see
     * those signals */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 50000000L);
    CUdevice d;
    CHECK(cuDeviceGet(&d, 0));
    printf("sigchain ok %d\n", (int)hits);
    return hits == 3 ? 0 : 6;
}
