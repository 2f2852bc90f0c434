/* Internal interfaces of libgputrace.so (the preload shim). Nothing here is exported.
 *
 * The shim only captures and appends: each hooked call forwards to the real driver, then writes
 * one fixed-size record into its thread's buffer. Buffers are written out as checksummed chunks by
 * the owning thread when full and by a background flusher every GPUTRACE_FLUSH_MS. */
#ifndef GT_SHIM_H
#define GT_SHIM_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "clock.h" /* gt_now: the clock of every record */
#include "gputrace/trace_api.h"
#include "gputrace/trace_format.h"

#define GT_EXPORT    __attribute__((visibility("default")))
#define GT_LIKELY(x) __builtin_expect(!!(x), 1)
#define GT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GT_ALWAYS_INLINE inline __attribute__((always_inline))

/* ---- per-thread record buffers (runtime.c) ---------------------------------------------------- */

struct gt_thread {
    uint8_t *buf;
    uint32_t cap;
    _Atomic uint32_t committed; /* bytes of whole records; written by the owner only */
    uint32_t flushed;           /* bytes already written to the file; under mu */
    uint32_t seq;               /* next chunk sequence number; under mu */
    uint32_t tid;
    uint64_t index;             /* small per-process thread number, for correlation ids */
    uint64_t corr;              /* per-thread launch counter */
    uint64_t last_ts;           /* time of this thread's latest record (owner only) */
    uint64_t named_func;        /* the launched function this thread last saw named (owner only) */
    _Atomic uint64_t inflight;  /* != 0 while a record is being prepared: a lower bound of its ts */
    pthread_mutex_t mu;         /* owner (when full) vs flusher; never held while appending */
    struct gt_thread *next, *prev;
    struct gt_stk *stk;         /* stack capture state (stacks.c), made at the first capture */
};

enum gt_state { GT_STATE_IDLE = 0, GT_STATE_RUNNING = 1, GT_STATE_OFF = 2 };
extern _Atomic int gt_state;
extern __thread int gt_tls_in_hook;
extern __thread struct gt_thread *gt_tls_thread;

struct gt_thread *gt_thread_slow(void);
int gt_reserve_slow(struct gt_thread *t, uint32_t size);
/* != 0: host samples wait in this thread's ring (hostsample.c); gt_enter writes them. */
extern __thread int gt_tls_hs_pending;
void gt_hostsample_drain(struct gt_thread *t);

/* 1: the hooks publish `inflight` with a full fence (seq_cst store); 0 (the usual case): with a
 * plain store, the flusher running membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) between its
 * watermark's clock read and its loads of `inflight` instead (runtime.c, flush_round, has the
 * argument). Set once at trace start, before any hook records. */
extern _Atomic int gt_inflight_fenced;

/* Publish a lower bound of the timestamp we are about to take before taking it, so the flusher
 * never writes a watermark above a record that is not yet committed. The compiler barrier keeps
 * the store before the clock read in program order; the CPU may still hold it in its store
 * buffer past the read, which the flusher's membarrier settles. */
