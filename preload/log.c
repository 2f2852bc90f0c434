/* Diagnostics of the shim: a small formatter into a stack buffer and one write(2) to stderr.
 * No stdio, no malloc, so it is safe anywhere a hook can run. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "shim.h"

int gt_debug;

static void emit(const char *fmt, va_list ap)
{
    char buf[512];
    int saved = errno;
    /* vsnprintf is not formally async-signal-safe, but glibc's does not allocate for the
     * conversions we use (%s %d %u %x %llu %p). */
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    if (n > (int)sizeof(buf) - 1) n = sizeof(buf) - 1;
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
        (void)w;
    }
    errno = saved;
}

void gt_log(const char *fmt, ...)
{
    if (!gt_debug) return;
    va_list ap;
    va_start(ap, fmt);
    emit(fmt, ap);
    va_end(ap);
}

void gt_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(fmt, ap);
    va_end(ap);
}
