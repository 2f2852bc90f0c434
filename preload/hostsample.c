/* Host stack samples (GPUTRACE_SAMPLE_HZ per thread, default 100, 0 = off): where each thread that
 * made CUDA calls was, at a fixed rate, on CPU or blocked. Cost: bench/README.md.
 *
 * A sampler thread of ours (all signals blocked) wakes every 1/hz s and looks at each registered
 * thread's /proc/self/task/TID/syscall:
 * - "running": the thread is on CPU. It gets our real-time signal (rt_tgsigqueueinfo, its value
 *   telling it from the program's own signals of that number); its handler walks the
 *   interrupted code from the ucontext's registers (gt_unwind_signal: cached CFI rules, try-locks
 *   only, no malloc, no libunwind) into the thread's ring.
 * - blocked in a system call (or a fault): the line gives its user sp and pc, and the sampler
 *   walks the sleeping thread's stack itself, then reads the line again: the same sp and pc mean
 *   the thread slept through the walk and the frames are its own. No signal reaches a blocked
 *   thread, so no sleep, poll or sem_wait of the program ever returns EINTR because of us (those
 *   are not restarted by SA_RESTART).
 * A thread seen running can still enter a system call before the signal lands (microseconds):
 * SA_RESTART restarts what it can, and the calls it never restarts (nanosleep, poll, epoll_wait,
 * select, sigtimedwait, ... see signal(7)) would return EINTR. Their C library entry points are
 * wrapped (waits.c): the thread is quiet inside them (tls_quiet), no signal is sent to a quiet
 * thread, and one on its way is delivered before the wait starts (gt_hostsample_quiet_begin; the
 * two sides flag, then look, sequentially consistent); so is syscall(2) with their numbers. What
 * no wrapper sees (inline system calls, socket timeouts) keeps that window;
 * GPUTRACE_SAMPLE_SIGNAL=0 sends no signal at all: running threads get a sample without a stack
 * (on CPU, in or out of our hooks), sleeping ones are walked as above.
 * Samples the sampler thread takes are also the owner's to write: it raises the owner's
 * gt_tls_hs_pending through a pointer (a relaxed store the owner's gt_enter reads).
 * The sampled thread turns its ring into records itself, at its next hooked call (gt_enter sees
 * gt_tls_hs_pending) or its exit: interning a stack may take the stack table's lock and write
 * stack records into the thread's own buffer, which only its owner may do, never in a handler.
 * A record's ts is when it was written (time order in the file); the sample's time is sample_ts.
 *
 * A sample inside our hooks (the CUDA call forwarded included) carries GT_SAMPLE_IN_HOOK. The
 * ring is multi-producer (the handler, the sampler thread) and single-consumer (the owner): a
 * producer claims a slot with one atomic add and publishes it with a release store; a full ring
 * drops the sample (counted).
 *
 * Python frames: where the thread runs Python (its thread state is known from its hooked calls),
 * the handler and the sampler read its frame chain by offsets (python.c, gt_py_sample_read: reads
 * only, no lock, no API call but state getters, every read a copy that fails cleanly on unmapped
 * memory: a frame being popped may point into a freed chunk), each frame as its code object's
 * address and fingerprint and its instruction offset, plus what the write-out needs and the
 * owner's code table may not know yet (the line; the code's file, name and first line), copied
 * then: a code object sampled may be freed before the owner's next hooked call, where it turns
 * the frames into pseudo-ips from its table and those copies without reading any code object
 * (gt_py_sample_frames). The owner's hints (py_hints) say which frames its table knows, so that
 * a thread in the same code copies nothing but addresses.
 *
 * Our signal: the highest real-time signal with no handler at start. A handler the program sets
 * for it later is kept aside (the sigaction wrapper in crash.c asks us) and runs for every signal
 * that is not our sampler's. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "python.h"
#include "shim.h"
#include "unwind.h"

#define HS_DEPTH   64  /* native frames kept per sample */
#define HS_RING    64  /* samples a thread may hold between two of its hooked calls */
#define HS_THREADS 256 /* threads sampled at once */
#define HS_PY      GT_PY_SAMPLE_FRAMES
/* bytes of the Python parts of the ring's samples: each packed to its size (its frames and code
 * facts), so that a full ring of the largest still fits while a
 * thread touches only as many pages as its pending samples fill */
#define HS_PY_ROOM ((HS_RING + 2) * (uint32_t)sizeof(struct gt_py_sample))

struct hs_slot {
    _Atomic uint32_t ready;
    uint32_t n, flags, pad;
    uint64_t ts, interval_ns, cpu_ns;
    uint64_t ip[HS_DEPTH];
    int32_t py_n;    /* its Python frames read (-1: none), with their code facts */
    uint32_t py_off; /* where they are packed in py_room */
    uint32_t py_len; /* their bytes there (0: none) */
    uint32_t pad2;
};

