/* eintr N [sys]: N rounds of 200 us on CPU then one short timed wait, in turn nanosleep,
 * clock_nanosleep (relative and absolute), poll, ppoll, select, pselect, epoll_wait and
 * sigtimedwait: system calls that SA_RESTART never restarts (signal(7)), so a signal handler
 * that runs while the thread waits makes them fail with EINTR, or end early. The thread makes
 * driver calls first (the host sampler samples it) and every 10 rounds (its samples are written
 * at its hooked calls). Prints one line per call, "NAME calls C eintr K early E", then
 * "eintr K early E" over all. "sys" makes the waits as bare system calls through syscall(2), in
 * turn nanosleep, clock_nanosleep (relative, absolute), ppoll, pselect6, epoll_pwait,
 * rt_sigtimedwait, a futex wait with a time limit, io_getevents, semtimedop and, where the
 * architecture has them, poll, select and epoll_wait. "sock" waits on sockets with a 1 ms
 * SO_RCVTIMEO/SO_SNDTIMEO (which signal(7) says a handler ends with EINTR): recv, recvfrom,
 * recvmsg, accept on a listening socket, send and sendto on a full one, and recvfrom through
 * syscall(2). Used by tests/cases/hostsample_eintr.sh. */
#include <errno.h>
#include <linux/aio_abi.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

enum { NANOSLEEP, CLOCK_REL, CLOCK_ABS, POLL, PPOLL, SELECT, PSELECT, EPOLL, SIGWAIT, NCALLS };
static const char *const names[NCALLS] = {"nanosleep", "clock_nanosleep", "clock_nanosleep_abs",
                                          "poll",      "ppoll",           "select",
                                          "pselect",   "epoll_wait",      "sigtimedwait"};

/* the bare system calls of "sys" mode */
enum {
    S_NANOSLEEP,
    S_CLOCK_REL,
    S_CLOCK_ABS,
    S_PPOLL,
    S_PSELECT6,
    S_EPOLL_PWAIT,
    S_SIGTIMEDWAIT,
    S_FUTEX,
    S_IO_GETEVENTS,
    S_SEMTIMEDOP,
    S_POLL,
    S_SELECT,
    S_EPOLL_WAIT,
    NSYS
};
static const char *const sys_names[NSYS] = {"SYS_nanosleep",
                                            "SYS_clock_nanosleep",
                                            "SYS_clock_nanosleep_abs",
                                            "SYS_ppoll",
                                            "SYS_pselect6",
                                            "SYS_epoll_pwait",
                                            "SYS_rt_sigtimedwait",
                                            "SYS_futex",
                                            "SYS_io_getevents",
                                            "SYS_semtimedop",
                                            "SYS_poll",
                                            "SYS_select",
                                            "SYS_epoll_wait"};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One timed wait of at least want_ns; its return value (-1 with errno on failure). */
