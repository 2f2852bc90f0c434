/* _exit and _Exit: the process ends now, without its atexit handlers or our destructor. What the
 * threads recorded so far is written first (as before an exec: no end record, the report says the
 * end was not clean), and before that, where the caller is Python's os._exit on a thread that may
 * run Python, the PyTorch bridge's exit work (torch.c, gt_torch_exit), whose records would
 * otherwise die with the process. The status reaches the kernel unchanged. A vfork or forked
 * child that does not trace, a thread inside the tracer (a signal handler interrupting a hook)
 * and a process that is not tracing go straight through. */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim.h"

typedef void (*exit_fn)(int);

static void before_exit(uintptr_t caller)
{
    if (!gt_tracing_here() || __atomic_load_n(&gt_tls_in_hook, __ATOMIC_RELAXED)) return;
    gt_torch_exit(caller);
    struct gt_thread *t = gt_enter();
    if (!t) return;
    gt_flush_before_exec();
    gt_leave(t);
}

static _Noreturn void forward(const char *name, int status)
{
    static exit_fn fn[2];
    int i = name[1] == 'E';
    if (!fn[i]) fn[i] = (exit_fn)gt_real_dlsym(RTLD_NEXT, name);
    if (fn[i]) fn[i](status);
    for (;;)
        gt_syscall(SYS_exit_group, status);
}

GT_EXPORT void _exit(int status)
{
    before_exit((uintptr_t)__builtin_return_address(0));
    forward("_exit", status);
}

GT_EXPORT void _Exit(int status)
{
    before_exit((uintptr_t)__builtin_return_address(0));
    forward("_Exit", status);
}
