/* The C library's timed and signal waits, wrapped so that a host-sample signal never cuts one
 * short. These are the calls signal(7) lists as never restarted after a handler, whatever
 * SA_RESTART says: a handler that runs while the thread waits in one makes it fail with EINTR (or
 * return early), and a program that does not retry would change behaviour because of us.
 *
 * Around each call the thread is marked quiet (gt_hostsample_quiet_begin, a per-thread counter):
 * the sampler thread sends no signal to a quiet thread, and a signal already on its way is
 * delivered (or taken back) before the call starts. The sampler still walks the thread's stack
 * itself while it sleeps (hostsample.c). Threads that are not sampled pay one thread-local load.
 * Return value and errno are the real call's.
 *
 * syscall(2) is wrapped too: the numbers of those waits (and io_getevents, futex waits with a time
 * limit, and sockets.c's socket calls on a socket with a timeout) run quiet, every other number
 * goes to the C library's syscall as it came, six arguments.
 *
 * Not covered (docs/ANALYSES.md): inline system calls (a statically linked C library, runtimes
 * that make their own), read and write on sockets with a timeout (sockets.c); a thread seen
 * running by the sampler that enters one of those in the microseconds before the signal lands
 * gets EINTR. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/msg.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "quiet.h"
#include "shim.h"

/* The sampler thread walks a thread asleep in one of these from its sp (hostsample.c), and such a
 * walk stops at a frame whose CFA is rbp-based: no frame pointer here even in the sanitizer
 * builds (-fno-omit-frame-pointer), so that the walk reaches the program's frames. */
#pragma GCC optimize("omit-frame-pointer")

/* ---- sleeps ---------------------------------------------------------------------------------- */

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
typedef unsigned (*sleep_fn)(unsigned);
typedef int (*usleep_fn)(useconds_t);
typedef int (*thrd_sleep_fn)(const struct timespec *, struct timespec *);

GT_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    REAL(nanosleep_fn, "nanosleep");
    QUIET(int, real_(req, rem));
}

GT_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                              struct timespec *rem)
{
    LOOKUP(clock_nanosleep_fn, "clock_nanosleep");
    if (!real_) return ENOSYS; /* (it returns the error, errno untouched) */
    QUIET(int, real_(clock, flags, req, rem));
}

/* glibc's sleep, usleep and thrd_sleep reach its nanosleep inside libc, past the wrapper above */
GT_EXPORT unsigned sleep(unsigned seconds)
{
    LOOKUP(sleep_fn, "sleep");
    if (!real_) return seconds;
    QUIET(unsigned, real_(seconds));
}

GT_EXPORT int usleep(useconds_t usec)
{
    REAL(usleep_fn, "usleep");
    QUIET(int, real_(usec));
}

GT_EXPORT int thrd_sleep(const struct timespec *req, struct timespec *rem)
{
    REAL(thrd_sleep_fn, "thrd_sleep");
    QUIET(int, real_(req, rem));
}

/* ---- file descriptor multiplexing ------------------------------------------------------------ */

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*poll_chk_fn)(struct pollfd *, nfds_t, int, size_t);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *,
                            size_t);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
                          const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *,
                               const sigset_t *);

GT_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    REAL(poll_fn, "poll");
    QUIET(int, real_(fds, n, timeout));
}

/* _FORTIFY_SOURCE builds call these, which reach poll inside libc */
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t len);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask,
                size_t len);

GT_EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t len)
{
    REAL(poll_chk_fn, "__poll_chk");
    QUIET(int, real_(fds, n, timeout, len));
}

GT_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                    const sigset_t *mask)
{
    REAL(ppoll_fn, "ppoll");
    QUIET(int, real_(fds, n, timeout, mask));
}

GT_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                          const sigset_t *mask, size_t len)
{
    REAL(ppoll_chk_fn, "__ppoll_chk");
    QUIET(int, real_(fds, n, timeout, mask, len));
}

GT_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *x, struct timeval *timeout)
{
    REAL(select_fn, "select");
    QUIET(int, real_(n, r, w, x, timeout));
}

GT_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *timeout,
                      const sigset_t *mask)
{
    REAL(pselect_fn, "pselect");
    QUIET(int, real_(n, r, w, x, timeout, mask));
}

