/* The shim's fast unwinder (preload/unwind.c, compiled in here) against libunwind: on thousands
 * of random call chains mixing -O0, -O1, -O2 with and without frame pointers, alloca, VLAs, big
 * frames, C++ catch blocks and destructors run by a throw (tests/unwind/), in the main thread and
 * another one, the return addresses must be libunwind's exactly (unw_backtrace, or its cursor walk
 * under ThreadSanitizer, as the shim uses it). Also: the depth cap, a stack through a signal
 * handler (libunwind's job: the fast walker must decline) and on an alternate signal stack, a
 * dlopen'ed library unloaded and replaced at the same address by one with other frame sizes, and
 * the reuse of a thread's previous walk (same stack again; shared outer frames; a return address
 * changed underneath; a stop range that ends walks early) and of its cache of walks (three call
 * sites in turn). No speed is measured here. */
#include "../../preload/unwind.c"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unwind/chain.h"
#include "check.h"

#define MAXF 256

unw_step_fn *unw_steps[UNW_NSTEPS] = {
    plain_o0, dyn_o0, vla_o0,  regs_o0,    plain_o1, dyn_o1,   vla_o1,    regs_o1,  plain_o2,
    dyn_o2,   vla_o2, regs_o2, plain_o2fp, dyn_o2fp, vla_o2fp, regs_o2fp, cxx_step,
};

/* libunwind as the shim calls it (unwind.c's libunwind_backtrace): buf[0] lies in here. After a
 * library was replaced at the same address, unw_backtrace's per-thread trace cache (not flushed
 * by unw_flush_cache) still holds the old library's frame rules and stops early; the reference
 * is then libunwind's cursor walk (unw_step), which unw_flush_cache does refresh. */
static int cursor_walk;
__attribute__((noinline)) static int reference(void **buf, int max)
{
    if (cursor_walk) {
        unw_context_t uc;
        unw_cursor_t c;
        unw_word_t ip;
        int n = 0;
        if (unw_getcontext(&uc) != 0 || unw_init_local(&c, &uc) < 0) return 0;
        do {
            if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0) break;
            buf[n++] = (void *)(uintptr_t)ip;
        } while (n < max && unw_step(&c) > 0);
        return n;
    }
    return libunwind_backtrace(buf, max);
}

static __thread struct gt_unw_thread *tls_th; /* the logging walker's state, per thread */
static __thread struct gt_unw_thread tls_nolog;
static __thread int expect_fast = 1; /* the fast walker must not decline */

static _Atomic int n_leaf, n_mismatch, n_declined, n_fallback_diff, n_same_missed;
static int stop_mode; /* unw_leaf also walks with a stop range (test_stop) */
static unsigned stop_pick = 12345;
static _Atomic int n_stop_tried, n_stopped, n_stop_wrong, n_stop_same_missed, n_after_stop_wrong;
static _Atomic int max_depth_seen;
static _Atomic int last_fast;
static volatile int loop_twice = 2; /* the fast walker's latest count (-1: declined) */

static void note(_Atomic int *counter, const char *what, int na, int nb)
{
    if (atomic_fetch_add(counter, 1) < 3) printf("     %s: %d vs %d frames\n", what, na, nb);
}

/* All three are called from here, so their lists agree from the first frame above unw_leaf on:
 * fast walker a[0] = the return address into unw_leaf, a[1..]; libunwind r[0] inside reference(),
 * r[1] in unw_leaf, r[2..]; gt_unwind g[0] inside gt_unwind, g[1] in unw_leaf, g[2..]. */
