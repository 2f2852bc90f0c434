/* The shim's one clock (clock.c): CLOCK_MONOTONIC nanoseconds for every record, host and GPU
 * (CUPTI's timestamp callback calls gt_now too), read from the CPU's time-stamp counter where it
 * is trustworthy and through clock_gettime otherwise.
 *
 * The counter is turned into CLOCK_MONOTONIC ns by a line, ns = base_ns + (tick - base_tick) *
 * mult / 2^32, that the flusher re-anchors against clock_gettime every flush period (continuous
 * at the anchor, its slope corrected so the remaining error is gone by the next anchor). Until
 * the first anchor (one flush period after start) and wherever the counter is unusable
 * (GPUTRACE_CLOCK=monotonic; not x86-64 with constant_tsc and nonstop_tsc and the kernel's
 * clocksource "tsc", nor aarch64; or it misbehaved at an anchor) gt_now is clock_gettime.
 * Error against CLOCK_MONOTONIC: see GT_CLOCK_MAX_ERR_NS. Each thread's readings never go back
 * (a per-thread floor); the flusher's watermark reads (gt_clock_watermark) are fenced and
 * GT_CLOCK_WM_MARGIN_NS early, which covers the unfenced reads of the hooks and the counters'
 * skew between CPUs. */
#ifndef GT_CLOCK_H
#define GT_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define GT_CLOCK_HAVE_COUNTER 1
#elif defined(__aarch64__)
#define GT_CLOCK_HAVE_COUNTER 1
#else
#define GT_CLOCK_HAVE_COUNTER 0
#endif

/* Documented bound of |gt_now() - CLOCK_MONOTONIC| while the counter is used, given a re-anchor
 * at least every 10 s (the flusher's period is GPUTRACE_FLUSH_MS, 100 ms by default). */
#define GT_CLOCK_MAX_ERR_NS 2000u
/* The watermark's time is read this much early. */
#define GT_CLOCK_WM_MARGIN_NS 20000u

struct gt_clock_line {
    _Atomic uint64_t counter; /* 1: the line below; 0: clock_gettime */
    _Atomic uint64_t base_tick;
    _Atomic uint64_t base_ns;
    _Atomic uint64_t mult; /* ns per tick, 32.32 fixed point */
};

/* Two lines; gen & 1 is the current one. The one writer (the flusher) fills the other line, then
 * publishes it by incrementing gen; a reader that sees gen change while it read retries. Readers
 * never wait for the writer. */
struct gt_clock {
    _Atomic uint64_t gen;
    struct gt_clock_line line[2];
} __attribute__((aligned(64)));

extern struct gt_clock gt_clk;
extern __thread uint64_t gt_tls_clock_last; /* this thread's latest reading (its floor) */

