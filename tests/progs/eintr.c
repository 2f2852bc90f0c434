/* eintr N [raw]: N rounds of 200 us on CPU then one short timed wait, in turn nanosleep,
 * clock_nanosleep (relative and absolute), poll, ppoll, select, pselect, epoll_wait and
 * sigtimedwait: system calls that SA_RESTART never restarts (signal(7)), so a signal handler
 * that runs while the thread waits makes them fail with EINTR, or end early. The thread makes
 * driver calls first (the host sampler samples it) and every 10 rounds (its samples are written
 * at its hooked calls). Prints one line per call, "NAME calls C eintr K early E", then
 * "eintr K early E" over all. "raw" makes the nanosleeps as bare system calls (syscall(2)),
 * which no wrapper of a C library function sees. Used by tests/cases/hostsample_eintr.sh. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

enum { NANOSLEEP, CLOCK_REL, CLOCK_ABS, POLL, PPOLL, SELECT, PSELECT, EPOLL, SIGWAIT, NCALLS };
static const char *const names[NCALLS] = {"nanosleep", "clock_nanosleep", "clock_nanosleep_abs",
                                          "poll",      "ppoll",           "select",
                                          "pselect",   "epoll_wait",      "sigtimedwait"};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One timed wait of at least want_ns; its return value (-1 with errno on failure). */
static int wait_once(int which, int raw, int ep, long long *want_ns)
{
    struct timespec d = {0, 100000};
    struct timeval tv = {0, 100000};
    *want_ns = 100000;
    switch (which) {
    case NANOSLEEP:
        return raw ? (int)syscall(SYS_nanosleep, &d, NULL) : nanosleep(&d, NULL);
    case CLOCK_REL: {
        int e = clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
        return e ? (errno = e, -1) : 0;
    }
    case CLOCK_ABS: {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        at.tv_nsec += 100000;
        if (at.tv_nsec >= 1000000000) at.tv_sec++, at.tv_nsec -= 1000000000;
        int e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        return e ? (errno = e, -1) : 0;
    }
    case POLL:
        *want_ns = 1000000;
        return poll(NULL, 0, 1);
    case PPOLL:
        return ppoll(NULL, 0, &d, NULL);
    case SELECT:
        return select(0, NULL, NULL, NULL, &tv);
    case PSELECT:
        return pselect(0, NULL, NULL, NULL, &d, NULL);
    case EPOLL: {
        struct epoll_event ev;
        *want_ns = 1000000;
        return epoll_wait(ep, &ev, 1, 1);
    }
    default: { /* SIGUSR2 is blocked and never sent: the wait times out (EAGAIN) */
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR2);
        int r = sigtimedwait(&set, NULL, &d);
        return r < 0 && errno == EAGAIN ? 0 : r;
    }
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, raw = argc > 2 && !strcmp(argv[2], "raw");
    int calls[NCALLS] = {0}, eintr[NCALLS] = {0}, early[NCALLS] = {0}, other = 0;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    int ep = epoll_create1(0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    if (ep < 0 || sigprocmask(SIG_BLOCK, &usr2, NULL) != 0) return perror("eintr"), 1;
    volatile unsigned long spin = 0;
    for (int i = 0; i < n; i++) {
        for (long long end = now_ns() + 200000; now_ns() < end;)
            spin++;
        int which = raw ? NANOSLEEP : i % NCALLS;
        long long want, t0 = now_ns();
        int r = wait_once(which, raw, ep, &want);
        long long took = now_ns() - t0;
        calls[which]++;
        if (r < 0 && errno == EINTR)
            eintr[which]++;
        else if (r < 0)
            other++;
        else if (took < want)
            early[which]++;
        if (i % 10 == 0) {
            CHECK(cuMemAlloc(&p, 4096));
            CHECK(cuMemFree(p));
        }
    }
    int ke = 0, kr = 0;
    for (int c = 0; c < NCALLS; c++) {
        if (calls[c])
            printf("%s calls %d eintr %d early %d\n", names[c], calls[c], eintr[c], early[c]);
        ke += eintr[c];
        kr += early[c];
    }
    printf("eintr %d early %d\n", ke, kr);
    return other ? 1 : 0;
}