__attribute__((noinline)) int unw_leaf(void)
{
    void *a[MAXF], *r[MAXF], *g[MAXF];
    int na = gt_unwind_fast(a, MAXF, &tls_nolog);
    int nr = reference(r, MAXF);
    atomic_fetch_add(&n_leaf, 1);
    last_fast = na;
    if (nr > atomic_load(&max_depth_seen)) atomic_store(&max_depth_seen, nr);
    if (na < 0) {
        if (expect_fast) note(&n_declined, "fast walker declined", na, nr);
    } else if (na != nr - 1 || memcmp(a + 1, r + 2, sizeof(void *) * (size_t)(nr - 2)) != 0)
        note(&n_mismatch, "fast walker differs from libunwind", na, nr);
    /* Twice from the same place (one call instruction: an opaque bound keeps the loop from being
     * unrolled): the second walk repeats the first, its log reused whole. */
    for (int k = 0; k < loop_twice; k++) {
        int ng = gt_unwind(g, MAXF, tls_th);
        if (ng != nr || memcmp(g + 2, r + 2, sizeof(void *) * (size_t)(nr - 2)) != 0)
            note(&n_fallback_diff, "gt_unwind differs from libunwind", ng, nr);
        if (k == 1 && expect_fast && !tls_th->same) note(&n_same_missed, "no reuse", ng, nr);
    }
    /* With a stop range (stacks.c's: the interpreter's code) that holds one call site of the
     * stack: the walk ends at its first frame with that site, twice (the second one repeats the
     * first), and the next walk without the range goes on to the end again. */
    if (stop_mode && nr > 3) {
        stop_pick = stop_pick * 1103515245u + 12345u;
        int idx = 2 + (int)((stop_pick >> 8) % (unsigned)(nr - 3)), first = 2;
        while (r[first] != r[idx])
            first++;
        atomic_fetch_add(&n_stop_tried, 1);
        tls_th->stop_lo = (uintptr_t)r[idx] - 1;
        tls_th->stop_hi = tls_th->stop_lo + 1;
        for (int k = 0; k < 2; k++) {
            int ng = gt_unwind(g, MAXF, tls_th);
            if (ng != first + 1 || !tls_th->stopped ||
                memcmp(g + 2, r + 2, sizeof(void *) * (size_t)(first - 1)) != 0)
                note(&n_stop_wrong, "walk with a stop", ng, first + 1);
            else
                atomic_fetch_add(&n_stopped, 1);
            if (k == 1 && !tls_th->same) note(&n_stop_same_missed, "no reuse with a stop", ng, nr);
        }
        tls_th->stop_lo = tls_th->stop_hi = 0;
        int ng = gt_unwind(g, MAXF, tls_th);
        if (ng != nr || tls_th->stopped || memcmp(g + 2, r + 2, sizeof(void *) * (size_t)(nr - 2)))
            note(&n_after_stop_wrong, "walk after a stopped one", ng, nr);
    }
    return 1;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* count random chains of 1..60 steps; the scripts come from the caller's generator state. */
static void run_chains(int count, uint64_t seed)
{
    uint8_t s[64];
    uint64_t saved = rng;
    rng = seed;
    for (int c = 0; c < count; c++) {
        int n = 1 + (int)(rnd() % 60);
        for (int i = 0; i < n + 1; i++)
            s[i] = (uint8_t)rnd();
        unw_steps[s[0] % UNW_NSTEPS](s, 1, n);
    }
    rng = saved;
}

static void reset_counts(void)
{
    n_leaf = n_mismatch = n_declined = n_fallback_diff = n_same_missed = 0;
    max_depth_seen = 0;
}

static void init_thread(void)
{
    tls_th = calloc(1, sizeof(*tls_th));
    gt_unwind_thread_init(tls_th, 1);
    gt_unwind_thread_init(&tls_nolog, 0);
}

static void test_chains(void)
{
    reset_counts();
    uint64_t joined = tls_th->joined;
    run_chains(3000, 12345);
    CHECK_U64("chains: leaves reached", n_leaf, 3000);
    CHECK_U64("chains: fast walker = libunwind", n_mismatch, 0);
    CHECK_U64("chains: fast walker never declined", n_declined, 0);
    CHECK_U64("chains: gt_unwind = libunwind", n_fallback_diff, 0);
    CHECK_U64("chains: a repeated stack is reused", n_same_missed, 0);
    /* consecutive chains share their outer frames (run_chains, main): taken from the log */
    CHECK("chains: walks joined the previous one", tls_th->joined - joined >= 2900);
    CHECK("chains: some stacks are deeper than 40 frames", max_depth_seen > 40);
}

/* Stacks that differ from one walk to the next (random chains, one walk each): after a few walks
 * that took little from the log, the thread walks without it for a while (each walk still equal
 * to libunwind's); where walks repeat again, the log is back and repeated stacks are reused. */
static void test_log_off(void)
{
    reset_counts();
    uint64_t before = tls_th->walked_unlogged;
    loop_twice = 1;
    run_chains(3000, 4242);
    loop_twice = 2;
    CHECK_U64("log off: gt_unwind = libunwind", n_fallback_diff, 0);
    printf("     (log off: %" PRIu64 " of 3000 walks without the log)\n",
           tls_th->walked_unlogged - before);
    CHECK("log off: most walks of changing stacks made without the log",
          tls_th->walked_unlogged - before > 1500);
    expect_fast = 0; /* (the last run without the log ends within 4096 walks: no reuse there) */
    run_chains(3000, 99);
    expect_fast = 1;
    reset_counts();
    run_chains(1000, 7);
    CHECK_U64("log off: then a repeated stack is reused again", n_same_missed, 0);
    CHECK_U64("log off: ... and gt_unwind = libunwind", n_fallback_diff, 0);
}

/* Two stacks in turn (one call instruction, two chains): each walk is found whole in the walk
 * before the previous one, and gives libunwind's frames. */
static void test_log_older(void)
{
    reset_counts();
    uint64_t older = tls_th->older, unlogged = tls_th->walked_unlogged;
    loop_twice = 1;
    for (volatile int i = 0; i < 1000; i++)
        run_chains(1, i & 1 ? 1111 : 2222);
    loop_twice = 2;
    CHECK_U64("older log: gt_unwind = libunwind", n_fallback_diff, 0);
    printf("     (older log: %" PRIu64 " of 1000 walks found in the walk before the previous)\n",
           tls_th->older - older);
    CHECK("older log: two stacks in turn are found there", tls_th->older - older >= 990);
    CHECK_U64("older log: ... with the log on throughout", tls_th->walked_unlogged - unlogged, 0);
}

static void *thread_main(void *arg)
{
    (void)arg;
    init_thread();
    run_chains(500, 777);
    free(tls_th);
    return NULL;
}

static void test_thread(void)
{
    pthread_t t;
    reset_counts();
    pthread_create(&t, NULL, thread_main, NULL);
    pthread_join(t, NULL);
    CHECK_U64("thread: leaves reached", n_leaf, 500);
    CHECK_U64("thread: fast walker = libunwind", n_mismatch, 0);
    CHECK_U64("thread: fast walker never declined", n_declined, 0);
    CHECK_U64("thread: gt_unwind = libunwind", n_fallback_diff, 0);
}

/* The stop range (unw_leaf) on random chains: ends exactly there, repeats, and a later walk
 * without it is whole (a log made with another range is never taken). */
static void test_stop(void)
{
    reset_counts();
    n_stop_tried = n_stopped = n_stop_wrong = n_stop_same_missed = n_after_stop_wrong = 0;
    stop_mode = 1;
    run_chains(2000, 5150);
    stop_mode = 0;
    CHECK_U64("stop: gt_unwind = libunwind", n_fallback_diff, 0);
    CHECK("stop: most chains tried", n_stop_tried > 1500);
    CHECK_U64("stop: walks ended at the first frame of the site, libunwind's frames up to it",
              n_stop_wrong, 0);
    CHECK_U64("stop: ... every one of them", n_stopped, 2 * n_stop_tried);
    CHECK_U64("stop: a repeated stopped walk is reused", n_stop_same_missed, 0);
    CHECK_U64("stop: the next walk without a stop is whole", n_after_stop_wrong, 0);
}

/* Deeper than any cap: both stop at max, with the same frames. */
__attribute__((noinline)) static int deep(int d, int max, int *ok)
{
    if (d == 0) {
        void *a[MAXF], *r[MAXF];
        int na = gt_unwind_fast(a, max, &tls_nolog);
        int nr = reference(r, max + 1); /* r[0]: inside reference() */
        *ok = na == max && nr == max + 1 &&
              memcmp(a + 1, r + 2, sizeof(void *) * (size_t)(max - 1)) == 0;
        return 0;
    }
    int v = deep(d - 1, max, ok);
    __asm__ volatile("" ::: "memory");
    return v + 1;
}

static void test_depth_cap(void)
{
    int ok64 = 0, ok1 = 0;
    deep(300, 64, &ok64);
    deep(300, 1, &ok1);
    CHECK("depth cap 64: 64 frames, libunwind's", ok64);
    CHECK("depth cap 1: 1 frame", ok1);
}

/* From a signal handler: the walk crosses the kernel's signal frame, which only libunwind
 * follows; the fast walker declines and gt_unwind gives libunwind's stack. */
static volatile sig_atomic_t in_handler;
static void on_signal(int sig)
{
    (void)sig;
    in_handler = 1;
    expect_fast = 0;
    unw_leaf();
    expect_fast = 1;
}

/* Twice from one place, with a signal in between whose handler's stacks go to libunwind: the
 * second walk must not claim to repeat the previous stack (the handler's was the previous). */
__attribute__((noinline)) static int same_after(int with_signal)
{
    void *g[MAXF];
    int same = -1;
    for (int k = 0; k < loop_twice; k++) {
        if (k == 1 && with_signal) raise(SIGUSR1);
        gt_unwind(g, MAXF, tls_th);
        same = tls_th->same;
    }
    return same;
}

static void test_signal(void)
{
    struct sigaction sa = {.sa_handler = on_signal}, old;
    sigemptyset(&sa.sa_mask);
    reset_counts();
    sigaction(SIGUSR1, &sa, &old);
    raise(SIGUSR1);
    CHECK_U64("signal: leaf reached", n_leaf, 1);
    CHECK("signal: the fast walker declined", last_fast == -1);
    CHECK_U64("signal: gt_unwind = libunwind", n_fallback_diff, 0);
    CHECK("signal: a libunwind fallback counted", gt_unwind_stats(tls_th).fallback > 0);
    CHECK("signal: same place twice: the same stack", same_after(0) == 1);
    CHECK("signal: ... with the handler's stack between: not the same", same_after(1) == 0);

    /* On an alternate stack: outside the thread's stack bounds, declined before any read. */
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16}, oss;
    sigaltstack(&ss, &oss);
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    reset_counts();
    raise(SIGUSR1);
    CHECK_U64("altstack: leaf reached", n_leaf, 1);
    CHECK("altstack: the fast walker declined", last_fast == -1);
    CHECK_U64("altstack: gt_unwind = libunwind", n_fallback_diff, 0);
    sigaltstack(&oss, NULL);
    sigaction(SIGUSR1, &old, NULL);
    free(ss.ss_sp);
}

