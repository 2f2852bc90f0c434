/* GPU idle gaps: the sweep (interval union and gap extraction) against a brute-force model on
 * random intervals; every cause rule on a synthetic trace whose times are exact by construction;
 * totals per cause, histogram, windows, HTA's per-stream categories; the top-N selection. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/state.h"
#include "check.h"
#include "collect.h"
#include "jpath.h"
#include "tracebuild.h"

#define T0 2000000000ull /* trace start (CLOCK_MONOTONIC) */
#define US 1000ull

#define RNG_SEED 0x9E3779B97F4A7C15ull
#include "rng.h"

/* ---- the sweep against a bitmap ----------------------------------------------------------------
 */

#define SPAN 700

struct seen {
    uint64_t s[128], e[128];
    size_t before[128], after[128];
    size_t n;
    uint64_t bs[128], be[128];
    size_t nb;
};

static void on_gap(void *ctx, uint64_t s, uint64_t e, size_t before, size_t after)
{
    struct seen *x = ctx;
    x->s[x->n] = s, x->e[x->n] = e, x->before[x->n] = before, x->after[x->n] = after;
    x->n++;
}

static void on_busy(void *ctx, uint64_t s, uint64_t e)
{
    struct seen *x = ctx;
    x->bs[x->nb] = s, x->be[x->nb] = e;
    x->nb++;
}