struct hs_thread {
    _Atomic uint64_t head;      /* slots claimed by producers */
    uint64_t tail;              /* slots consumed (owner) */
    _Atomic uint32_t signalled; /* a signal of ours is on its way: the sampler waits for it */
    uint32_t exec_hold;         /* the owner is inside an exec call: no signal (under HS.mu) */
    _Atomic uint64_t dropped;
    uint64_t handled, handler_ns; /* the handler's samples and time in it (owner: GPUTRACE_DEBUG) */
    uint64_t handler_max;         /* and their spread: the slowest, */
    uint64_t handler_log2[40];    /* counts by floor(log2 ns), the last one also for more */
    uint32_t tid;
    int sys_fd;              /* /proc/self/task/TID/syscall */
    const int *in_hook;      /* the owner's gt_tls_in_hook */
    _Atomic int *quiet;      /* the owner's tls_quiet: in a wait no signal may cut short */
    int *pending;            /* the owner's gt_tls_hs_pending: the sampler thread sets it too */
    _Atomic uintptr_t py_ts; /* the owner's Python thread state (0: none seen yet) */
    _Atomic uint64_t py_id;  /* its id (0: unknown), published by the owner before py_ts */
    clockid_t cpu_clock;
    /* the previous sample's times: producers take turns (the handler's turn runs from the
     * sampler's store of signalled to the handler's clearing it), relaxed atomics all the same,
     * since the handler runs outside the sanitizers' view of the thread */
    _Atomic uint64_t last_ts, last_cpu;
    struct gt_unw_thread bounds;            /* lo, hi only (no walk log) */
    _Atomic uint64_t py_hints[GT_PY_HINTS]; /* python.c's: what the owner's code table knows */
    struct gt_py_read_scratch py_scratch;   /* the handler's, off the interrupted stack */
    _Atomic uint32_t py_pos;                /* producers': the next free byte of py_room */
    _Atomic uint64_t py_lost;               /* samples whose Python part found no room */
    struct hs_slot ring[HS_RING];
    /* apart, so that a thread without Python touches none of it: */
    struct gt_py_sample py_read; /* the handler's read, packed into py_room from there */
    struct gt_py_sample py_out;  /* the owner's copy of the sample it writes */
    _Alignas(4096) unsigned char py_room[HS_PY_ROOM];
};

__thread int gt_tls_hs_pending __attribute__((tls_model("initial-exec")));
static __thread struct hs_thread *tls_hs __attribute__((tls_model("initial-exec")));
/* > 0: inside a wait of waits.c. Thread-local, not in hs_thread: a fork child keeps the count of
 * the wait it returns through, whatever became of the parent's sampling state. */
static __thread _Atomic int tls_quiet __attribute__((tls_model("initial-exec")));