/* A library's frames: loaded, unloaded, loaded elsewhere, replaced at the same address. */
static int lib_run(const char *dir, const char *name, uintptr_t *base)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("     dlopen %s: %s\n", path, dlerror());
        return -1;
    }
    int (*call)(int (*)(void), int) = (int (*)(int (*)(void), int))dlsym(h, "unwlib_call");
    Dl_info di;
    if (!call || !dladdr((void *)call, &di)) return -1;
    *base = (uintptr_t)di.dli_fbase;
    call(unw_leaf, 3);
    call(unw_leaf, 5);
    dlclose(h);
    return 0;
}

static void test_dlopen(const char *dir)
{
    uintptr_t a1 = 0, a2 = 0, b = 0;
    reset_counts();
    cursor_walk = 1;
    uint64_t clears = gt_unwind_stats(tls_th).clears;
    CHECK("dlopen: libunwa runs", lib_run(dir, "libunwa.so", &a1) == 0);
    CHECK("dlopen: dlclose clears the rules", gt_unwind_stats(tls_th).clears > clears);
    /* Keep the old address taken, so the next load lands elsewhere. */
    void *block =
        mmap((void *)a1, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK("dlopen: libunwa runs again", lib_run(dir, "libunwa.so", &a2) == 0);
    if (block == MAP_FAILED || a2 == a1)
        printf("     a1 %#lx a2 %#lx block %p %m\n", (unsigned long)a1, (unsigned long)a2, block);
    CHECK("dlopen: reloaded at another address", block != MAP_FAILED && a2 != a1);
    if (block != MAP_FAILED) munmap(block, 4096);
    CHECK("dlopen: libunwb runs", lib_run(dir, "libunwb.so", &b) == 0);
    CHECK("dlopen: libunwb replaced libunwa at its address", b == a1 || b == a2);
    cursor_walk = 0;
    CHECK_U64("dlopen: leaves reached", n_leaf, 6);
    CHECK_U64("dlopen: fast walker = libunwind", n_mismatch, 0);
    CHECK_U64("dlopen: fast walker never declined", n_declined, 0);
    CHECK_U64("dlopen: gt_unwind = libunwind", n_fallback_diff, 0);
}

/* The log: the same call site twice reuses the first walk; with a return address further out
 * rewritten in between (to another address in the same function, so the stack stays walkable),
 * the second walk must read the new one. */
__attribute__((noinline)) static int twice(int tamper)
{
    void *x[2][MAXF];
    int n[2], same[2];
    volatile uintptr_t *slot = (volatile uintptr_t *)__builtin_frame_address(0) + 1;
    uintptr_t keep = *slot;
    for (int k = 0; k < loop_twice; k++) {
        if (k == 1 && tamper) *slot = keep + 1;
        n[k] = gt_unwind_fast(x[k], MAXF, tls_th);
        same[k] = tls_th->same;
    }
    *slot = keep;
    if (tamper) return (uintptr_t)x[1][1] == keep + 1 && !same[1];
    return n[0] > 2 && n[0] == n[1] && same[1] &&
           memcmp(x[0], x[1], sizeof(void *) * (size_t)n[0]) == 0;
}

__attribute__((noinline)) static int call_twice(int tamper)
{
    int r = twice(tamper);
    __asm__ volatile("" ::: "memory");
    return r;
}

/* Only a dlclose that unloads an object clears the rules: one that drops a reference (a second
 * dlopen of a loaded library, the tracer's RTLD_NOLOAD lookups) keeps them. */
static void test_dlclose_keep(const char *dir)
{
    char a[4200];
    snprintf(a, sizeof(a), "%s/libunwa.so", dir);
    void *x[MAXF];
    (void)gt_unwind(x, MAXF, tls_th); /* some rules: the dlclose wrapper is armed */
    void *keep = dlopen(a, RTLD_NOW | RTLD_LOCAL);
    void *again = dlopen(a, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    CHECK("dlclose keep: libunwa loaded twice", keep && again == keep);
    if (!keep || !again) return;
    uint64_t c0 = gt_unwind_stats(tls_th).clears;
    dlclose(again);
    CHECK("dlclose keep: dropping a reference keeps the rules", gt_unwind_stats(tls_th).clears == c0);
    dlclose(keep);
    CHECK("dlclose keep: the unloading dlclose clears them", gt_unwind_stats(tls_th).clears > c0);
}

/* A caller that needs only the innermost frames (th->upto 2: the return addresses into
 * prefix_twice and call_prefix): where 0, nothing changed: those two repeat, and the walk says
 * only they were checked; where 2, call_prefix's own return address (the third frame) changed:
 * the same; where 1, the second frame's changed: not the same, the new one read. */
__attribute__((noinline)) static int prefix_twice(volatile uintptr_t *outer, int where)
{
    void *x[2][MAXF];
    int n[2], same[2];
    volatile uintptr_t *inner = (volatile uintptr_t *)__builtin_frame_address(0) + 1;
    volatile uintptr_t *slot = where == 1 ? inner : outer;
    uintptr_t keep = *slot;
    /* the walks of the log, not of the cache: earlier cases' walks pass the probe frame in this
     * one's state (test_log's own frame), and one answered from the cache is not logged */
    gt_unwind_thread_release(tls_th);
    tls_th->upto = 2;
    for (int k = 0; k < loop_twice; k++) {
        if (k == 1 && where) *slot = keep + 1;
        n[k] = gt_unwind_fast(x[k], MAXF, tls_th);
        same[k] = tls_th->same;
    }
    *slot = keep;
    tls_th->upto = 0;
    if (where == 1) return (uintptr_t)x[1][1] == keep + 1 && !same[1];
    return n[0] > 3 && n[0] == n[1] && same[1] == GT_UNW_SAME_PREFIX &&
           memcmp(x[0], x[1], 2 * sizeof(void *)) == 0;
}

__attribute__((noinline)) static int call_prefix(int where)
{
    int r = prefix_twice((volatile uintptr_t *)__builtin_frame_address(0) + 1, where);
    __asm__ volatile("" ::: "memory");
    return r;
}

static void test_log(void)
{
    CHECK("log: same place twice: reused", call_twice(0));
    CHECK("log: a return address changed underneath is read anew", call_twice(1));
    CHECK("log: the innermost frames asked for repeat", call_prefix(0));
    CHECK("log: ... with a return address changed beyond them", call_prefix(2));
    CHECK("log: ... one changed among them is read anew", call_prefix(1));
    CHECK("log: all frames asked for again: the same stack", call_twice(0));
}

/* The cache: a chain of CNEST frames entered from three call sites in turn, so that no walk
 * repeats either of the two before it and each joins the previous one only beyond the chain
 * (the logs take little); each walk is compared with libunwind's from the same place, and by the
 * last round they are finished from the cache. A return address inside the chain, beyond
 * the probe frame, rewritten in between is read anew; a walk made twice in a row repeats. */
#define CNEST 12
static volatile uintptr_t *cslot[CNEST + 1];
static int c_mode; /* cache_leaf: 0 one walk, 1 one with nest(8)'s return address rewritten,
                      2 two walks */
static int c_diff, c_tamper_ok = 1, c_same_ok = 1, c_notsame_ok = 1, c_same0;

__attribute__((noinline)) static void cache_leaf(void)
{
    void *x[2][MAXF], *r[MAXF];
    int n[2], same[2];
    uintptr_t keep = *cslot[8];
    if (c_mode == 1) *cslot[8] = keep + 1; /* frame 10 of the walk (frame 0: into cache_leaf) */
    int times = c_mode == 2 ? loop_twice : 1;
    for (int k = 0; k < times; k++) { /* one call instruction (loop_twice: not unrolled) */
        n[k] = gt_unwind_fast(x[k], MAXF, tls_th);
        same[k] = tls_th->same;
    }
    int nr = reference(r, MAXF);
    if (n[0] != nr - 1 || memcmp(x[0] + 1, r + 2, sizeof(void *) * (size_t)(nr - 2)) != 0)
        c_diff++;
    c_same0 = same[0];
    if (c_mode == 1) {
        c_tamper_ok = c_tamper_ok && n[0] > 10 && (uintptr_t)x[0][10] == keep + 1 && !same[0];
        *cslot[8] = keep;
    }
    if (c_mode == 2) {
        c_notsame_ok = c_notsame_ok && !same[0];
        c_same_ok = c_same_ok && same[1] == 1 && n[1] == n[0] &&
                    memcmp(x[0], x[1], sizeof(void *) * (size_t)n[0]) == 0;
    }
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static int cache_nest(int d)
{
    cslot[d] = (volatile uintptr_t *)__builtin_frame_address(0) + 1;
    if (d == 0)
        cache_leaf();
    else
        (void)cache_nest(d - 1);
    __asm__ volatile("" ::: "memory");
    return d;
}

/* Three callers of the chain (distinct constants: no two are merged into one) */
static volatile int c_tag;
__attribute__((noinline)) static void cache_via0(void)
{
    c_tag = 10;
    (void)cache_nest(CNEST);
    c_tag = 11;
}
__attribute__((noinline)) static void cache_via1(void)
{
    c_tag = 20;
    (void)cache_nest(CNEST);
    c_tag = 21;
}
__attribute__((noinline)) static void cache_via2(void)
{
    c_tag = 30;
    (void)cache_nest(CNEST);
    c_tag = 31;
}

__attribute__((noinline)) static void cache_drive(int w, int mode)
{
    static void (*const via[3])(void) = {cache_via0, cache_via1, cache_via2};
    c_mode = mode;
    via[w]();
    __asm__ volatile("" ::: "memory");
}

static void test_cache(void)
{
    uint64_t before = tls_th->cached;
    tls_th->unlogged = tls_th->misses = 0; /* (the tests before may leave the log off a while) */
    for (int w = 0; w < 3; w++)
        cache_drive(w, 0);
    /* a few rounds (logged walks enter the cache, and a thread whose walks keep missing logs
     * few of them for a while), all from one call instruction (volatile: no round peeled off) */
    uint64_t c0 = 0;
    int same0[3] = {0, 0, 0};
    for (volatile int round = 0; round < 8; round++) {
        c0 = tls_th->cached;
        for (int w = 0; w < 3; w++) {
            cache_drive(w, 0);
            same0[w] = c_same0;
        }
    }
    uint64_t last = tls_th->cached - c0;
    c_notsame_ok = !same0[0] && !same0[1] && !same0[2];
    cache_drive(1, 1);
    cache_drive(2, 0);
    cache_drive(1, 0); /* (rewritten back: the same as before) */
    for (int w = 0; w < 3; w++) {
        tls_th->unlogged = tls_th->misses = 0; /* (unlogged walks never repeat another) */
        cache_drive(w, 2);
    }
    CHECK_U64("cache: walks from three places in turn = libunwind", (uint64_t)c_diff, 0);
    printf("     (cache: %" PRIu64 " walks finished from the cache)\n", tls_th->cached - before);
    CHECK_U64("cache: the last round's three walks finished from the cache", last, 3);
    CHECK("cache: a return address rewritten beyond the probe frame is read anew", c_tamper_ok);
    CHECK("cache: a walk after another one is not the same", c_notsame_ok);
    CHECK("cache: a walk made twice in a row repeats", c_same_ok);
}

/* fork while another thread holds the tracer's locks: the rule writers' mutex (clearing the
 * table, deriving rules anew) and the loader lock around its walks of the loader's list. The
 * child's own dlclose (which unloads, so glibc takes its list lock) and a walk that derives rules
 * must not wait forever on a lock no thread of the child will release. Each child runs under an
 * alarm, so a hang ends as SIGALRM, a failure. (The churn thread calls neither dlopen nor dlclose:
 * glibc's own holds of its list lock inside them are cut by a fork just the same, glibc's bug, not
 * what this checks.) */
static _Atomic int churn_stop;
static int count_objects(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    ++*(int *)arg;
    return 0;
}
static void *dl_churn(void *arg)
{
    (void)arg;
    struct gt_unw_thread th;
    memset(&th, 0, sizeof(th));
    gt_unwind_thread_init(&th, 0);
    void *x[MAXF];
    while (!atomic_load(&churn_stop)) {
        gt_unwind_forget();
        (void)gt_unwind(x, MAXF, &th); /* rules derived anew: the loader's list walked */
        int n = 0;
        gt_loader_iterate(count_objects, &n);
    }
    return NULL;
}

static void test_fork(const char *dir)
{
#if defined(__SANITIZE_THREAD__)
    /* (ThreadSanitizer's own fork handling: forks fail for memory, and children of a
     * multithreaded fork can hang in its runtime) */
    (void)dir;
    printf("     fork: not run under ThreadSanitizer\n");
    return;
#endif
    char b[4200];
    snprintf(b, sizeof(b), "%s/libunwb.so", dir);
    void *x[MAXF];
    (void)gt_unwind(x, MAXF, tls_th); /* some rules: the dlclose wrapper clears from now on */
    pthread_t t;
    atomic_store(&churn_stop, 0);
    if (pthread_create(&t, NULL, dl_churn, NULL) != 0) return;
    int hung = 0, forks = 0;
    for (int i = 0; i < 300; i++) {
        void *h = dlopen(b, RTLD_NOW | RTLD_LOCAL);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);
            if (h) dlclose(h);
            /* a walk from a thread state of its own: the child's table starts empty, so its
             * rules are derived again */
            struct gt_unw_thread th;
            memset(&th, 0, sizeof(th));
            gt_unwind_thread_init(&th, 0);
            uint64_t d0 = gt_unwind_stats(&th).derived;
            int n = gt_unwind(x, MAXF, &th);
            _exit(n > 2 && gt_unwind_stats(&th).derived > d0 ? 0 : 2);
        }
        if (h) dlclose(h);
        if (pid < 0) {
            if (i == 0 || errno != EAGAIN) printf("     fork: %s\n", strerror(errno));
            continue;
        }
        int st = 0;
        waitpid(pid, &st, 0);
        forks++;
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            printf("     fork: child status %#x%s\n", st,
                   WIFEXITED(st) && WEXITSTATUS(st) == 2 ? " (its walk failed or derived nothing)" : "");
            hung++;
        }
    }
    atomic_store(&churn_stop, 1);
    pthread_join(t, NULL);
    CHECK_U64("fork: children forked", (uint64_t)forks, 300);
    CHECK_U64("fork: children whose dlclose or walk hung or failed", (uint64_t)hung, 0);
}