static int wait_once(int which, int ep, long long *want_ns)
{
    struct timespec d = {0, 100000};
    struct timeval tv = {0, 100000};
    *want_ns = 100000;
    switch (which) {
    case NANOSLEEP:
        return nanosleep(&d, NULL);
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

/* What sys_once needs: an epoll fd, an AIO context and a System V semaphore at 0 (0: none). */
struct sys_env {
    int ep, sem;
    aio_context_t aio;
};

/* One bare timed wait of at least want_ns through syscall(2): 0 when it timed out as asked (the
 * time limit's error taken for success), else -1 with errno; -2 where this kind is unavailable. */
static int sys_once(int which, const struct sys_env *env, long long *want_ns)
{
    struct timespec d = {0, 100000};
    static const uint64_t sigset = 1ull << (SIGUSR2 - 1); /* blocked, never sent */
    struct epoll_event ev;
    long r;
    *want_ns = 100000;
    switch (which) {
    case S_NANOSLEEP:
        return (int)syscall(SYS_nanosleep, &d, NULL);
    case S_CLOCK_REL:
        return (int)syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, NULL);
    case S_CLOCK_ABS: {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        at.tv_nsec += 100000;
        if (at.tv_nsec >= 1000000000) at.tv_sec++, at.tv_nsec -= 1000000000;
        return (int)syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
    }
    case S_PPOLL:
        return (int)syscall(SYS_ppoll, NULL, 0, &d, NULL, 8);
    case S_PSELECT6:
        return (int)syscall(SYS_pselect6, 0, NULL, NULL, NULL, &d, NULL);
    case S_EPOLL_PWAIT:
        *want_ns = 1000000;
        return (int)syscall(SYS_epoll_pwait, env->ep, &ev, 1, 1, NULL, 8);
    case S_SIGTIMEDWAIT:
        r = syscall(SYS_rt_sigtimedwait, &sigset, NULL, &d, 8);
        return r < 0 && errno == EAGAIN ? 0 : (int)r;
    case S_FUTEX: {
        static int word;
        r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &d, NULL, 0);
        return r < 0 && errno == ETIMEDOUT ? 0 : (int)r;
    }
    case S_IO_GETEVENTS: {
        struct io_event e;
        if (!env->aio) return -2;
        r = syscall(SYS_io_getevents, env->aio, 1, 1, &e, &d);
        return (int)r;
    }
    case S_SEMTIMEDOP: {
        struct sembuf op = {0, -1, 0}; /* the semaphore stays at 0: times out (EAGAIN) */
        if (env->sem < 0) return -2;
        r = syscall(SYS_semtimedop, env->sem, &op, 1, &d);
        return r < 0 && errno == EAGAIN ? 0 : (int)r;
    }
#ifdef SYS_poll
    case S_POLL:
        *want_ns = 1000000;
        return (int)syscall(SYS_poll, NULL, 0, 1);
#endif
#ifdef SYS_select
    case S_SELECT: {
        struct timeval tv = {0, 100000};
        return (int)syscall(SYS_select, 0, NULL, NULL, NULL, &tv);
    }
#endif
#ifdef SYS_epoll_wait
    case S_EPOLL_WAIT:
        *want_ns = 1000000;
        return (int)syscall(SYS_epoll_wait, env->ep, &ev, 1, 1);
#endif
    default:
        return -2;
    }
}

/* The "sys" rounds: the kinds this system has, in turn. */
/* A round's counts: a line per kind (every kind, or those called), then the totals. */
static void print_counts(const char *const *kinds, int n, const int *calls, const int *eintr,
                         const int *early, int every)
{
    int ke = 0, kr = 0;
    for (int c = 0; c < n; c++) {
        if (every || calls[c])
            printf("%s calls %d eintr %d early %d\n", kinds[c], calls[c], eintr[c], early[c]);
        ke += eintr[c];
        kr += early[c];
    }
    printf("eintr %d early %d\n", ke, kr);
}

static int run_sys(int n, int ep)
{
    struct sys_env env = {ep, semget(IPC_PRIVATE, 1, IPC_CREAT | 0600), 0};
    if (syscall(SYS_io_setup, 1, &env.aio) != 0) env.aio = 0;
    int calls[NSYS] = {0}, eintr[NSYS] = {0}, early[NSYS] = {0}, other = 0, avail[NSYS], na = 0;
    for (int k = 0; k < NSYS; k++) {
        long long want;
        if (sys_once(k, &env, &want) != -2) avail[na++] = k;
    }
    volatile unsigned long spin = 0;
    CUdeviceptr p;
    for (int i = 0; i < n; i++) {
        for (long long end = now_ns() + 200000; now_ns() < end;)
            spin++;
        int which = avail[i % na];
        long long want, t0 = now_ns();
        int r = sys_once(which, &env, &want);
        long long took = now_ns() - t0;
        calls[which]++;
        if (r == -1 && errno == EINTR)
            eintr[which]++;
        else if (r < 0)
            other++, fprintf(stderr, "%s: %s\n", sys_names[which], strerror(errno));
        else if (took < want)
            early[which]++;
        if (i % 10 == 0) {
            CHECK(cuMemAlloc(&p, 4096));
            CHECK(cuMemFree(p));
        }
    }
    if (env.sem >= 0) semctl(env.sem, 0, IPC_RMID);
    if (env.aio) syscall(SYS_io_destroy, env.aio);
    print_counts(sys_names, NSYS, calls, eintr, early, 0);
    return other ? 1 : 0;
}

