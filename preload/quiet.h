/* The wrappers of waits.c and sockets.c: the real entry point looked up at the first call, and
 * the call forwarded with the thread quiet around it (no host-sample signal lands in the wait). */
#ifndef GT_QUIET_H
#define GT_QUIET_H

#include <dlfcn.h>
#include <errno.h>

#include "shim.h"

/* The real entry point, looked up at the first call (threads may race to it: each finds the same
 * address; relaxed atomics). */
#define LOOKUP(type, name)                                                                         \
    static type real_slot_;                                                                        \
    type real_ = __atomic_load_n(&real_slot_, __ATOMIC_RELAXED);                                   \
    if (!real_) {                                                                                  \
        real_ = (type)gt_real_dlsym(RTLD_NEXT, name);                                              \
        __atomic_store_n(&real_slot_, real_, __ATOMIC_RELAXED);                                    \
    }

/* The same, failing with ENOSYS where it is missing (a program calling it would not have linked).
 */
#define REAL(type, name)                                                                           \
    LOOKUP(type, name)                                                                             \
    if (!real_) {                                                                                  \
        errno = ENOSYS;                                                                            \
        return -1;                                                                                 \
    }

/* Forwards a call that returns rtype, the thread quiet around it where quiet_if holds. */
#define FORWARD(rtype, quiet_if, call)                                                             \
    do {                                                                                           \
        if (!(quiet_if)) return call;                                                              \
        int quiet_ = gt_hostsample_quiet_begin();                                                  \
        rtype r_ = call;                                                                           \
        gt_hostsample_quiet_end(quiet_);                                                           \
        return r_;                                                                                 \
    } while (0)

/* Forwards a call that returns rtype, the thread quiet around it. */
#define QUIET(rtype, call) FORWARD(rtype, 1, call)

#endif