GT_EXPORT int epoll_wait(int ep, struct epoll_event *ev, int max, int timeout)
{
    REAL(epoll_wait_fn, "epoll_wait");
    QUIET(int, real_(ep, ev, max, timeout));
}

GT_EXPORT int epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
                          const sigset_t *mask)
{
    REAL(epoll_pwait_fn, "epoll_pwait");
    QUIET(int, real_(ep, ev, max, timeout, mask));
}

GT_EXPORT int epoll_pwait2(int ep, struct epoll_event *ev, int max, const struct timespec *timeout,
                           const sigset_t *mask)
{
    REAL(epoll_pwait2_fn, "epoll_pwait2");
    QUIET(int, real_(ep, ev, max, timeout, mask));
}

/* ---- waits for signals ----------------------------------------------------------------------- */

typedef int (*pause_fn)(void);
typedef int (*sigsuspend_fn)(const sigset_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
typedef int (*sigwaitinfo_fn)(const sigset_t *, siginfo_t *);

/* pause and sigsuspend return after any handler: one of ours would end them */
GT_EXPORT int pause(void)
{
    REAL(pause_fn, "pause");
    QUIET(int, real_());
}

GT_EXPORT int sigsuspend(const sigset_t *mask)
{
    REAL(sigsuspend_fn, "sigsuspend");
    QUIET(int, real_(mask));
}

GT_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    REAL(sigtimedwait_fn, "sigtimedwait");
    QUIET(int, real_(set, info, timeout));
}

GT_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    REAL(sigwaitinfo_fn, "sigwaitinfo");
    QUIET(int, real_(set, info));
}

/* ---- System V IPC, POSIX semaphores ---------------------------------------------------------- */

typedef int (*semop_fn)(int, struct sembuf *, size_t);
typedef int (*semtimedop_fn)(int, struct sembuf *, size_t, const struct timespec *);
typedef ssize_t (*msgrcv_fn)(int, void *, size_t, long, int);
typedef int (*msgsnd_fn)(int, const void *, size_t, int);
typedef int (*sem_wait_fn)(sem_t *);
typedef int (*sem_timedwait_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);

GT_EXPORT int semop(int id, struct sembuf *ops, size_t n)
{
    REAL(semop_fn, "semop");
    QUIET(int, real_(id, ops, n));
}

GT_EXPORT int semtimedop(int id, struct sembuf *ops, size_t n, const struct timespec *timeout)
{
    REAL(semtimedop_fn, "semtimedop");
    QUIET(int, real_(id, ops, n, timeout));
}

GT_EXPORT ssize_t msgrcv(int id, void *msg, size_t size, long type, int flags)
{
    REAL(msgrcv_fn, "msgrcv");
    QUIET(ssize_t, real_(id, msg, size, type, flags));
}

GT_EXPORT int msgsnd(int id, const void *msg, size_t size, int flags)
{
    REAL(msgsnd_fn, "msgsnd");
    QUIET(int, real_(id, msg, size, flags));
}

/* a semaphore's futex wait with a time limit fails with EINTR after a handler (sem_wait(3)) */
GT_EXPORT int sem_wait(sem_t *sem)
{
    REAL(sem_wait_fn, "sem_wait");
    QUIET(int, real_(sem));
}

GT_EXPORT int sem_timedwait(sem_t *sem, const struct timespec *at)
{
    REAL(sem_timedwait_fn, "sem_timedwait");
    QUIET(int, real_(sem, at));
}

GT_EXPORT int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *at)
{
    REAL(sem_clockwait_fn, "sem_clockwait");
    QUIET(int, real_(sem, clock, at));
}

/* ---- syscall(2) ------------------------------------------------------------------------------ */

/* glibc's syscall takes the number and six longs whatever the call (x86-64: rdi, then rsi, rdx,
 * rcx, r8, r9 and the first stack slot; aarch64: x0, then x1-x6) and hands all six to the kernel,
 * which reads those it needs. Variadic integer arguments travel where named ones do on both
 * (System V AMD64, AAPCS64 on Linux), so the wrapper below takes seven named longs: a number it
 * does not wait for is forwarded by a tail jump, the stack slot untouched, a handful of
 * instructions (bench/syscall.sh). */