/* the "sock" rounds */
enum { K_RECV, K_RECVFROM, K_RECVMSG, K_ACCEPT, K_SEND, K_SENDTO, K_SYS_RECVFROM, NSOCK };
static const char *const sock_names[NSOCK] = {"recv", "recvfrom", "recvmsg",     "accept",
                                              "send", "sendto",   "SYS_recvfrom"};

/* One wait on a socket with a 1 ms timeout: 0 when it timed out (EAGAIN), else -1 with errno. */
static int sock_once(int which, int rd, int wr, int lis)
{
    char b[64];
    struct iovec iov = {b, sizeof(b)};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    long r;
    switch (which) {
    case K_RECV:
        r = recv(rd, b, sizeof(b), 0);
        break;
    case K_RECVFROM:
        r = recvfrom(rd, b, sizeof(b), 0, NULL, NULL);
        break;
    case K_RECVMSG:
        r = recvmsg(rd, &m, 0);
        break;
    case K_ACCEPT:
        r = accept(lis, NULL, NULL);
        break;
    case K_SEND:
        r = send(wr, b, sizeof(b), 0);
        break;
    case K_SENDTO:
        r = sendto(wr, b, sizeof(b), 0, NULL, 0);
        break;
    default:
        r = syscall(SYS_recvfrom, rd, b, sizeof(b), 0, NULL, NULL);
        break;
    }
    if (r >= 0) return errno = EPROTO, -1; /* nothing was ever sent or accepted */
    return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}

static int run_sock(int n)
{
    int rd[2], wr[2], lis = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "gputrace-eintr-%d", (int)getpid());
    struct timeval tv = {0, 1000};
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, rd) || socketpair(AF_UNIX, SOCK_STREAM, 0, wr) ||
        lis < 0 || bind(lis, (struct sockaddr *)&a, sizeof(a)) || listen(lis, 1))
        return perror("eintr sock"), 1;
    /* the write side full (its peer never reads), then the timeouts */
    char fill[4096] = {0};
    while (send(wr[0], fill, sizeof(fill), MSG_DONTWAIT) > 0) {
    }
    if (setsockopt(rd[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
        setsockopt(wr[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
        setsockopt(lis, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
        return perror("eintr setsockopt"), 1;
    int calls[NSOCK] = {0}, eintr[NSOCK] = {0}, early[NSOCK] = {0}, other = 0;
    volatile unsigned long spin = 0;
    CUdeviceptr p;
    for (int i = 0; i < n; i++) {
        for (long long end = now_ns() + 200000; now_ns() < end;)
            spin++;
        int which = i % NSOCK;
        long long t0 = now_ns();
        int r = sock_once(which, rd[0], wr[0], lis);
        long long took = now_ns() - t0;
        calls[which]++;
        if (r < 0 && errno == EINTR)
            eintr[which]++;
        else if (r < 0)
            other++, fprintf(stderr, "%s: %s\n", sock_names[which], strerror(errno));
        else if (took < 1000000)
            early[which]++;
        if (i % 10 == 0) {
            CHECK(cuMemAlloc(&p, 4096));
            CHECK(cuMemFree(p));
        }
    }
    print_counts(sock_names, NSOCK, calls, eintr, early, 1);
    return other ? 1 : 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, sys = argc > 2 && !strcmp(argv[2], "sys");
    int calls[NCALLS] = {0}, eintr[NCALLS] = {0}, early[NCALLS] = {0}, other = 0;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    open_primary(&dev, &ctx);
    int ep = epoll_create1(0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    if (ep < 0 || sigprocmask(SIG_BLOCK, &usr2, NULL) != 0) return perror("eintr"), 1;
    if (sys) return run_sys(n, ep);
    if (argc > 2 && !strcmp(argv[2], "sock")) return run_sock(n);
    volatile unsigned long spin = 0;
    for (int i = 0; i < n; i++) {
        for (long long end = now_ns() + 200000; now_ns() < end;)
            spin++;
        int which = i % NCALLS;
        long long want, t0 = now_ns();
        int r = wait_once(which, ep, &want);
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
    print_counts(names, NCALLS, calls, eintr, early, 0);
    return other ? 1 : 0;
}
