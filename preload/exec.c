/* The exec family: a thread that replaces the process image must carry no signal of ours into
 * the new program. Pending signals survive execve while handlers do not, so a host-sample signal
 * (hostsample.c) sent to the thread just before, or while it is inside execve, would kill the new
 * program with the default action of a real-time signal. Around each call the thread's sampling
 * is paused and a signal of ours still pending is taken back (gt_hostsample_exec_begin); a failed
 * call resumes it. The records so far are written first (the new image does not run our exit
 * path). Return value and errno are the real call's.
 *
 * glibc's execl, execvp ... reach execve inside libc, past a wrapper of execve alone: each entry
 * point is wrapped. The list forms are turned into the vector forms, as glibc does itself. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>

#include "shim.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *real(const char *name)
{
    return gt_real_dlsym(RTLD_NEXT, name);
}

/* The records so far, this thread's waiting host samples first (gt_enter writes them). */
static void flush_before_exec(void)
{
    if (!gt_tracing_here()) return;
    struct gt_thread *t = gt_enter();
    if (!t) return;
    gt_flush_before_exec();
    gt_leave(t);
}

#define FORWARD(type, name, ...)                                                                   \
    do {                                                                                           \
        static type fn;                                                                            \
        if (!fn) fn = (type)real(name);                                                            \
        if (!fn) {                                                                                 \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        int token = gt_hostsample_exec_begin();                                                    \
        flush_before_exec();                                                                       \
        int r = fn(__VA_ARGS__);                                                                   \
        int e = errno;                                                                             \
        gt_hostsample_exec_end(token);                                                             \
        errno = e;                                                                                 \
        return r;                                                                                  \
    } while (0)

GT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    FORWARD(execve_fn, "execve", path, argv, envp);
}

GT_EXPORT int execv(const char *path, char *const argv[])
{
    FORWARD(execv_fn, "execv", path, argv);
}

GT_EXPORT int execvp(const char *file, char *const argv[])
{
    FORWARD(execv_fn, "execvp", file, argv);
}

GT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    FORWARD(execve_fn, "execvpe", file, argv, envp);
}

GT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    FORWARD(fexecve_fn, "fexecve", fd, argv, envp);
}

GT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                       int flags)
{
    FORWARD(execveat_fn, "execveat", dirfd, path, argv, envp, flags);
}

/* The list forms: the arguments counted, then copied into a vector on the stack (as glibc's). */
#define ARGV_FROM_LIST(first, ap, argv)                                                            \
    size_t n_ = 1;                                                                                 \
    va_start(ap, first);                                                                           \
    while (va_arg(ap, const char *))                                                               \
        n_++;                                                                                      \
    va_end(ap);                                                                                    \
    char *argv[n_ + 1];                                                                            \
    argv[0] = (char *)(first);                                                                     \
    va_start(ap, first);                                                                           \
    for (size_t i_ = 1; i_ <= n_; i_++)                                                            \
        argv[i_] = va_arg(ap, char *);

GT_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_LIST(arg, ap, argv);
    va_end(ap);
    return execv(path, argv);
}

GT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_LIST(arg, ap, argv);
    va_end(ap);
    return execvp(file, argv);
}

GT_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    ARGV_FROM_LIST(arg, ap, argv);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