/* The wrapper's path for numbers it forwards is not instrumented: another library's constructor
 * may call syscall before a sanitizer runtime preloaded with us has set up the thread (Python
 * 3.13's mimalloc asks getrandom from its constructor: ThreadSanitizer's function-entry hook
 * crashed there). */
#define GT_SYSCALL_PATH __attribute__((no_sanitize("address", "undefined", "thread")))

GT_SYSCALL_PATH static long no_syscall(void)
{
    errno = ENOSYS;
    return -1;
}

/* What the wrapper does with a number: forwards it (0), runs it quiet (1: the system calls
 * signal(7) says a handler ends with EINTR whatever SA_RESTART says, or that return early), or
 * notes a socket's timeout after it (2). a, b, d, e are the call's arguments 1, 2, 4 and 5 (a
 * socket; a futex's op and time limit; recvmmsg's time limit). */
GT_SYSCALL_PATH static int classify(long nr, long a, long b, long d, long e)
{
    /* (an int argument may come with any upper half: the kernel reads 32 bits of those) */
    switch ((int)nr) {
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
    case SYS_ppoll:
    case SYS_pselect6:
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
#ifdef SYS_poll
    case SYS_poll:
#endif
#ifdef SYS_select
    case SYS_select:
#endif
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
#ifdef SYS_pause
    case SYS_pause:
#endif
    case SYS_rt_sigsuspend:
    case SYS_rt_sigtimedwait:
    case SYS_semop:
    case SYS_semtimedop:
    case SYS_msgrcv:
    case SYS_msgsnd:
    case SYS_io_getevents:
#ifdef SYS_io_pgetevents
    case SYS_io_pgetevents:
#endif
        return 1;
    case SYS_futex: {
        /* a wait with a time limit ends with EINTR (the kernel's restart block); one without is
         * restarted by SA_RESTART */
        int op = (int)b & FUTEX_CMD_MASK;
        return (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET) && d != 0;
    }
    /* (sockets.c) on a socket with SO_RCVTIMEO or SO_SNDTIMEO */
    case SYS_recvmmsg:
        return e != 0 || gt_sock_timed((int)a);
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_accept:
    case SYS_accept4:
    case SYS_connect:
    case SYS_sendto:
    case SYS_sendmsg:
    case SYS_sendmmsg:
        return gt_sock_timed((int)a);
    case SYS_setsockopt:
        return 2;
    default:
        return 0;
    }
}

/* syscall(2) under another C name: <unistd.h> declares it variadic */
GT_EXPORT long gt_syscall_wrapper(long nr, long a, long b, long c, long d, long e,
                                  long f) __asm__("syscall");
/* Apart, so that the wrapper's other numbers pay no frame for it. */
__attribute__((noinline)) static long quiet_syscall(gt_syscall_fn real, long nr, long a, long b,
                                                    long c, long d, long e, long f)
{
    QUIET(long, real(nr, a, b, c, d, e, f));
}

__attribute__((noinline)) static long setsockopt_syscall(gt_syscall_fn real, long nr, long a,
                                                         long b, long c, long d, long e, long f)
{
    long r = real(nr, a, b, c, d, e, f);
    if (r == 0) gt_sock_note_timeout((int)a, (int)b, (int)c);
    return r;
}

GT_SYSCALL_PATH GT_EXPORT long gt_syscall_wrapper(long nr, long a, long b, long c, long d, long e,
                                                  long f)
{
    /* (gt_libc_syscall's load, not the inline function: an instrumented copy of it could stay) */
    gt_syscall_fn real = __atomic_load_n(&gt_real_syscall, __ATOMIC_RELAXED);
    if (GT_UNLIKELY(!real)) real = gt_libc_syscall_slow();
    if (GT_UNLIKELY(!real)) return no_syscall();
    int what = classify(nr, a, b, d, e);
    if (GT_LIKELY(what == 0)) return real(nr, a, b, c, d, e, f);
    if (what == 1) return quiet_syscall(real, nr, a, b, c, d, e, f);
    return setsockopt_syscall(real, nr, a, b, c, d, e, f);
}