static int by_start(const void *a, const void *b)
{
    const struct ga_gpu_act *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* One random set: the gaps and busy runs the sweep reports must be exactly the empty and covered
 * runs of the bitmap between the first start and the last end, with the right neighbours. */
static int sweep_round(void)
{
    static unsigned char cover[SPAN + 256];
    struct ga_gpu_act a[64];
    struct seen x = {.n = 0};
    size_t n = 1 + rng(63), ng = 0;
    uint64_t first = UINT64_MAX, last = 0, busy = 0;
    memset(cover, 0, sizeof(cover));
    for (size_t i = 0; i < n; i++) {
        int coarse = (int)rng(2);
        memset(&a[i], 0, sizeof(a[i]));
        a[i].start = coarse ? rng(SPAN / 25) * 25 : rng(SPAN);
        a[i].end = a[i].start + (coarse ? rng(4) * 25 : rng(rng(3) ? 30 : 150));
    }
    qsort(a, n, sizeof(*a), by_start);
    for (size_t i = 0; i < n; i++) {
        for (uint64_t t = a[i].start; t < a[i].end; t++)
            cover[t] = 1;
        if (a[i].start < first) first = a[i].start;
        if (a[i].end > last) last = a[i].end;
    }
    uint64_t got = ga_gaps_sweep(a, n, on_gap, on_busy, &x);
    for (uint64_t t = first; t < last;) { /* runs of the bitmap */
        uint64_t u = t;
        while (u < last && cover[u] == cover[t])
            u++;
        if (cover[t]) {
            busy += u - t;
        } else {
            /* a gap [t, u): one activity ends at t, the one after starts at u */
            if (ng >= x.n || x.s[ng] != t || x.e[ng] != u) return 0;
            if (a[x.before[ng]].end != t || a[x.after[ng]].start != u) return 0;
            /* the first activity at u that occupies time (or the very last one) */
            for (size_t k = x.after[ng]; k-- > 0 && a[k].start == u;)
                if (a[k].end > a[k].start) return 0;
            ng++;
        }
        t = u;
    }
    return ng == x.n && got == busy && x.nb == x.n + 1 && x.bs[0] == first &&
           x.be[x.nb - 1] == last;
}

static void test_sweep_random(void)
{
    int bad = 0;
    for (int round = 0; round < 3000; round++)
        if (!sweep_round() && bad++ < 3) printf("     round %d differs from the bitmap\n", round);
    CHECK("sweep: gaps and union of 3000 random interval sets match a bitmap", bad == 0);
}

static void test_buckets_windows(void)
{
    CHECK_STR("9999 ns", ga_gap_bucket_name(ga_gap_bucket(9999)), "<10us");
    CHECK_STR("10 us", ga_gap_bucket_name(ga_gap_bucket(10000)), "10-100us");
    CHECK_STR("99.999 us", ga_gap_bucket_name(ga_gap_bucket(99999)), "10-100us");
    CHECK_STR("100 us", ga_gap_bucket_name(ga_gap_bucket(100000)), "100us-1ms");
    CHECK_STR("1 ms", ga_gap_bucket_name(ga_gap_bucket(1000000)), "1-10ms");
    CHECK_STR("10 ms", ga_gap_bucket_name(ga_gap_bucket(10000000)), "10-100ms");
    CHECK_STR("100 ms", ga_gap_bucket_name(ga_gap_bucket(100000000)), ">=100ms");
    CHECK_STR("1 h", ga_gap_bucket_name(ga_gap_bucket(3600000000000ull)), ">=100ms");
    CHECK_U64("window of 50 us", ga_window_width(50000), 1000);
    CHECK_U64("window of 100 us", ga_window_width(100000), 1000);
    CHECK_U64("window of 100.001 us", ga_window_width(100001), 2000);
    CHECK_U64("window of 4.38 ms", ga_window_width(4380000), 50000);
    CHECK_U64("window of 1 s", ga_window_width(1000000000), 10000000);
    CHECK_U64("window of 3 s", ga_window_width(3000000000ull), 50000000);
}

/* ---- causes on a synthetic trace ------------------------------------------------------------ */

#define TID      7
#define TID2     8
#define ECORR(i) ((1ull << 40) | (i))

struct kernel_spec {
    uint64_t launch, start, end; /* us from T0 (start/end may carry extra ns below) */
};

/* Stream 1: kernel i launched at launch us (stack 100 + i), running [start, end). */
static const struct kernel_spec kernels[] = {
    {10, 20 * US, 100 * US},           {500, 510 * US, 650 * US},    {720, 730 * US, 800 * US},
    {810, 820 * US, 900 * US},         {1950, 1960 * US, 2000 * US}, {2010, 2020 * US, 2100 * US},
    {3000, 3010 * US, 3100 * US},      {3110, 3120 * US, 3200 * US}, {3150, 3500 * US, 3600 * US},
    {3610, 3620 * US, 3700 * US},      {3650, 3705 * US, 3800 * US}, {3801, 3806 * US, 3900 * US},
    {3850, 3900 * US + 20, 3950 * US},
};
#define NK (sizeof(kernels) / sizeof(kernels[0]))

static void host_call(struct tb *t, uint16_t type, unsigned api, uint64_t a, uint64_t b,
                      uint32_t stack)
{
    if (type == GT_REC_SPAN) {
        struct gt_rec_span r = {.ts_enter = T0 + a, .ts_exit = T0 + b, .stack = stack};
        tb_rec(t, GT_REC_SPAN, (uint16_t)api, &r, sizeof(r), NULL, 0);
    } else { /* an allocation: stamped after it returned, dur_ns inside */
        struct gt_rec_alloc r = {.ts = T0 + b,
                                 .addr = 0x7000000 + a,
                                 .size = 4096,
                                 .device = 0,
                                 .stack = stack,
                                 .dur_ns = (uint32_t)(b - a)};
        tb_rec(t, GT_REC_ALLOC, (uint16_t)api, &r, sizeof(r), NULL, 0);
    }
}

static void launch(struct tb *t, size_t i)
{
    struct gt_rec_launch r = {.ts = T0 + kernels[i].launch * US,
                              .func = 0xf0,
                              .stream = 0x51,
                              .corr = ECORR(i + 1),
                              .dur_ns = 100,
                              .stack = (uint32_t)(100 + i),
                              .grid = {1, 1, 1},
                              .block = {32, 1, 1}};
    tb_rec(t, GT_REC_LAUNCH, GT_API_cuLaunchKernel, &r, sizeof(r), NULL, 0);
}

/* Host records of thread 7 in time order, interleaved with the launches. */
static void host_thread(struct tb *t)
{
    tb_begin(t, GT_CHUNK_HOST, TID);
    tb_cupti(t, 0, GT_CUPTI_ON, 0, 0, "/sim/libcupti.so.13", "");
    for (size_t i = 0; i < NK; i++) {
        uint64_t at = kernels[i].launch;
        if (at == 720)
            host_call(t, GT_REC_SPAN, GT_API_cuStreamSynchronize, 610 * US, 700 * US, 200);
        if (at == 1950) host_call(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 850 * US, 1900 * US, 300);
        if (at == 3000) host_call(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 2110 * US, 2150 * US, 301);
        launch(t, i);
    }
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, TID2); /* another thread, blocked while unlinked copies wait */
    host_call(t, GT_REC_SPAN, GT_API_cuCtxSynchronize, 4050 * US, 4300 * US, 400);
    tb_end(t);
}

