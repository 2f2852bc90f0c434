/* The C library's syscall(2) as the shim calls it for itself. The shim exports a syscall of its
 * own (waits.c: the program's, which runs some numbers quiet), so its own system calls go through
 * gt_syscall, never that one: take_back's rt_sigtimedwait would recurse into the sampler's state
 * from quiet_begin. Found with dlvsym, as real.c finds dlsym (the shim's dlsym is the program's),
 * at load, before any handler of ours or the program's may call it (dlsym is not
 * async-signal-safe); a call from another library's constructor before that looks it up then.
 * This file uses nothing else of the shim: everything may call it. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>

#include "shim.h"

gt_syscall_fn _Atomic gt_real_syscall;

/* Not instrumented, as waits.c's wrapper: both may run before a sanitizer runtime is set up. */
__attribute__((constructor, no_sanitize("address", "undefined", "thread"))) static void
resolve_syscall(void)
{
    void *p = dlvsym(RTLD_NEXT, "syscall", "GLIBC_2.2.5");
    if (!p) p = dlvsym(RTLD_NEXT, "syscall", "GLIBC_2.17");
    __atomic_store_n(&gt_real_syscall, (gt_syscall_fn)p, __ATOMIC_RELAXED);
}

__attribute__((no_sanitize("address", "undefined", "thread"))) gt_syscall_fn
gt_libc_syscall_slow(void)
{
    resolve_syscall();
    return __atomic_load_n(&gt_real_syscall, __ATOMIC_RELAXED);
}

/* Not instrumented: the arguments a caller did not pass are read where glibc's reads them (on
 * x86-64 the sixth from the caller's frame, which AddressSanitizer may have poisoned). */
__attribute__((no_sanitize("address", "thread"))) long gt_syscall(long nr, ...)
{
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    gt_syscall_fn real = gt_libc_syscall();
    if (real) return real(nr, a, b, c, d, e, f);
    errno = ENOSYS;
    return -1;
}
