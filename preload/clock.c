/* The shim's clock: CLOCK_MONOTONIC ns from the CPU's counter (see clock.h for the scheme).
 *
 * Anchors. A pair (tick, CLOCK_MONOTONIC) is the narrowest of 9 fenced counter reads around a
 * clock_gettime; one wider than 500 ns (preempted inside) is not used. The first pair is taken at
 * trace start. The flusher anchors before each watermark: once 50 ms have passed since the first
 * pair, the rate over that time gives the first line, through the new pair, and gt_now switches
 * from clock_gettime to it. At each later anchor the line is moved on: it stays continuous at the
 * new pair's tick (no step, so no reading goes back), its slope is the rate since a base pair 1 to
 * 2 s old (since start in the first seconds), corrected to remove the error seen at this anchor
 * (CLOCK_MONOTONIC - line) over the next max(100 ms, interval), at most 500 ppm. A line more than
 * 1 us behind steps forward at once. If the counter goes back, its rate moves by more than 1/64
 * from the first one measured, or the error exceeds 1 ms, gt_now goes back to clock_gettime for
 * good (each thread's floor keeps its readings from going back at the switch).
 *
 * Error. Between anchors the line's error is its error at the last anchor (being corrected) plus
 * the rate's error times the time since that anchor. A pair is off by at most half its width
 * (250 ns), so the first rate, over 50 ms or more, is right to 1e-5 and later ones to 5e-7:
 * with a flush period up to 100 ms (the default) the error stays under GT_CLOCK_MAX_ERR_NS (2 us)
 * while CLOCK_MONOTONIC runs at a steady rate (when NTP changes its rate, add that change times
 * the time since the last anchor). Measured on a 2-core VM (tests/unit/clock.c, readers on three
 * threads, anchors every 5 ms): within 20 ns of clock_gettime, never behind another thread. */
#include "clock.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

void gt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* log.c */

struct gt_clock gt_clk; /* gen 0, line 0: counter 0 = clock_gettime until the first anchor */
__thread uint64_t gt_tls_clock_last __attribute__((tls_model("initial-exec")));

#define FIRST_LINE_NS 50000000u   /* the first rate is measured over at least this long */
#define RATE_SPAN_NS  1000000000u /* later rates over 1 to 2 s (or since start) */
#define MAX_PAIR_NS   500u        /* a wider pair (preempted inside) is not used */
#define STEP_NS       1000u       /* a line further behind steps forward */
#define HORIZON_NS    100000000u  /* the error is removed over at least this long */
#define MAX_ADJ_PPB   500000      /* slope correction at most 500 ppm */
#define FAIL_ERR_NS   1000000u    /* an error this large: the counter is not to be trusted */

static struct {
    int forced_monotonic;        /* GPUTRACE_CLOCK=monotonic */
    int usable;                  /* the counter passed the checks at start */
    int active;                  /* the line is in use */
    int failed;                  /* given up: clock_gettime for good */
    uint64_t prev_tick, prev_ns; /* last anchor pair */
    uint64_t ra_tick, ra_ns;     /* rate baseline: the oldest pair the rate is measured from */
    uint64_t rb_tick, rb_ns;     /* the next baseline, once ra is RATE_SPAN_NS old */
    uint64_t rate0;              /* the first rate measured (ns per tick, 32.32) */
    uint64_t max_err;            /* largest |error| seen at an anchor */
    pthread_mutex_t mu;          /* anchors: the flusher, and the exit flush */
} C = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* Where the counter's trustworthiness is read (tests point them elsewhere). */
static const char *cpuinfo_path = "/proc/cpuinfo";
static const char *clocksource_path =
    "/sys/devices/system/clocksource/clocksource0/current_clocksource";

void gt_clock_configure(const char *value)
{
    C.forced_monotonic = value && strcmp(value, "monotonic") == 0;
}