/* glibc's own hold of its list lock cut by a fork (another thread inside dl_iterate_phdr, here
 * held there on purpose): the child can never walk the list, so its dlclose of a library still
 * referenced (which glibc does without that lock) must not walk it either, in the wrapper. */
static _Atomic int held_in_iterate, release_iterate;
static int hold_iterate(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size, (void)arg;
    atomic_store(&held_in_iterate, 1);
    while (!atomic_load(&release_iterate))
        sched_yield();
    return 1;
}
static void *iterate_and_hold(void *arg)
{
    (void)arg;
    dl_iterate_phdr(hold_iterate, NULL);
    return NULL;
}

static void test_fork_list_lock(const char *dir)
{
#if defined(__SANITIZE_THREAD__)
    (void)dir;
    printf("     fork (list lock): not run under ThreadSanitizer\n");
    return;
#endif
    char b[4200];
    snprintf(b, sizeof(b), "%s/libunwb.so", dir);
    void *x[MAXF];
    (void)gt_unwind(x, MAXF, tls_th); /* rules in the parent: its dlclose walks the list */
    void *h1 = dlopen(b, RTLD_NOW | RTLD_LOCAL), *h2 = dlopen(b, RTLD_NOW | RTLD_LOCAL);
    pthread_t t;
    atomic_store(&held_in_iterate, 0);
    atomic_store(&release_iterate, 0);
    if (!h1 || !h2 || pthread_create(&t, NULL, iterate_and_hold, NULL) != 0) {
        CHECK("fork (list lock): set up", 0);
        return;
    }
    while (!atomic_load(&held_in_iterate))
        sched_yield();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        _exit(dlclose(h2) == 0 ? 0 : 2); /* h1 still holds it: nothing unloads */
    }
    atomic_store(&release_iterate, 1);
    pthread_join(t, NULL);
    int st = 0;
    if (pid > 0) waitpid(pid, &st, 0);
    if (pid > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        printf("     fork (list lock): child status %#x\n", st);
    CHECK("fork (list lock): the child's dlclose returned", pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    dlclose(h2);
    dlclose(h1);
}

/* A stack the thread switched to, inside the range pthread_getattr_np gives the main thread but
 * outside its stack mapping: with RLIMIT_STACK unlimited the kernel lays memory out bottom-up and
 * glibc's range runs from the mapping below the stack (the brk heap) to the stack top, so the heap
 * grows into it. A coroutine stack at the top of the heap whose outermost frame returns to a real
 * function (a trampoline with CFI) must not make the walker read past the heap's end. Runs in a
 * re-executed child (the layout is chosen at exec). */
static void *fake_ra;
__attribute__((noinline)) static void grab_ra(void)
{
    fake_ra = __builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) static void outer_ra(void)
{
    volatile char pad[64];
    grab_ra();
    pad[0] = 1;
    (void)pad[0];
}

extern void unwt_call_on(uintptr_t sp, void (*fn)(void));
extern void unwt_back(void);
uintptr_t unwt_saved_sp;
__asm__(".text\n"
        ".globl unwt_call_on\n"
        "unwt_call_on:\n"
        "  push %rbp\n  push %rbx\n  push %r12\n  push %r13\n  push %r14\n  push %r15\n"
        "  sub $8, %rsp\n"
        "  movq %rsp, unwt_saved_sp(%rip)\n"
        "  movq %rdi, %rsp\n"
        "  jmp *%rsi\n"
        ".globl unwt_back\n"
        "unwt_back:\n"
        "  movq unwt_saved_sp(%rip), %rsp\n"
        "  add $8, %rsp\n"
        "  pop %r15\n  pop %r14\n  pop %r13\n  pop %r12\n  pop %rbx\n  pop %rbp\n"
        "  ret\n");

static struct gt_unw_thread heap_th;
static volatile int heap_got = -2;
__attribute__((noinline)) static void on_heap_stack(void)
{
    void *x[MAXF];
    heap_got = gt_unwind_fast(x, MAXF, &heap_th);
    unwt_back();
}

static int heap_stack_child(void)
{
    gt_unwind_configure(NULL);
    gt_unwind_thread_init(&heap_th, 0);
    outer_ra();
    uint32_t rule = rule_of((uintptr_t)fake_ra);
    if (rule & (R_NOT_SIMPLE | R_CFA_RBP)) {
        printf("     heap stack: the borrowed return address's rule %#x is not rsp-based\n", rule);
        return 77;
    }
    char *cur = sbrk(0);
    uintptr_t top = ((uintptr_t)cur + 65536 + 4095) & ~(uintptr_t)4095;
    if (cur == (void *)-1 || sbrk((intptr_t)(top - (uintptr_t)cur)) == (void *)-1) return 77;
    unsigned char v;
    if (mincore((void *)top, 4096, &v) == 0 || errno != ENOMEM) return 77; /* mapped above */
    if (top - 4096 < heap_th.lo || top >= heap_th.hi) {
        printf("     heap stack: the heap top %#lx is outside [%#lx, %#lx): other layout\n",
               (unsigned long)top, (unsigned long)heap_th.lo, (unsigned long)heap_th.hi);
        return 3; /* fixed: the main thread's range does not reach the heap */
    }
    *(void **)(top - 16) = fake_ra; /* the coroutine's outermost return address */
    unwt_call_on(top - 16, on_heap_stack);
    printf("     heap stack: gt_unwind_fast gave %d\n", heap_got);
    return heap_got == -1 ? 0 : 1;
}

static void test_heap_stack(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
        if (setrlimit(RLIMIT_STACK, &rl) != 0) _exit(77);
        execl("/proc/self/exe", "unit_unwind", "--heap-stack", (char *)NULL);
        _exit(77);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
        printf("     heap stack: not applicable here (hard RLIMIT_STACK, layout)\n");
        return;
    }
    if (WIFSIGNALED(st)) printf("     heap stack: the child died of signal %d\n", WTERMSIG(st));
    CHECK("heap stack under unlimited RLIMIT_STACK: declined or outside, no fault",
          WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3));
}

