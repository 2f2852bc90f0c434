/* GPU idle gaps and their causes (see gaps.h; the rules are docs/ANALYSES.md's). */
#include "gaps.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "util.h"

void ga_gaps_init(struct ga_gaps *x, size_t top)
{
    memset(x, 0, sizeof(*x));
    x->top = top;
}

const char *ga_cause_name(unsigned cause)
{
    static const char *const names[GA_CAUSES] = {"host_busy",  "synchronize",    "allocation",
                                                 "dependency", "launch_latency", "unknown"};
    return cause < GA_CAUSES ? names[cause] : "unknown";
}

static const uint64_t bucket_min[GA_GAP_BUCKETS] = {0, 10000, 100000, 1000000, 10000000, 100000000};

const char *ga_gap_bucket_name(unsigned bucket)
{
    static const char *const names[GA_GAP_BUCKETS] = {"<10us",  "10-100us", "100us-1ms",
                                                      "1-10ms", "10-100ms", ">=100ms"};
    return bucket < GA_GAP_BUCKETS ? names[bucket] : "?";
}

unsigned ga_gap_bucket(uint64_t dur_ns)
{
    unsigned b = 0;
    while (b + 1 < GA_GAP_BUCKETS && dur_ns >= bucket_min[b + 1])
        b++;
    return b;
}

uint64_t ga_window_width(uint64_t span_ns)
{
    static const uint64_t mult[3] = {1, 2, 5};
    for (uint64_t p = 1000; p <= UINT64_MAX / 10; p *= 10)
        for (int i = 0; i < 3; i++) {
            uint64_t w = p * mult[i];
            if (span_ns / w + (span_ns % w != 0) <= GA_WINDOWS_MAX) return w;
        }
    return UINT64_MAX / 10 * 5;
}

/* ---- while reading ----------------------------------------------------------------------------
 */

static void keep_call(struct ga_gaps *x, const struct ga_event *ev, uint64_t start, uint64_t end,
                      uint32_t stack, uint8_t kind)
{
    if (x->cupti_off || end < start) return;
    if (x->n_calls >= GA_HOST_CALLS_BASE + 2 * x->launches) {
        x->calls_dropped++;
        return;
    }
    x->calls = ga_xgrow(x->calls, &x->calls_cap, x->n_calls, sizeof(*x->calls));
    x->calls[x->n_calls++] = (struct ga_host_call){start, end, ev->tid, stack, ev->sub, kind};
}

static int blocking_span(unsigned api)
{
    return api < GT_API_MAX &&
           (gt_api_table[api].family == GT_FAM_SYNC || gt_api_table[api].family == GT_FAM_COPY);
}

/* Allocations and failed allocations are stamped after the call returned, frees before it was
 * forwarded; dur_ns 0 (older tracers) leaves the call's extent unknown: not kept. */
void ga_gaps_event(struct ga_gaps *x, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_CUPTI:
        x->cupti_off = ev->sub != GT_CUPTI_ON;
        break;
    case GT_REC_LAUNCH:
        x->launches += ev->r.launch.result == 0;
        break;
    case GT_REC_SPAN:
        if (blocking_span(ev->sub))
            keep_call(x, ev, ev->r.span.ts_enter, ev->r.span.ts_exit, ev->r.span.stack,
                      GA_HOST_SYNC);
        break;
    case GT_REC_ALLOC:
        if (ev->r.alloc.dur_ns && ev->r.alloc.dur_ns <= ev->ts)
            keep_call(x, ev, ev->ts - ev->r.alloc.dur_ns, ev->ts, ev->r.alloc.stack, GA_HOST_ALLOC);
        break;
    case GT_REC_ALLOC_FAIL:
        if (ev->r.alloc_fail.dur_ns && ev->r.alloc_fail.dur_ns <= ev->ts)
            keep_call(x, ev, ev->ts - ev->r.alloc_fail.dur_ns, ev->ts, ev->r.alloc_fail.stack,
                      GA_HOST_ALLOC);
        break;
    case GT_REC_FREE:
        if (ev->r.free.dur_ns)
            keep_call(x, ev, ev->ts, ev->ts + ev->r.free.dur_ns, ev->r.free.stack, GA_HOST_ALLOC);
        break;
    default:
        break;
    }
}