static inline uint64_t gt_clock_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The raw counter, unordered: may be read a few dozen cycles early or late. */
static inline uint64_t gt_clock_tick(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

static inline uint64_t gt_clock_apply(uint64_t tick, uint64_t base_tick, uint64_t base_ns,
                                      uint64_t mult)
{
    __int128 d = (__int128)(int64_t)(tick - base_tick) * (__int128)mult;
    return base_ns + (uint64_t)(int64_t)(d >> 32);
}

/* CLOCK_MONOTONIC ns, without the per-thread floor; *tick and *mult get the counter reading and
 * the line's ns per tick (32.32) it was converted with, *mult 0 where the clock is clock_gettime
 * (*tick then unset). Callers that drop them pay nothing for them once inlined. */
static inline uint64_t gt_clock_sample(uint64_t *tick, uint64_t *mult)
{
    for (;;) {
        uint64_t g = atomic_load_explicit(&gt_clk.gen, memory_order_acquire);
        const struct gt_clock_line *l = &gt_clk.line[g & 1];
        if (__builtin_expect(!atomic_load_explicit(&l->counter, memory_order_relaxed), 0)) {
            *mult = 0;
            return gt_clock_monotonic();
        }
        uint64_t bt = atomic_load_explicit(&l->base_tick, memory_order_relaxed);
        uint64_t bn = atomic_load_explicit(&l->base_ns, memory_order_relaxed);
        uint64_t m = atomic_load_explicit(&l->mult, memory_order_relaxed);
        uint64_t c = gt_clock_tick();
        atomic_thread_fence(memory_order_acquire);
        if (__builtin_expect(atomic_load_explicit(&gt_clk.gen, memory_order_relaxed) == g, 1)) {
            *tick = c;
            *mult = m;
            return gt_clock_apply(c, bt, bn, m);
        }
    }
}

/* CLOCK_MONOTONIC ns, without the per-thread floor. */
static inline uint64_t gt_clock_read(void)
{
    uint64_t tick, mult;
    return gt_clock_sample(&tick, &mult);
}

/* v, or this thread's previous reading if that is later; becomes the new floor. */
static inline uint64_t gt_clock_floor(uint64_t v)
{
    uint64_t last = gt_tls_clock_last;
    if (v < last) v = last; /* (a conditional move, one store: no branch on the hot path) */
    gt_tls_clock_last = v;
    return v;
}

/* The clock of every record: CLOCK_MONOTONIC ns, never below this thread's previous reading. */
static inline uint64_t gt_now(void)
{
    return gt_clock_floor(gt_clock_read());
}

/* A call's start and end (the launch hooks): gt_mark_start is gt_now and keeps the counter
 * reading and the line's slope; gt_mark_end turns the counter's advance since then into the end
 * time, the reading's time + ticks * mult, without reading the line again (one counter read, one
 * multiply).
 * The end is never below the start (the counter can differ a little between CPUs if the thread
 * migrated meanwhile: the duration is then 0) and becomes this thread's floor, as gt_now's would.
 * Over one call the line's slope changes by a few ppm at most at a re-anchor, well below
 * GT_CLOCK_MAX_ERR_NS for any duration the record keeps (dur_ns saturates at 4.3 s). Where the
 * clock is clock_gettime (mult 0) the end is read from it. */
struct gt_clock_mark {
    uint64_t ns;   /* the start: gt_now() */
    uint64_t raw;  /* the time of the counter reading below, before the thread's floor */
    uint64_t tick; /* the counter at the start */
    uint64_t mult; /* the line's ns per tick (32.32); 0: clock_gettime */
};

/* gt_mark_start's two steps (apart for tests/unit/clock.c): the reading, then the floor. A signal
 * handler that reads the clock on this thread between them (the host sampler's, hostsample.c)
 * raises the floor, so ns can be later than raw by the handler's time: the end is measured from
 * raw, whose time the counter reading has, not from ns (which counted that time twice: a launch
 * ended up to 210 us after the program's own clock_gettime after it, tests/cases/clock.sh
 * under ThreadSanitizer, 2026-12-07). */
static inline void gt_mark_take(struct gt_clock_mark *m)
{
    m->raw = gt_clock_sample(&m->tick, &m->mult);
}

static inline uint64_t gt_mark_floor(struct gt_clock_mark *m)
{
    return m->ns = gt_clock_floor(m->raw);
}

static inline uint64_t gt_mark_start(struct gt_clock_mark *m)
{
    gt_mark_take(m);
    return gt_mark_floor(m);
}

static inline uint64_t gt_mark_end(const struct gt_clock_mark *m)
{
    uint64_t v;
    if (__builtin_expect(m->mult != 0, 1)) {
        int64_t d = (int64_t)(gt_clock_tick() - m->tick);
        uint64_t dn = d > 0 ? (uint64_t)(((unsigned __int128)(uint64_t)d * m->mult) >> 32) : 0;
        v = m->raw + dn;
    } else {
        v = gt_clock_monotonic();
    }
    if (v < m->ns) v = m->ns;
    return gt_clock_floor(v);
}

/* GPUTRACE_CLOCK (NULL = unset): "monotonic" keeps clock_gettime; anything else is automatic.
 * From the constructor. */
void gt_clock_configure(const char *value);
/* At trace start: decide whether the counter is usable and take the first anchor. */
void gt_clock_start(void);
/* The flusher, before each watermark: re-anchor the line, then a fenced reading minus
 * GT_CLOCK_WM_MARGIN_NS (the watermark's time). */
uint64_t gt_clock_watermark(void);
/* What the clock does now, for logs and tests: "tsc", "cntvct" or "monotonic". */
const char *gt_clock_kind(void);
/* Largest |line - CLOCK_MONOTONIC| seen at an anchor, before correction (ns). */
uint64_t gt_clock_max_seen_err(void);

#endif