static struct {
    unsigned hz;
    int signo;
    int no_signal;      /* GPUTRACE_SAMPLE_SIGNAL=0: running threads get a sample without a stack */
    uint32_t py_room;   /* bytes of py_room used: HS_PY_ROOM, less only in tests */
    pthread_mutex_t mu; /* the registry, against the sampler's round and thread exits */
    struct hs_thread *threads[HS_THREADS];
    int started, stop;
    pthread_t sampler;
    struct sigaction prog; /* the program's action for signo */
    _Atomic int prog_set;
    _Atomic uint64_t samples;
} HS = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The signal handler and what it calls: our handler is installed with glibc's own sigaction,
 * so it runs at any instruction, also inside ThreadSanitizer's runtime, which is not reentrant
 * (an instrumented atomic there waited forever on the runtime's own lock). Not instrumented: the
 * handler shares nothing with other threads but through the atomics of the protocol above. */
#define HS_HANDLER __attribute__((no_sanitize("thread")))

HS_HANDLER static uint64_t cpu_now(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Claims a slot, or NULL (ring full: dropped). Two copies of one body: the handler's is not
 * instrumented (HS_HANDLER), the sampler thread's is, so that ThreadSanitizer sees its acquire of
 * the owner's tail, which orders the owner's reads of the slot's previous sample before the
 * writes of the new one. */
#define HS_CLAIM_BODY                                                                              \
    uint64_t at = atomic_load_explicit(&h->head, memory_order_relaxed);                            \
    do {                                                                                           \
        if (at - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) >= HS_RING) {                         \
            atomic_fetch_add_explicit(&h->dropped, 1, memory_order_relaxed);                       \
            return NULL;                                                                           \
        }                                                                                          \
    } while (!atomic_compare_exchange_weak_explicit(&h->head, &at, at + 1, memory_order_acq_rel,   \
                                                    memory_order_relaxed));                        \
    *index = at;                                                                                   \
    return &h->ring[at % HS_RING];

HS_HANDLER static struct hs_slot *claim_in_handler(struct hs_thread *h, uint64_t *index)
{
    HS_CLAIM_BODY
}

static struct hs_slot *claim(struct hs_thread *h, uint64_t *index){HS_CLAIM_BODY}

/* Packs the Python part py (NULL: none) of the sample in slot s (index at) into py_room: its
 * header and frames, then its text, at py_pos, which only grows until a sample finds no slot
 * pending before its own and starts over at 0: the parts of pending samples are never written
 * over, and a thread touches as many pages as it ever had parts pending (the owner writes out all
 * that is ready at each hooked call). The producers take turns (above): py_pos is theirs alone.
 * A part that finds no room is left out: the sample keeps its native frames, marked partial
 * (counted; with HS_PY_ROOM not before 66 of the largest parts since the last start). Returns 1
 * where it was left out. */
HS_HANDLER static int pack_py(struct hs_thread *h, struct hs_slot *s, uint64_t at,
                              const struct gt_py_sample *py)
{
    uint32_t pos = atomic_load_explicit(&h->py_pos, memory_order_relaxed);
    if (__atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) == at) pos = 0;
    s->py_n = -1;
    s->py_off = pos;
    s->py_len = 0;
    atomic_store_explicit(&h->py_pos, pos, memory_order_relaxed);
    if (!py || py->n <= 0) return 0;
    size_t head = offsetof(struct gt_py_sample, f) + sizeof(py->f[0]) * (unsigned)py->n;
    uint32_t need = (uint32_t)((head + py->used + 15) & ~(size_t)15);
    if (need > HS.py_room - pos) {
        atomic_fetch_add_explicit(&h->py_lost, 1, memory_order_relaxed);
        return 1;
    }
    memcpy(h->py_room + pos, py, head);
    memcpy(h->py_room + pos + head, py->text, py->used);
    s->py_n = py->n;
    s->py_len = need;
    atomic_store_explicit(&h->py_pos, pos + need, memory_order_relaxed);
    return 0;
}

/* The owner: slot s's Python part, unpacked into h->py_out. */
static const struct gt_py_sample *unpack_py(struct hs_thread *h, const struct hs_slot *s)
{
    struct gt_py_sample *py = &h->py_out;
    const unsigned char *p = h->py_room + s->py_off;
    size_t head = offsetof(struct gt_py_sample, f) + sizeof(py->f[0]) * (unsigned)s->py_n;
    memcpy(py, p, head);
    memcpy(py->text, p + head, py->used);
    return py;
}

HS_HANDLER static void fill(struct hs_thread *h, struct hs_slot *s, uint64_t now, uint32_t flags)
{
    uint64_t cpu = cpu_now(h->cpu_clock);
    uint64_t lt = atomic_exchange_explicit(&h->last_ts, now, memory_order_relaxed);
    uint64_t lc = atomic_exchange_explicit(&h->last_cpu, cpu, memory_order_relaxed);
    s->ts = now;
    s->interval_ns = lt && now > lt ? now - lt : 0;
    s->cpu_ns = lc && cpu > lc ? cpu - lc : 0;
    s->flags = flags;
}

/* ---- the signal: a running thread walks itself ---------------------------------------------- */

HS_HANDLER static void run_prog_action(int sig, siginfo_t *si, void *uc)
{
    struct sigaction pa = HS.prog;
    if (!atomic_load_explicit(&HS.prog_set, memory_order_acquire) ||
        (!(pa.sa_flags & SA_SIGINFO) && pa.sa_handler == SIG_DFL)) {
        /* the default action of a real-time signal ends the process: as it would have */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        extern int __sigaction(int, const struct sigaction *, struct sigaction *);
        __sigaction(sig, &dfl, NULL);
        raise(sig);
        return;
    }
    if (pa.sa_flags & SA_SIGINFO)
        pa.sa_sigaction(sig, si, uc);
    else if (pa.sa_handler != SIG_IGN)
        pa.sa_handler(sig);
}

/* Our signals are queued with a value the program cannot have sent (the address of our state):
 * a program's own kill, tgkill or sigqueue of that number is told apart. */
static int send_sample_signal(pid_t pid, uint32_t tid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = HS.signo;
    si.si_code = SI_QUEUE;
    si.si_pid = pid;
    si.si_uid = getuid();
    si.si_value.sival_ptr = &HS;
    return (int)gt_syscall(SYS_rt_tgsigqueueinfo, pid, tid, HS.signo, &si);
}