static void gpu_records(struct tb *t)
{
    tb_begin(t, GT_CHUNK_GPU, 0);
    for (size_t i = NK; i-- > 0;) { /* out of order, as CUPTI delivers */
        tb_gpu_kernel(t, T0 + kernels[i].start, T0 + kernels[i].end, (uint32_t)(500 + i), 0, 1, 0,
                      0);
        tb_gpu_extcorr(t, ECORR(i + 1), (uint32_t)(500 + i));
    }
    tb_gpu_memcpy(t, 1, T0 + 4300 * US, T0 + 4400 * US, 1 << 20, 0, 2);
    tb_gpu_memcpy(t, 1, T0 + 4000 * US, T0 + 4100 * US, 1 << 20, 0, 2);
    tb_end(t);
}

static void run(struct ga_report *r, size_t top, void (*build)(struct tb *))
{
    struct tb t;
    char path[256];
    tb_init(&t, 1, T0);
    build(&t);
    tmp_path(path, "gaps");
    tb_write(&t, path, (size_t)-1);
    ga_report_init(r, path);
    r->gaps.top = top;
    r->gpu.keep_acts = 1; /* check_windows scans every activity */
    if (ga_report_run(r) != 0) printf("     read error: %s\n", r->read.error);
    unlink(path);
    tb_free_all(&t);
}

static void build_causes(struct tb *t)
{
    host_thread(t);
    gpu_records(t);
}

struct want_gap {
    uint64_t start, dur; /* ns from T0 */
    unsigned cause;
    uint32_t stack;
    uint64_t call_ns;
};

/* By construction (see kernels[] and host_thread): */
static const struct want_gap want[] = {
    {100 * US, 410 * US, GA_CAUSE_HOST_BUSY, 101, 0},      /* launched 400 us after the gap began */
    {650 * US, 80 * US, GA_CAUSE_SYNC, 200, 50 * US},      /* in the sync when the device drained */
    {800 * US, 20 * US, GA_CAUSE_HOST_BUSY, 103, 0},       /* late by 10 us, no call between */
    {900 * US, 1060 * US, GA_CAUSE_ALLOC, 300, 1000 * US}, /* 1000 of the 1050 us in the alloc */
    {2000 * US, 20 * US, GA_CAUSE_HOST_BUSY, 105, 0},
    {2100 * US, 910 * US, GA_CAUSE_HOST_BUSY, 106, 40 * US}, /* 40 us alloc, 860 us host */
    {3100 * US, 20 * US, GA_CAUSE_HOST_BUSY, 107, 0},
    {3200 * US, 300 * US, GA_CAUSE_DEPENDENCY, 108, 0}, /* queued at 3150, started at 3500 */
    {3600 * US, 20 * US, GA_CAUSE_HOST_BUSY, 109, 0},
    {3700 * US, 5 * US, GA_CAUSE_LAUNCH_LATENCY, 110, 0}, /* queued before, 5 us */
    {3800 * US, 6 * US, GA_CAUSE_LAUNCH_LATENCY, 111, 0}, /* launched late, but 6 us */
    {3900 * US, 20, GA_CAUSE_LAUNCH_LATENCY, 112, 0},     /* queued, 20 ns */
    {3950 * US, 50 * US, GA_CAUSE_UNKNOWN, 0, 0},         /* a copy, no launch, no call */
    {4100 * US, 200 * US, GA_CAUSE_SYNC, 400, 200 * US},  /* a copy; thread 8 in a sync */
};
#define NW (sizeof(want) / sizeof(want[0]))

