/* GPU timeline analysis: a reorder heap, links made as records arrive, per-device sweeps over
 * the activities as they leave the heap in time order (see gpu.h for what is kept and why). */
#include "analyses/gpu.h"

#include <stdlib.h>
#include <string.h>

#include "analyses/gaps.h"
#include "gputrace/trace_api.h"
#include "base/demangle.h"
#include "base/util.h"

#define NO_FUNC UINT64_MAX /* kacc key of a kernel not named by a kernel launch's handle */

void ga_gpu_init(struct ga_gpu *g)
{
    memset(g, 0, sizeof(*g));
}

static void leave(struct ga_gpu *g, struct ga_gpu_act *a);
static int launches_kernel(unsigned api);

/* ---- order ----------------------------------------------------------------------------------- */

static int by_start(const void *a, const void *b)
{
    const struct ga_gpu_act *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Device, then time; ties broken by every field that can differ, so that the order (and what
 * the idle-gap analysis reports as the work around a gap) does not depend on arrival order. */
int ga_gpu_act_cmp(const void *a, const void *b)
{
    const struct ga_gpu_act *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Union length of intervals sorted by start: one sweep, touching intervals merge. */
static uint64_t union_sorted(const struct ga_gpu_act *a, size_t n)
{
    uint64_t busy = 0, s, e;
    if (!n) return 0;
    s = a[0].start;
    e = a[0].end;
    for (size_t i = 1; i < n; i++) {
        if (a[i].start > e) {
            busy += e - s;
            s = a[i].start;
            e = a[i].end;
        } else if (a[i].end > e) {
            e = a[i].end;
        }
    }
    return busy + (e - s);
}

uint64_t ga_gpu_union_ns(struct ga_gpu_act *a, size_t n)
{
    if (n > 1) qsort(a, n, sizeof(*a), by_start);
    return union_sorted(a, n);
}

/* ---- the reorder heap ------------------------------------------------------------------------ */

/* Time first, so that activities leave in global time order (one frontier for every device);
 * restricted to one device it is ga_gpu_act_cmp's order. */
static int act_less(const struct ga_gpu *g, const struct ga_gpu_held *x,
                    const struct ga_gpu_held *y)
{
    if (x->start != y->start) return x->start < y->start;
    return ga_gpu_act_cmp(&g->held[x->idx], &g->held[y->idx]) < 0;
}

/* A 4-ary heap: children of i are 4i+1..4i+4, one 64-byte line (the array starts 48 bytes past
 * a line, so each group of four is line-aligned). The heap holds up to GA_REORDER_MAX entries,
 * 8 MiB, beyond the caches: a pop reads one line per level, and four children per level halve the
 * levels of a binary heap (10 instead of 19 when full). */
#define ARITY     4
#define HEAP_SKEW 3 /* entries before heap[0] in the allocation: 3 * 16 + 16 = 64 */
_Static_assert(sizeof(struct ga_gpu_held) == 16, "four heap entries to a 64-byte line");

static void heap_grow(struct ga_gpu *g)
{
    size_t cap = g->heap_cap ? 2 * g->heap_cap : 1024;
    struct ga_gpu_held *h =
        (struct ga_gpu_held *)ga_xaligned(64, (cap + HEAP_SKEW) * sizeof(*h)) + HEAP_SKEW;
    if (g->n_heap) memcpy(h, g->heap, g->n_heap * sizeof(*h));
    if (g->heap) free(g->heap - HEAP_SKEW);
    g->heap = h;
    g->heap_cap = cap;
}

static void heap_push(struct ga_gpu *g, struct ga_gpu_held e)
{
    if (g->n_heap == g->heap_cap) heap_grow(g);
    size_t i = g->n_heap++;
    while (i) {
        size_t p = (i - 1) / ARITY;
        if (!act_less(g, &e, &g->heap[p])) break;
        g->heap[i] = g->heap[p];
        i = p;
    }
    g->heap[i] = e;
}

static struct ga_gpu_held heap_pop(struct ga_gpu *g)
{
    struct ga_gpu_held top = g->heap[0], last = g->heap[--g->n_heap];
    const struct ga_gpu_held *h = g->heap;
    size_t i = 0, n = g->n_heap;
    for (;;) {
        size_t c = ARITY * i + 1, m = c;
        if (c >= n) break;
        size_t end = c + ARITY < n ? c + ARITY : n;
        for (size_t k = c + 1; k < end; k++)
            if (act_less(g, &h[k], &h[m])) m = k;
        if (!act_less(g, &h[m], &last)) break;
        g->heap[i] = h[m];
        i = m;
    }
    if (n) g->heap[i] = last;
    return top;
}

/* ---- the waiting activities: sorted runs in front of the heap ----------------------------------
 * Activities mostly arrive in runs that are already in order (each stream's kernels, one CUPTI
 * buffer after another): an activity goes to the end of the first of GA_GPU_RUNS queues whose
 * last one it does not precede, to the heap only when none will take it. The next to leave is
 * the least of the queues' heads and the heap's top: a few comparisons in cache, where a pop out
 * of a full heap reads ten lines from memory. */

static void run_grow(struct ga_gpu_run *q)
{
    size_t cap = q->cap ? 2 * q->cap : 256;
    struct ga_gpu_held *e = ga_xmalloc(cap * sizeof(*e));
    for (size_t i = 0; i < q->n; i++) /* unwrapped: the head moves to 0 */
        e[i] = q->e[(q->head + i) & (q->cap - 1)];
    free(q->e);
    q->e = e;
    q->cap = cap;
    q->head = 0;
}

static inline const struct ga_gpu_held *run_head(const struct ga_gpu_run *q)
{
    return &q->e[q->head];
}

static inline const struct ga_gpu_held *run_tail(const struct ga_gpu_run *q)
{
    return &q->e[(q->head + q->n - 1) & (q->cap - 1)];
}

/* Holds activity a until it leaves. */
static void wait_push(struct ga_gpu *g, const struct ga_gpu_act *a)
{
    struct ga_gpu_held e = {a->start, 0};
    if (g->n_free_held) {
        e.idx = g->free_held[--g->n_free_held];
    } else {
        g->held = ga_xgrow(g->held, &g->held_cap, g->n_held, sizeof(*g->held));
        e.idx = (uint32_t)g->n_held++;
    }
    g->held[e.idx] = *a;
    if (++g->n_wait > g->max_wait) g->max_wait = g->n_wait;
    struct ga_gpu_run *to = NULL;
    for (size_t k = 0; k < GA_GPU_RUNS; k++) {
        struct ga_gpu_run *q = &g->runs[k];
        if (!q->n) {
            if (!to) to = q;
        } else if (!act_less(g, &e, run_tail(q))) {
            to = q;
            break;
        }
    }
    if (!to) {
        heap_push(g, e);
        return;
    }
    if (to->n == to->cap) run_grow(to);
    to->e[(to->head + to->n++) & (to->cap - 1)] = e;
}

/* The next to leave: a queue's index, or GA_GPU_RUNS for the heap's top; g->n_wait > 0. */
static size_t wait_next(const struct ga_gpu *g)
{
    size_t best = GA_GPU_RUNS;
    const struct ga_gpu_held *b = g->n_heap ? &g->heap[0] : NULL;
    for (size_t k = 0; k < GA_GPU_RUNS; k++) {
        const struct ga_gpu_run *q = &g->runs[k];
        if (q->n && (!b || act_less(g, run_head(q), b))) {
            b = run_head(q);
            best = k;
        }
    }
    return best;
}

static uint64_t wait_start(const struct ga_gpu *g, size_t from)
{
    return from < GA_GPU_RUNS ? run_head(&g->runs[from])->start : g->heap[0].start;
}

/* Takes the next to leave (from wait_next). */
static struct ga_gpu_act wait_pop(struct ga_gpu *g, size_t from)
{
    struct ga_gpu_held top;
    if (from < GA_GPU_RUNS) {
        struct ga_gpu_run *q = &g->runs[from];
        top = *run_head(q);
        q->head = (q->head + 1) & (q->cap - 1);
        if (--q->n == 0 && q->cap > GA_GPU_RUN_KEEP) { /* a long run is over: its memory goes */
            free(q->e);
            *q = (struct ga_gpu_run){NULL, 0, 0, 0};
        }
    } else {
        top = heap_pop(g);
    }
    g->n_wait--;
    g->free_held = ga_xgrow(g->free_held, &g->free_held_cap, g->n_free_held, sizeof(*g->free_held));
    g->free_held[g->n_free_held++] = top.idx;
    return g->held[top.idx];
}

static void unpend(struct ga_gpu *g, size_t i)
{
    if (!g->launches[i].pending) return;
    g->launches[i].pending = 0;
    g->n_pending--;
}

/* The earliest launch still waiting for its (first) kernel, UINT64_MAX none: entries whose kernel
 * arrived (or whose slab entry went) are dropped from the head as they reach it; a launch waiting
 * GA_LINK_HORIZON_NS of GPU time (its kernel dropped by CUPTI, a graph without kernels) stops
 * holding the heap. */
static uint64_t pending_min(struct ga_gpu *g)
{
    while (g->pend_head < g->n_pend) {
        const struct ga_pend *p = &g->pend[g->pend_head];
        struct ga_launch_ent *e = &g->launches[p->idx];
        if (e->pending && e->seq == p->seq) {
            if (p->ts + GA_LINK_HORIZON_NS >= g->gpu_max) return p->ts;
            unpend(g, p->idx);
        }
        g->pend_head++;
    }
    return UINT64_MAX;
}

/* Appends launch slab entry i. The queue keeps at most twice the pending launches (plus 4,096):
 * past that the taken ones are squeezed out, in order. */
static void pend_push(struct ga_gpu *g, size_t i, uint64_t ts)
{
    size_t live = g->n_pend - g->pend_head, out = 0;
    int squeeze = live > 2 * g->n_pending + 4096;
    if (squeeze || (g->pend_head && g->pend_head >= live)) {
        for (size_t k = g->pend_head; k < g->n_pend; k++) {
            const struct ga_pend *p = &g->pend[k];
            if (!squeeze || (g->launches[p->idx].pending && g->launches[p->idx].seq == p->seq))
                g->pend[out++] = *p;
        }
        g->pend_head = 0;
        g->n_pend = out;
    }
    g->pend = ga_xgrow(g->pend, &g->pend_cap, g->n_pend, sizeof(*g->pend));
    g->launches[i].seq = ++g->pend_seq;
    g->launches[i].pending = 1;
    g->n_pending++;
    g->pend[g->n_pend++] = (struct ga_pend){ts, (uint32_t)i, g->pend_seq};
}

/* Activities may leave that started GA_REORDER_NS before both the newest GPU start and the newest
 * host record, and before every launch whose kernel has not arrived (a kernel cannot start before
 * its launch, and CUPTI delivers a long kernel only when it ends). */
static uint64_t release_limit(struct ga_gpu *g)
{
    uint64_t lim = g->gpu_max < g->host_max ? g->gpu_max : g->host_max;
    uint64_t p = pending_min(g);
    lim = lim > GA_REORDER_NS ? lim - GA_REORDER_NS : 0;
    return p < lim ? p : lim;
}

/* All leave with `all`; else the newest GA_REORDER_MIN stay whatever their times, and the oldest
 * leave while more than GA_REORDER_MAX wait. */
static void release(struct ga_gpu *g, int all)
{
    uint64_t lim = release_limit(g);
    while (g->n_wait) {
        size_t from = wait_next(g);
        if (!all && g->n_wait <= GA_REORDER_MAX &&
            (g->n_wait <= GA_REORDER_MIN || wait_start(g, from) >= lim))
            break;
        struct ga_gpu_act a = wait_pop(g, from);
        leave(g, &a);
    }
}

/* ---- GPU records ------------------------------------------------------------------------------
 */

/* A device not seen yet is analyzed only while fewer than GA_DEVICES_MAX are. Activities come
 * in runs of one device: the last one let in is answered without the map. */
static int device_room(struct ga_gpu *g, uint32_t device)
{
    int added = 0;
    if (g->n_seen_devices && device == g->last_seen_device) return 1;
    if (g->n_seen_devices < GA_DEVICES_MAX) {
        ga_map_upsert(&g->seen_devices, device, 0, 0, &added);
        g->n_seen_devices += added;
        g->last_seen_device = device;
        return 1;
    }
    if (!ga_map_find(&g->seen_devices, device, 0)) return 0;
    g->last_seen_device = device;
    return 1;
}

/* Activities without both times, or ending before they start, are left out; so are those that
 * arrive older than one that already left (the reorder bound was too short for them). GPU
 * record times are already CLOCK_MONOTONIC (trace_format.h; clock_offset_ns is a fact the shim
 * already applied). */
static void add_act(struct ga_gpu *g, const struct ga_gpu_act *a)
{
    if (!a->start || !a->end || a->end < a->start) {
        g->skipped++;
        return;
    }
    if ((g->left && a->start < g->frontier) || !device_room(g, a->device)) {
        g->late++;
        return;
    }
    if (a->start > g->gpu_max) g->gpu_max = a->start;
    wait_push(g, a);
    release(g, 0);
}

static uint64_t *gen_find(const struct ga_gen_map *m, uint64_t key, int *old);

/* A kernel whose launch is known when it arrives takes the launch's slab entry along, and both
 * table entries go at once (the tables then hold only what waits for its other half); a graph's
 * kernels are linked as they leave, its entries staying for the others. Either way the launch
 * stops holding the heap; so does that of a kernel left out (not `ok`). */
static void link_early(struct ga_gpu *g, struct ga_gpu_act *a, int ok)
{
    int eold, lold;
    uint64_t *ext = gen_find(&g->extcorr, a->corr, &eold);
    uint64_t *idx = ext ? gen_find(&g->launch_idx, *ext, &lold) : NULL;
    if (!idx) {
        if (ext && ok && g->early.count < GA_REORDER_MAX) /* its launch will not wait for it */
            (*ga_map_upsert(&g->early, *ext, 0, 0, NULL))++;
        return;
    }
    unpend(g, (size_t)*idx); /* its kernel (a graph's first) has arrived */
    if (!ok || a->graph_id) return;
    uint64_t launch_corr = *ext;
    a->slot = (uint32_t)*idx + 1;
    ga_map_remove(lold ? &g->launch_idx.old : &g->launch_idx.young, launch_corr, 0, NULL);
    ga_map_remove(eold ? &g->extcorr.old : &g->extcorr.young, a->corr, 0, NULL);
}

/* A kernel, copy or memset: linked to its launch where that is known (link_early; `ok` where
 * add_act will keep it: after the frontier, a device with room), then added. */
static void take_act(struct ga_gpu *g, struct ga_gpu_act *a)
{
    if (a->start && a->end && a->end >= a->start)
        link_early(g, a, !(g->left && a->start < g->frontier) && device_room(g, a->device));
    add_act(g, a);
}

static void on_kernel(struct ga_gpu *g, const struct gt_rec_gpu_kernel *k)
{
    struct ga_gpu_act a = {.start = k->start,
                           .end = k->end,
                           .corr = k->corr,
                           .device = k->device,
                           .stream = k->stream,
                           .name_id = k->name_id,
                           .graph_id = k->graph_id,
                           .kind = GA_GPU_KERNEL};
    take_act(g, &a);
}

static void on_memcpy(struct ga_gpu *g, const struct ga_event *ev)
{
    const struct gt_rec_gpu_memcpy *m = &ev->r->gpu_memcpy;
    struct ga_gpu_act a = {.start = m->start,
                           .end = m->end,
                           .bytes = m->bytes,
                           .corr = m->corr,
                           .device = m->device,
                           .stream = m->stream,
                           .kind = GA_GPU_MEMCPY,
                           .copy_kind = (uint8_t)(ev->sub < GA_COPY_KINDS ? ev->sub : 0)};
    take_act(g, &a);
}

static void on_memset(struct ga_gpu *g, const struct gt_rec_gpu_memset *m)
{
    struct ga_gpu_act a = {.start = m->start,
                           .end = m->end,
                           .bytes = m->bytes,
                           .corr = m->corr,
                           .device = m->device,
                           .stream = m->stream,
                           .kind = GA_GPU_MEMSET};
    take_act(g, &a);
}

/* An id named twice keeps the latest name. */
static void on_name(struct ga_gpu *g, const struct ga_event *ev)
{
    int added = 0;
    uint64_t *idx = ga_map_upsert(&g->name_idx, ev->r->gpu_name.id, 0, g->n_names, &added);
    char *name = ga_xstrndup(ev->str[0], ev->str_len[0]);
    if (!added) {
        free(g->names[*idx]);
        g->names[*idx] = name;
        return;
    }
    g->names = ga_xgrow(g->names, &g->names_cap, g->n_names, sizeof(*g->names));
    g->names[g->n_names++] = name;
}

/* ---- links: two generations of unresolved entries --------------------------------------------
 */

static uint64_t *gen_find(const struct ga_gen_map *m, uint64_t key, int *old)
{
    uint64_t *v = ga_map_find(&m->young, key, 0);
    *old = 0;
    if (v || !m->old.count) return v;
    *old = 1;
    return ga_map_find(&m->old, key, 0);
}

static int link_full(const struct ga_gen_map *m)
{
    return m->young.count + m->old.count >= GA_LINK_MAX;
}

static void slab_free(struct ga_gpu *g, uint64_t i)
{
    unpend(g, i);
    g->launches[i].next_free = g->free_head;
    g->free_head = (uint32_t)i + 1;
}

/* Every GA_LINK_HORIZON_NS of GPU time the older generation goes: what is still in it was not
 * taken by the kernels that left the heap meanwhile (graph launches' entries go too, taken or
 * not: their kernels have had a horizon to arrive). */
static void rotate(struct ga_gpu *g)
{
    const struct ga_map_slot *s;
    if (!g->launch_idx.since) g->launch_idx.since = g->frontier;
    if (g->frontier - g->launch_idx.since < GA_LINK_HORIZON_NS) return;
    for (size_t i = 0; ga_map_next(&g->launch_idx.old, &i, &s);) {
        g->launches_evicted += !g->launches[s->value].used;
        slab_free(g, s->value);
    }
    g->extcorr_evicted += g->extcorr.old.count;
    ga_map_free(&g->launch_idx.old);
    ga_map_free(&g->extcorr.old);
    g->launch_idx.old = g->launch_idx.young;
    g->extcorr.old = g->extcorr.young;
    memset(&g->launch_idx.young, 0, sizeof(g->launch_idx.young));
    memset(&g->extcorr.young, 0, sizeof(g->extcorr.young));
    g->launch_idx.since = g->frontier;
}

/* A later record for the same CUPTI corr replaces the earlier one. */
static void on_extcorr(struct ga_gpu *g, const struct gt_rec_gpu_extcorr *e)
{
    uint64_t *v = ga_map_find(&g->extcorr.young, e->corr, 0);
    if (v) {
        *v = e->ext;
        return;
    }
    ga_map_remove(&g->extcorr.old, e->corr, 0, NULL);
    if (link_full(&g->extcorr)) {
        g->extcorr_evicted++;
        return;
    }
    *ga_map_upsert(&g->extcorr.young, e->corr, 0, 0, NULL) = e->ext;
}

/* ---- host records ---------------------------------------------------------------------------- */

static uint32_t call_cache_slot(uint32_t tid)
{
    return (tid ^ tid >> 6 ^ tid >> 12) & (GA_GPU_CALL_CACHE - 1);
}

/* last_call's way through the hash map, out of line: the cache missed. */
__attribute__((cold, noinline)) static struct ga_gpu_call *last_call_slow(struct ga_gpu *g,
                                                                          uint32_t tid)
{
    int added = 0;
    uint32_t c = call_cache_slot(tid);
    uint64_t *i = ga_map_upsert(&g->last_call_idx, tid, 0, g->n_last_call, &added);
    if (added) {
        g->last_call =
            ga_xgrow(g->last_call, &g->last_call_cap, g->n_last_call, sizeof(*g->last_call));
        g->last_call[g->n_last_call++] = (struct ga_gpu_call){0, 0};
    }
    if (*i < UINT32_MAX) {
        g->call_cache_tid[c] = tid;
        g->call_cache_idx[c] = (uint32_t)*i + 1;
    }
    return &g->last_call[*i];
}

/* Threads take turns, record by record or chunk by chunk: a direct-mapped cache of tid -> 1 +
 * index in front of last_call_idx (0: empty slot) answers most lookups without the hash map. */
static inline struct ga_gpu_call *last_call(struct ga_gpu *g, uint32_t tid)
{
    uint32_t c = call_cache_slot(tid);
    if (g->call_cache_idx[c] && g->call_cache_tid[c] == tid)
        return &g->last_call[g->call_cache_idx[c] - 1];
    return last_call_slow(g, tid);
}

static uint64_t launch_end(const struct gt_rec_launch *l)
{
    return l->ts + l->dur_ns;
}

/* When a host record's CUDA call ended: launches and frees are stamped before the call was
 * forwarded (plus the time inside it), allocations after it returned, spans at their exit. */
__attribute__((always_inline)) static inline int call_end(const struct ga_event *ev, unsigned type,
                                                          uint64_t *end)
{
    switch (type) {
    case GT_REC_LAUNCH:
        *end = launch_end(&ev->r->launch);
        return 1;
    case GT_REC_SPAN:
        *end =
            ev->r->span.ts_exit > ev->r->span.ts_enter ? ev->r->span.ts_exit : ev->r->span.ts_enter;
        return 1;
    case GT_REC_FREE:
        *end = ev->r->free.ts + ev->r->free.dur_ns;
        return 1;
    case GT_REC_ALLOC:
    case GT_REC_ALLOC_FAIL:
    case GT_REC_VMM_MAP:
    case GT_REC_OBJECT:
        *end = ev->ts;
        return 1;
    default:
        return 0;
    }
}

static void note_call(struct ga_gpu_call *c, uint64_t end, uint16_t api)
{
    if (end >= c->end) *c = (struct ga_gpu_call){end, api};
}

__attribute__((cold, noinline)) static void note_call_slow(struct ga_gpu *g, uint32_t tid,
                                                           uint64_t end, uint16_t api)
{
    note_call(last_call_slow(g, tid), end, api);
}

/* Host records arrive in time order, so the thread's latest call so far is its previous one.
 * Their sort key (ev->ts) is a time for these and for watermarks: how far the host has come.
 * (A cache miss ends in a tail call, so that the common case needs no stack frame.) */
__attribute__((always_inline)) static inline void host_call(struct ga_gpu *g,
                                                            const struct ga_event *ev, uint64_t end)
{
    if (ev->ts > g->host_max) g->host_max = ev->ts;
    uint32_t tid = ev->tid, c = call_cache_slot(tid);
    if (g->call_cache_idx[c] && g->call_cache_tid[c] == tid)
        note_call(&g->last_call[g->call_cache_idx[c] - 1], end, ev->sub);
    else
        note_call_slow(g, tid, end, ev->sub);
}

/* Whether a launch is one on_launch keeps. */
static int launch_ran(const struct ga_gpu *g, const struct ga_event *ev)
{
    if (ev->r->launch.result != 0) return 0;                       /* nothing ran */
    if (g->cupti_seen && g->cupti_status != GT_CUPTI_ON) return 0; /* no GPU records will follow */
    return 1;
}

/* A corr names one launch (launch_ran); a second launch with a corr still waiting is ignored. */
__attribute__((noinline)) static void on_launch(struct ga_gpu *g, const struct ga_event *ev)
{
    const struct gt_rec_launch *l = &ev->r->launch;
    int old;
    size_t i;
    if (gen_find(&g->launch_idx, l->corr, &old)) return;
    if (link_full(&g->launch_idx)) {
        g->launches_evicted++;
        return;
    }
    if (g->free_head) {
        i = g->free_head - 1;
        g->free_head = g->launches[i].next_free;
    } else {
        i = g->n_launches++;
        g->launches = ga_xgrow(g->launches, &g->launches_cap, i, sizeof(*g->launches));
    }
    *ga_map_upsert(&g->launch_idx.young, l->corr, 0, 0, NULL) = i;
    const struct ga_gpu_call *prev = last_call(g, ev->tid);
    g->launches[i] = (struct ga_launch_ent){.l = {.ts = l->ts,
                                                  .func = l->func,
                                                  .corr = l->corr,
                                                  .dur_ns = l->dur_ns,
                                                  .prev_end = prev->end,
                                                  .tid = ev->tid,
                                                  .stack = l->stack,
                                                  .api = ev->sub,
                                                  .prev_api = prev->api}};
    if ((launches_kernel(ev->sub) || ev->sub == GT_API_cuGraphLaunch ||
         ev->sub == GT_API_cuGraphLaunch_ptsz || ga_api_enqueues(ev->sub)) &&
        !(g->early.count && ga_map_find(&g->early, l->corr, 0)))
        pend_push(g, i, l->ts);
}

static void on_cupti(struct ga_gpu *g, const struct ga_event *ev)
{
    g->cupti_seen = 1;
    g->cupti_status = ev->sub;
    g->clock_offset = ev->r->cupti.clock_offset_ns;
}

__attribute__((noinline)) static void on_gpu_record(struct ga_gpu *g, const struct ga_event *ev)
{
    g->records++;
    switch (ev->type) {
    case GT_REC_GPU_KERNEL:
        on_kernel(g, &ev->r->gpu_kernel);
        break;
    case GT_REC_GPU_MEMCPY:
        on_memcpy(g, ev);
        break;
    case GT_REC_GPU_MEMSET:
        on_memset(g, &ev->r->gpu_memset);
        break;
    case GT_REC_GPU_EXTCORR:
        on_extcorr(g, &ev->r->gpu_extcorr);
        break;
    case GT_REC_GPU_NAME:
        on_name(g, ev);
        break;
    case GT_REC_GPU_DROPPED:
        g->dropped += ev->r->gpu_dropped.count;
        break;
    case GT_REC_GPU_API:
        g->api_records++;
        break;
    default:
        break;
    }
}

/* After each host record: its time may let activities leave. Out of line: nothing leaves while
 * the heap holds at most its minimum (in a trace without GPU records, always). */
__attribute__((noinline)) static void release_after_host(struct ga_gpu *g)
{
    if (wait_start(g, wait_next(g)) < release_limit(g)) release(g, 0);
}

/* A launch on_launch keeps: first its analysis (which reads the thread's previous call), then
 * as a call. */
__attribute__((noinline)) static void kept_launch(struct ga_gpu *g, const struct ga_event *ev)
{
    on_launch(g, ev);
    host_call(g, ev, launch_end(&ev->r->launch));
    if (g->n_wait > GA_REORDER_MIN) release_after_host(g);
}

/* A host call of `type` that ended at `end`: a launch that ran is kept, any call is noted as its
 * thread's latest. */
__attribute__((always_inline)) static inline void on_call(struct ga_gpu *g,
                                                          const struct ga_event *ev,
                                                          unsigned type, uint64_t end)
{
    if (type == GT_REC_LAUNCH && launch_ran(g, ev)) {
        kept_launch(g, ev);
        return;
    }
    host_call(g, ev, end);
    if (g->n_wait > GA_REORDER_MIN) release_after_host(g);
}

/* A host call of a type the caller knows (a constant: the switches fold away). */
__attribute__((always_inline)) static inline void typed_call(struct ga_gpu *g,
                                                             const struct ga_event *ev,
                                                             unsigned type)
{
    uint64_t end = 0;
    call_end(ev, type, &end);
    on_call(g, ev, type, end);
}

void ga_gpu_alloc_event(struct ga_gpu *g, const struct ga_event *ev)
{
    typed_call(g, ev, GT_REC_ALLOC);
}

void ga_gpu_free_event(struct ga_gpu *g, const struct ga_event *ev)
{
    typed_call(g, ev, GT_REC_FREE);
}

void ga_gpu_launch_event(struct ga_gpu *g, const struct ga_event *ev)
{
    typed_call(g, ev, GT_REC_LAUNCH);
}

void ga_gpu_span_event(struct ga_gpu *g, const struct ga_event *ev)
{
    typed_call(g, ev, GT_REC_SPAN);
}

void ga_gpu_event(struct ga_gpu *g, const struct ga_event *ev)
{
    if (ga_rec_is_gpu(ev->type)) {
        on_gpu_record(g, ev);
        return;
    }
    uint64_t end;
    if (call_end(ev, ev->type, &end)) {
        on_call(g, ev, ev->type, end);
        return;
    }
    if (ev->type == GT_REC_WATERMARK) {
        if (ev->ts > g->host_max) g->host_max = ev->ts;
    } else if (ev->type == GT_REC_CUPTI) {
        on_cupti(g, ev);
    }
    if (g->n_wait > GA_REORDER_MIN) release_after_host(g);
}

/* ---- as activities leave the heap ----------------------------------------------------------- */

static void count_tid(struct ga_gpu *g, uint32_t tid)
{
    uint64_t *n = ga_map_find(&g->tid_kernels, tid, 0);
    if (!n && g->tid_kernels.count < GA_TIDS_MAX)
        n = ga_map_upsert(&g->tid_kernels, tid, 0, 0, NULL);
    if (n) (*n)++;
}

/* Launches, async copies and memsets push our correlation id (blocking copies do not: their
 * CUPTI corr has no external-correlation record). A launch that ran one kernel is forgotten once
 * linked; a graph's stays for its other kernels until evicted. */
static const struct ga_gpu_launch *link_kernel(struct ga_gpu *g, struct ga_gpu_act *a,
                                               struct ga_gpu_launch *out)
{
    struct ga_gpu_link *l = &g->link;
    int eold = 0, lold = 0;
    uint64_t *ext = NULL, *idx = NULL;
    l->kernels++;
    if (a->slot) {
        *out = g->launches[a->slot - 1].l;
        slab_free(g, a->slot - 1);
        a->slot = 0;
        a->linked = 1;
        a->func = out->func;
        a->api = out->api;
        l->linked++;
        count_tid(g, out->tid);
        ga_latency_add(&g->latency, (int64_t)(a->start - out->ts));
        return out;
    }
    ext = gen_find(&g->extcorr, a->corr, &eold);
    if (ext && g->early.count) {
        uint64_t *n = ga_map_find(&g->early, *ext, 0);
        if (n && !--*n) ga_map_remove_at(&g->early, n);
    }
    idx = ext ? gen_find(&g->launch_idx, *ext, &lold) : NULL;
    if (!idx) {
        l->unlinked++;
        return NULL;
    }
    struct ga_launch_ent *e = &g->launches[*idx];
    *out = e->l;
    a->linked = 1;
    a->func = out->func;
    a->api = out->api;
    l->linked++;
    count_tid(g, out->tid);
    if (a->graph_id) {
        l->graph_kernels++;
        e->used = 1;
        return out;
    }
    ga_latency_add(&g->latency, (int64_t)(a->start - out->ts));
    uint64_t launch_corr = *ext;
    slab_free(g, *idx);
    ga_map_remove(lold ? &g->launch_idx.old : &g->launch_idx.young, launch_corr, 0, NULL);
    ga_map_remove(eold ? &g->extcorr.old : &g->extcorr.young, a->corr, 0, NULL);
    return out;
}

/* A copy or memset and the async call that queued it (GT_FAM_ENQUEUE): linked like a kernel,
 * but neither counted among the kernels linked nor in the launch latency, and its bytes kept. */
static const struct ga_gpu_launch *link_copy(struct ga_gpu *g, struct ga_gpu_act *a,
                                             struct ga_gpu_launch *out)
{
    int eold = 0, lold = 0;
    uint64_t *ext = NULL, *idx = NULL;
    if (a->slot) {
        *out = g->launches[a->slot - 1].l;
        slab_free(g, a->slot - 1);
        a->slot = 0;
    } else {
        ext = gen_find(&g->extcorr, a->corr, &eold);
        if (ext && g->early.count) {
            uint64_t *n = ga_map_find(&g->early, *ext, 0);
            if (n && !--*n) ga_map_remove_at(&g->early, n);
        }
        idx = ext ? gen_find(&g->launch_idx, *ext, &lold) : NULL;
        if (!idx || !ga_api_enqueues(g->launches[*idx].l.api)) return NULL;
        *out = g->launches[*idx].l;
        uint64_t launch_corr = *ext;
        slab_free(g, *idx);
        ga_map_remove(lold ? &g->launch_idx.old : &g->launch_idx.young, launch_corr, 0, NULL);
        ga_map_remove(eold ? &g->extcorr.old : &g->extcorr.young, a->corr, 0, NULL);
    }
    a->linked = 1;
    a->api = out->api;
    return out;
}

static struct ga_gpu_device *device_at(struct ga_gpu *g, uint32_t device, int *added)
{
    size_t i;
    *added = 0;
    if (g->n_devices && g->devices[g->last_device].device == device)
        return &g->devices[g->last_device];
    i = (size_t)*ga_map_upsert(&g->device_idx, device, 0, g->n_devices, added);
    if (*added) {
        g->devices = ga_xgrow(g->devices, &g->devices_cap, i, sizeof(*g->devices));
        g->devices[i] = (struct ga_gpu_device){.device = device};
        g->n_devices++;
    }
    g->last_device = i;
    return &g->devices[i];
}

/* A stream's busy union, as the device's: its activities leave in its start order. */
static void stream_add(struct ga_gpu_device *d, const struct ga_gpu_act *a)
{
    int added = 0;
    size_t i = d->last_stream;
    if (!d->n_streams || d->streams[i].stream != a->stream) {
        i = (size_t)*ga_map_upsert(&d->stream_idx, a->stream, 0, d->n_streams, &added);
        if (added) {
            d->streams = ga_xgrow(d->streams, &d->streams_cap, i, sizeof(*d->streams));
            d->streams[i] = (struct ga_gpu_stream){a->stream, 0, 0, a->start, a->end};
            d->n_streams++;
        }
        d->last_stream = i;
    }
    struct ga_gpu_stream *st = &d->streams[i];
    st->kernels += a->kind == GA_GPU_KERNEL;
    if (added) return;
    if (a->start > st->e) {
        st->busy_ns += st->e - st->s;
        st->s = a->start;
        st->e = a->end;
    } else if (a->end > st->e) {
        st->e = a->end;
    }
}

static void device_add(struct ga_gpu *g, const struct ga_gpu_act *a)
{
    int added;
    struct ga_gpu_device *d = device_at(g, a->device, &added);
    if (added) {
        d->first = d->s = a->start;
        d->last = d->e = a->end;
    } else if (a->start > d->e) {
        d->busy_ns += d->e - d->s;
        d->s = a->start;
        d->e = a->end;
    } else if (a->end > d->e) {
        d->e = a->end;
    }
    if (a->end > d->last) d->last = a->end;
    d->kernels += a->kind == GA_GPU_KERNEL;
    g->kernel_count += a->kind == GA_GPU_KERNEL;
    stream_add(d, a);
}

static void sums_add(struct ga_gpu *g, const struct ga_gpu_act *a)
{
    struct ga_gpu_sum *s = a->kind == GA_GPU_MEMCPY   ? &g->copies[a->copy_kind]
                           : a->kind == GA_GPU_MEMSET ? &g->memsets
                                                      : NULL;
    if (!s) return;
    s->count++;
    s->bytes += a->bytes;
    s->total_ns += a->end - a->start;
}

/* Launch APIs whose handle is a CUfunction/CUkernel (graph and host-function launches are not). */
static int launches_kernel(unsigned api)
{
    return api >= GT_API_cuLaunchKernel && api <= GT_API_cuLaunchCooperativeKernel_ptsz;
}

int ga_gpu_is_collective(const char *name)
{
    return strcasestr(name, "nccl") || strcasestr(name, "rccl");
}

/* Judged once per name key, by the GPU name known when the key is first seen (CUPTI names a
 * kernel before its activity record). */
static int name_is_collective(const struct ga_gpu *g, uint32_t name_id)
{
    const uint64_t *idx = name_id ? ga_map_find(&g->name_idx, name_id, 0) : NULL;
    return idx && ga_gpu_is_collective(g->names[*idx]);
}

/* The union of the device's non-collective kernels (activities leave in start order). */
static void compute_add(struct ga_gpu_device *d, const struct ga_gpu_act *a)
{
    if (!d->c_open) {
        d->cs = a->start;
        d->ce = a->end;
        d->c_open = 1;
    } else if (a->start > d->ce) {
        d->compute_ns += d->ce - d->cs;
        d->cs = a->start;
        d->ce = a->end;
    } else if (a->end > d->ce) {
        d->ce = a->end;
    }
}

/* GPU time per (GPU name id, launch function): named at the end, when every name is known.
 * Returns whether the kernel is a collective. */
static int kernel_add(struct ga_gpu *g, const struct ga_gpu_act *a)
{
    int added = 0;
    uint64_t func = a->linked && launches_kernel(a->api) ? a->func : NO_FUNC;
    uint32_t name_id = a->name_id;
    if (g->n_kacc >= GA_KACC_MAX && !ga_map_find(&g->kacc_idx, name_id, func))
        name_id = 0, func = NO_FUNC;
    uint64_t *i = ga_map_upsert(&g->kacc_idx, name_id, func, g->n_kacc, &added);
    if (added) {
        g->kacc = ga_xgrow(g->kacc, &g->kacc_cap, g->n_kacc, sizeof(*g->kacc));
        g->kacc[g->n_kacc++] =
            (struct ga_kacc){name_id, func, 0, 0, 0, name_is_collective(g, name_id)};
    }
    struct ga_kacc *k = &g->kacc[*i];
    uint64_t d = a->end - a->start;
    k->count++;
    k->total += d;
    if (d > k->max) k->max = d;
    return k->collective;
}

static void leave(struct ga_gpu *g, struct ga_gpu_act *a)
{
    struct ga_gpu_launch copy;
    const struct ga_gpu_launch *la = NULL;
    g->frontier = a->start;
    g->left = 1;
    rotate(g);
    if (a->kind == GA_GPU_KERNEL)
        la = link_kernel(g, a, &copy);
    else
        la = link_copy(g, a, &copy);
    device_add(g, a);
    sums_add(g, a);
    if (a->kind == GA_GPU_KERNEL && !kernel_add(g, a))
        compute_add(device_at(g, a->device, &(int){0}), a);
    if (g->keep_acts) {
        g->acts = ga_xgrow(g->acts, &g->acts_cap, g->n_acts, sizeof(*g->acts));
        g->acts[g->n_acts] = *a;
    }
    g->n_acts++;
    if (g->gaps) ga_gaps_act(g->gaps, a, la);
    if (g->act_sink) g->act_sink(g->act_ctx, a, la);
}

/* ---- finish: devices, links ------------------------------------------------------------------ */

static int stream_cmp(const void *a, const void *b)
{
    const struct ga_gpu_stream *x = a, *y = b;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int device_cmp(const void *a, const void *b)
{
    const struct ga_gpu_device *x = a, *y = b;
    return x->device < y->device ? -1 : x->device > y->device;
}

static void close_devices(struct ga_gpu *g)
{
    for (size_t i = 0; i < g->n_devices; i++) {
        struct ga_gpu_device *d = &g->devices[i];
        d->busy_ns += d->e - d->s;
        if (d->c_open) d->compute_ns += d->ce - d->cs;
        d->c_open = 0;
        for (size_t k = 0; k < d->n_streams; k++)
            d->streams[k].busy_ns += d->streams[k].e - d->streams[k].s;
        if (d->n_streams > 1) qsort(d->streams, d->n_streams, sizeof(*d->streams), stream_cmp);
        ga_map_free(&d->stream_idx);
    }
    if (g->n_devices > 1) qsort(g->devices, g->n_devices, sizeof(*g->devices), device_cmp);
    ga_map_free(&g->device_idx);
}

static int by_kernels(const void *a, const void *b)
{
    const struct ga_gpu_thread *x = a, *y = b;
    if (x->kernels != y->kernels) return x->kernels > y->kernels ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void link_finish(struct ga_gpu *g)
{
    struct ga_gpu_link *l = &g->link;
    const struct ga_map_slot *s;
    l->latency_exact = 1;
    if (g->latency.n) {
        l->latency_n = g->latency.n;
        l->latency_min = g->latency.min;
        l->latency_max = g->latency.max;
        l->latency_median = ga_latency_median(&g->latency, &l->latency_exact);
    }
    l->threads = ga_xcalloc(g->tid_kernels.count ? g->tid_kernels.count : 1, sizeof(*l->threads));
    for (size_t i = 0; ga_map_next(&g->tid_kernels, &i, &s);)
        l->threads[l->n_threads++] = (struct ga_gpu_thread){(uint32_t)s->a, s->value};
    qsort(l->threads, l->n_threads, sizeof(*l->threads), by_kernels);
}

/* ---- finish: kernel names -------------------------------------------------------------------- */

struct kacc {
    const char *name;
    uint64_t count, total, max;
};

/* The accumulator of a kernel: its GPU name, else its launch's function name, else unknown
 * (the last slot). Slots: [0, n_names) GPU names, then the timeline's names, then unknown. */
static size_t slot_of(const struct ga_gpu *g, const struct ga_timeline *tl,
                      const struct ga_gpu_act *a)
{
    const uint64_t *idx = a->name_id ? ga_map_find(&g->name_idx, a->name_id, 0) : NULL;
    if (idx && g->names[*idx][0]) return *idx;
    idx = a->linked && launches_kernel(a->api) ? ga_map_find(&tl->handle_name, a->func, 0) : NULL;
    if (idx && tl->names[*idx][0]) return g->n_names + *idx;
    return g->n_names + tl->n_names;
}

static int acc_by_name(const void *a, const void *b)
{
    const struct kacc *x = a, *y = b;
    return x->name == y->name ? 0 : strcmp(x->name, y->name);
}

static int stat_by_total(const void *a, const void *b)
{
    const struct ga_gpu_kstat *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Per slot sums, then merged by name (a GPU name and a function name may be the same). */
static struct kacc *accumulate(const struct ga_gpu *g, const struct ga_timeline *tl, size_t *n)
{
    size_t slots = g->n_names + tl->n_names + 1;
    struct kacc *acc = ga_xcalloc(slots, sizeof(*acc));
    for (size_t i = 0; i < g->n_names; i++)
        acc[i].name = g->names[i];
    for (size_t i = 0; i < tl->n_names; i++)
        acc[g->n_names + i].name = tl->names[i];
    acc[slots - 1].name = "<unknown>";
    for (size_t i = 0; i < g->n_kacc; i++) {
        const struct ga_kacc *c = &g->kacc[i];
        struct ga_gpu_act a = {.name_id = c->name_id, .func = c->func};
        a.linked = c->func != NO_FUNC;
        a.api = a.linked ? GT_API_cuLaunchKernel : 0;
        struct kacc *k = &acc[slot_of(g, tl, &a)];
        k->count += c->count;
        k->total += c->total;
        if (c->max > k->max) k->max = c->max;
    }
    *n = slots;
    return acc;
}

static void kernel_pass(struct ga_gpu *g, const struct ga_timeline *tl)
{
    size_t n = 0, out = 0;
    struct kacc *acc = accumulate(g, tl, &n);
    qsort(acc, n, sizeof(*acc), acc_by_name);
    g->kernels = ga_xcalloc(n, sizeof(*g->kernels));
    for (size_t i = 0; i < n; i++) {
        if (!acc[i].count) continue;
        struct ga_gpu_kstat *k = out ? &g->kernels[out - 1] : NULL;
        if (!k || strcmp(k->name, acc[i].name) != 0) {
            k = &g->kernels[out++];
            k->name = ga_xstrdup(acc[i].name);
        }
        k->count += acc[i].count;
        k->total_ns += acc[i].total;
        if (acc[i].max > k->max_ns) k->max_ns = acc[i].max;
    }
    for (size_t i = 0; i < out; i++) {
        char *d = ga_demangle(g->kernels[i].name);
        g->kernels[i].demangled = d ? d : ga_xstrdup(g->kernels[i].name);
    }
    g->n_kernels = out;
    qsort(g->kernels, out, sizeof(*g->kernels), stat_by_total);
    free(acc);
}

void ga_gpu_finish(struct ga_gpu *g, const struct ga_timeline *tl)
{
    release(g, 1);
    close_devices(g);
    link_finish(g);
    kernel_pass(g, tl);
}

const char *ga_gpu_act_name(const struct ga_gpu *g, const struct ga_timeline *tl,
                            const struct ga_gpu_act *a)
{
    static const char *const copy_names[GA_COPY_KINDS] = {
        "memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
        "memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
    if (a->kind == GA_GPU_MEMCPY)
        return copy_names[a->copy_kind < GA_COPY_KINDS ? a->copy_kind : 0];
    if (a->kind == GA_GPU_MEMSET) return "memset";
    size_t slot = slot_of(g, tl, a);
    if (slot < g->n_names) return g->names[slot];
    if (slot < g->n_names + tl->n_names) return tl->names[slot - g->n_names];
    return "<unknown>";
}

int ga_gpu_has_activity(const struct ga_gpu *g)
{
    return g->n_devices > 0;
}

const char *ga_copy_kind_name(unsigned kind)
{
    static const char *const names[GA_COPY_KINDS] = {
        "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind < GA_COPY_KINDS ? names[kind] : "unknown";
}

void ga_gpu_free(struct ga_gpu *g)
{
    for (size_t i = 0; i < g->n_names; i++)
        free(g->names[i]);
    for (size_t i = 0; i < g->n_devices; i++) {
        free(g->devices[i].streams);
        ga_map_free(&g->devices[i].stream_idx);
    }
    for (size_t i = 0; i < g->n_kernels; i++) {
        free(g->kernels[i].name);
        free(g->kernels[i].demangled);
    }
    free(g->names);
    free(g->acts);
    if (g->heap) free(g->heap - HEAP_SKEW);
    for (size_t k = 0; k < GA_GPU_RUNS; k++)
        free(g->runs[k].e);
    free(g->held);
    free(g->free_held);
    free(g->launches);
    free(g->pend);
    free(g->devices);
    free(g->kernels);
    free(g->kacc);
    free(g->link.threads);
    free(g->last_call);
    ga_map_free(&g->name_idx);
    ga_map_free(&g->extcorr.young);
    ga_map_free(&g->extcorr.old);
    ga_map_free(&g->launch_idx.young);
    ga_map_free(&g->launch_idx.old);
    ga_map_free(&g->last_call_idx);
    ga_map_free(&g->early);
    ga_map_free(&g->device_idx);
    ga_map_free(&g->kacc_idx);
    ga_map_free(&g->tid_kernels);
    ga_map_free(&g->seen_devices);
    ga_latency_free(&g->latency);
    memset(g, 0, sizeof(*g));
}