HS_HANDLER static int is_ours(const siginfo_t *si)
{
    return si->si_code == SI_QUEUE && si->si_value.sival_ptr == &HS && si->si_pid == getpid();
}

HS_HANDLER static void on_sample(int sig, siginfo_t *si, void *ucv)
{
    int e = errno;
    struct hs_thread *h = tls_hs;
    if (!is_ours(si) || !h || !atomic_load_explicit(&h->signalled, memory_order_acquire)) {
        errno = e;
        run_prog_action(sig, si, ucv);
        return;
    }
    uint64_t now = gt_now(), at;
    struct hs_slot *s = claim_in_handler(h, &at);
    if (s) {
        const ucontext_t *uc = ucv;
        uint32_t flags = GT_SAMPLE_ON_CPU | (gt_tls_in_hook ? GT_SAMPLE_IN_HOOK : 0);
        int partial = 0;
#if defined(__x86_64__)
        gt_unw_in_handler = 1;
        s->n = (uint32_t)gt_unwind_signal(s->ip, HS_DEPTH, &h->bounds,
                                          (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
                                          (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
                                          (uintptr_t)uc->uc_mcontext.gregs[REG_RBP], &partial);
        gt_unw_in_handler = 0;
        const struct gt_py_sample *py = NULL;
#if !defined(__SANITIZE_THREAD__) /* (python.c is instrumented: not from this handler there) */
        /* the thread state asked for anew: a thread that ends deletes its own before our exit
         * hook runs, and the interpreter clears it from the thread before freeing it */
        if (atomic_load_explicit(&h->py_ts, memory_order_relaxed)) {
            py = &h->py_read;
            if (gt_py_sample_read(gt_py_thread_state(), 0, &h->py_read, h->py_hints,
                                  &h->py_scratch) > 0 &&
                py->capped)
                partial = 1;
        }
#endif
        if (pack_py(h, s, at, py)) partial = 1;
#else
        (void)uc;
        s->n = 0;
        pack_py(h, s, at, NULL);
        partial = 1;
#endif
        fill(h, s, now, flags | (partial ? GT_SAMPLE_PARTIAL : 0));
        atomic_store_explicit(&s->ready, 1, memory_order_release);
        __atomic_store_n(&gt_tls_hs_pending, 1, __ATOMIC_RELAXED);
        uint64_t dt = gt_now() - now;
        h->handled++;
        h->handler_ns += dt;
        unsigned b = dt ? 63u - (unsigned)__builtin_clzll(dt) : 0;
        h->handler_log2[b < 40 ? b : 39]++;
        if (dt > h->handler_max) h->handler_max = dt;
    }
    atomic_store_explicit(&h->signalled, 0, memory_order_release);
    errno = e;
}

/* From crash.c's sigaction wrapper: the program's view of our signal. */
int gt_hostsample_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    (void)sig;
    if (old) {
        if (atomic_load(&HS.prog_set))
            *old = HS.prog;
        else {
            memset(old, 0, sizeof(*old));
            old->sa_handler = SIG_DFL;
        }
    }
    if (act) {
        atomic_store(&HS.prog_set, 0);
        HS.prog = *act;
        atomic_store(&HS.prog_set, 1);
    }
    return 0;
}

/* Called by the sigaction/signal wrappers (crash.c), which run before a sanitizer's runtime is
 * initialized (TSan installs its own handlers through them): not instrumented, like them. */
__attribute__((no_sanitize("address", "undefined", "thread"))) int gt_hostsample_signo(void)
{
    return HS.signo;
}

/* ---- the sampler thread --------------------------------------------------------------------- */

/* The blocked thread's user sp and pc from its syscall line; 0 when it runs (or unreadable). */
static int read_blocked(struct hs_thread *h, uintptr_t *sp, uintptr_t *pc)
{
    char b[256];
    ssize_t k = pread(h->sys_fd, b, sizeof(b) - 1, 0);
    if (k <= 0) return -1;
    b[k] = 0;
    if (b[0] == 'r') return 0; /* "running" */
    /* "nr a1 a2 a3 a4 a5 a6 sp pc", or "-1 sp pc" (blocked outside a system call) */
    char *f[9];
    int n = 0;
    for (char *p = b; *p && n < 9;) {
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n') break;
        f[n++] = p;
        while (*p && *p != ' ' && *p != '\n')
            p++;
    }
    if (n != 9 && n != 3) return -1;
    *sp = (uintptr_t)strtoull(f[n - 2], NULL, 16);
    *pc = (uintptr_t)strtoull(f[n - 1], NULL, 16);
    return 1;
}

static void sample_one(struct hs_thread *h, pid_t pid)
{
    if (h->exec_hold) return;
    if (atomic_load_explicit(&h->signalled, memory_order_acquire)) return; /* still on its way */
    uintptr_t sp = 0, pc = 0;
    int st = read_blocked(h, &sp, &pc);
    if (st < 0) return;
    uint64_t at;
    if (st == 0 && HS.no_signal) { /* on CPU, where is not known: no signal, so never EINTR */
        struct hs_slot *s = claim(h, &at);
        if (!s) return;
        s->n = 0;
        pack_py(h, s, at, NULL);
        fill(h, s, gt_now(),
             GT_SAMPLE_ON_CPU |
                 (__atomic_load_n(h->in_hook, __ATOMIC_RELAXED) ? GT_SAMPLE_IN_HOOK : 0));
        atomic_store_explicit(&s->ready, 1, memory_order_release);
        __atomic_store_n(h->pending, 1, __ATOMIC_RELAXED);
        return;
    }
    if (st == 0) {
        /* against gt_hostsample_quiet_begin: flag, then look (both sequentially consistent),
         * so that either the thread sees the flag and waits for the signal before its wait,
         * or this sees it quiet and sends nothing */
        atomic_store_explicit(&h->signalled, 1, memory_order_seq_cst);
        if (atomic_load_explicit(h->quiet, memory_order_seq_cst) ||
            send_sample_signal(pid, h->tid) != 0)
            atomic_store_explicit(&h->signalled, 0, memory_order_release);
        return;
    }
    uint64_t now = gt_now(), cpu = cpu_now(h->cpu_clock);
    uint64_t ip[HS_DEPTH];
    int partial = 0;
    /* rbp is unknown: frames whose CFA is rbp-based end the walk (marked partial) */
    int n = gt_unwind_signal(ip, HS_DEPTH, &h->bounds, pc, sp, 0, &partial);
    /* its Python frames hold still while it sleeps (checked below). The main thread's state lives
     * until the interpreter's finalization, which the read is guarded against; another thread's
     * is freed when that thread ends or leaves Python (PyGILState_Release), which the owner does
     * not see: it is read only where found still alive with the id the owner published */
    static struct gt_py_sample py; /* (the sampler thread's only, as is scratch) */
    static struct gt_py_read_scratch scratch;
    py.n = -1;
    uint64_t id = atomic_load_explicit(&h->py_id, memory_order_relaxed);
    if (h->tid == (uint32_t)pid || id)
        gt_py_sample_read(atomic_load_explicit(&h->py_ts, memory_order_relaxed), id, &py,
                          h->py_hints, &scratch);
    uintptr_t sp2 = 0, pc2 = 0;
    if (read_blocked(h, &sp2, &pc2) != 1 || sp2 != sp || pc2 != pc) return; /* it woke */
    if (cpu_now(h->cpu_clock) != cpu) return; /* it ran meanwhile (and blocked at the same place) */
    struct hs_slot *s = claim(h, &at);
    if (!s) return;
    memcpy(s->ip, ip, 8u * (unsigned)n);
    s->n = (uint32_t)n;
    if (py.n > 0 && py.capped) partial = 1;
    if (pack_py(h, s, at, &py)) partial = 1;
    /* (the owner's flag, read from here: it sleeps, so it holds still) */
    fill(h, s, now,
         (partial ? GT_SAMPLE_PARTIAL : 0) |
             (__atomic_load_n(h->in_hook, __ATOMIC_RELAXED) ? GT_SAMPLE_IN_HOOK : 0));
    atomic_store_explicit(&s->ready, 1, memory_order_release);
    __atomic_store_n(h->pending, 1, __ATOMIC_RELAXED); /* written at its next hooked call */
}

static void *sampler_main(void *arg)
{
    (void)arg;
    pid_t pid = getpid();
    uint64_t period = 1000000000u / HS.hz;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        next.tv_nsec += (long)period;
        while (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        /* (the system call itself: the C library's clock_nanosleep is waits.c's wrapper) */
        while (gt_syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0 &&
               errno == EINTR) {
        }
        pthread_mutex_lock(&HS.mu);
        if (HS.stop) {
            pthread_mutex_unlock(&HS.mu);
            return NULL;
        }
        for (int i = 0; i < HS_THREADS; i++)
            if (HS.threads[i]) sample_one(HS.threads[i], pid);
        pthread_mutex_unlock(&HS.mu);
        /* the unwind rules the walks missed where they could not take the locks (see
         * gt_unwind_learn), outside our lock (a fork's prepare handlers take the loader's lock
         * and ours) */
        gt_unwind_learn();
    }
}

/* ---- configuration, threads ----------------------------------------------------------------- */

static void hs_prepare(void)
{
    pthread_mutex_lock(&HS.mu);
}
static void hs_parent(void)
{
    pthread_mutex_unlock(&HS.mu);
}
/* The child has no sampler thread, and its one thread's samples were the parent's: all dropped.
 * A child that traces anew (GPUTRACE_FOLLOW_FORK) configures and registers again. */
static void hs_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    HS.mu = fresh;
    HS.hz = 0;
    HS.started = 0;
    HS.stop = 0;
    memset(HS.threads, 0, sizeof(HS.threads));
    struct hs_thread *h = tls_hs;
    tls_hs = NULL;
    gt_tls_hs_pending = 0;
    if (h) {
        close(h->sys_fd);
        munmap(h, sizeof(*h));
    }
}

