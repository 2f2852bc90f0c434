/* The page's timeline view: see view_timeline.h. */
#include "model/view_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "base/demangle.h"
#include "base/util.h"

void ga_tlv_init(struct ga_tlv *v, const uint64_t *start_monotonic_ns)
{
    memset(v, 0, sizeof(*v));
    v->hdr0 = start_monotonic_ns;
    v->slots = ga_xcalloc(GA_TLV_SLOTS, sizeof(*v->slots));
    for (size_t i = 0; i < GA_TLV_SLOTS; i++)
        v->slots[i].cut = UINT64_MAX;
    v->cap = GA_TLV_DETAIL;
    v->longest = ga_xmalloc(GA_TLV_LONGEST * sizeof(*v->longest));
    v->gaps = ga_xmalloc(GA_TLV_GAPS * sizeof(*v->gaps));
    v->host = ga_xmalloc(GA_TLV_HOST * sizeof(*v->host));
}

static void start(struct ga_tlv *v)
{
    v->started = 1;
    v->origin = v->hdr0 ? *v->hdr0 : 0;
}

/* ns from the trace start; a time before it counts as the start */
static uint64_t rel(const struct ga_tlv *v, uint64_t t)
{
    return t > v->origin ? t - v->origin : 0;
}

static uint64_t col_ns(const struct ga_tlv *v)
{
    return (uint64_t)GA_TLV_BASE_NS << v->shift;
}

/* ---- busy columns ------------------------------------------------------------------------------
 */

/* Folds the whole columns (the difference array) into busy. */
static void fold(struct ga_tlv *v, struct ga_tlv_lane *l)
{
    int64_t run = 0;
    uint64_t w = col_ns(v);
    for (size_t i = 0; i < GA_TLV_COLS; i++) {
        run += l->whole[i];
        l->busy[i] += (uint64_t)run * w;
        l->whole[i] = 0;
    }
    l->whole[GA_TLV_COLS] = 0;
}