/* Malformed CFI: 50,000 images of one .eh_frame_hdr, one CIE and one FDE with random CFA
 * instructions, lengths, pointers and augmentations, each copied into a buffer of exactly its
 * size (ASan: no read outside it; UBSan: no overflow in the offsets). Every rule derived must be
 * one the walker can use safely: libunwind, the end, or a CFA offset of at least 8 with the saved
 * rbp between the CFA's return-address slot and the frame's sp. */
static uint64_t fz_s = 88172645463325252ull;
static unsigned fz_r(void)
{
    fz_s ^= fz_s << 13;
    fz_s ^= fz_s >> 7;
    fz_s ^= fz_s << 17;
    return (unsigned)fz_s;
}
static void fz_put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void test_cfi_fuzz(void)
{
    int bad = 0, simple = 0;
    uint8_t img[512];
    for (int it = 0; it < 50000; it++) {
        memset(img, 0, sizeof(img));
        img[0] = 1, img[1] = 0x1b, img[2] = 0x03, img[3] = 0x3b;
        fz_put32(img + 8, 1);
        size_t cie = 20, ci = 4, n;
        uint8_t *c = img + cie;
        c[ci++] = 0, c[ci++] = 0, c[ci++] = 0, c[ci++] = 0, c[ci++] = 1, c[ci++] = 'z';
        c[ci++] = 'R';
        if (fz_r() % 8 == 0) c[ci++] = 'S';
        c[ci++] = 0, c[ci++] = 1, c[ci++] = 0x78, c[ci++] = 16, c[ci++] = 1, c[ci++] = 0x1b;
        if (fz_r() % 4) /* mostly a valid start: CFA = rsp + 8, return address at CFA - 8 */
            c[ci++] = 0x0c, c[ci++] = 7, c[ci++] = 8, c[ci++] = 0x90, c[ci++] = 1;
        for (int i = 0, k = (int)(fz_r() % 4 ? 0 : fz_r() % 12); i < k; i++)
            c[ci++] = fz_r() % 3 == 0 ? (uint8_t)(0x0c + fz_r() % 8) : (uint8_t)fz_r();
        fz_put32(c, fz_r() % 16 ? (uint32_t)(ci - 4) : fz_r() % 600);
        n = cie + ci;
        size_t fde = n, fi = 8;
        uint8_t *f = img + fde;
        fz_put32(f + 4, fz_r() % 16 ? (uint32_t)(fde + 4 - cie) : fz_r());
        fi += 8; /* pc begin (filled in below), range */
        fz_put32(f + 12, 256);
        f[fi++] = 0;
        for (int i = 0, k = (int)(fz_r() % 20); i < k; i++) {
            unsigned x = fz_r() % 8;
            if (x < 2) /* def_cfa_offset, offset rbp: the usual rows */
                f[fi++] = x ? 0x0e : 0x86, f[fi++] = (uint8_t)(fz_r() % 0x90);
            else if (x == 2)
                f[fi++] = 0x0d, f[fi++] = (uint8_t)(fz_r() % 2 ? 6 : 7);
            else if (x < 6)
                f[fi++] = (uint8_t)(0x40 + fz_r() % 64);
            else
                f[fi++] = x == 6 ? (uint8_t)(fz_r() % 0x30) : (uint8_t)fz_r();
        }
        fz_put32(f, fz_r() % 16 ? (uint32_t)(fi - 4) : fz_r() % 600);
        n += fi;
        uint8_t *b = malloc(n);
        if (!b) break;
        memcpy(b, img, n);
        uintptr_t code = (uintptr_t)b + 65536; /* a pretend code range */
        fz_put32(b + fde + 8, (uint32_t)(code - (uintptr_t)(b + fde + 8)));
        fz_put32(b + 12, (uint32_t)(code - (uintptr_t)b));
        fz_put32(b + 16, (uint32_t)fde);
        uint32_t rule = rule_from_hdr(b, b, b + n, code + fz_r() % 300);
        free(b);
        if (rule == R_LIBUNWIND || rule == R_END) continue;
        simple++;
        uintptr_t off = R_CFA_OFF(rule);
        if ((rule & R_NOT_SIMPLE) || off < 8 || ((rule & R_RBP_SAVED) && R_RBP_OFF(rule) > off))
            bad++;
    }
    printf("     (cfi fuzz: %d simple rules)\n", simple);
    CHECK_U64("cfi fuzz: rules the walker could not use safely", (uint64_t)bad, 0);
}

int main(int argc, char **argv)
{
#if !defined(__x86_64__)
    printf("the fast walker is x86-64 only (elsewhere the shim uses libunwind)\n");
    return 77;
#endif
    if (argc > 1 && strcmp(argv[1], "--heap-stack") == 0) return heap_stack_child();
    char dir[4096]; /* libunwa.so and libunwb.so are built beside this program */
    ssize_t len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
    dir[len > 0 ? len : 0] = 0;
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    gt_unwind_configure(NULL);
    init_thread();
    test_chains();
    test_thread();
    test_depth_cap();
    test_signal();
    test_dlopen(dir);
    test_dlclose_keep(dir);
    test_log();
    test_log_off();
    test_log_older();
    test_cache();
    test_stop();
    test_fork(dir);
    test_fork_list_lock(dir);
    test_heap_stack();
    test_cfi_fuzz();
    struct gt_unw_stats st = gt_unwind_stats(tls_th);
    printf("     (main thread: %" PRIu64 " fast walks, %" PRIu64 " libunwind, %" PRIu64
           " rules derived, %" PRIu64 " clears)\n",
           st.fast, st.fallback, st.derived, st.clears);
    return check_done();
}