void gt_hostsample_configure(void)
{
    HS.hz = (unsigned)gt_env_num("GPUTRACE_SAMPLE_HZ", 0, 10000, GT_SAMPLE_HZ_DEFAULT);
    if (!gt_stack_depth) HS.hz = 0; /* GPUTRACE_STACK_DEPTH=0 (or no stack events): no stacks */
    if (!HS.hz) return;
    HS.no_signal = !gt_env_num("GPUTRACE_SAMPLE_SIGNAL", 0, 1, 1);
    /* tests only: a smaller room, so that running out of it happens */
    HS.py_room = (uint32_t)gt_env_num("GPUTRACE_TEST_SAMPLE_PY_ROOM", sizeof(struct gt_py_sample),
                                      HS_PY_ROOM, HS_PY_ROOM);
    if (HS.no_signal) goto registered;
    extern int __sigaction(int, const struct sigaction *, struct sigaction *);
    for (int sig = SIGRTMAX; sig > SIGRTMIN + 2 && !HS.signo; sig--) {
        struct sigaction was;
        if (__sigaction(sig, NULL, &was) != 0) continue;
        if ((was.sa_flags & SA_SIGINFO) || was.sa_handler != SIG_DFL) continue;
        struct sigaction ours;
        memset(&ours, 0, sizeof(ours));
        ours.sa_sigaction = on_sample;
        ours.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&ours.sa_mask);
        if (__sigaction(sig, &ours, NULL) == 0) HS.signo = sig;
    }
    if (!HS.signo) {
        gt_warn("gputrace: GPUTRACE_SAMPLE_HZ: no free real-time signal, host samples off\n");
        HS.hz = 0;
        return;
    }