static int by_start(const void *a, const void *b)
{
    const struct ga_tlv_act *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Keeps the window's first (by start) `cap` activities; the first dropped sets the cut. */
static void trim(struct ga_tlv *v, struct ga_tlv_slot *s)
{
    if (s->n <= v->cap) return;
    qsort(s->a, s->n, sizeof(*s->a), by_start);
    if (s->a[v->cap].start < s->cut) s->cut = s->a[v->cap].start;
    v->n_kept -= s->n - v->cap;
    s->n = v->cap;
}

static void push(struct ga_tlv_slot *s, const struct ga_tlv_act *x)
{
    if (s->n == s->cap_a) {
        s->cap_a = s->cap_a ? 2 * s->cap_a : 8;
        s->a = ga_xrealloc(s->a, s->cap_a * sizeof(*s->a));
    }
    s->a[s->n++] = *x;
}

/* Merges window 2j+1 into window 2j, as window j. Window 2j ends where 2j+1 begins, so if 2j
 * lost activities, 2j+1's go too (all start after the cut); else they join it, the cut is
 * 2j+1's, and the window is trimmed to the cap. */
static void merge_slots(struct ga_tlv *v, size_t j)
{
    struct ga_tlv_slot *a = &v->slots[2 * j], *b = &v->slots[2 * j + 1], out = *a;
    if (out.cut == UINT64_MAX) {
        for (uint32_t k = 0; k < b->n; k++)
            push(&out, &b->a[k]);
        out.cut = b->cut;
    } else {
        v->n_kept -= b->n;
    }
    free(b->a);
    *a = (struct ga_tlv_slot){0};
    *b = (struct ga_tlv_slot){0};
    v->slots[j] = out;
    trim(v, &v->slots[j]);
}

/* Halves the resolution of the columns and the windows. */
static void widen(struct ga_tlv *v)
{
    for (size_t i = 0; i < v->n_lanes; i++) {
        struct ga_tlv_lane *l = &v->lanes[i];
        fold(v, l);
        for (size_t c = 0; c < GA_TLV_COLS / 2; c++)
            l->busy[c] = l->busy[2 * c] + l->busy[2 * c + 1];
        memset(l->busy + GA_TLV_COLS / 2, 0, GA_TLV_COLS / 2 * sizeof(*l->busy));
    }
    /* two windows become one: so does their room (the budget is unchanged) */
    v->cap = v->cap < GA_TLV_DETAIL / 2 ? 2 * v->cap : GA_TLV_DETAIL;
    for (size_t j = 0; j < GA_TLV_SLOTS / 2; j++)
        merge_slots(v, j);
    for (size_t j = GA_TLV_SLOTS / 2; j < GA_TLV_SLOTS; j++)
        v->slots[j] = (struct ga_tlv_slot){NULL, 0, 0, UINT64_MAX};
    v->shift++;
}

/* Widens until t (ns from the start) is inside the grid; 0 when it cannot be. */
static int reach(struct ga_tlv *v, uint64_t t)
{
    while (t / col_ns(v) >= GA_TLV_COLS) {
        if (v->shift >= GA_TLV_MAX_SHIFT) return 0;
        widen(v);
    }
    return 1;
}

static struct ga_tlv_lane *lane_of(struct ga_tlv *v, uint32_t device, uint32_t stream)
{
    struct ga_tlv_lane *l = v->n_lanes ? &v->lanes[v->last_lane] : NULL;
    if (l && l->device == device && l->stream == stream) return l;
    const uint64_t *i = ga_map_find(&v->lane_idx, device, stream);
    if (!i) {
        if (v->n_lanes >= GA_TLV_LANES) return NULL;
        *ga_map_upsert(&v->lane_idx, device, stream, v->n_lanes, NULL) = v->n_lanes;
        v->lanes = ga_xgrow(v->lanes, &v->lanes_cap, v->n_lanes, sizeof(*v->lanes));
        v->lanes[v->n_lanes] =
            (struct ga_tlv_lane){device, stream, ga_xcalloc(GA_TLV_COLS, sizeof(uint64_t)),
                                 ga_xcalloc(GA_TLV_COLS + 1, sizeof(int64_t))};
        i = ga_map_find(&v->lane_idx, device, stream);
        v->n_lanes++;
    }
    v->last_lane = (size_t)*i;
    return &v->lanes[*i];
}

/* [s, e) busy on the lane: the partial columns at both ends, the whole ones between by the
 * difference array. */
static void add_busy(struct ga_tlv *v, struct ga_tlv_lane *l, uint64_t s, uint64_t e)
{
    uint64_t w = col_ns(v), c0 = s / w, c1 = e / w;
    if (e <= s) return;
    if (c0 == c1) {
        l->busy[c0] += e - s;
        return;
    }
    l->busy[c0] += (c0 + 1) * w - s;
    if (c1 < GA_TLV_COLS) l->busy[c1] += e - c1 * w;
    if (c0 + 1 < c1) {
        l->whole[c0 + 1]++;
        l->whole[c1]--;
    }
}

/* ---- kept lists --------------------------------------------------------------------------------
 */

static uint32_t name_of(struct ga_tlv *v, const struct ga_gpu_act *a)
{
    int added = 0;
    uint64_t key2 = a->kind == GA_GPU_KERNEL ? (a->linked ? a->func : ~0ull) : 1u + a->kind;
    uint64_t key1 = a->kind == GA_GPU_KERNEL ? a->name_id : 0x100000000ull + a->copy_kind;
    uint64_t *i = ga_map_upsert(&v->name_idx, key1, key2, v->n_names, &added);
    if (added) {
        v->name_act = ga_xgrow(v->name_act, &v->names_cap, v->n_names, sizeof(*v->name_act));
        v->name_act[v->n_names++] = *a;
    }
    return (uint32_t)*i;
}

/* A bounded min-heap by length, one function per element type: sift(base, n, i, len). */
#define HEAP_FNS(NAME, T, LEN)                                                                     \
    static void NAME##_down(T *h, size_t n, size_t i)                                              \
    {                                                                                              \
        for (;;) {                                                                                 \
            size_t m = i, l = 2 * i + 1, r = l + 1;                                                \
            if (l < n && LEN(h[l]) < LEN(h[m])) m = l;                                             \
            if (r < n && LEN(h[r]) < LEN(h[m])) m = r;                                             \
            if (m == i) return;                                                                    \
            T t = h[i];                                                                            \
            h[i] = h[m];                                                                           \
            h[m] = t;                                                                              \
            i = m;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    /* Offers x to the heap of at most cap: kept when there is room or it is longer than the       \
     * shortest kept (which it replaces). */                                                       \
    static void NAME##_offer(T *h, size_t *n, size_t cap, const T *x)                              \
    {                                                                                              \
        if (*n < cap) {                                                                            \
            size_t i = (*n)++;                                                                     \
            h[i] = *x;                                                                             \
            while (i && LEN(h[(i - 1) / 2]) > LEN(h[i])) {                                         \
                T t = h[i];                                                                        \
                h[i] = h[(i - 1) / 2];                                                             \
                h[(i - 1) / 2] = t;                                                                \
                i = (i - 1) / 2;                                                                   \
            }                                                                                      \
        } else if (LEN((*x)) > LEN(h[0])) {                                                        \
            h[0] = *x;                                                                             \
            NAME##_down(h, *n, 0);                                                                 \
        }                                                                                          \
    }

#define ACT_LEN(a)  ((a).end - (a).start)
#define GAP_LEN(g)  ((g).dur)
#define HOST_LEN(c) ((c).end - (c).start)
HEAP_FNS(act_heap, struct ga_tlv_act, ACT_LEN)
HEAP_FNS(gap_heap, struct ga_tlv_gap, GAP_LEN)
HEAP_FNS(host_heap, struct ga_tlv_host, HOST_LEN)

/* The budget is spent: halves the cap until some window gives activities back. */
static void lower_cap(struct ga_tlv *v)
{
    while (v->n_kept >= GA_TLV_DETAIL && v->cap > GA_TLV_SLOT_ACTS) {
        v->cap = v->cap / 2 > GA_TLV_SLOT_ACTS ? v->cap / 2 : GA_TLV_SLOT_ACTS;
        for (size_t j = 0; j < GA_TLV_SLOTS; j++)
            trim(v, &v->slots[j]);
    }
}

/* Into its window while the window is under the cap and lost nothing before it. */
static void keep_in_slot(struct ga_tlv *v, struct ga_tlv_act *x, const struct ga_gpu_act *a)
{
    struct ga_tlv_slot *s = &v->slots[x->start / col_ns(v) / GA_TLV_SLOT_COLS];
    if (x->start >= s->cut) return;
    if (s->n < v->cap && v->n_kept >= GA_TLV_DETAIL) lower_cap(v);
    if (x->start >= s->cut) return; /* lowering the cap cut this window */
    if (s->n >= v->cap || v->n_kept >= GA_TLV_DETAIL) {
        s->cut = x->start;
        return;
    }
    x->name = name_of(v, a);
    push(s, x);
    v->n_kept++;
}

void ga_tlv_act(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la)
{
    struct ga_tlv *v = ctx;
    (void)la;
    if (!v->started) start(v);
    v->acts_total++;
    uint64_t s = rel(v, a->start), e = a->end > a->start ? rel(v, a->end) : s;
    struct ga_tlv_lane *l = lane_of(v, a->device, a->stream);
    if (!l) {
        v->lanes_dropped++;
        return;
    }
    if (!reach(v, e)) {
        v->outside++;
        return;
    }
    if (e > v->end) v->end = e;
    add_busy(v, l, s, e);
    struct ga_tlv_act x = {s, e, 0, (uint16_t)(l - v->lanes), a->kind};
    keep_in_slot(v, &x, a);
    if (v->n_longest < GA_TLV_LONGEST || e - s > ACT_LEN(v->longest[0])) {
        x.name = name_of(v, a);
        act_heap_offer(v->longest, &v->n_longest, GA_TLV_LONGEST, &x);
    }
}

void ga_tlv_gap(void *ctx, uint32_t device, const struct ga_gap *gp)
{
    struct ga_tlv *v = ctx;
    if (!v->started) start(v);
    v->gaps_total++;
    struct ga_tlv_gap g = {rel(v, gp->start), gp->dur, device, gp->cause};
    gap_heap_offer(v->gaps, &v->n_gaps, GA_TLV_GAPS, &g);
    if (v->next_gap_hook) v->next_gap_hook(v->next_gap_ctx, device, gp);
}

void ga_tlv_host_event(struct ga_tlv *v, const struct ga_event *ev)
{
    uint64_t s, e;
    if (ev->sub >= GT_API_MAX) return;
    unsigned fam = gt_api_table[ev->sub].family;
    if (ev->type == GT_REC_SPAN &&
        (fam == GT_FAM_SYNC || fam == GT_FAM_COPY || fam == GT_FAM_WAIT)) {
        s = ev->r->span.ts_enter;
        e = ev->r->span.ts_exit > s ? ev->r->span.ts_exit : s;
    } else if (ev->type == GT_REC_ALLOC) {
        e = ev->r->alloc.ts;
        s = ev->r->alloc.dur_ns < e ? e - ev->r->alloc.dur_ns : e;
    } else if (ev->type == GT_REC_FREE) {
        s = ev->r->free.ts;
        e = s + ev->r->free.dur_ns;
    } else {
        return;
    }
    if (!v->started) start(v);
    v->host_total++;
    struct ga_tlv_host c = {rel(v, s), rel(v, e), ev->tid, ev->sub};
    host_heap_offer(v->host, &v->n_host, GA_TLV_HOST, &c);
}

/* ---- the end -------------------------------------------------------------------------------- */

static int act_by_start(const void *a, const void *b)
{
    return by_start(a, b);
}

static int gap_by_start(const void *a, const void *b)
{
    const struct ga_tlv_gap *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int host_by_start(const void *a, const void *b)
{
    const struct ga_tlv_host *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

void ga_tlv_finish(struct ga_tlv *v, const struct ga_gpu *g, const struct ga_timeline *tl)
{
    for (size_t i = 0; i < v->n_lanes; i++)
        fold(v, &v->lanes[i]);
    /* each window in start order, without what starts at or after its cut */
    for (size_t j = 0; j < GA_TLV_SLOTS; j++) {
        struct ga_tlv_slot *s = &v->slots[j];
        if (s->n) qsort(s->a, s->n, sizeof(*s->a), act_by_start); /* (a NULL array is UB for qsort) */
        while (s->n && s->a[s->n - 1].start >= s->cut)
            s->n--;
    }
    qsort(v->longest, v->n_longest, sizeof(*v->longest), act_by_start);
    qsort(v->gaps, v->n_gaps, sizeof(*v->gaps), gap_by_start);
    qsort(v->host, v->n_host, sizeof(*v->host), host_by_start);
    v->names = ga_xcalloc(v->n_names ? v->n_names : 1, sizeof(*v->names));
    for (size_t i = 0; i < v->n_names; i++) {
        const char *raw = ga_gpu_act_name(g, tl, &v->name_act[i]);
        char *d = v->name_act[i].kind == GA_GPU_KERNEL ? ga_demangle(raw) : NULL;
        v->names[i] = d ? d : ga_xstrdup(raw);
    }
    free(v->name_act);
    v->name_act = NULL;
    ga_map_free(&v->name_idx);
}

size_t ga_tlv_cols(const struct ga_tlv *v)
{
    size_t n = (size_t)(v->end / col_ns(v)) + 1;
    return n < GA_TLV_COLS ? n : GA_TLV_COLS;
}

uint64_t ga_tlv_col_ns(const struct ga_tlv *v)
{
    return col_ns(v);
}

void ga_tlv_free(struct ga_tlv *v)
{
    for (size_t i = 0; v->names && i < v->n_names; i++)
        free(v->names[i]);
    free(v->names);
    free(v->name_act);
    for (size_t i = 0; i < v->n_lanes; i++) {
        free(v->lanes[i].busy);
        free(v->lanes[i].whole);
    }
    free(v->lanes);
    ga_map_free(&v->lane_idx);
    for (size_t j = 0; v->slots && j < GA_TLV_SLOTS; j++)
        free(v->slots[j].a);
    free(v->slots);
    free(v->longest);
    free(v->gaps);
    free(v->host);
    ga_map_free(&v->name_idx);
    memset(v, 0, sizeof(*v));
}
