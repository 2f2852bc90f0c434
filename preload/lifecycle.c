/* The tracer's lifetime as the modules see it: the constructor reads their configuration and
 * hands runtime.c (the record buffers, the file, the flusher, exit and fork) what it must ask of
 * them at trace start, per thread, per flusher round, at exit and in a forked child. runtime.c is
 * below every module, so it reaches them only through this table; this file is above them all. */
#include <stdlib.h>

#include "python.h"
#include "shim.h"

static void thread_ended(struct gt_thread *t) { gt_stack_thread_exit(t); }

static void before_round(void (*write)(const void *p, uint32_t size)) { gt_nvml_tick(write); }

/* At exit: the samplers stop and this thread's samples are written (other threads' were at their
 * exits, or are lost with them). */
static void stopping(void)
{
    gt_hostsample_stop();
    if (gt_tls_thread) gt_hostsample_thread_exit(gt_tls_thread);
}

static void forget(void)
{
    gt_stacks_forget();
    gt_rec_forget();
    gt_nvml_forget();
}

static const struct gt_runtime_calls calls = {
    .started = gt_crash_install,
    .thread_start = gt_hostsample_thread_start,
    .thread_ending = gt_hostsample_thread_exit,
    .thread_ended = thread_ended,
    .gpu_flush = gt_cupti_flush,
    .next_sample = gt_nvml_next,
    .before_round = before_round,
    .after_round = gt_torch_tick,
    .stopping = stopping,
    .final = gt_stacks_exit,
    .forget = forget,
};

/* Runs while the process is still single-threaded: read the environment once, touch nothing else. */
__attribute__((constructor)) static void gt_configure(void)
{
    static const char *const clocks[] = {"counter", "monotonic"};
    if (gt_runtime_configure(&calls) != 0) return;
    /* Python is found whatever the stacks: the PyTorch bridge runs in it (GPUTRACE_STACKS=none
     * once left the bridge uninstalled, as no stack's module scan ever found libpython) */
    gt_py_configure();
    gt_stacks_configure((unsigned)gt_env_num("GPUTRACE_STACK_DEPTH", 0, GT_STACK_DEPTH_MAX,
                                             GT_STACK_DEPTH_DEFAULT),
                        getenv("GPUTRACE_STACKS"));
    gt_hostsample_configure();
    gt_clock_configure(gt_env_word("GPUTRACE_CLOCK", clocks, 2, 0) == 1 ? "monotonic" : NULL);
}