registered:;
    static int once; /* a child that traces anew configures again: register the handlers once */
    if (!once) {
        once = 1;
        pthread_atfork(hs_prepare, hs_parent, hs_child);
    }
}

/* The thread's first hooked call (runtime.c, thread_slow): register it. */
void gt_hostsample_thread_start(struct gt_thread *t)
{
    if (!HS.hz || tls_hs) return;
    struct hs_thread *h =
        mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (h == MAP_FAILED) return;
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/syscall", t->tid);
    h->sys_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (h->sys_fd < 0 || pthread_getcpuclockid(pthread_self(), &h->cpu_clock) != 0) {
        gt_log("gputrace: thread %u: no host samples (%s)\n", t->tid, path);
        if (h->sys_fd >= 0) close(h->sys_fd);
        munmap(h, sizeof(*h));
        return;
    }
    h->tid = t->tid;
    h->in_hook = &gt_tls_in_hook;
    h->quiet = &tls_quiet;
    uintptr_t ts = gt_py_thread_state();
    atomic_init(&h->py_id, gt_py_thread_state_id(ts));
    atomic_init(&h->py_ts, ts);
    h->pending = &gt_tls_hs_pending;
    struct gt_unw_bounds b = gt_unwind_thread_bounds();
    h->bounds.lo = b.lo;
    h->bounds.hi = b.hi;
    atomic_init(&h->last_ts, gt_now());
    atomic_init(&h->last_cpu, cpu_now(h->cpu_clock));
    tls_hs = h;
    pthread_mutex_lock(&HS.mu);
    int slot = -1;
    for (int i = 0; i < HS_THREADS && slot < 0; i++)
        if (!HS.threads[i]) slot = i;
    if (slot >= 0) HS.threads[slot] = h;
    if (slot >= 0 && !HS.started) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        HS.started = pthread_create(&HS.sampler, NULL, sampler_main, NULL) == 0;
        if (HS.started) pthread_detach(HS.sampler); /* it ends by itself after gt_hostsample_stop */
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&HS.mu);
    if (slot < 0)
        gt_log("gputrace: thread %u: no host samples (%d threads sampled)\n", t->tid, HS_THREADS);
}

/* A sample's stack id: its native frames, and with Python frames read, those down to the first
 * frame inside the interpreter followed by the Python frames (as stacks.c does for events). */