static const struct ga_gap *gap_at(const struct ga_gaps_device *d, uint64_t start)
{
    for (size_t i = 0; i < d->n_kept; i++)
        if (d->gaps[i].start == T0 + start) return &d->gaps[i];
    return NULL;
}

struct want_phases {
    uint64_t start;            /* us from T0 */
    uint64_t ns[GA_CAUSES];    /* by cause */
    uint32_t stack[GA_CAUSES]; /* of the phases that are not 0 */
};

/* host busy, synchronize, allocation, dependency, launch latency, unknown */
static const struct want_phases want_ph[] = {
    /* in the sync from 650 to 700 us, launched at 720, started at 730 */
    {650, {20 * US, 50 * US, 0, 0, 10 * US, 0}, {102, 200, 0, 0, 102, 0}},
    /* a 40 us allocation inside 900 us of host time, launched at 3000, started at 3010 */
    {2100, {860 * US, 0, 40 * US, 0, 10 * US, 0}, {106, 0, 301, 0, 106, 0}},
    /* launched late but 6 us in all: the host's 1 us counts as launch latency */
    {3800, {0, 0, 0, 0, 6 * US, 0}, {0, 0, 0, 0, 111, 0}},
    {3200, {0, 0, 0, 300 * US, 0, 0}, {0, 0, 0, 108, 0, 0}}, /* queued: one phase */
    {4100, {0, 200 * US, 0, 0, 0, 0}, {0, 400, 0, 0, 0, 0}}, /* no launch: thread 8's sync */
};

/* Each gap's phases add up to its length, and match the construction where it is spelt out. */
static void check_phases(const struct ga_gaps_device *d)
{
    int bad = 0;
    for (size_t i = 0; i < d->n_kept; i++) {
        uint64_t sum = 0;
        for (unsigned k = 0; k < GA_CAUSES; k++)
            sum += d->gaps[i].phase_ns[k];
        bad += sum != d->gaps[i].dur;
    }
    CHECK("phases: each gap's phases add up to its length", bad == 0 && d->n_kept == NW);
    bad = 0;
    for (size_t i = 0; i < sizeof(want_ph) / sizeof(want_ph[0]); i++) {
        const struct ga_gap *g = gap_at(d, want_ph[i].start * US);
        for (unsigned k = 0; g && k < GA_CAUSES; k++)
            if (g->phase_ns[k] != want_ph[i].ns[k] ||
                (g->phase_ns[k] && g->phase_stack[k] != want_ph[i].stack[k])) {
                printf("     gap at %" PRIu64 " us: %s %" PRIu64 " ns stack %u\n", want_ph[i].start,
                       ga_cause_name(k), g->phase_ns[k], g->phase_stack[k]);
                bad++;
            }
        bad += !g;
    }
    CHECK("phases: time and stack of each phase as constructed", bad == 0);
}

static void check_gaps(const struct ga_report *r, const struct ga_gaps_device *d)
{
    int bad = 0;
    for (size_t i = 0; i < NW; i++) {
        const struct ga_gap *g = gap_at(d, want[i].start);
        if (g && g->dur == want[i].dur && g->cause == want[i].cause && g->stack == want[i].stack &&
            g->call_ns == want[i].call_ns)
            continue;
        bad++;
        printf("     gap at %" PRIu64 " us: ", (uint64_t)(want[i].start / US));
        if (!g)
            printf("missing\n");
        else
            printf("dur %" PRIu64 " cause %s stack %u call_ns %" PRIu64 "\n", g->dur,
                   ga_cause_name(g->cause), g->stack, g->call_ns);
    }
    CHECK("causes: 14 gaps, each with its constructed cause, stack and blocked time", bad == 0);
    const struct ga_gap *g = gap_at(d, 100 * US);
    CHECK("host busy: the launch's previous call ended 489.9 us before it",
          g && g->launch && g->launch->ts - g->launch->prev_end == 489900 &&
              g->launch->prev_api == GT_API_cuLaunchKernel);
    g = gap_at(d, 650 * US);
    CHECK("synchronize: the call is thread 7's cuStreamSynchronize",
          g && g->call.tid == TID && g->call.api == GT_API_cuStreamSynchronize);
    g = gap_at(d, 4100 * US);
    CHECK("unlinked copy: thread 8's cuCtxSynchronize, no launch",
          g && !g->launch && g->call.tid == TID2 && g->call.api == GT_API_cuCtxSynchronize);
    check_phases(d);
    g = gap_at(d, 3200 * US);
    CHECK("before/after: dependency gap between kernels 8 and 9",
          g && g->before.end == T0 + 3200 * US && g->after.start == T0 + 3500 * US);
}