/* ---- host calls by thread ---------------------------------------------------------------------
 */

static int call_cmp(const void *a, const void *b)
{
    const struct ga_host_call *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* One thread makes one call at a time, so its calls never overlap; a trace where they do (lost
 * or corrupt records) has each call cut to start where the previous one ended, and calls left
 * empty dropped, so that sorted by start they are sorted by end too (cover_thread relies on it). */
static void index_threads(struct ga_gaps *x)
{
    size_t cap = 0, out = 0;
    if (x->n_calls > 1) qsort(x->calls, x->n_calls, sizeof(*x->calls), call_cmp);
    for (size_t i = 0; i < x->n_calls; i++) {
        struct ga_host_call *prev = out ? &x->calls[out - 1] : NULL, c = x->calls[i];
        if (prev && prev->tid == c.tid && c.start < prev->end) {
            if (c.end <= prev->end) continue;
            c.start = prev->end;
        }
        x->calls[out++] = c;
    }
    x->n_calls = out;
    for (size_t i = 0; i < x->n_calls;) {
        size_t j = i + 1;
        while (j < x->n_calls && x->calls[j].tid == x->calls[i].tid)
            j++;
        x->threads = ga_xgrow(x->threads, &cap, x->n_threads, sizeof(*x->threads));
        x->threads[x->n_threads++] = (struct ga_thread_calls){x->calls[i].tid, i, j};
        i = j;
    }
    x->visits_left = 16 * ((uint64_t)x->n_calls + x->n_acts) + (1u << 20);
}

static const struct ga_thread_calls *thread_of(const struct ga_gaps *x, uint32_t tid)
{
    size_t lo = 0, hi = x->n_threads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->threads[mid].tid == tid) return &x->threads[mid];
        if (x->threads[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* What host calls covered a window [a, b): time per kind, the call of each kind that covered
 * most, and whether one was in progress at a (a call that ends exactly at a counts: a thread that
 * left a synchronize the instant the device went idle was inside it when the gap began). */
struct cover {
    uint64_t ns[3];
    int met[3], at_start[3];
    struct ga_host_call best[3], first[3];
    uint64_t best_ns[3], first_ns[3];
};

static void cover_call(struct cover *c, const struct ga_host_call *h, uint64_t a, uint64_t b)
{
    uint64_t s = h->start > a ? h->start : a, e = h->end < b ? h->end : b;
    uint64_t ns = e > s ? e - s : 0;
    unsigned k = h->kind;
    c->ns[k] += ns;
    if (!c->met[k] || ns > c->best_ns[k]) {
        c->best[k] = *h;
        c->best_ns[k] = ns;
    }
    c->met[k] = 1;
    if (h->start <= a && h->end >= a && !c->at_start[k]) {
        c->at_start[k] = 1;
        c->first[k] = *h;
        c->first_ns[k] = ns;
    }
}

/* A thread's calls do not overlap each other (index_threads), so sorted by start they are sorted
 * by end too: the first one that can reach a is found by binary search. The windows of one
 * device's gaps are disjoint, so each call is visited O(1) times per device; visits_left bounds
 * the whole (a hostile trace of many devices with one huge gap each). */
static void cover_thread(struct cover *c, struct ga_gaps *x, const struct ga_thread_calls *t,
                         uint64_t a, uint64_t b)
{
    size_t lo = t->lo, hi = t->hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->calls[mid].end < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < t->hi && x->calls[i].start < b && x->visits_left; i++) {
        x->visits_left--;
        if (x->calls[i].end >= a) cover_call(c, &x->calls[i], a, b);
    }
}

/* ---- the sweep ------------------------------------------------------------------------------- */

uint64_t ga_gaps_sweep(const struct ga_gpu_act *a, size_t n,
                       void (*gap)(void *ctx, uint64_t s, uint64_t e, size_t before, size_t after),
                       void (*busy)(void *ctx, uint64_t s, uint64_t e), void *ctx)
{
    uint64_t total = 0, s, e;
    size_t before = 0;
    if (!n) return 0;
    s = a[0].start;
    e = a[0].end;
    for (size_t i = 1; i < n; i++) {
        /* an activity of no length inside an empty stretch occupies no time: it does not cut
         * the gap in two, unless nothing comes after it (it ends the span) */
        if (a[i].start > e && a[i].end == a[i].start && i + 1 < n) continue;
        if (a[i].start > e) {
            total += e - s;
            if (busy) busy(ctx, s, e);
            if (gap) gap(ctx, e, a[i].start, before, i);
            s = a[i].start;
            e = a[i].end;
            before = i;
        } else if (a[i].end > e) {
            e = a[i].end;
            before = i;
        }
    }
    if (busy) busy(ctx, s, e);
    return total + (e - s);
}

/* The end of the run of one device's activities that starts at i. */
static size_t run_end(const struct ga_gpu_act *a, size_t i, size_t n)
{
    size_t j = i + 1;
    while (j < n && a[j].device == a[i].device)
        j++;
    return j;
}

/* ---- HTA's idle categories per stream --------------------------------------------------------
 * Per stream, activities in start order; the interval before each one but the first is its start
 * minus the previous activity's end: host wait when its launch came after that end, else kernel
 * wait when shorter than GA_HTA_KERNEL_WAIT_NS, else other. */

static int hta_cmp(const void *a, const void *b)
{
    const struct ga_hta_stream *x = a, *y = b;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static struct ga_gaps_device *device_of(struct ga_gaps *x, uint32_t device)
{
    return (struct ga_gaps_device *)ga_gaps_device_of(x, device);
}

/* One pass over a device's activities in time order, which is each stream's start order too; a
 * stream's entry keeps the end of its previous activity in prev_end[]. */
static void hta_device(struct ga_gaps_device *d, const struct ga_gpu *g, const struct ga_gpu_act *a,
                       size_t n)
{
    struct ga_map idx = {0};
    uint64_t *prev_end = NULL;
    size_t cap = 0, last = 0;
    for (size_t k = 0; k < n; k++) {
        int added = 0;
        size_t i = last;
        if (!d->n_hta || d->hta[last].stream != a[k].stream) {
            i = (size_t)*ga_map_upsert(&idx, a[k].stream, 0, d->n_hta, &added);
            if (added) {
                d->hta = ga_xgrow(d->hta, &d->hta_cap, i, sizeof(*d->hta));
                prev_end = ga_xgrow(prev_end, &cap, i, sizeof(*prev_end));
                memset(&d->hta[i], 0, sizeof(d->hta[i]));
                d->hta[i].stream = a[k].stream;
                d->n_hta++;
            }
            last = i;
        }
        if (!added) {
            struct ga_hta_stream *h = &d->hta[i];
            uint64_t idle = a[k].start > prev_end[i] ? a[k].start - prev_end[i] : 0;
            const struct ga_gpu_launch *l = ga_gpu_launch_of(g, &a[k]);
            if (l && l->ts > prev_end[i]) {
                h->host_wait_ns += idle;
                h->host_wait_n++;
            } else if (idle < GA_HTA_KERNEL_WAIT_NS) {
                h->kernel_wait_ns += idle;
                h->kernel_wait_n++;
            } else {
                h->other_ns += idle;
                h->other_n++;
            }
        }
        prev_end[i] = a[k].end;
    }
    if (d->n_hta > 1) qsort(d->hta, d->n_hta, sizeof(*d->hta), hta_cmp);
    free(prev_end);
    ga_map_free(&idx);
}

/* ---- causes ------------------------------------------------------------------------------------
 */

struct sweep {
    struct ga_gaps *x;
    struct ga_gaps_device *d;
    const struct ga_gpu *g;
    const struct ga_gpu_act *a; /* the device's activities */
    size_t base;                /* index of a[0] in g->acts */
    size_t n;
};

/* Of the activities that start when the gap ends, the first one linked to a launch (else the
 * first); a bounded look-ahead. */
static size_t ending_act(const struct sweep *w, size_t after, const struct ga_gpu_launch **l)
{
    for (size_t k = after; k < w->n && k < after + 64 && w->a[k].start == w->a[after].start; k++)
        if ((*l = ga_gpu_launch_of(w->g, &w->a[k]))) return k;
    *l = NULL;
    return after;
}

static void blame(struct ga_gap *gp, unsigned cause, const struct ga_host_call *h, uint64_t ns)
{
    gp->cause = (uint8_t)cause;
    gp->call = *h;
    gp->call_ns = ns;
    if (h->stack) gp->stack = h->stack;
}

/* The host was blocked: inside a synchronize (or blocking copy) when the gap began, the sync
 * bubble; else synchronize or allocation when calls of that kind covered at least as much of the
 * window as the time outside blocking calls (the kind that covered more wins, synchronize on a
 * tie). 0 when neither. */
static int blocked_cause(struct ga_gap *gp, const struct cover *c, uint64_t window)
{
    uint64_t blocked = c->ns[GA_HOST_SYNC] + c->ns[GA_HOST_ALLOC];
    uint64_t rest = window > blocked ? window - blocked : 0;
    unsigned k = c->ns[GA_HOST_SYNC] >= c->ns[GA_HOST_ALLOC] ? GA_HOST_SYNC : GA_HOST_ALLOC;
    if (c->at_start[GA_HOST_SYNC]) {
        blame(gp, GA_CAUSE_SYNC, &c->first[GA_HOST_SYNC], c->first_ns[GA_HOST_SYNC]);
        return 1;
    }
    if (!c->ns[k] || c->ns[k] < rest) return 0;
    blame(gp, k == GA_HOST_SYNC ? GA_CAUSE_SYNC : GA_CAUSE_ALLOC, &c->best[k], c->best_ns[k]);
    return 1;
}

static void classify(const struct sweep *w, struct ga_gap *gp)
{
    const struct ga_gpu_launch *l = gp->launch;
    struct cover c;
    uint64_t end = gp->start + gp->dur;
    memset(&c, 0, sizeof(c));
    gp->stack = l ? l->stack : 0;
    if (l && l->ts < gp->start) { /* queued before the gap: it waited on the GPU side */
        gp->cause = gp->dur < GA_LAUNCH_LATENCY_NS ? GA_CAUSE_LAUNCH_LATENCY : GA_CAUSE_DEPENDENCY;
        return;
    }
    if (l) { /* launched late: what was its thread doing between the gap's start and the launch */
        const struct ga_thread_calls *t = thread_of(w->x, l->tid);
        if (t) cover_thread(&c, w->x, t, gp->start, l->ts);
    } else { /* no launch known: any thread's blocking calls during the gap */
        for (size_t i = 0; i < w->x->n_threads && i < GA_THREADS_SCANNED; i++)
            cover_thread(&c, w->x, &w->x->threads[i], gp->start, end);
    }
    if (blocked_cause(gp, &c, (l ? l->ts : end) - gp->start)) return;
    if (gp->dur < GA_LAUNCH_LATENCY_NS)
        gp->cause = GA_CAUSE_LAUNCH_LATENCY;
    else
        gp->cause = l ? GA_CAUSE_HOST_BUSY : GA_CAUSE_UNKNOWN;
}

/* ---- per-device totals, kept gaps ------------------------------------------------------------ */

static void add_site(struct ga_gaps_device *d, const struct ga_gap *gp)
{
    int added = 0;
    uint64_t *i = ga_map_upsert(&d->site_idx, gp->cause, gp->stack, d->n_sites, &added);
    if (added) {
        d->sites = ga_xgrow(d->sites, &d->sites_cap, d->n_sites, sizeof(*d->sites));
        d->sites[d->n_sites++] = (struct ga_idle_site){0, 0, gp->stack, NULL, gp->cause};
    }
    d->sites[*i].idle_ns += gp->dur;
    d->sites[*i].gaps++;
}

/* Longer first; equal lengths: earlier first. */
static int gap_better(const struct ga_gap *x, const struct ga_gap *y)
{
    if (x->dur != y->dur) return x->dur > y->dur;
    return x->start < y->start;
}

/* The kept gaps form a heap with the least good one at the root while sweeping. */
static void heap_down(struct ga_gap *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && gap_better(&h[m], &h[l])) m = l;
        if (r < n && gap_better(&h[m], &h[r])) m = r;
        if (m == i) return;
        struct ga_gap t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_up(struct ga_gap *h, size_t i)
{
    while (i) {
        size_t p = (i - 1) / 2;
        if (!gap_better(&h[p], &h[i])) return;
        struct ga_gap t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static void keep_gap(struct ga_gaps_device *d, size_t top, const struct ga_gap *gp)
{
    if (!top || d->n_kept < top) {
        d->gaps = ga_xgrow(d->gaps, &d->kept_cap, d->n_kept, sizeof(*d->gaps));
        d->gaps[d->n_kept++] = *gp;
        if (top) heap_up(d->gaps, d->n_kept - 1);
    } else if (gap_better(gp, &d->gaps[0])) {
        d->gaps[0] = *gp;
        heap_down(d->gaps, d->n_kept, 0);
    }
}

static void on_gap(void *ctx, uint64_t s, uint64_t e, size_t before, size_t after)
{
    struct sweep *w = ctx;
    struct ga_gaps_device *d = w->d;
    struct ga_gap gp;
    memset(&gp, 0, sizeof(gp));
    gp.start = s;
    gp.dur = e - s;
    after = ending_act(w, after, &gp.launch);
    gp.before = w->base + before;
    gp.after = w->base + after;
    classify(w, &gp);
    unsigned b = ga_gap_bucket(gp.dur);
    d->n_gaps++;
    d->cause_ns[gp.cause] += gp.dur;
    d->cause_n[gp.cause]++;
    d->bucket_n[b]++;
    d->bucket_ns[b] += gp.dur;
    add_site(d, &gp);
    keep_gap(d, w->x->top, &gp);
}

/* Busy time into the fixed windows [first + i * width, ...), cut at the span's end. */
static void on_busy(void *ctx, uint64_t s, uint64_t e)
{
    struct ga_gaps_device *d = ((struct sweep *)ctx)->d;
    if (!d->n_windows) return;
    size_t i = (size_t)((s - d->first) / d->window_ns);
    while (s < e && i < d->n_windows) {
        uint64_t wend = d->windows[i].start + d->windows[i].len;
        uint64_t upto = e < wend ? e : wend;
        if (upto > s) d->windows[i].busy += upto - s;
        s = wend;
        i++;
    }
}

static void make_windows(struct ga_gaps_device *d)
{
    uint64_t span = d->last - d->first;
    if (!span) return;
    d->window_ns = ga_window_width(span);
    d->n_windows = (size_t)(span / d->window_ns + (span % d->window_ns != 0));
    d->windows = ga_xcalloc(d->n_windows, sizeof(*d->windows));
    for (size_t i = 0; i < d->n_windows; i++) {
        uint64_t st = d->first + i * d->window_ns;
        d->windows[i].start = st;
        d->windows[i].len = d->last - st < d->window_ns ? d->last - st : d->window_ns;
    }
}

static int gap_cmp(const void *a, const void *b)
{
    const struct ga_gap *x = a, *y = b;
    return gap_better(x, y) ? -1 : gap_better(y, x) ? 1 : 0;
}

/* Stacks folded into their call sites (several stacks reach one site). */
static int site_key_cmp(const void *a, const void *b)
{
    const struct ga_idle_site *x = a, *y = b;
    if (x->cause != y->cause) return x->cause < y->cause ? -1 : 1;
    if (x->site != y->site) return (uintptr_t)x->site < (uintptr_t)y->site ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int site_idle_cmp(const void *a, const void *b)
{
    const struct ga_idle_site *x = a, *y = b;
    if (x->idle_ns != y->idle_ns) return x->idle_ns > y->idle_ns ? -1 : 1;
    return site_key_cmp(a, b);
}

static void fold_sites(struct ga_gaps_device *d, const struct ga_sites *sites)
{
    size_t out = 0;
    uint64_t top_w = 0;
    for (size_t i = 0; i < d->n_sites; i++)
        d->sites[i].site = sites ? ga_sites_of_stack(sites, d->sites[i].stack) : NULL;
    if (d->n_sites > 1) qsort(d->sites, d->n_sites, sizeof(*d->sites), site_key_cmp);
    for (size_t i = 0; i < d->n_sites; i++) {
        struct ga_idle_site *s = &d->sites[i], *o = out ? &d->sites[out - 1] : NULL;
        if (o && o->cause == s->cause && o->site == s->site && s->site) {
            if (s->idle_ns > top_w) o->stack = s->stack, top_w = s->idle_ns;
            o->idle_ns += s->idle_ns;
            o->gaps += s->gaps;
            continue;
        }
        top_w = s->idle_ns;
        d->sites[out++] = *s;
    }
    d->n_sites = out;
    if (out > 1) qsort(d->sites, out, sizeof(*d->sites), site_idle_cmp);
    ga_map_free(&d->site_idx);
}

/* ga_gpu_finish left the activities in (device, time) order (ga_gpu_act_cmp). */
static void device_pass(struct ga_gaps *x, const struct ga_gpu *g, const struct ga_sites *sites)
{
    for (size_t i = 0, j; i < g->n_acts; i = j) {
        j = run_end(g->acts, i, g->n_acts);
        struct ga_gaps_device *d = device_of(x, g->acts[i].device);
        struct sweep w = {x, d, g, &g->acts[i], i, j - i};
        if (!d) continue;
        hta_device(d, g, w.a, w.n);
        make_windows(d);
        d->busy_ns = ga_gaps_sweep(w.a, w.n, on_gap, on_busy, &w);
        d->idle_ns = d->last - d->first - d->busy_ns;
        for (size_t k = 0; k < d->n_windows; k++)
            d->low_windows +=
                (double)d->windows[k].busy < GA_WINDOW_LOW * (double)d->windows[k].len;
        if (d->n_kept > 1) qsort(d->gaps, d->n_kept, sizeof(*d->gaps), gap_cmp);
        fold_sites(d, sites);
    }
}

void ga_gaps_finish(struct ga_gaps *x, const struct ga_gpu *g, const struct ga_sites *sites)
{
    x->n_acts = g->n_acts;
    index_threads(x);
    x->devices = ga_xcalloc(g->n_devices ? g->n_devices : 1, sizeof(*x->devices));
    x->n_devices = g->n_devices;
    for (size_t i = 0; i < g->n_devices; i++) {
        struct ga_gaps_device *d = &x->devices[i];
        d->device = g->devices[i].device;
        d->first = g->devices[i].first;
        d->last = g->devices[i].last;
    }
    device_pass(x, g, sites);
}

static int by_device(const void *key, const void *elem)
{
    uint32_t k = *(const uint32_t *)key, d = ((const struct ga_gaps_device *)elem)->device;
    return k < d ? -1 : k > d;
}

const struct ga_gaps_device *ga_gaps_device_of(const struct ga_gaps *x, uint32_t device)
{
    if (!x->n_devices) return NULL;
    return bsearch(&device, x->devices, x->n_devices, sizeof(*x->devices), by_device);
}

void ga_gaps_free(struct ga_gaps *x)
{
    for (size_t i = 0; i < x->n_devices; i++) {
        struct ga_gaps_device *d = &x->devices[i];
        free(d->gaps);
        free(d->sites);
        free(d->windows);
        free(d->hta);
        ga_map_free(&d->site_idx);
    }
    free(x->devices);
    free(x->calls);
    free(x->threads);
    memset(x, 0, sizeof(*x));
}