static uint32_t intern_sample(struct gt_thread *t, const struct hs_slot *s)
{
    if (s->py_n <= 0) return gt_stack_intern_ips(t, s->ip, s->n);
    uint64_t ips[HS_DEPTH + HS_PY];
    uint32_t cut = gt_py_interp_first(s->ip, s->n);
    memcpy(ips, s->ip, 8u * cut);
    uint32_t m = gt_py_sample_frames(t, unpack_py(tls_hs, s), tls_hs->py_hints, ips + cut, HS_PY);
    if (!m) return gt_stack_intern_ips(t, s->ip, s->n);
    return gt_stack_intern_ips(t, ips, cut + m);
}

/* The owner writes its ready samples as records (inside a hook, or at its exit). */
void gt_hostsample_drain(struct gt_thread *t)
{
    __atomic_store_n(&gt_tls_hs_pending, 0, __ATOMIC_RELAXED);
    struct hs_thread *h = tls_hs;
    if (!h) return;
    /* its state now (a thread may leave Python and come back with a new one). The sampler may
     * load a torn pair: a state is read only where it holds the id loaded with it (ts_alive) */
    uintptr_t ts = gt_py_thread_state();
    if (ts != atomic_load_explicit(&h->py_ts, memory_order_relaxed)) {
        atomic_store_explicit(&h->py_id, 0, memory_order_relaxed);
        atomic_store_explicit(&h->py_ts, ts, memory_order_relaxed);
        atomic_store_explicit(&h->py_id, gt_py_thread_state_id(ts), memory_order_relaxed);
    }
    while (h->tail != atomic_load_explicit(&h->head, memory_order_acquire)) {
        struct hs_slot *s = &h->ring[h->tail % HS_RING];
        if (!atomic_load_explicit(&s->ready, memory_order_acquire)) {
            __atomic_store_n(&gt_tls_hs_pending, 1, __ATOMIC_RELAXED); /* claimed, not filled */
            break;
        }
        uint32_t stack = intern_sample(t, s);
        struct gt_rec_host_sample *r = gt_reserve(t, sizeof(*r));
        if (r) {
            r->ts = gt_now();
            r->sample_ts = s->ts;
            r->interval_ns = s->interval_ns;
            r->cpu_ns = s->cpu_ns;
            r->tid = t->tid;
            r->stack = stack;
            r->flags = s->flags;
            r->pad = 0;
            gt_commit(t, r, GT_REC_HOST_SAMPLE, 0, sizeof(*r), r->ts);
        }
        atomic_store_explicit(&s->ready, 0, memory_order_relaxed);
        __atomic_store_n(&h->tail, h->tail + 1, __ATOMIC_RELEASE);
    }
}

/* KiB of h's mapping in memory (the ring's slots are touched as far as their samples reach). */
static unsigned long resident_kib(const struct hs_thread *h)
{
    unsigned char v[(sizeof(*h) + 4095) / 4096];
    unsigned long n = 0;
    if (mincore((void *)h, sizeof(*h), v) != 0) return 0;
    for (size_t i = 0; i < sizeof(v); i++)
        n += v[i] & 1;
    return n * 4;
}

/* A power of two that p% of the handler's times were below. */
static unsigned long long handler_below(const struct hs_thread *h, unsigned p)
{
    uint64_t seen = 0;
    for (unsigned b = 0; b < 40; b++)
        if ((seen += h->handler_log2[b]) * 100 >= h->handled * p) return 2ull << b;
    return 2ull << 39;
}

/* The thread ends (runtime.c, thread_exit, before its last flush), or the process does (the
 * calling thread, from the shutdown): its samples written, it leaves the registry. */
void gt_hostsample_thread_exit(struct gt_thread *t)
{
    struct hs_thread *h = tls_hs;
    if (!h) return;
    pthread_mutex_lock(&HS.mu);
    for (int i = 0; i < HS_THREADS; i++)
        if (HS.threads[i] == h) HS.threads[i] = NULL;
    pthread_mutex_unlock(&HS.mu);
    /* a signal sent before it left is delivered or still pending: wait for its handler (bounded:
     * with the signal blocked here, the state stays mapped) */
    for (int k = 0; k < 1000 && atomic_load_explicit(&h->signalled, memory_order_acquire); k++)
        sched_yield();
    gt_hostsample_drain(t);
    if (atomic_load_explicit(&h->signalled, memory_order_acquire)) {
        tls_hs = NULL;
        return;
    }
    if (h->dropped)
        gt_log("gputrace: thread %u: %llu host samples dropped (ring full)\n", t->tid,
               (unsigned long long)h->dropped);
    if (h->py_lost)
        gt_log("gputrace: thread %u: %llu host samples without their Python frames (no room)\n",
               t->tid, (unsigned long long)atomic_load(&h->py_lost));
    if (h->handled)
        gt_log("gputrace: thread %u: %llu host samples on CPU, %llu ns each in the handler "
               "(p50 < %llu, p90 < %llu, p99 < %llu, max %llu ns)\n",
               t->tid, (unsigned long long)h->handled,
               (unsigned long long)(h->handler_ns / h->handled), handler_below(h, 50),
               handler_below(h, 90), handler_below(h, 99), (unsigned long long)h->handler_max);
    gt_log("gputrace: thread %u: host sample state %lu KiB resident of %zu KiB mapped\n", t->tid,
           resident_kib(h), sizeof(*h) / 1024);
    tls_hs = NULL;
    close(h->sys_fd);
    munmap(h, sizeof(*h));
}