static void check_totals(const struct ga_gaps_device *d)
{
    /* phase time (docs/ANALYSES.md, "Phases of a gap"): host busy 400 + 20 + 10 + 50 + 10 + 860
     * + 10 + 10; synchronize 50 + 200; allocation 1000 + 40; launch latency 10 us from the launch
     * to the start of each of the 8 gaps launched late and 10 us or more long, 5 + 6 us + 20 ns */
    static const uint64_t cause_ns[GA_CAUSES] = {1370 * US, 250 * US,     1040 * US,
                                                 300 * US,  91 * US + 20, 50 * US};
    static const uint64_t cause_n[GA_CAUSES] = {6, 2, 1, 1, 3, 1};
    static const uint64_t bucket_n[GA_GAP_BUCKETS] = {3, 6, 4, 1, 0, 0};
    int bad = 0;
    for (unsigned c = 0; c < GA_CAUSES; c++)
        bad += d->cause_ns[c] != cause_ns[c] || d->cause_n[c] != cause_n[c];
    CHECK("idle by cause: time and gaps per cause", bad == 0);
    uint64_t site_ns = 0, site_gaps = 0;
    for (size_t i = 0; i < d->n_sites; i++)
        site_ns += d->sites[i].idle_ns, site_gaps += d->sites[i].gaps;
    CHECK("idle by site: phase time adds up to the idle time, each gap counted once",
          site_ns == d->idle_ns && site_gaps == NW);
    CHECK_U64("gaps", d->n_gaps, NW);
    CHECK_U64("idle", d->idle_ns, 3101 * US + 20);
    CHECK_U64("busy", d->busy_ns, (4400 - 20) * US - (3101 * US + 20));
    bad = 0;
    for (unsigned b = 0; b < GA_GAP_BUCKETS; b++)
        bad += d->bucket_n[b] != bucket_n[b];
    CHECK("histogram: 3 under 10 us, 6 to 100 us, 4 to 1 ms, 1 to 10 ms", bad == 0);
    CHECK_U64("histogram 10-100us time", d->bucket_ns[1], (80 + 4 * 20 + 50) * US);
}

/* Busy time per window by brute force over the known activities (merged first). */
static void check_windows(const struct ga_report *r, const struct ga_gaps_device *d)
{
    uint64_t first = T0 + 20 * US, last = T0 + 4400 * US, sum = 0, low = 0;
    int bad = 0;
    CHECK_U64("windows: width for a 4.38 ms span", d->window_ns, 50 * US);
    CHECK_U64("windows: count", d->n_windows, 88);
    for (size_t w = 0; w < d->n_windows; w++) {
        uint64_t ws = first + w * 50 * US, we = ws + 50 * US < last ? ws + 50 * US : last;
        uint64_t busy = 0;
        for (uint64_t t = ws; t < we; t += 10) { /* every time here is a multiple of 10 ns */
            int on = 0;
            for (size_t i = 0; i < r->gpu.n_acts && !on; i++)
                on = r->gpu.acts[i].start <= t && t < r->gpu.acts[i].end;
            busy += on ? 10 : 0;
        }
        bad +=
            d->windows[w].start != ws || d->windows[w].len != we - ws || d->windows[w].busy != busy;
        low += busy * 2 < we - ws;
        sum += d->windows[w].busy;
    }
    CHECK("windows: start, length and busy time of each agree with a 10 ns scan", bad == 0);
    CHECK_U64("windows: busy adds up", sum, d->busy_ns);
    CHECK_U64("windows: flagged under 50%", d->low_windows, low);
}