/* The counter read in program order: after everything before it, before everything after. */
static uint64_t tick_ordered(void)
{
#if defined(__x86_64__)
    _mm_mfence();
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("dsb sy; isb; mrs %0, cntvct_el0; isb" : "=r"(v)::"memory");
    return v;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
/* Reads up to n-1 bytes of a small file (procfs, sysfs), NUL-terminated. */
static size_t read_text(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    if (fd < 0) return 0;
    while (got + 1 < n) {
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = 0;
    return got;
}

static int has_flag(const char *flags, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = flags; (p = strstr(p, name)) != NULL; p += n)
        if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == 0))
            return 1;
    return 0;
}
#endif

/* Whether the counter may stand in for CLOCK_MONOTONIC on this machine. x86-64: the TSC runs at
 * a constant rate in every P- and C-state (constant_tsc, nonstop_tsc) and the kernel itself keeps
 * time with it (clocksource "tsc": it checked that the CPUs' TSCs agree). aarch64: the generic
 * timer's virtual counter is constant-rate and common to all CPUs by architecture. */
static int counter_usable(void)
{
#if defined(__x86_64__)
    static char buf[16384];
    char src[64];
    if (read_text(clocksource_path, src, sizeof(src)) == 0 || strcmp(src, "tsc\n") != 0) return 0;
    if (read_text(cpuinfo_path, buf, sizeof(buf)) == 0) return 0;
    char *flags = strstr(buf, "\nflags");
    if (!flags) return 0;
    char *end = strchr(flags + 1, '\n');
    if (end) *end = 0;
    return has_flag(flags, "constant_tsc") && has_flag(flags, "nonstop_tsc");
#elif defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

/* The narrowest of a few (tick, CLOCK_MONOTONIC) pairs; its width in ticks, or -1 if the counter
 * went back. */
static int64_t take_pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 9; i++) {
        uint64_t a = tick_ordered();
        uint64_t m = gt_clock_monotonic();
        uint64_t b = tick_ordered();
        if (b < a) return -1;
        if (b - a < best) best = b - a, *tick = a + (b - a) / 2, *ns = m;
    }
    return (int64_t)best;
}

/* Make (tick, ns, mult) the current line (counter 0: clock_gettime). One writer: C.mu. */
static void publish(int counter, uint64_t tick, uint64_t ns, uint64_t mult)
{
    uint64_t n = atomic_load_explicit(&gt_clk.gen, memory_order_relaxed) + 1;
    struct gt_clock_line *l = &gt_clk.line[n & 1];
    /* A reader that sees any of the stores below then sees gen moved past the value it read. */
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&l->base_tick, tick, memory_order_relaxed);
    atomic_store_explicit(&l->base_ns, ns, memory_order_relaxed);
    atomic_store_explicit(&l->mult, mult, memory_order_relaxed);
    atomic_store_explicit(&l->counter, (uint64_t)counter, memory_order_relaxed);
    atomic_store_explicit(&gt_clk.gen, n, memory_order_release);
}

static void give_up(const char *why)
{
    gt_log("gputrace: clock: the counter %s; clock_gettime from now on\n", why);
    C.failed = 1;
    C.active = 0;
    publish(0, 0, 0, 0);
}

/* The pair's width in ns at the rate measured so far (at the nominal 1 ns per tick before). */
static uint64_t width_ns(int64_t w)
{
    uint64_t rate = C.rate0 ? C.rate0 : 1ull << 32;
    return (uint64_t)(((unsigned __int128)(uint64_t)w * rate) >> 32);
}

void gt_clock_start(void)
{
    pthread_mutex_lock(&C.mu);
    C.usable = !C.forced_monotonic && counter_usable();
    for (int i = 0; C.usable && i < 8; i++) { /* a narrow first pair: the first rate's base */
        int64_t w = take_pair(&C.prev_tick, &C.prev_ns);
        if (w < 0) C.usable = 0;
        if (w >= 0 && (width_ns(w) <= MAX_PAIR_NS || i == 7)) break;
    }
    gt_log("gputrace: clock: %s\n", C.usable ? "counter usable: from the first anchor on"
                                    : C.forced_monotonic
                                        ? "clock_gettime (GPUTRACE_CLOCK=monotonic)"
                                        : "clock_gettime (no usable counter)");
    C.ra_tick = C.rb_tick = C.prev_tick;
    C.ra_ns = C.rb_ns = C.prev_ns;
    pthread_mutex_unlock(&C.mu);
}