static inline void gt_mark_inflight(struct gt_thread *t)
{
    uint64_t low = t->last_ts ? t->last_ts : 1;
    if (GT_LIKELY(!atomic_load_explicit(&gt_inflight_fenced, memory_order_relaxed))) {
        atomic_store_explicit(&t->inflight, low, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_store_explicit(&t->inflight, low, memory_order_seq_cst);
    }
}

/* Start recording from a hook. Returns NULL when the call must only be forwarded: tracing is off,
 * or we are already inside the tracer on this thread (re-entrancy guard). */
static inline struct gt_thread *gt_enter(void)
{
    if (GT_UNLIKELY(gt_tls_in_hook)) return NULL;
    if (GT_UNLIKELY(atomic_load_explicit(&gt_state, memory_order_relaxed) != GT_STATE_RUNNING) ||
        GT_UNLIKELY(gt_tls_thread == NULL))
        return gt_thread_slow();
    struct gt_thread *t = gt_tls_thread;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    gt_mark_inflight(t);
    /* (relaxed: the host sampler's thread sets it too; a plain load on x86-64 and arm64) */
    if (GT_UNLIKELY(__atomic_load_n(&gt_tls_hs_pending, __ATOMIC_RELAXED)))
        gt_hostsample_drain(t);
    return t;
}

static inline void gt_leave(struct gt_thread *t)
{
    atomic_store_explicit(&t->inflight, 0, memory_order_release);
    __atomic_store_n(&gt_tls_in_hook, 0, __ATOMIC_RELAXED);
}

/* Space for one record of `size` bytes (multiple of 8). NULL if tracing stopped. errno is kept
 * (the slow path locks, allocates and writes). */
static inline void *gt_reserve(struct gt_thread *t, uint32_t size)
{
    uint32_t off = atomic_load_explicit(&t->committed, memory_order_relaxed);
    if (GT_UNLIKELY(off + size > t->cap)) {
        int e = errno, r = gt_reserve_slow(t, size);
        errno = e;
        if (r < 0) return NULL;
        off = atomic_load_explicit(&t->committed, memory_order_relaxed);
    }
    return t->buf + off;
}

/* Make the record reserved last visible to the flusher. */
static inline void gt_commit(struct gt_thread *t, void *rec, uint16_t type, uint16_t sub,
                             uint32_t size, uint64_t ts)
{
    struct gt_rec_header *h = rec;
    h->type = type;
    h->sub = sub;
    h->size = size;
    if (ts > t->last_ts) t->last_ts = ts;
    uint32_t off = atomic_load_explicit(&t->committed, memory_order_relaxed);
    atomic_store_explicit(&t->committed, off + size, memory_order_release);
}

/* Environment variables (env.c), each read once: a value that does not parse gets one warning
 * line on stderr and the default. gt_env_num: a decimal number in [lo, hi]; gt_env_flag:
 * 1/true/yes (1) or 0/false/no (0, also unset); gt_env_word: the index of the value in words. */
unsigned long gt_env_num(const char *name, unsigned long lo, unsigned long hi, unsigned long def);
int gt_env_flag(const char *name);
int gt_env_word(const char *name, const char *const *words, int n, int def);

/* What runtime.c asks of the modules above it (runtime.c is the base every module writes through,
 * so it names none of them). lifecycle.c fills it and hands it over from its constructor; none
 * of these runs on a hook's path. */
struct gt_runtime_calls {
    void (*started)(void);                      /* tracing began (once): crash handlers */
    void (*thread_start)(struct gt_thread *t);  /* after a thread's first record */
    void (*thread_ending)(struct gt_thread *t); /* before a thread's last flush: its samples */
    void (*thread_ended)(struct gt_thread *t);  /* after it, its buffers gone: its stack state */
    void (*gpu_flush)(int forced);              /* the flusher: CUPTI's records */
    uint64_t (*next_sample)(void);              /* the flusher's next sampling time */
    /* each flusher round: records due before its watermark (NVML's), handed to write; after it */
    void (*before_round)(void (*write)(const void *p, uint32_t size));
    void (*after_round)(uint64_t now);
    void (*stopping)(void); /* at exit, before the final round: samplers stop */
    /* at exit, under the final round, before its watermark: records handed to write */
    void (*final)(void (*write)(const void *p, uint32_t size));
    void (*forget)(void); /* a forked child traces anew: what went into the parent's file */
};
/* The constructor's first step: the environment, the calls. -1: tracing stays off (set-uid). */
int gt_runtime_configure(const struct gt_runtime_calls *calls);
/* Tracing runs and this process writes the trace (not a vfork child, not a forked child that
 * does not trace). */
int gt_tracing_here(void);

/* Environment read once at load time (runtime.c). */
struct gt_config_env {
    const char *cupti;     /* GPUTRACE_CUPTI: path, "off", or NULL */
    const char *cuda_home; /* CUDA_HOME */
    const char *conda_prefix;
};
const struct gt_config_env *gt_config_env(void);

/* Crashes: crash.c installs the handlers of abort, SIGSEGV, SIGBUS, SIGFPE, SIGILL at trace
 * start; runtime.c flushes every thread's records from them (and CUPTI's if gpu), bounded. */
void gt_crash_install(void);
void gt_crash_flush(int gpu);

/* Writes one chunk of GPU records (cupti.c's buffer callback). */
void gt_write_gpu_chunk(const void *payload, uint32_t size);

/* ---- CUPTI (cupti.c) ----------------------------------------------------------------------------- */
extern _Atomic int gt_cupti_on; /* (defined in runtime.c, which reads it at crashes and forks) */
void gt_cupti_setup(struct gt_thread *t);
void gt_cupti_after_init(void);
void gt_cupti_push(uint64_t corr);
void gt_cupti_pop(void);
void gt_cupti_flush(int forced);

static inline uint64_t gt_next_corr(struct gt_thread *t)
{
    return (t->index << 40) | (++t->corr & ((1ull << 40) - 1));
}

#define GT_MAX_NAME_BYTES (16u << 10) /* callers cut longer texts (huge template kernel names) */

/* Record helpers for variable-length records (runtime.c). The caller's length field must equal
 * text_len, at most GT_MAX_NAME_BYTES. */
void gt_emit_named(struct gt_thread *t, uint16_t type, uint16_t sub, const void *fixed,
                   uint32_t fixed_size, const char *text, uint32_t text_len);
void gt_note(int level, const char *fmt_text);

/* ---- the PyTorch allocator bridge (torch.c) ---------------------------------------------------- */
extern _Atomic int gt_torch_state; /* 0: a Python process may have torch: ask (torch.c) */
void gt_torch_poke_slow(void);
/* After a successful driver allocation: once torch's allocator is live, install the bridge. */
static inline void gt_torch_poke(void)
{
    if (GT_UNLIKELY(atomic_load_explicit(&gt_torch_state, memory_order_relaxed) == 0))
        gt_torch_poke_slow();
}
/* The flusher, every round: marks the bridge's sample due (gt_torch_due = the tid of the
 * interpreter's main thread). The main thread's next hooked call queues it (CPython 3.9-3.11 set
 * the interpreter's eval breaker for a pending call only when the main thread adds it: one added
 * by the flusher would wait for an unrelated GIL switch). */
void gt_torch_tick(uint64_t now);
extern _Atomic uint32_t gt_torch_due;
void gt_torch_poll_slow(void);
/* exit.c, at _exit, outside the tracer: the bridge's exit work (torch.c says when it runs).
 * caller: the return address of the _exit call. */
void gt_torch_exit(uintptr_t caller);
static inline void gt_torch_poll(const struct gt_thread *t)
{
    uint32_t due = atomic_load_explicit(&gt_torch_due, memory_order_relaxed);
    if (GT_UNLIKELY(due) && due == t->tid) gt_torch_poll_slow();
}

/* ---- logging (log.c): one write(2) from a stack buffer, silent unless GPUTRACE_DEBUG=1 -------- */
/* No malloc, no stdio stream; the formatting is vsnprintf, which is not async-signal-safe by the
 * standard (glibc's does not allocate for the conversions used: %s %d %u %x %llu %p). */
extern int gt_debug;
void gt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the real driver and dlsym (real.c) ------------------------------------------------------- */
extern void *_Atomic gt_real[GT_API_MAX];
void *gt_real_resolve(unsigned api);
void *gt_real_dlsym(void *handle, const char *name);
void gt_real_dlsym_init(void); /* sets gt_real_dlsym_fn */
void *gt_libcuda(void);

/* Entered from dlsym_entry.S (resolve.c). */
void *gt_dlsym_default(void *handle, const char *name);
int gt_dlsym_next_tracked(const char *name);
void *gt_dlsym_next(void *handle, const char *name, void *caller);
extern void *gt_real_dlsym_fn;

static inline void *gt_real_fn(unsigned api)
{
    void *p = atomic_load_explicit(&gt_real[api], memory_order_acquire);
    return GT_LIKELY(p != NULL) ? p : gt_real_resolve(api);
}

/* Driver functions the shim calls for itself (never wrapped). */
enum gt_helper {
    GT_H_CtxGetDevice,
    GT_H_CtxGetCurrent,
    GT_H_MemGetInfo,
    GT_H_FuncGetName,
    GT_H_KernelGetName,
    GT_H_DriverGetVersion,
    GT_H_DeviceGetCount,
    GT_H_DeviceGet,
    GT_H_DeviceGetName,
    GT_H_DeviceTotalMem,
    GT_H_DeviceGetAttribute,
    GT_H_DeviceGetUuid,
    GT_H_PrimaryCtxGetState,
    GT_H_COUNT
};
void *gt_helper_fn(enum gt_helper h); /* NULL: the driver lacks it */
/* A looked-up entry point that does not exist, cached as such. */
#define GT_MISSING ((void *)1)
/* The current context's device, asked of the driver (-1: no context). */
int gt_current_device(void);

/* Wrapper function of each API id (hooks_*.c), NULL where none. */
extern void *const gt_wrappers[GT_API_MAX];

/* ---- host call stacks (stacks.c) --------------------------------------------------------------- */
/* Event classes that carry stacks (GPUTRACE_STACKS). Default alloc,launch,sync: an allocation's
 * stack already says what its free releases, and frees are as frequent as allocations, so free
 * stacks would double the cost for little; launches and synchronizations explain GPU idle time. */
#define GT_STK_ALLOC  1u /* allocations, failed ones included */
#define GT_STK_FREE   2u
#define GT_STK_LAUNCH 4u
#define GT_STK_SYNC   8u /* synchronizations, blocking copies, stream waits (span records) */
#define GT_STK_ALL    15u
#define GT_STK_DEFAULT (GT_STK_ALLOC | GT_STK_LAUNCH | GT_STK_SYNC)
#define GT_STACK_DEPTH_DEFAULT 64u
#define GT_STACK_DEPTH_MAX     256u

extern unsigned gt_stack_depth;  /* frames kept, 0 = off */
extern unsigned gt_stack_events; /* GT_STK_* bits; 0 when stacks are off */
struct gt_stk;

/* GPUTRACE_STACK_DEPTH's frames (parsed) and GPUTRACE_STACKS' value (NULL = unset); from
 * gt_configure. */
void gt_stacks_configure(unsigned depth, const char *events);
uint32_t gt_stack_slow(struct gt_thread *t);
void gt_stack_thread_exit(struct gt_thread *t);
uint32_t gt_stack_intern_ips(struct gt_thread *t, const uint64_t *ips, uint32_t n);

/* Host stack samples (hostsample.c, GPUTRACE_SAMPLE_HZ per thread): the sampler thread's signal
 * (or its own walk of a blocked thread) keeps raw samples in a per-thread ring; the thread writes
 * them as records at its next hooked call (gt_enter) or its exit. The default rate costs under
 * 0.5% of one core per sampled thread (bench/README.md). */
#define GT_SAMPLE_HZ_DEFAULT 100
void gt_hostsample_configure(void);
void gt_hostsample_thread_start(struct gt_thread *t);
void gt_hostsample_thread_exit(struct gt_thread *t);
struct sigaction;
void gt_hostsample_stop(void);
int gt_hostsample_signo(void); /* 0: no sampling */
int gt_hostsample_exec_begin(void); /* exec.c: around the exec family */
int gt_hostsample_quiet_begin(void); /* waits.c: around waits a handler would cut short */
void gt_hostsample_quiet_end(int quiet);
/* sys.c: the C library's syscall(2), for the shim's own system calls (the exported syscall is
 * the program's, waits.c, and runs some of them quiet). */
long gt_syscall(long nr, ...);
typedef long (*gt_syscall_fn)(long, long, long, long, long, long, long);
extern gt_syscall_fn _Atomic gt_real_syscall;
gt_syscall_fn gt_libc_syscall_slow(void);
/* (NULL only where the C library has none: then the program could not have linked a call) */
static inline gt_syscall_fn gt_libc_syscall(void)
{
    gt_syscall_fn f = __atomic_load_n(&gt_real_syscall, __ATOMIC_RELAXED);
    return GT_LIKELY(f != NULL) ? f : gt_libc_syscall_slow();
}
/* sockets.c: a socket timeout set (setsockopt), and whether fd may have one (calls on it run
 * quiet) */
void gt_sock_note_timeout(int fd, int level, int name);
#define GT_SOCK_FDS 65536
extern _Atomic uint64_t gt_sock_timed_fds[GT_SOCK_FDS / 64];
static inline int gt_sock_timed(long fd)
{
    if (fd < 0 || fd >= GT_SOCK_FDS) return 1;
    return (int)(__atomic_load_n(&gt_sock_timed_fds[fd / 64], __ATOMIC_RELAXED) >> (fd % 64)) & 1;
}
void gt_hostsample_exec_end(int paused);
void gt_flush_before_exec(void); /* runtime.c; inside the tracer, when gt_tracing_here: exec.c,
                                  * and exit.c at _exit */
int gt_hostsample_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* At exit: the dladdr names of the stacks' ips, as whole records handed to emit. */
void gt_stacks_exit(void (*emit)(const void *p, uint32_t size));

/* The caller's stack as a node id (0: none or not wanted for this class). Called by the record
 * builders inside a hook, after the real call returned: the stack is the same as at entry, and
 * the unwinding time stays out of the recorded times. Known stacks take no lock and allocate
 * nothing; a new one writes its new nodes (and new modules) into t's buffer first. */
static inline uint32_t gt_stack(struct gt_thread *t, unsigned cls)
{
    if (!(gt_stack_events & cls)) return 0;
    int e = errno; /* the walk may read memory maps, load objects, ... */
    uint32_t id = gt_stack_slow(t);
    errno = e;
    return id;
}

/* ---- hook-side recording helpers (record.c) ---------------------------------------------------- */
/* t0 / ts: the clock read just before the call was forwarded (dur_ns = end - t0). */
void gt_rec_alloc(struct gt_thread *t, unsigned api, uint64_t t0, uint64_t addr, uint64_t size,
                  uint64_t stream, uint64_t aux, uint32_t flags, int device);
void gt_rec_alloc_fail(struct gt_thread *t, unsigned api, uint64_t t0, uint64_t size,
                       uint64_t stream, int result);
void gt_rec_free(struct gt_thread *t, unsigned api, uint64_t ts, uint64_t addr, uint64_t stream,
                 uint64_t size, int result);
void gt_rec_span(struct gt_thread *t, unsigned api, uint64_t t0, uint64_t t1, uint64_t object,
                 uint64_t bytes, int result);
void gt_rec_object(struct gt_thread *t, unsigned api, uint64_t ts, uint64_t handle, uint64_t aux,
                   int device, int result);
/* The first launch of a function (process-wide) writes its GT_REC_FUNC; sets t->named_func. */
void gt_note_func(struct gt_thread *t, uint64_t handle, uint64_t ts);

/* Functions already named: a lock-free set of handles (record.c), linear probing from
 * gt_func_slot; most are found in their first slot. */
#define GT_FUNC_SET_BITS 16
extern _Atomic uintptr_t gt_func_set[1u << GT_FUNC_SET_BITS];
static inline uint32_t gt_func_slot(uint64_t h)
{
    return (uint32_t)((h * 0x9E3779B97F4A7C15ull) >> (64 - GT_FUNC_SET_BITS));
}

/* A launch of a function other than the one this thread launched last: names it if nobody has
 * (record.c). Out of line: most launches repeat the previous function. errno is kept. */
void gt_launch_func_slow(struct gt_thread *t, uint64_t func, uint64_t t0);

/* The launch record (the hottest path): t0 before the call was forwarded, t1 after it returned.
 * A launch of the function this thread launched last costs no name lookup; of another function
 * named before, one load most of the time. errno is kept: the fast path cannot change it (clock
 * reads, loads and stores) and the slow ones (naming, stacks, a full buffer) save it, so the
 * launch hooks need not (a call to __errno_location and a store per launch). Always inlined into
 * the hooks, where grid and block are the call's own arguments: no arrays, no call frame. */
/* The launch record: kernel launches (gt_rec_launch) and the async copies and memsets written
 * in its shape (hooks_exec.c: func = destination, grid[0..1] = bytes), which do not poll the
 * PyTorch bridge (poll 0, a constant: the branch folds away). */
static GT_ALWAYS_INLINE void gt_rec_launch_write(struct gt_thread *t, unsigned api, uint64_t t0,
                                                 uint64_t t1, uint64_t corr, uint64_t func,
                                                 uint64_t stream, const unsigned grid[3],
                                                 const unsigned block[3], unsigned shmem,
                                                 int result, int poll)
{
    uint32_t stack = gt_stack(t, GT_STK_LAUNCH);
    struct gt_rec_launch *r = gt_reserve(t, sizeof(*r));
    if (GT_UNLIKELY(!r)) return;
    r->ts = t0; /* every field is written: no memset */
    r->func = func;
    r->stream = stream;
    r->corr = corr;
    for (int i = 0; i < 3; i++) {
        r->grid[i] = grid ? grid[i] : 0;
        r->block[i] = block ? block[i] : 0;
    }
    r->shmem = shmem;
    r->result = result;
    if (poll) gt_torch_poll(t);
    uint64_t d = t1 > t0 ? t1 - t0 : 0;
    r->dur_ns = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
    r->stack = stack;
    gt_commit(t, r, GT_REC_LAUNCH, (uint16_t)api, sizeof(*r), t0);
}

static GT_ALWAYS_INLINE void gt_rec_launch(struct gt_thread *t, unsigned api, uint64_t t0,
                                           uint64_t t1, uint64_t corr, uint64_t func,
                                           uint64_t stream, const unsigned grid[3],
                                           const unsigned block[3], unsigned shmem, int result)
{
    if (GT_UNLIKELY(func != t->named_func) && api != GT_API_cuGraphLaunch &&
        api != GT_API_cuGraphLaunch_ptsz && api != GT_API_cuLaunchHostFunc &&
        api != GT_API_cuLaunchHostFunc_ptsz)
        gt_launch_func_slow(t, func, t0);
    gt_rec_launch_write(t, api, t0, t1, corr, func, stream, grid, block, shmem, result, 1);
}
void gt_rec_resolve(unsigned how, const char *name, int version, uint64_t flags, unsigned api,
                    unsigned status);
void gt_rec_driver_info(struct gt_thread *t);
/* After a failed allocation on dev: the flusher lists the processes holding memory on it. */
void gt_nvml_oom(int dev);
/* A forked child that traces into its own file: forget what went into the parent's (the
 * functions named, the driver facts: record.c; stack nodes, modules, Python code: stacks.c). */
void gt_rec_forget(void);
void gt_stacks_forget(void);

/* ---- periodic samples (sample.c): GPUTRACE_SAMPLE_MS ---------------------------------------- */
/* "The current context's device", not known yet: whoever needs the number asks the driver
 * (gt_current_device), only if it needs it. */
#define GT_DEV_CURRENT (-2)
/* After an allocation or free record: a cuMemGetInfo sample of the current device if one is due
 * (dev: the current context's device if the caller knows it, else GT_DEV_CURRENT). */
/* NVML device state (nvml.c): a CUDA device's UUID, from the thread that wrote its device record;
 * the flusher's next sampling time (UINT64_MAX: none) and its sampling, records handed to write. */
void gt_nvml_device(int ordinal, const uint8_t uuid[16]);
uint64_t gt_nvml_next(void);
void gt_nvml_tick(void (*write)(const void *p, uint32_t size));
/* After a failed allocation on dev: the flusher lists the processes holding memory on it. */
void gt_nvml_oom(int dev);
/* A forked child that traces into its own file: its devices are mapped and written again. */
void gt_nvml_forget(void);
/* Wakes the flusher for work that cannot wait for its round (runtime.c; not for hooks' paths). */
void gt_flusher_wake(void);
void gt_meminfo_tick(struct gt_thread *t, int dev);
/* After a failed allocation: its cuMemGetInfo figures as a sample too. */
void gt_meminfo_after_fail(struct gt_thread *t, int dev, uint64_t fr, uint64_t total);
/* Stream-ordered pools: sample at creation; forget at destruction; after an allocation or free in
 * `pool` (force: a failure or a trim, always sampled); after cuMemAllocAsync (the device's current
 * pool). gt_pool_of_ptr_if_due runs before a cuMemFreeAsync is forwarded. */
void gt_pool_created(struct gt_thread *t, uint64_t pool, int dev);
void gt_pool_destroyed(uint64_t pool);
void gt_pool_tick(struct gt_thread *t, uint64_t pool, int force);
void gt_pool_tick_current(struct gt_thread *t, int dev, int force);
uint64_t gt_pool_of_ptr_if_due(struct gt_thread *t, uint64_t ptr);

#endif