static void check_hta(const struct ga_gaps_device *d)
{
    const struct ga_hta_stream *s1 = NULL, *s2 = NULL;
    for (size_t i = 0; i < d->n_hta; i++) {
        if (d->hta[i].stream == 1) s1 = &d->hta[i];
        if (d->hta[i].stream == 2) s2 = &d->hta[i];
    }
    CHECK("HTA: streams 1 and 2", s1 && s2 && d->n_hta == 2);
    if (!s1 || !s2) return;
    CHECK_U64("HTA stream 1 host wait", s1->host_wait_ns, 2546 * US);
    CHECK_U64("HTA stream 1 host wait count", s1->host_wait_n, 9);
    CHECK_U64("HTA stream 1 kernel wait (20 ns < 30 ns)", s1->kernel_wait_ns, 20);
    CHECK_U64("HTA stream 1 other", s1->other_ns, 305 * US);
    CHECK_U64("HTA stream 2 other (copies have no launch)", s2->other_ns, 200 * US);
    CHECK_U64("HTA stream 2 host wait", s2->host_wait_ns, 0);
}

#define JU64(o, ...) json_object_get_uint64(JGET(o, __VA_ARGS__))
#define JSTR(o, ...) json_object_get_string(JGET(o, __VA_ARGS__))

/* The JSON of the longest gap (the allocation stall) and the totals. */
static void check_json(const struct ga_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ga_render_json(&r->m, f);
    fclose(f);
    json_object *root = json_tokener_parse(buf), *d = JGET(root, "timeline", "devices", "#0");
    CHECK_STR("json: longest gap's cause", JSTR(d, "gaps", "#0", "cause"), "allocation");
    CHECK_U64("json: its start", JU64(d, "gaps", "#0", "start_ns"), 900 * US);
    CHECK_U64("json: its length", JU64(d, "gaps", "#0", "duration_ns"), 1060 * US);
    CHECK_STR("json: its host call", JSTR(d, "gaps", "#0", "host_call", "api"), "cuMemAlloc_v2");
    CHECK_U64("json: the call's time in the window",
              JU64(d, "gaps", "#0", "host_call", "overlap_ns"), 1000 * US);
    CHECK_U64("json: the launch came 50 us after the allocation returned",
              JU64(d, "gaps", "#0", "launch", "since_previous_call_ns"), 50 * US);
    CHECK_STR("json: the previous call", JSTR(d, "gaps", "#0", "launch", "previous_call"),
              "cuMemAlloc_v2");
    CHECK_STR("json: the kernel after it", JSTR(d, "gaps", "#0", "after", "kind"), "kernel");
    CHECK_U64("json: synchronize idle", JU64(d, "idle_by_cause", "synchronize", "idle_ns"),
              250 * US);
    CHECK_U64("json: phases of the longest gap: allocation",
              JU64(d, "gaps", "#0", "phases", "allocation"), 1000 * US);
    CHECK_U64("json: phases of the longest gap: host busy",
              JU64(d, "gaps", "#0", "phases", "host_busy"), 50 * US);
    CHECK_U64("json: gap count", JU64(d, "gap_count"), NW);
    CHECK_U64("json: none omitted (--all-gaps)", JU64(d, "gaps_omitted"), 0);
    CHECK_U64("json: histogram 1-10ms", JU64(d, "gap_histogram", "#3", "count"), 1);
    CHECK_U64("json: HTA kernel wait threshold",
              JU64(root, "timeline", "hta", "kernel_wait_threshold_ns"), 30);
    CHECK_U64("json: windows of 50 us", JU64(root, "timeline", "windows", "#0", "window_ns"),
              50 * US);
    json_object_put(root);
    free(buf);
}