static void anchor_locked(void)
{
    uint64_t tk = 0, mn = 0;
    if (!C.usable || C.failed) return;
    int64_t w = take_pair(&tk, &mn);
    if (w < 0 || tk <= C.prev_tick || mn < C.prev_ns) {
        give_up("went back");
        return;
    }
    if (width_ns(w) > MAX_PAIR_NS) return; /* preempted inside the pair: next round */
    uint64_t dn = mn - C.ra_ns;
    if (!C.active && dn < FIRST_LINE_NS) return; /* too short a base for the first rate */
    uint64_t rate = (uint64_t)(((unsigned __int128)dn << 32) / (tk - C.ra_tick));
    if (!C.rate0) C.rate0 = rate;
    uint64_t dev = rate > C.rate0 ? rate - C.rate0 : C.rate0 - rate;
    if (rate == 0 || dev > C.rate0 / 64) {
        give_up("changed its rate");
        return;
    }
    if (!C.active) { /* the first line: from clock_gettime to the counter */
        publish(1, tk, mn, rate);
        C.active = 1;
        gt_log("gputrace: clock: %s from now on, %llu kHz\n", gt_clock_kind(),
               (unsigned long long)(((unsigned __int128)1000000ull << 32) / rate));
    } else {
        const struct gt_clock_line *l = &gt_clk.line[atomic_load(&gt_clk.gen) & 1];
        uint64_t cur = gt_clock_apply(tk, atomic_load(&l->base_tick), atomic_load(&l->base_ns),
                                      atomic_load(&l->mult));
        int64_t err = (int64_t)(mn - cur); /* > 0: the line is behind */
        uint64_t aerr = err < 0 ? (uint64_t)-err : (uint64_t)err;
        if (aerr > C.max_err) C.max_err = aerr;
        if (aerr > FAIL_ERR_NS) {
            give_up("strayed over 1 ms from CLOCK_MONOTONIC");
            return;
        }
        uint64_t base = cur;
        if (err > (int64_t)STEP_NS) base = mn, err = 0;
        uint64_t since = mn - C.prev_ns;
        int64_t adj = err * 1000000000 / (int64_t)(since > HORIZON_NS ? since : HORIZON_NS);
        if (adj > MAX_ADJ_PPB) adj = MAX_ADJ_PPB;
        if (adj < -MAX_ADJ_PPB) adj = -MAX_ADJ_PPB;
        uint64_t mult = (uint64_t)((__int128)rate + (__int128)rate * adj / 1000000000);
        publish(1, tk, base, mult);
    }
    C.prev_tick = tk;
    C.prev_ns = mn;
    if (mn - C.rb_ns >= RATE_SPAN_NS) { /* the base moves on: rates over the last 1-2 s */
        C.ra_tick = C.rb_tick, C.ra_ns = C.rb_ns;
        C.rb_tick = tk, C.rb_ns = mn;
    }
}

uint64_t gt_clock_watermark(void)
{
    if (pthread_mutex_trylock(&C.mu) == 0) { /* else the other flush anchors */
        anchor_locked();
        pthread_mutex_unlock(&C.mu);
    }
    atomic_thread_fence(memory_order_seq_cst);
#if defined(__x86_64__)
    _mm_lfence();
#endif
    uint64_t v = gt_now();
#if defined(__x86_64__)
    _mm_lfence();
#endif
    atomic_thread_fence(memory_order_seq_cst);
    return v > GT_CLOCK_WM_MARGIN_NS ? v - GT_CLOCK_WM_MARGIN_NS : 0;
}

const char *gt_clock_kind(void)
{
    const struct gt_clock_line *l = &gt_clk.line[atomic_load(&gt_clk.gen) & 1];
    if (!atomic_load(&l->counter)) return "monotonic";
#if defined(__aarch64__)
    return "cntvct";
#else
    return "tsc";
#endif
}

uint64_t gt_clock_max_seen_err(void)
{
    pthread_mutex_lock(&C.mu);
    uint64_t v = C.max_err;
    pthread_mutex_unlock(&C.mu);
    return v;
}
