/* GPU idle gaps and their causes (see gaps.h; the rules are docs/ANALYSES.md's). */
#include "analyses/gaps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "base/util.h"

void ga_gaps_init(struct ga_gaps *x, size_t top)
{
    memset(x, 0, sizeof(*x));
    x->top = top;
    x->visits_left = 1u << 20;
}

void ga_gaps_keep_all(struct ga_gaps *x)
{
    if (!x->spill && !(x->spill = tmpfile())) x->top = 0;
}

/* A gap in the spill file: its device, then the gap (pointers in it rebuilt when read back). */
struct spilled {
    uint32_t device, pad;
    struct ga_gap gap;
};

static void spill_gap(struct ga_gaps *x, const struct ga_gaps_device *d, const struct ga_gap *gp)
{
    struct spilled s;
    memset(&s, 0, sizeof(s));
    s.device = d->device;
    s.gap = *gp;
    s.gap.launch = NULL;
    if (!x->spill_errno && fwrite(&s, sizeof(s), 1, x->spill) != 1) x->spill_errno = errno ? errno : EIO;
}

int ga_gaps_each(const struct ga_gaps *x, uint32_t device,
                 int (*fn)(void *ctx, const struct ga_gap *gap), void *ctx)
{
    struct spilled s;
    if (!x->spill || x->spill_errno || fflush(x->spill) != 0 || fseek(x->spill, 0, SEEK_SET) != 0)
        return -1;
    while (fread(&s, sizeof(s), 1, x->spill) == 1) {
        if (s.device != device) continue;
        s.gap.launch = s.gap.has_launch ? &s.gap.launch_copy : NULL;
        if (fn(ctx, &s.gap) != 0) return -1;
    }
    return ferror(x->spill) ? -1 : 0;
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

/* ---- host calls by thread --------------------------------------------------------------------
 * Each thread's calls sorted by (start, end, kind). One thread makes one call at a time, so its
 * calls never overlap; in a trace where they do (lost or corrupt records) each call is cut to
 * start where the previous ones ended and a call inside them is passed over, so that the calls
 * looked at are sorted by end too (cover_thread relies on it). */

static int tcall_cmp(const struct ga_tcall *x, const struct ga_tcall *y)
{
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static struct ga_thread_calls *thread_of(const struct ga_gaps *x, uint32_t tid)
{
    size_t lo = 0, hi = x->n_threads;
    if (x->n_threads && x->threads[x->last_thread].tid == tid) return &x->threads[x->last_thread];
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

static struct ga_thread_calls *thread_add(struct ga_gaps *x, uint32_t tid)
{
    struct ga_thread_calls *t = thread_of(x, tid);
    size_t i = 0;
    if (t) {
        x->last_thread = (size_t)(t - x->threads);
        return t;
    }
    if (x->n_threads >= GA_CALL_THREADS_MAX) return NULL;
    while (i < x->n_threads && x->threads[i].tid < tid)
        i++;
    x->threads = ga_xgrow(x->threads, &x->threads_cap, x->n_threads, sizeof(*x->threads));
    memmove(&x->threads[i + 1], &x->threads[i], (x->n_threads - i) * sizeof(*x->threads));
    memset(&x->threads[i], 0, sizeof(x->threads[i]));
    x->threads[i].tid = tid;
    x->n_threads++;
    x->last_thread = i;
    return &x->threads[i];
}

/* The latest end of the calls before c[i] (those let go included); 0 with *has 0 when none. */
static uint64_t mx_before(const struct ga_thread_calls *t, size_t i, int *has)
{
    *has = i > t->head || t->evicted;
    return i > t->head ? t->c[i - 1].mx : t->evicted ? t->gone.mx : 0;
}

static void fix_mx(struct ga_thread_calls *t, size_t from)
{
    for (size_t i = from; i < t->n; i++) {
        int has;
        uint64_t m = mx_before(t, i, &has);
        t->c[i].mx = has && m > t->c[i].end ? m : t->c[i].end;
    }
}

static void let_go(struct ga_gaps *x, struct ga_thread_calls *t)
{
    t->gone = t->c[t->head++];
    t->evicted = 1;
    x->live_calls--;
    if (t->head == t->n) {
        t->head = t->n = 0;
    } else if (t->head >= 64 && t->head * 2 >= t->n) {
        memmove(t->c, &t->c[t->head], (t->n - t->head) * sizeof(*t->c));
        t->n -= t->head;
        t->head = 0;
    }
}

/* Calls come in the reader's time order (a span by its start, an allocation by its end), which
 * for one thread is its start order: almost always appended. */
__attribute__((noinline)) static void add_call(struct ga_gaps *x, const struct ga_event *ev,
                                               uint64_t start, uint64_t end, uint32_t stack,
                                               uint8_t kind)
{
    struct ga_tcall c = {start, end, end, stack, ev->sub, kind};
    struct ga_thread_calls *t = thread_add(x, ev->tid);
    if (!t) {
        x->calls_dropped++;
        return;
    }
    if (x->live_calls >= GA_HOST_CALLS_MAX && t->n > t->head) {
        x->calls_dropped++; /* the thread's oldest goes */
        let_go(x, t);
    }
    size_t p = t->n;
    while (p > t->head && tcall_cmp(&c, &t->c[p - 1]) < 0)
        p--;
    if (p == t->head && t->evicted && tcall_cmp(&c, &t->gone) < 0) {
        x->calls_dropped++; /* older than calls already let go */
        return;
    }
    t->c = ga_xgrow(t->c, &t->cap, t->n, sizeof(*t->c));
    memmove(&t->c[p + 1], &t->c[p], (t->n - p) * sizeof(*t->c));
    t->c[p] = c;
    t->n++;
    fix_mx(t, p);
    x->live_calls++;
    x->n_calls++;
    x->visits_left += 16;
}

/* Without CUPTI there are no gaps to explain: nothing is kept (tested here, before the call). */
static void keep_call(struct ga_gaps *x, const struct ga_event *ev, uint64_t start, uint64_t end,
                      uint32_t stack, uint8_t kind)
{
    if (x->cupti_off || end < start) return;
    add_call(x, ev, start, end, stack, kind);
}

/* Lets go of the calls that end before `floor`: no gap still to come starts before it. */
static void let_go_before(struct ga_gaps *x, uint64_t floor)
{
    for (size_t i = 0; i < x->n_threads; i++) {
        struct ga_thread_calls *t = &x->threads[i];
        while (t->n > t->head && t->c[t->head].mx < floor)
            let_go(x, t);
    }
}

static int blocking_span(unsigned api)
{
    return api < GT_API_MAX &&
           (gt_api_table[api].family == GT_FAM_SYNC || gt_api_table[api].family == GT_FAM_COPY);
}

/* Allocations and failed allocations are stamped after the call returned, frees before it was
 * forwarded; dur_ns 0 (older tracers) leaves the call's extent unknown: not kept. */
/* ga_gaps_event's work for a record of `type` (a constant where the caller knows it). */
__attribute__((always_inline)) static inline void on_event(struct ga_gaps *x,
                                                           const struct ga_event *ev, unsigned type)
{
    switch (type) {
    case GT_REC_CUPTI:
        x->cupti_off = ev->sub != GT_CUPTI_ON;
        break;
    case GT_REC_SPAN:
        if (blocking_span(ev->sub))
            keep_call(x, ev, ev->r->span.ts_enter, ev->r->span.ts_exit, ev->r->span.stack,
                      GA_HOST_SYNC);
        break;
    case GT_REC_ALLOC:
        if (ev->r->alloc.dur_ns && ev->r->alloc.dur_ns <= ev->ts)
            keep_call(x, ev, ev->ts - ev->r->alloc.dur_ns, ev->ts, ev->r->alloc.stack,
                      GA_HOST_ALLOC);
        break;
    case GT_REC_ALLOC_FAIL:
        if (ev->r->alloc_fail.dur_ns && ev->r->alloc_fail.dur_ns <= ev->ts)
            keep_call(x, ev, ev->ts - ev->r->alloc_fail.dur_ns, ev->ts, ev->r->alloc_fail.stack,
                      GA_HOST_ALLOC);
        break;
    case GT_REC_FREE:
        if (ev->r->free.dur_ns)
            keep_call(x, ev, ev->ts, ev->ts + ev->r->free.dur_ns, ev->r->free.stack, GA_HOST_ALLOC);
        break;
    default:
        break;
    }
}

void ga_gaps_event(struct ga_gaps *x, const struct ga_event *ev)
{
    on_event(x, ev, ev->type);
}

void ga_gaps_alloc_event(struct ga_gaps *x, const struct ga_event *ev)
{
    on_event(x, ev, GT_REC_ALLOC);
}

void ga_gaps_free_event(struct ga_gaps *x, const struct ga_event *ev)
{
    on_event(x, ev, GT_REC_FREE);
}

void ga_gaps_span_event(struct ga_gaps *x, const struct ga_event *ev)
{
    on_event(x, ev, GT_REC_SPAN);
}

/* ---- the causes' look at the host calls ------------------------------------------------------ */

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

/* The calls looked at are sorted by end too (see above), so the first one that can reach a is found
 * by binary search on mx. The windows of one device's gaps are disjoint, so each call is visited
 * O(1) times per device; visits_left bounds the whole (a hostile trace of many devices with one
 * huge gap each). */
static void cover_thread(struct cover *c, struct ga_gaps *x, const struct ga_thread_calls *t,
                         uint64_t a, uint64_t b)
{
    size_t lo = t->head, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->c[mid].mx < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < t->n && x->visits_left; i++) {
        const struct ga_tcall *k = &t->c[i];
        struct ga_host_call h = {k->start, k->end, t->tid, k->stack, k->api, k->kind};
        int has;
        uint64_t m = mx_before(t, i, &has);
        if (has && h.start < m) {
            if (h.end <= m) continue; /* inside the calls before it */
            h.start = m;
        }
        if (h.start >= b) break;
        x->visits_left--;
        if (h.end >= a) cover_call(c, &h, a, b);
    }
}

/* ---- the sweep ------------------------------------------------------------------------------- */

struct sweep_ops {
    void (*gap)(void *ctx, uint64_t s, uint64_t e, const struct ga_sweep_item *before,
                const struct ga_sweep_item *after);
    void (*busy)(void *ctx, uint64_t s, uint64_t e);
    void *ctx;
};

static void sweep_take(struct ga_sweep *w, const struct ga_sweep_item *it,
                       const struct sweep_ops *o)
{
    const struct ga_gpu_act *a = &it->a;
    if (!w->started) {
        w->started = 1;
        w->s = a->start;
        w->e = a->end;
        w->before = *it;
    } else if (a->start > w->e) {
        w->total += w->e - w->s;
        if (o->busy) o->busy(o->ctx, w->s, w->e);
        if (o->gap) o->gap(o->ctx, w->e, a->start, &w->before, it);
        w->s = a->start;
        w->e = a->end;
        w->before = *it;
    } else if (a->end > w->e) {
        w->e = a->end;
        w->before = *it;
    }
}

/* An activity of no length inside an empty stretch occupies no time: it does not cut the gap in
 * two, unless nothing comes after it (it ends the span): it is held until the next one comes. */
static void sweep_feed(struct ga_sweep *w, const struct ga_sweep_item *it,
                       const struct sweep_ops *o)
{
    w->n++;
    w->held = 0;
    if (w->started && it->a.start > w->e && it->a.end == it->a.start) {
        w->held = 1;
        w->hold = *it;
        return;
    }
    sweep_take(w, it, o);
}

static void sweep_end(struct ga_sweep *w, const struct sweep_ops *o)
{
    if (w->held) sweep_take(w, &w->hold, o);
    w->held = 0;
    if (!w->started) return;
    w->total += w->e - w->s;
    if (o->busy) o->busy(o->ctx, w->s, w->e);
}

struct index_ctx {
    void (*gap)(void *ctx, uint64_t s, uint64_t e, size_t before, size_t after);
    void (*busy)(void *ctx, uint64_t s, uint64_t e);
    void *ctx;
};

static void index_gap(void *ctx, uint64_t s, uint64_t e, const struct ga_sweep_item *before,
                      const struct ga_sweep_item *after)
{
    struct index_ctx *c = ctx;
    c->gap(c->ctx, s, e, before->i, after->i);
}

static void index_busy(void *ctx, uint64_t s, uint64_t e)
{
    struct index_ctx *c = ctx;
    c->busy(c->ctx, s, e);
}

uint64_t ga_gaps_sweep(const struct ga_gpu_act *a, size_t n,
                       void (*gap)(void *ctx, uint64_t s, uint64_t e, size_t before, size_t after),
                       void (*busy)(void *ctx, uint64_t s, uint64_t e), void *ctx)
{
    struct ga_sweep w;
    struct ga_sweep_item it;
    struct index_ctx ic = {gap, busy, ctx};
    struct sweep_ops o = {gap ? index_gap : NULL, busy ? index_busy : NULL, &ic};
    memset(&w, 0, sizeof(w));
    memset(&it, 0, sizeof(it));
    for (size_t i = 0; i < n; i++) {
        it.a = a[i];
        it.i = i;
        sweep_feed(&w, &it, &o);
    }
    sweep_end(&w, &o);
    return w.total;
}

/* ---- HTA's idle categories per stream --------------------------------------------------------
 * Per stream, activities in start order; the interval before each one but the first is its start
 * minus the previous activity's end: host wait when its launch came after that end, else kernel
 * wait when shorter than GA_HTA_KERNEL_WAIT_NS, else other. A device's activities come in time
 * order, which is each stream's start order too. */

static int hta_cmp(const void *a, const void *b)
{
    const struct ga_hta_stream *x = a, *y = b;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static void hta_add(struct ga_gaps_device *d, const struct ga_gpu_act *a,
                    const struct ga_gpu_launch *l)
{
    int added = 0;
    size_t i = d->last_hta;
    if (!d->n_hta || d->hta[i].stream != a->stream) {
        i = (size_t)*ga_map_upsert(&d->hta_idx, a->stream, 0, d->n_hta, &added);
        if (added) {
            d->hta = ga_xgrow(d->hta, &d->hta_cap, i, sizeof(*d->hta));
            d->hta_prev_end = ga_xgrow(d->hta_prev_end, &d->hta_prev_cap, i, sizeof(uint64_t));
            memset(&d->hta[i], 0, sizeof(d->hta[i]));
            d->hta[i].stream = a->stream;
            d->n_hta++;
        }
        d->last_hta = i;
    }
    if (!added) {
        struct ga_hta_stream *h = &d->hta[i];
        uint64_t prev = d->hta_prev_end[i];
        uint64_t idle = a->start > prev ? a->start - prev : 0;
        if (l && l->ts > prev) {
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
    d->hta_prev_end[i] = a->end;
}

/* ---- causes ------------------------------------------------------------------------------------
 */

/* Ties between phases go to the first in this order: a blocking call over the host's own time,
 * the host over the GPU side. */
static const uint8_t phase_order[GA_CAUSES] = {GA_CAUSE_SYNC,       GA_CAUSE_ALLOC,
                                               GA_CAUSE_HOST_BUSY,  GA_CAUSE_UNKNOWN,
                                               GA_CAUSE_DEPENDENCY, GA_CAUSE_LAUNCH_LATENCY};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The blocking call shown for a phase of kind k: the synchronize the thread was in when the GPU
 * drained (the sync bubble), else the call of that kind that covered most of the window. */
static void pick_call(struct ga_gap *gp, const struct cover *c, unsigned k)
{
    int first = k == GA_HOST_SYNC && c->at_start[k];
    gp->call = first ? c->first[k] : c->best[k];
    gp->call_ns = first ? c->first_ns[k] : c->best_ns[k];
}

/* The window [gap start, w) on the launching thread (every thread without a launch) split into
 * synchronize, allocation and the rest: host busy, unknown without a launch, launch latency in a
 * gap shorter than GA_LAUNCH_LATENCY_NS (back-to-back work); [w, gap end), from the launch call
 * to the start, is launch latency. Calls of several threads may cover the same time: each kind
 * is capped by what the window has left. */
static void split(struct ga_gap *gp, const struct cover *c, uint64_t w, uint32_t launch_stack)
{
    uint64_t win = w - gp->start, *ph = gp->phase_ns;
    unsigned rest = gp->dur < GA_LAUNCH_LATENCY_NS ? GA_CAUSE_LAUNCH_LATENCY
                    : gp->launch                   ? GA_CAUSE_HOST_BUSY
                                                   : GA_CAUSE_UNKNOWN;
    ph[GA_CAUSE_SYNC] = min_u64(c->ns[GA_HOST_SYNC], win);
    ph[GA_CAUSE_ALLOC] = min_u64(c->ns[GA_HOST_ALLOC], win - ph[GA_CAUSE_SYNC]);
    ph[rest] += win - ph[GA_CAUSE_SYNC] - ph[GA_CAUSE_ALLOC];
    ph[GA_CAUSE_LAUNCH_LATENCY] += gp->start + gp->dur - w;
    for (unsigned k = 0; k < GA_CAUSES; k++)
        gp->phase_stack[k] = launch_stack;
    if (ph[GA_CAUSE_SYNC] && c->best[GA_HOST_SYNC].stack)
        gp->phase_stack[GA_CAUSE_SYNC] =
            (c->at_start[GA_HOST_SYNC] ? c->first : c->best)[GA_HOST_SYNC].stack;
    if (ph[GA_CAUSE_ALLOC] && c->best[GA_HOST_ALLOC].stack)
        gp->phase_stack[GA_CAUSE_ALLOC] = c->best[GA_HOST_ALLOC].stack;
    if (ph[GA_CAUSE_SYNC] || ph[GA_CAUSE_ALLOC])
        pick_call(gp, c, ph[GA_CAUSE_SYNC] >= ph[GA_CAUSE_ALLOC] ? GA_HOST_SYNC : GA_HOST_ALLOC);
}

static void classify(struct ga_gaps *x, struct ga_gap *gp)
{
    const struct ga_gpu_launch *l = gp->launch;
    struct cover c;
    uint64_t end = gp->start + gp->dur, w = end;
    memset(&c, 0, sizeof(c));
    memset(gp->phase_ns, 0, sizeof(gp->phase_ns));
    memset(gp->phase_stack, 0, sizeof(gp->phase_stack));
    if (l && l->ts < gp->start) { /* queued before the gap: it waited on the GPU side */
        gp->cause = gp->dur < GA_LAUNCH_LATENCY_NS ? GA_CAUSE_LAUNCH_LATENCY : GA_CAUSE_DEPENDENCY;
        gp->phase_ns[gp->cause] = gp->dur;
        gp->phase_stack[gp->cause] = gp->stack = l->stack;
        return;
    }
    if (l) { /* launched late: what was its thread doing between the gap's start and the launch */
        const struct ga_thread_calls *t = thread_of(x, l->tid);
        w = min_u64(l->ts, end); /* a launch stamped after its work started: a skewed clock */
        if (t) cover_thread(&c, x, t, gp->start, w);
    } else { /* no launch known: any thread's blocking calls during the gap */
        for (size_t i = 0; i < x->n_threads && i < GA_THREADS_SCANNED; i++)
            cover_thread(&c, x, &x->threads[i], gp->start, end);
    }
    split(gp, &c, w, l ? l->stack : 0);
    gp->cause = phase_order[0];
    for (unsigned i = 1; i < GA_CAUSES; i++)
        if (gp->phase_ns[phase_order[i]] > gp->phase_ns[gp->cause]) gp->cause = phase_order[i];
    gp->stack = gp->phase_stack[gp->cause];
}

/* ---- per-device totals, kept gaps ------------------------------------------------------------ */

static void add_site(struct ga_gaps_device *d, unsigned cause, uint32_t stack, uint64_t ns,
                     int is_cause)
{
    int added = 0;
    uint64_t *i = ga_map_upsert(&d->site_idx, cause, stack, d->n_sites, &added);
    if (added) {
        d->sites = ga_xgrow(d->sites, &d->sites_cap, d->n_sites, sizeof(*d->sites));
        d->sites[d->n_sites++] = (struct ga_idle_site){0, 0, stack, NULL, (uint8_t)cause};
    }
    d->sites[*i].idle_ns += ns;
    d->sites[*i].gaps += is_cause != 0;
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

static void gap_done(struct ga_gaps *x, struct ga_gaps_device *d, struct ga_gap *gp)
{
    gp->launch = gp->has_launch ? &gp->launch_copy : NULL;
    classify(x, gp);
    unsigned b = ga_gap_bucket(gp->dur);
    d->n_gaps++;
    d->cause_n[gp->cause]++;
    d->bucket_n[b]++;
    d->bucket_ns[b] += gp->dur;
    for (unsigned k = 0; k < GA_CAUSES; k++) {
        if (!gp->phase_ns[k]) continue;
        d->cause_ns[k] += gp->phase_ns[k];
        add_site(d, k, gp->phase_stack[k], gp->phase_ns[k], k == gp->cause);
    }
    keep_gap(d, x->top, gp);
    if (x->spill) spill_gap(x, d, gp);
    if (x->gap_hook) x->gap_hook(x->gap_ctx, d->device, gp);
}

/* The work that ended a gap: of the activities that start when it ends, the first one linked to
 * a launch (else the first); they arrive one by one after the gap was found, GA_ENDING_LOOK looked
 * at at most. */
static void pending_look(struct ga_gaps *x, struct ga_gaps_device *d, const struct ga_gpu_act *a,
                         const struct ga_gpu_launch *l)
{
    if (!d->pending) return;
    if (a && a->start == d->pend.after.start && d->pend_looked < GA_ENDING_LOOK) {
        d->pend_looked++;
        if (!l) return;
        d->pend.after = *a;
        d->pend.launch_copy = *l;
        d->pend.has_launch = 1;
    }
    d->pending = 0;
    gap_done(x, d, &d->pend);
}

struct dev_ctx {
    struct ga_gaps *x;
    struct ga_gaps_device *d;
};

static void on_gap(void *ctx, uint64_t s, uint64_t e, const struct ga_sweep_item *before,
                   const struct ga_sweep_item *after)
{
    struct dev_ctx *c = ctx;
    struct ga_gaps_device *d = c->d;
    struct ga_gap *gp = &d->pend;
    memset(gp, 0, sizeof(*gp));
    gp->start = s;
    gp->dur = e - s;
    gp->before = before->a;
    gp->after = after->a;
    d->pend_looked = 1;
    if (after->has_l) {
        gp->launch_copy = after->l;
        gp->has_launch = 1;
        gap_done(c->x, d, gp);
        return;
    }
    d->pending = 1;
}

/* ---- utilization windows ------------------------------------------------------------------------
 * The span's end is known only at the end, and with it the width of the windows (1, 2 or 5 times a
 * power of ten); busy time is kept meanwhile in GA_FINE_WINDOWS windows of a power of ten from the
 * device's first start, ten merged into one whenever the span outgrows them: every window width
 * the end can choose is a multiple of theirs (it is at least a tenth of the span / 100 windows). */

static void coarsen(struct ga_gaps_device *d)
{
    for (size_t j = 0; j < GA_FINE_WINDOWS / 10; j++) {
        uint64_t sum = 0;
        for (size_t k = 0; k < 10; k++)
            sum += d->fine[10 * j + k];
        d->fine[j] = sum;
    }
    memset(&d->fine[GA_FINE_WINDOWS / 10], 0,
           (GA_FINE_WINDOWS - GA_FINE_WINDOWS / 10) * sizeof(*d->fine));
    d->fine_ns *= 10;
}

static void on_busy(void *ctx, uint64_t s, uint64_t e)
{
    struct dev_ctx *c = ctx;
    struct ga_gaps_device *d = c->d;
    if (e <= s) return;
    if (c->x->busy_hook) c->x->busy_hook(c->x->busy_ctx, d->device, s, e);
    while ((e - 1 - d->first) / d->fine_ns >= GA_FINE_WINDOWS && d->fine_ns <= UINT64_MAX / 100)
        coarsen(d);
    size_t i = (size_t)((s - d->first) / d->fine_ns);
    while (s < e && i < GA_FINE_WINDOWS) {
        unsigned __int128 wend =
            (unsigned __int128)d->first + (unsigned __int128)(i + 1) * d->fine_ns;
        uint64_t upto = (unsigned __int128)e < wend ? e : (uint64_t)wend;
        d->fine[i] += upto - s;
        s = upto;
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
    for (size_t j = 0; j < GA_FINE_WINDOWS; j++) {
        if (!d->fine[j]) continue;
        unsigned __int128 at = (unsigned __int128)j * d->fine_ns;
        size_t w = (size_t)(at / d->window_ns);
        if (w < d->n_windows) d->windows[w].busy += d->fine[j];
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

/* ---- activities in, results out ------------------------------------------------------------ */

static struct ga_gaps_device *device_add(struct ga_gaps *x, const struct ga_gpu_act *a)
{
    int added = 0;
    size_t i;
    if (x->n_devices && x->devices[x->last_device].device == a->device)
        return &x->devices[x->last_device];
    i = (size_t)*ga_map_upsert(&x->device_idx, a->device, 0, x->n_devices, &added);
    x->last_device = i;
    if (!added) return &x->devices[i];
    x->devices = ga_xgrow(x->devices, &x->devices_cap, i, sizeof(*x->devices));
    struct ga_gaps_device *d = &x->devices[i];
    memset(d, 0, sizeof(*d));
    d->device = a->device;
    d->first = a->start;
    d->last = a->end;
    d->fine_ns = 1000;
    d->fine = ga_xcalloc(GA_FINE_WINDOWS, sizeof(*d->fine));
    x->n_devices++;
    return d;
}

uint64_t ga_gaps_floor(const struct ga_gaps *x)
{
    uint64_t f = x->frontier;
    for (size_t i = 0; i < x->n_devices; i++) {
        const struct ga_gaps_device *d = &x->devices[i];
        uint64_t from = d->pending ? d->pend.start : d->sw.e;
        if (from < f) f = from;
    }
    return f;
}

void ga_gaps_act(struct ga_gaps *x, const struct ga_gpu_act *a, const struct ga_gpu_launch *l)
{
    struct ga_gaps_device *d = device_add(x, a);
    struct ga_sweep_item it;
    struct dev_ctx c = {x, d};
    struct sweep_ops o = {on_gap, on_busy, &c};
    x->n_acts++;
    x->visits_left += 16;
    x->frontier = a->start;
    if (a->end > d->last) d->last = a->end;
    hta_add(d, a, a->kind == GA_GPU_KERNEL ? l : NULL); /* HTA's own: kernels' launches */
    pending_look(x, d, a, l);
    it.a = *a;
    it.i = d->sw.n;
    it.has_l = l != NULL;
    if (l) it.l = *l;
    sweep_feed(&d->sw, &it, &o);
    if (!(x->n_acts & 1023)) let_go_before(x, ga_gaps_floor(x));
}

static int by_device_id(const void *a, const void *b)
{
    const struct ga_gaps_device *x = a, *y = b;
    return x->device < y->device ? -1 : x->device > y->device;
}

static void device_finish(struct ga_gaps *x, struct ga_gaps_device *d, const struct ga_sites *sites)
{
    struct dev_ctx c = {x, d};
    struct sweep_ops o = {on_gap, on_busy, &c};
    pending_look(x, d, NULL, NULL);
    sweep_end(&d->sw, &o); /* a zero-length activity held to the end may make one more gap */
    pending_look(x, d, NULL, NULL);
    d->busy_ns = d->sw.total;
    d->idle_ns = d->last - d->first - d->busy_ns;
    make_windows(d);
    for (size_t k = 0; k < d->n_windows; k++)
        d->low_windows += (double)d->windows[k].busy < GA_WINDOW_LOW * (double)d->windows[k].len;
    if (d->n_kept > 1) qsort(d->gaps, d->n_kept, sizeof(*d->gaps), gap_cmp);
    for (size_t k = 0; k < d->n_kept; k++)
        d->gaps[k].launch = d->gaps[k].has_launch ? &d->gaps[k].launch_copy : NULL;
    if (d->n_hta > 1) qsort(d->hta, d->n_hta, sizeof(*d->hta), hta_cmp);
    fold_sites(d, sites);
    free(d->fine);
    free(d->hta_prev_end);
    d->fine = NULL;
    d->hta_prev_end = NULL;
    ga_map_free(&d->hta_idx);
}

void ga_gaps_finish(struct ga_gaps *x, const struct ga_sites *sites)
{
    for (size_t i = 0; i < x->n_devices; i++)
        device_finish(x, &x->devices[i], sites);
    if (x->n_devices > 1) qsort(x->devices, x->n_devices, sizeof(*x->devices), by_device_id);
    ga_map_free(&x->device_idx);
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
        free(d->fine);
        free(d->hta_prev_end);
        ga_map_free(&d->site_idx);
        ga_map_free(&d->hta_idx);
    }
    for (size_t i = 0; i < x->n_threads; i++)
        free(x->threads[i].c);
    free(x->devices);
    free(x->threads);
    ga_map_free(&x->device_idx);
    if (x->spill) fclose(x->spill);
    memset(x, 0, sizeof(*x));
}