static void test_causes(void)
{
    struct ga_report r;
    run(&r, 0, build_causes);
    const struct ga_gaps_device *d = ga_gaps_device_of(&r.gaps, 0);
    CHECK("one device", d && r.gaps.n_devices == 1);
    if (d) {
        CHECK_U64("all gaps kept", d->n_kept, NW);
        check_gaps(&r, d);
        check_totals(d);
        check_windows(&r, d);
        check_hta(d);
        check_json(&r);
    }
    CHECK_U64("host calls kept (2 syncs, 2 allocs)", r.gaps.n_calls, 4);
    ga_report_free(&r);
}

/* ---- top N ------------------------------------------------------------------------------------
 */

/* 52 gaps: lengths 1..50 us and twice 40.5 us, in shuffled order, between unlinked kernels. */
static uint64_t many_len[52];

static void build_many(struct tb *t)
{
    uint64_t at = 100 * US;
    for (int i = 0; i < 50; i++)
        many_len[i] = (uint64_t)(i + 1) * US;
    many_len[50] = many_len[51] = 40 * US + 500;
    for (int i = 51; i > 0; i--) {
        int j = (int)rng((uint64_t)i + 1);
        uint64_t x = many_len[i];
        many_len[i] = many_len[j];
        many_len[j] = x;
    }
    tb_begin(t, GT_CHUNK_HOST, TID);
    tb_cupti(t, 0, GT_CUPTI_ON, 0, 0, "/sim/libcupti.so.13", "");
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    for (int i = 0; i <= 52; i++) {
        tb_gpu_kernel(t, T0 + at, T0 + at + 5 * US, (uint32_t)(900 + i), 0, 3, 0, 0);
        at += 5 * US + (i < 52 ? many_len[i] : 0);
    }
    tb_end(t);
}

static int desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x > y ? -1 : x < y;
}

static void test_top(void)
{
    struct ga_report r;
    uint64_t sorted[52];
    run(&r, GA_GAPS_TOP, build_many);
    memcpy(sorted, many_len, sizeof(sorted));
    qsort(sorted, 52, sizeof(*sorted), desc);
    const struct ga_gaps_device *d = ga_gaps_device_of(&r.gaps, 0);
    int ok = d && d->n_gaps == 52 && d->n_kept == GA_GAPS_TOP;
    for (size_t i = 0; ok && i < GA_GAPS_TOP; i++)
        ok = d->gaps[i].dur == sorted[i];
    CHECK("top 20: the 20 longest of 52, longest first", ok);
    CHECK("top 20: the two of equal length, earlier first",
          d && d->gaps[10].dur == 40 * US + 500 && d->gaps[11].dur == 40 * US + 500 &&
              d->gaps[10].start < d->gaps[11].start);
    CHECK_U64("unlinked work, nothing blocked, 10 us or more: unknown",
              d ? d->cause_n[GA_CAUSE_UNKNOWN] : 0, 43);
    CHECK_U64("under 10 us: launch latency", d ? d->cause_n[GA_CAUSE_LAUNCH_LATENCY] : 0, 9);
    ga_report_free(&r);
    run(&r, 0, build_many);
    d = ga_gaps_device_of(&r.gaps, 0);
    CHECK("all gaps: 52 kept, longest first, the last is 1 us",
          d && d->n_kept == 52 && d->gaps[0].dur == 50 * US && d->gaps[51].dur == 1 * US);
    ga_report_free(&r);
}

/* CUPTI off: no GPU records follow, so no host call is kept either. */
static void build_off(struct tb *t)
{
    tb_begin(t, GT_CHUNK_HOST, TID);
    tb_cupti(t, 0, GT_CUPTI_OFF_BY_USER, 0, 0, "", "");
    host_call(t, GT_REC_SPAN, GT_API_cuCtxSynchronize, 10 * US, 20 * US, 0);
    host_call(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 30 * US, 40 * US, 0);
    tb_end(t);
}

static void test_off(void)
{
    struct ga_report r;
    run(&r, GA_GAPS_TOP, build_off);
    CHECK("CUPTI off: no host calls kept, no devices", r.gaps.n_calls == 0 && !r.gaps.n_devices);
    ga_report_free(&r);
}

int main(void)
{
    test_sweep_random();
    test_buckets_windows();
    test_causes();
    test_top();
    test_off();
    return check_done();
}
