/* Crashes: after abort, SIGSEGV, SIGBUS, SIGFPE or SIGILL every record the program's threads made
 * before the signal is in the trace (an out-of-memory post-mortem needs the last moments).
 *
 * From trace start our handler is the one the kernel runs for these five signals. The program's
 * own actions, set before (read at install) or after (sigaction and signal are wrapped here), are
 * kept aside: the program reads them back through sigaction as if it were alone, and our handler
 * runs them after the flush. Then the default action happens as it would have: SIG_DFL is put
 * back and the signal comes again (a fault by re-executing the instruction, a sent signal by
 * raising it once more), so exit status and core dump are the program's.
 *
 * The flush (runtime.c, gt_crash_flush) only writes: no malloc, no stdio, and every lock is taken
 * with a bounded try-lock, since the crash may have interrupted the tracer holding it. A second
 * crash signal while this thread flushes (a crash inside our own code) is not handled again: the
 * first signal's default action ends the process. A program that handles these signals routinely
 * (a JIT's guard pages) pays one write per thread with new records per signal. */
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/* The wrappers below run before the sanitizers' runtimes are initialized (ThreadSanitizer installs
 * its own handlers through sigaction during its start-up, which reaches ours): no instrumentation
 * in them or in what they call. */
#define GT_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

/* glibc's own sigaction, under the name it also exports, so our wrapper is not called again. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int crash_sigs[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define N_SIGS ((int)(sizeof(crash_sigs) / sizeof(crash_sigs[0])))

/* The program's action per signal, in two copies: a writer fills the idle copy and flips `cur`,
 * so the handler (another thread, any time) reads a whole one. Writers serialize on `busy` with
 * this thread's signals blocked. */
static struct {
    struct sigaction act[2];
    _Atomic int cur;
} prog[N_SIGS];
static atomic_flag busy = ATOMIC_FLAG_INIT;
static _Atomic int installed;

/* What this thread's handler is doing: 0 nothing, 1 flushing (a crash signal now is ours),
 * 2 running the program's handler (a signal now is the program's business, handled afresh). */
static __thread int tls_crash_state __attribute__((tls_model("initial-exec")));
static __thread int tls_crash_sig __attribute__((tls_model("initial-exec")));

GT_EARLY static int slot_of(int sig)
{
    for (int i = 0; i < N_SIGS; i++)
        if (crash_sigs[i] == sig) return i;
    return -1;
}

GT_EARLY static void lock_actions(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, old);
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
        sched_yield();
}

GT_EARLY static void unlock_actions(const sigset_t *old)
{
    atomic_flag_clear_explicit(&busy, memory_order_release);
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

GT_EARLY static void set_prog(int i, const struct sigaction *act)
{
    int next = !atomic_load_explicit(&prog[i].cur, memory_order_relaxed);
    prog[i].act[next] = *act;
    atomic_store_explicit(&prog[i].cur, next, memory_order_release);
}

GT_EARLY static struct sigaction get_prog(int i)
{
    return prog[i].act[atomic_load_explicit(&prog[i].cur, memory_order_acquire)];
}

static void reset_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    __sigaction(sig, &dfl, NULL);
}

/* The default action: a fault comes back when the handler returns (the instruction runs again),
 * a sent signal is raised again (blocked in this handler, it arrives when the handler returns). */
static void default_action(int sig, const siginfo_t *si)
{
    reset_default(sig);
    if (si == NULL || si->si_code <= 0) raise(sig);
}

static void run_prog_handler(int sig, siginfo_t *si, void *uc, int i)
{
    struct sigaction pa = get_prog(i);
    if (pa.sa_handler == SIG_IGN) {
        /* The kernel does not ignore a fault: it kills with it. A sent signal is ignored. */
        if (si->si_code > 0) default_action(sig, NULL);
        return;
    }
    if (pa.sa_handler == SIG_DFL) {
        default_action(sig, si);
        return;
    }
    if (pa.sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        sigset_t old;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        lock_actions(&old);
        set_prog(i, &dfl);
        unlock_actions(&old);
    }
    /* The mask the kernel would have applied for the program's handler. */
    sigset_t mask = pa.sa_mask, old;
    if (!(pa.sa_flags & SA_NODEFER)) sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, &old);
    if (pa.sa_flags & SA_NODEFER) {
        sigset_t self;
        sigemptyset(&self);
        sigaddset(&self, sig);
        pthread_sigmask(SIG_UNBLOCK, &self, NULL);
    }
    tls_crash_state = 2;
    if (pa.sa_flags & SA_SIGINFO)
        pa.sa_sigaction(sig, si, uc);
    else
        pa.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
    int e = errno, i = slot_of(sig);
    if (tls_crash_state == 1) {
        /* A crash inside our flush: end the process by the first signal, as it would have. */
        int first = tls_crash_sig;
        sigset_t s;
        reset_default(sig);
        default_action(first, NULL); /* raised, pending: the unblock below delivers it */
        sigemptyset(&s);
        sigaddset(&s, first);
        pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        return; /* not reached: the first signal's default action ends the process */
    }
    int outer = tls_crash_state, outer_sig = tls_crash_sig;
    tls_crash_state = 1;
    tls_crash_sig = sig;
    int in_hook = gt_tls_in_hook;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    /* The GPU flush goes through CUPTI, which takes its own locks: ask for it only when this
     * thread was not inside a driver call (it may hold them). */
    gt_crash_flush(!in_hook);
    __atomic_store_n(&gt_tls_in_hook, in_hook, __ATOMIC_RELAXED);
    if (i >= 0) run_prog_handler(sig, si, uc, i);
    tls_crash_state = outer;
    tls_crash_sig = outer_sig;
    errno = e;
}

/* At trace start: our handler in the kernel, the program's actions kept aside. */
void gt_crash_install(void)
{
    struct sigaction ours;
    sigset_t old;
    memset(&ours, 0, sizeof(ours));
    ours.sa_sigaction = on_crash;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART; /* on the program's altstack if any */
    sigemptyset(&ours.sa_mask);
    lock_actions(&old);
    for (int i = 0; i < N_SIGS; i++) {
        struct sigaction was;
        if (__sigaction(crash_sigs[i], &ours, &was) == 0) set_prog(i, &was);
    }
    atomic_store(&installed, 1);
    unlock_actions(&old);
}

GT_EARLY GT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int i = slot_of(sig);
    /* the host sampler's signal (hostsample.c): the program's action for it is kept there */
    if (sig > 0 && sig == gt_hostsample_signo()) return gt_hostsample_sigaction(sig, act, old);
    if (i < 0 || !atomic_load(&installed)) return __sigaction(sig, act, old);
    sigset_t mask;
    lock_actions(&mask);
    if (old) *old = get_prog(i);
    if (act) set_prog(i, act);
    unlock_actions(&mask);
    return 0;
}

/* glibc's signal() reaches sigaction inside libc, past the wrapper above: it is wrapped too for
 * the five signals, with its BSD semantics (SA_RESTART, the signal blocked in its handler). */
GT_EARLY GT_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    int ours = sig > 0 && sig == gt_hostsample_signo();
    if (!ours && (slot_of(sig) < 0 || !atomic_load(&installed))) {
        static __sighandler_t (*real)(int, __sighandler_t);
        if (!real)
            real = (__sighandler_t(*)(int, __sighandler_t))gt_real_dlsym(RTLD_NEXT, "signal");
        if (real) return real(sig, handler);
    }
    struct sigaction act, old;
    memset(&act, 0, sizeof(act));
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}
