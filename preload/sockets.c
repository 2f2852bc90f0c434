/* Socket calls on a socket with a send or receive timeout, wrapped so that a host-sample signal
 * never cuts one short: signal(7) lists them as never restarted after a handler where
 * SO_RCVTIMEO/SO_SNDTIMEO is set (the kernel ends the wait with EINTR instead), and restarted by
 * SA_RESTART otherwise. setsockopt is wrapped to learn which descriptors have a timeout (one bit
 * per descriptor, set when a timeout is set, never cleared: a stale bit only makes a later socket
 * on that number quiet for nothing); a call on such a descriptor, or on one past the bitmap, runs
 * quiet as waits.c's do. Others pay one load of that bit. recvmmsg with a time limit of its own
 * is never restarted either. Return value and errno are the real call's.
 *
 * Not covered (docs/ANALYSES.md): read and write on such a socket (the same wait, but wrapping
 * every read and write of the program is not worth that window), timeouts set by system calls
 * the shim does not see. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/socket.h>

#include "quiet.h"
#include "shim.h"

/* the same frame-pointer-free code as waits.c, for the sampler's walk of a sleeping thread */
#pragma GCC optimize("omit-frame-pointer")

_Atomic uint64_t gt_sock_timed_fds[GT_SOCK_FDS / 64];

void gt_sock_note_timeout(int fd, int level, int name)
{
    if (level != SOL_SOCKET || fd < 0 || fd >= GT_SOCK_FDS) return;
    if (name != SO_RCVTIMEO && name != SO_SNDTIMEO
#ifdef SO_RCVTIMEO_NEW
        && name != SO_RCVTIMEO_NEW && name != SO_SNDTIMEO_NEW
#endif
#ifdef SO_RCVTIMEO_OLD
        && name != SO_RCVTIMEO_OLD && name != SO_SNDTIMEO_OLD
#endif
    )
        return;
    __atomic_fetch_or(&gt_sock_timed_fds[fd / 64], 1ull << (fd % 64), __ATOMIC_RELAXED);
}

typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);
typedef ssize_t (*recv_fn)(int, void *, size_t, int);
typedef ssize_t (*recv_chk_fn)(int, void *, size_t, size_t, int);
typedef ssize_t (*recvfrom_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
typedef ssize_t (*recvfrom_chk_fn)(int, void *, size_t, size_t, int, struct sockaddr *,
                                   socklen_t *);
typedef ssize_t (*recvmsg_fn)(int, struct msghdr *, int);
typedef int (*recvmmsg_fn)(int, struct mmsghdr *, unsigned, int, struct timespec *);
typedef int (*accept_fn)(int, struct sockaddr *, socklen_t *);
typedef int (*accept4_fn)(int, struct sockaddr *, socklen_t *, int);
typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef int (*sendmmsg_fn)(int, struct mmsghdr *, unsigned, int);

GT_EXPORT int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    REAL(setsockopt_fn, "setsockopt");
    int r = real_(fd, level, name, val, len);
    if (r == 0) gt_sock_note_timeout(fd, level, name);
    return r;
}

GT_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    REAL(recv_fn, "recv");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, buf, n, flags));
}

/* _FORTIFY_SOURCE builds call these, which reach recv and recvfrom inside libc */
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags, struct sockaddr *from,
                       socklen_t *fromlen);

GT_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    REAL(recv_chk_fn, "__recv_chk");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, buf, n, buflen, flags));
}

GT_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from,
                           socklen_t *fromlen)
{
    REAL(recvfrom_fn, "recvfrom");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, buf, n, flags, from, fromlen));
}

GT_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                                 struct sockaddr *from, socklen_t *fromlen)
{
    REAL(recvfrom_chk_fn, "__recvfrom_chk");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, buf, n, buflen, flags, from, fromlen));
}

GT_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    REAL(recvmsg_fn, "recvmsg");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, msg, flags));
}

GT_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags, struct timespec *timeout)
{
    REAL(recvmmsg_fn, "recvmmsg");
    FORWARD(int, timeout || gt_sock_timed(fd), real_(fd, v, n, flags, timeout));
}

GT_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    REAL(accept_fn, "accept");
    FORWARD(int, gt_sock_timed(fd), real_(fd, addr, len));
}

GT_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    REAL(accept4_fn, "accept4");
    FORWARD(int, gt_sock_timed(fd), real_(fd, addr, len, flags));
}

GT_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    REAL(connect_fn, "connect");
    FORWARD(int, gt_sock_timed(fd), real_(fd, addr, len));
}

GT_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    REAL(send_fn, "send");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, buf, n, flags));
}

GT_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to,
                         socklen_t tolen)
{
    REAL(sendto_fn, "sendto");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, buf, n, flags, to, tolen));
}

GT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    REAL(sendmsg_fn, "sendmsg");
    FORWARD(ssize_t, gt_sock_timed(fd), real_(fd, msg, flags));
}

GT_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
    REAL(sendmmsg_fn, "sendmmsg");
    FORWARD(int, gt_sock_timed(fd), real_(fd, v, n, flags));
}