/* A signal of ours on its way to the calling thread, which blocks it, taken back if it is pending
 * (rt_sigtimedwait, no wait: the system call, as the C library's is waits.c's wrapper). Ours only
 * if it is still flagged: a delivery just now cleared the flag; the program's own signals of that
 * number taken on the way are queued again as they were. */
static void take_back(struct hs_thread *h)
{
    sigset_t ours;
    sigemptyset(&ours);
    sigaddset(&ours, HS.signo);
    const struct timespec zero = {0, 0};
    siginfo_t si, theirs[8];
    int n = 0;
    while (atomic_load_explicit(&h->signalled, memory_order_acquire) && n < 8 &&
           gt_syscall(SYS_rt_sigtimedwait, &ours, &si, &zero, _NSIG / 8) == HS.signo) {
        if (is_ours(&si))
            atomic_store_explicit(&h->signalled, 0, memory_order_release);
        else
            theirs[n++] = si;
    }
    for (int i = 0; i < n; i++)
        gt_syscall(SYS_rt_tgsigqueueinfo, getpid(), h->tid, HS.signo, &theirs[i]);
}

/* exec.c: the calling thread is about to call the exec family. From here the sampler sends it
 * no signal (the flag is set under HS.mu, which the sampler holds for a whole round), and one
 * already sent is delivered now or, where the program blocks it, taken back with sigtimedwait:
 * pending signals outlive execve, our handler does not. Returns what gt_hostsample_exec_end
 * needs: 1 when this thread's sampling was paused. A vfork child (another tid on the parent's
 * thread-local state) has no signal of ours to carry and pauses nothing. */
int gt_hostsample_exec_begin(void)
{
    struct hs_thread *h = tls_hs;
    if (!h || (uint32_t)gt_syscall(SYS_gettid) != h->tid) return 0;
    pthread_mutex_lock(&HS.mu);
    h->exec_hold = 1;
    pthread_mutex_unlock(&HS.mu);
    if (atomic_load_explicit(&h->signalled, memory_order_acquire)) {
        sigset_t ours, old;
        sigemptyset(&ours);
        sigaddset(&ours, HS.signo);
        pthread_sigmask(SIG_BLOCK, &ours, &old);
        take_back(h);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return 1;
}

/* waits.c, before a wait that a handler would cut short: no signal of ours from here to
 * gt_hostsample_quiet_end, and one already on its way is delivered before the wait begins (the
 * handler runs at the return of sched_yield) or, where the thread blocks our signal (a ppoll or
 * sigsuspend mask could let it in), taken back. Returns what quiet_end needs. */
int gt_hostsample_quiet_begin(void)
{
    struct hs_thread *h = tls_hs;
    if (!h || HS.no_signal) return 0;
    atomic_fetch_add_explicit(&tls_quiet, 1, memory_order_seq_cst);
    if (!atomic_load_explicit(&h->signalled, memory_order_seq_cst)) return 1;
    int e = errno;
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    int blocked = sigismember(&cur, HS.signo) == 1;
    /* bounded: the sampler sends right after flagging, unless descheduled in between */
    for (int k = 0; k < 100000 && atomic_load_explicit(&h->signalled, memory_order_acquire); k++) {
        if (blocked) take_back(h);
        sched_yield();
    }
    errno = e;
    return 1;
}

void gt_hostsample_quiet_end(int quiet)
{
    if (quiet) atomic_fetch_sub_explicit(&tls_quiet, 1, memory_order_release);
}

/* The exec call failed: the thread is sampled again. */
void gt_hostsample_exec_end(int paused)
{
    struct hs_thread *h = tls_hs;
    if (!paused || !h) return;
    pthread_mutex_lock(&HS.mu);
    h->exec_hold = 0;
    pthread_mutex_unlock(&HS.mu);
}

/* The process ends (runtime.c, gt_shutdown): no round after this one. */
void gt_hostsample_stop(void)
{
    if (!HS.hz) return;
    pthread_mutex_lock(&HS.mu);
    HS.stop = 1;
    pthread_mutex_unlock(&HS.mu);
}
