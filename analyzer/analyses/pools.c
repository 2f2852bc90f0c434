/* Pools and fragmentation (see pools.h and docs/ANALYSES.md, "Pools and fragmentation"). Every
 * change goes through pool_change(): it recomputes the pool's figures from its extent sets
 * (O(1): the sets keep their totals and largest extent), applies the difference to its device,
 * and feeds the series. Figures at the process peak are saved by each pool and device just
 * before its first change after a new peak (pool_touch): unchanged since the peak, so exact, at
 * O(1) per change whatever the number of pools. */
#include "analyses/pools_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "analyses/memory.h"
#include "analyses/series.h"
#include "base/util.h"

/* Keys of live_idx (first word): pool kind, plus for a stream-ordered allocation without a pool
 * handle, the device whose current pool served it. */
#define KEY_CURRENT 0x100u
const char *ga_pool_kind_name(unsigned kind)
{
    switch (kind) {
    case GA_POOL_ANNOTATED:
        return "annotated";
    case GA_POOL_STREAM:
        return "stream_ordered";
    case GA_POOL_VMM:
        return "vmm";
    }
    return "unknown";
}

const char *ga_pool_err_name(unsigned e)
{
    static const char *const names[GA_PERR_COUNT] = {
        [GA_PERR_UNKNOWN_POOL] = "unknown_pool",
        [GA_PERR_DUP_CREATE] = "duplicate_create",
        [GA_PERR_BAD_RANGE] = "bad_range",
        [GA_PERR_RANGE_OVERLAP] = "range_overlap",
        [GA_PERR_RANGE_UNKNOWN] = "range_unknown",
        [GA_PERR_BLOCK_OUTSIDE] = "block_outside",
        [GA_PERR_BLOCK_OVERLAP] = "block_overlap",
        [GA_PERR_DOUBLE_FREE] = "double_free",
        [GA_PERR_SIZE_MISMATCH] = "size_mismatch",
        [GA_PERR_BLOCK_IN_RANGE] = "blocks_removed_with_range",
    };
    return e < GA_PERR_COUNT ? names[e] : "unknown";
}

const char *ga_pool_verdict_name(unsigned v)
{
    switch (v) {
    case GA_PV_FRAGMENTATION:
        return "fragmentation";
    case GA_PV_EXHAUSTED:
        return "exhausted";
    case GA_PV_UNEXPLAINED:
        return "unexplained";
    }
    return "unknown";
}

double ga_frag_ratio(const struct ga_frag *f)
{
    if (!f->layout_known) return -1;
    if (!f->free) return 0;
    return 1.0 - (double)f->largest / (double)f->free;
}

/* Free bytes a request as large as the free total could not use: outside the largest free
 * extent (all of them when the layout is unknown). The "worst" moments maximize it. */
static uint64_t stranded(const struct ga_frag *f)
{
    return f->free - min64(f->largest, f->free);
}

/* ---- series ------------------------------------------------------------------------------- */

static void fs_init(struct ga_fseries *s)
{
    memset(s, 0, sizeof(*s));
    s->width = GA_SERIES_BASE_NS;
    s->last_idx = -1;
}

static void fb_put(struct ga_fbucket *b, const struct ga_frag *f)
{
    b->reserved_max = max64(b->reserved_max, f->reserved);
    b->used_max = max64(b->used_max, f->used);
    if (f->free - min64(f->largest, f->free) > b->free - min64(b->largest, b->free) ||
        (b->free == 0 && f->free)) {
        b->free = f->free;
        b->largest = f->largest;
        b->extents = f->extents;
    }
}

static void fb_merge(struct ga_fbucket *b, const struct ga_fbucket *o)
{
    struct ga_frag f = {.reserved = o->reserved_max,
                        .used = o->used_max,
                        .free = o->free,
                        .largest = o->largest,
                        .extents = o->extents};
    fb_put(b, &f);
}

static void fs_widen(struct ga_fseries *s)
{
    for (size_t i = 0; i < GA_FRAG_BUCKETS / 2; i++) {
        struct ga_fbucket m = s->b[2 * i];
        fb_merge(&m, &s->b[2 * i + 1]);
        s->b[i] = m;
    }
    memset(s->b + GA_FRAG_BUCKETS / 2, 0, sizeof(s->b) / 2);
    s->width *= 2;
    if (s->last_idx >= 0) s->last_idx /= 2;
}

static void fs_carry(struct ga_fseries *s, int64_t idx)
{
    if (s->last_idx < 0) return;
    for (int64_t i = s->last_idx + 1; i <= idx && i < GA_FRAG_BUCKETS; i++)
        fb_put(&s->b[i], &s->last);
}

static void fs_update(struct ga_fseries *s, int64_t rel_ns, const struct ga_frag *f)
{
    uint64_t t = rel_ns > 0 ? (uint64_t)rel_ns : 0;
    while (t / s->width >= GA_FRAG_BUCKETS)
        fs_widen(s);
    int64_t idx = (int64_t)(t / s->width);
    if (idx < s->last_idx) idx = s->last_idx; /* out of order: keep the series monotone */
    fs_carry(s, idx);
    fb_put(&s->b[idx], f);
    s->last_idx = idx;
    s->last = *f;
}

static void fs_finish(struct ga_fseries *s, uint64_t width, uint64_t end)
{
    while (s->width < width)
        fs_widen(s);
    fs_carry(s, (int64_t)(end / width));
}

/* ---- pools and devices -------------------------------------------------------------------- */

static int64_t rel(const struct ga_pools *p, uint64_t ts)
{
    return (int64_t)(ts - p->t0);
}

struct ga_pool_dev *pool_dev(struct ga_pools *p, int32_t device)
{
    int added = 0;
    uint64_t *idx = ga_map_find(&p->dev_idx, (uint32_t)device, 0);
    if (idx) return &p->devs[*idx];
    if (p->ndev >= GA_POOL_DEVICES_MAX) return NULL;
    idx = ga_map_upsert(&p->dev_idx, (uint32_t)device, 0, p->ndev, &added);
    p->devs = ga_xgrow(p->devs, &p->dev_cap, p->ndev, sizeof(*p->devs));
    struct ga_pool_dev *d = &p->devs[p->ndev++];
    memset(d, 0, sizeof(*d));
    d->device = device;
    d->now.layout_known = 1;
    d->snap_ver = p->peak_ver;         /* it held nothing at the latest peak, if any */
    d->have_at_peak = p->peak_ver > 0; /* (zero figures) */
    d->at_peak.layout_known = 1;
    fs_init(&d->series);
    return d;
}

/* ---- a device's annotated pools by largest free extent: an indexed max-heap, so the device's
 * largest free extent is its root's, kept at O(log pools) per change. */

static uint64_t heap_key(const struct ga_pools *p, const struct ga_pool_dev *d, size_t k)
{
    return p->pools[d->heap[k]].now.largest;
}

static void heap_swap(struct ga_pools *p, struct ga_pool_dev *d, size_t a, size_t b)
{
    uint32_t t = d->heap[a];
    d->heap[a] = d->heap[b];
    d->heap[b] = t;
    p->pools[d->heap[a]].heap_pos = (int32_t)a;
    p->pools[d->heap[b]].heap_pos = (int32_t)b;
}

static void heap_fix(struct ga_pools *p, struct ga_pool_dev *d, size_t k)
{
    while (k > 0 && heap_key(p, d, (k - 1) / 2) < heap_key(p, d, k)) {
        heap_swap(p, d, k, (k - 1) / 2);
        k = (k - 1) / 2;
    }
    for (;;) {
        size_t c = 2 * k + 1, m = k;
        if (c < d->heap_n && heap_key(p, d, c) > heap_key(p, d, m)) m = c;
        if (c + 1 < d->heap_n && heap_key(p, d, c + 1) > heap_key(p, d, m)) m = c + 1;
        if (m == k) break;
        heap_swap(p, d, k, m);
        k = m;
    }
}

/* Pool i (annotated, on device d) changed its largest free extent, or joins the heap. */
static void heap_update(struct ga_pools *p, struct ga_pool_dev *d, uint32_t i)
{
    struct ga_pool *q = &p->pools[i];
    if (q->heap_pos < 0) {
        d->heap = ga_xgrow(d->heap, &d->heap_cap, d->heap_n, sizeof(*d->heap));
        q->heap_pos = (int32_t)d->heap_n;
        d->heap[d->heap_n++] = i;
    }
    heap_fix(p, d, (size_t)q->heap_pos);
    d->now.largest = heap_key(p, d, 0);
}

static void heap_remove(struct ga_pools *p, struct ga_pool_dev *d, uint32_t i)
{
    size_t k = (size_t)p->pools[i].heap_pos;
    heap_swap(p, d, k, --d->heap_n);
    p->pools[i].heap_pos = -1;
    if (k < d->heap_n) heap_fix(p, d, k);
    d->now.largest = d->heap_n ? heap_key(p, d, 0) : 0;
}

static void dev_note(struct ga_pools *p, struct ga_pool_dev *d, uint64_t ts)
{
    if (!d->have_worst || stranded(&d->now) > stranded(&d->worst)) {
        d->worst = d->now;
        d->worst_ts = ts;
        d->have_worst = 1;
    }
    fs_update(&d->series, rel(p, ts), &d->now);
}

/* Moves pool i's contribution to its device from `old` to its figures now. */
static void dev_apply(struct ga_pools *p, uint32_t i, const struct ga_frag *old, uint64_t ts)
{
    const struct ga_pool *q = &p->pools[i];
    struct ga_pool_dev *d = pool_dev(p, q->device);
    const struct ga_frag *f = &q->now;
    if (!d || q->kind == GA_POOL_VMM) return;
    pool_dev_touch(p, d);
    if (q->kind == GA_POOL_STREAM) {
        d->stream_reserved += f->reserved - old->reserved;
        d->stream_used += f->used - old->used;
        return;
    }
    if (q->kind != GA_POOL_ANNOTATED) return;
    d->now.reserved += f->reserved - old->reserved;
    d->now.used += f->used - old->used;
    d->now.free += f->free - old->free;
    d->now.extents += f->extents - old->extents;
    heap_update(p, d, i);
    dev_note(p, d, ts);
}

static void recompute(struct ga_pool *q)
{
    struct ga_frag *f = &q->now;
    if (q->kind == GA_POOL_STREAM) {
        uint64_t used = q->samples ? q->sample_used : 0;
        /* between samples, the driver's used bytes move with the live allocations */
        if (q->live_bytes >= q->sample_live)
            used += q->live_bytes - q->sample_live;
        else
            used -= min64(used, q->sample_live - q->live_bytes);
        f->used = used;
        /* a pool grows to serve what it hands out; it shrinks only at a trim or a release at a
         * synchronize, which the next sample shows: until then reserved only ratchets up */
        f->reserved = max64(q->sample_reserved, used);
        q->sample_reserved = f->reserved;
        f->free = f->reserved - f->used;
        f->extents = f->largest = 0;
        f->layout_known = 0;
        return;
    }
    f->reserved = ga_ext_total(&q->ranges);
    f->free = min64(ga_ext_total(&q->freex), f->reserved);
    f->used = f->reserved - f->free;
    f->extents = ga_ext_count(&q->freex);
    f->largest = ga_ext_largest(&q->freex);
    f->layout_known = 1;
}

/* After a pool changed: its figures, peaks, worst moment, series and its device. */
void pool_change(struct ga_pools *p, uint32_t i, uint64_t ts)
{
    struct ga_pool *q = &p->pools[i];
    struct ga_frag old = q->now;
    recompute(q);
    if (q->now.reserved > q->peak_reserved) {
        q->peak_reserved = q->now.reserved;
        q->peak_reserved_ts = ts;
    }
    if (q->now.used > q->peak_used) {
        q->peak_used = q->now.used;
        q->peak_used_ts = ts;
    }
    if (!q->have_worst || stranded(&q->now) > stranded(&q->worst)) {
        q->worst = q->now;
        q->worst_ts = ts;
        q->have_worst = 1;
    }
    if (q->series >= 0) fs_update(&p->pool_series[q->series], rel(p, ts), &q->now);
    dev_apply(p, i, &old, ts);
}

static char *default_name(unsigned kind, uint64_t id, int32_t device)
{
    char buf[64];
    if (kind == GA_POOL_STREAM && !id)
        snprintf(buf, sizeof(buf), "current pool of device %d", (int)device);
    else if (kind == GA_POOL_STREAM)
        snprintf(buf, sizeof(buf), "mempool %#llx", (unsigned long long)id);
    else if (kind == GA_POOL_VMM)
        snprintf(buf, sizeof(buf), "VA %#llx", (unsigned long long)id);
    else
        snprintf(buf, sizeof(buf), "pool %#llx", (unsigned long long)id);
    return ga_xstrdup(buf);
}

static uint64_t live_key(unsigned kind, uint64_t id, int32_t device)
{
    if (kind == GA_POOL_STREAM && !id) return KEY_CURRENT | (uint64_t)(uint32_t)device << 32;
    return kind;
}

uint32_t pool_find(const struct ga_pools *p, unsigned kind, uint64_t id, int32_t device)
{
    const uint64_t *v = ga_map_find(&p->live_idx, live_key(kind, id, device), id);
    return v ? (uint32_t)*v : NONE;
}

/* A new live pool; NONE past GA_POOLS_MAX (counted). `name` is taken over (may be NULL). */
uint32_t pool_new(struct ga_pools *p, unsigned kind, uint64_t id, int32_t device, char *name,
                 uint64_t ts)
{
    if (p->n >= GA_POOLS_MAX) {
        p->pools_untracked++;
        free(name);
        return NONE;
    }
    p->pools = ga_xgrow(p->pools, &p->cap, p->n, sizeof(*p->pools));
    uint32_t i = (uint32_t)p->n++;
    struct ga_pool *q = &p->pools[i];
    memset(q, 0, sizeof(*q));
    q->kind = (uint8_t)kind;
    q->live = 1;
    q->id = id;
    q->device = device;
    q->name = name ? name : default_name(kind, id, device);
    q->created_ts = ts;
    q->now.layout_known = kind != GA_POOL_STREAM;
    q->snap_ver = p->peak_ver; /* it did not live at the latest peak */
    q->heap_pos = -1;
    ga_ext_init(&q->ranges);
    ga_ext_init(&q->freex);
    q->series = -1;
    if (p->n_series < GA_FRAG_SERIES_MAX) {
        p->pool_series =
            ga_xgrow(p->pool_series, &p->series_cap, p->n_series, sizeof(*p->pool_series));
        fs_init(&p->pool_series[p->n_series]);
        q->series = (int32_t)p->n_series++;
    }
    *ga_map_upsert(&p->live_idx, live_key(kind, id, device), id, i, NULL) = i;
    return i;
}

/* The pool is gone: its memory leaves its device, its sets are freed, its summary stays. */
void pool_end(struct ga_pools *p, uint32_t i, uint64_t ts)
{
    struct ga_pool *q = &p->pools[i];
    if (!q->live) return;
    pool_touch(p, i);
    if (q->kind == GA_POOL_VMM) ga_ext_take(&p->vmm_ranges, q->id);
    if (q->live_blocks) pool_drop_blocks(p, i, 0, UINT64_MAX);
    ga_ext_free(&q->ranges);
    ga_ext_free(&q->freex);
    q->live_bytes = q->sample_used = q->sample_reserved = q->sample_live = 0;
    q->samples = 0;
    pool_change(p, i, ts);
    struct ga_pool_dev *d = q->heap_pos >= 0 ? pool_dev(p, q->device) : NULL;
    if (d) heap_remove(p, d, i);
    q->live = 0;
    q->destroyed_ts = ts;
    ga_map_remove(&p->live_idx, live_key(q->kind, q->id, q->device), q->id, NULL);
}

void pool_rekey(struct ga_pools *p, uint32_t i, uint64_t id)
{
    struct ga_pool *q = &p->pools[i];
    ga_map_remove(&p->live_idx, live_key(q->kind, q->id, q->device), q->id, NULL);
    q->id = id;
    free(q->name);
    q->name = default_name(q->kind, id, q->device);
    *ga_map_upsert(&p->live_idx, live_key(q->kind, id, q->device), id, i, NULL) = i;
}

/* A pool's device becomes known: only while it holds nothing (its device's sums stay right);
 * a VMM range any time (its figures are not in the device's sums). */
void pool_set_device(struct ga_pool *q, int32_t device)
{
    int empty = !q->now.reserved && !q->now.used && q->heap_pos < 0;
    if (q->device < 0 && device >= 0 && (empty || q->kind == GA_POOL_VMM)) q->device = device;
}

/* ---- address maps --------------------------------------------------------------------------- */

static void map_push(struct ga_pool_map *m, uint64_t addr, uint64_t size, int used)
{
    if (!size) return;
    if (m->n && m->ext[m->n - 1].used == used &&
        m->ext[m->n - 1].addr + m->ext[m->n - 1].size == addr) {
        m->ext[m->n - 1].size += size;
        return;
    }
    if (m->n >= GA_POOL_MAP_MAX) {
        m->truncated = 1;
        return;
    }
    m->ext[m->n++] = (struct ga_map_ext){.addr = addr, .size = size, .used = (uint8_t)used};
}

/* The pool's owned ranges in address order, split into used and free extents. */
void pool_map_fill(const struct ga_pool *q, struct ga_pool_map *m)
{
    uint64_t rs, rl, s, l;
    m->n = 0;
    m->truncated = 0;
    if (q->kind == GA_POOL_STREAM) return;
    if (!m->ext) m->ext = ga_xcalloc(GA_POOL_MAP_MAX, sizeof(*m->ext));
    for (uint64_t a = 0; !m->truncated && ga_ext_next(&q->ranges, a, &rs, &rl); a = rs + rl) {
        uint64_t pos = rs, end = rs + rl;
        while (!m->truncated && pos < end && ga_ext_next(&q->freex, pos, &s, &l) && s < end) {
            uint64_t fs = max64(s, pos), fe = min64(s + l, end);
            map_push(m, pos, fs - pos, 1);
            map_push(m, fs, fe - fs, 0);
            pos = fe;
        }
        if (pos < end) map_push(m, pos, end - pos, 1);
        if (rs + rl == 0) break; /* cannot happen (ranges never wrap); guards the loop */
    }
}

void pool_touch(struct ga_pools *p, uint32_t i)
{
    struct ga_pool *q = &p->pools[i];
    if (q->snap_ver == p->peak_ver || !q->live) return;
    q->at_peak = q->now;
    q->have_at_peak = 1;
    q->snap_ver = p->peak_ver;
    pool_map_fill(q, &q->map_at_peak);
}

void pool_dev_touch(struct ga_pools *p, struct ga_pool_dev *d)
{
    if (d->snap_ver == p->peak_ver) return;
    d->at_peak = d->now; /* its largest is set at the end, from the pools' own at_peak */
    d->stream_reserved_at_peak = d->stream_reserved;
    d->stream_used_at_peak = d->stream_used;
    d->phys_unused_at_peak = d->phys_unused;
    d->have_at_peak = 1;
    d->snap_ver = p->peak_ver;
}

/* The end: pools and devices untouched since the latest peak are as they were then; a pool
 * that ended without touching since did not live then. */
static void finish_at_peak(struct ga_pools *p)
{
    if (!p->peak_ver) return;
    for (size_t i = 0; i < p->n; i++) {
        struct ga_pool *q = &p->pools[i];
        if (q->snap_ver != p->peak_ver && !q->live) q->have_at_peak = 0;
        pool_touch(p, (uint32_t)i);
    }
    for (size_t i = 0; i < p->ndev; i++) {
        struct ga_pool_dev *d = &p->devs[i];
        pool_dev_touch(p, d);
        d->at_peak.largest = 0;
        for (size_t k = 0; k < p->n; k++) {
            const struct ga_pool *q = &p->pools[k];
            if (q->have_at_peak && q->kind == GA_POOL_ANNOTATED && q->device == d->device)
                d->at_peak.largest = max64(d->at_peak.largest, q->at_peak.largest);
        }
    }
}

/* ---- items: stream-ordered allocations, VMM mappings and handles ----------------------------- */

uint32_t pool_item_find(const struct ga_pools *p, unsigned key, uint64_t addr)
{
    const uint64_t *v = ga_map_find(&p->item_idx, key, addr);
    return v ? (uint32_t)*v : NONE;
}

uint32_t pool_item_add(struct ga_pools *p, unsigned key, uint64_t addr,
                      const struct ga_pool_item *it)
{
    uint32_t i;
    if (p->free_item != NONE) {
        i = p->free_item;
        p->free_item = (uint32_t)p->items[i].other;
    } else {
        p->items = ga_xgrow(p->items, &p->items_cap, p->n_items, sizeof(*p->items));
        i = (uint32_t)p->n_items++;
    }
    p->items[i] = *it;
    *ga_map_upsert(&p->item_idx, key, addr, i, NULL) = i;
    return i;
}

void pool_item_del(struct ga_pools *p, unsigned key, uint64_t addr, uint32_t i)
{
    ga_map_remove(&p->item_idx, key, addr, NULL);
    p->items[i].other = p->free_item;
    p->free_item = i;
}

/* ---- blocks of annotated pools ---------------------------------------------------------------- */

/* Frees the part of [a, b) that the pool still owns (a block's remains). */
void pool_free_owned(struct ga_pool *q, uint64_t a, uint64_t b)
{
    uint64_t s, l;
    for (uint64_t pos = a; pos < b && ga_ext_next(&q->ranges, pos, &s, &l) && s < b; pos = s + l) {
        uint64_t lo = max64(s, a), hi = min64(s + l, b);
        ga_ext_add(&q->freex, lo, hi - lo);
    }
}

/* Blocks of pool i that reach into [a, b) are forgotten, their parts outside it given back to
 * the pool's free set (while it owns them); 1 if there were any. A scan of the live blocks: only
 * for a removed range that held blocks (an annotation error) or a pool that ends with blocks. */
int pool_drop_blocks(struct ga_pools *p, uint32_t i, uint64_t a, uint64_t b)
{
    struct ga_pool *q = &p->pools[i];
    const struct ga_map_slot *slot;
    uint64_t *gone = NULL;
    size_t n = 0, cap = 0;
    for (size_t k = 0; ga_map_next(&p->blocks, &k, &slot);)
        if (slot->a == i && slot->b < b && slot->b + slot->value > a) {
            gone = ga_xgrow(gone, &cap, n * 2 + 1, sizeof(*gone));
            gone[n * 2] = slot->b;
            gone[n++ * 2 + 1] = slot->value;
        }
    for (uint64_t k = 0; k < n; k++) {
        uint64_t s = gone[2 * k], l = gone[2 * k + 1];
        ga_map_remove(&p->blocks, i, s, NULL);
        q->live_blocks--;
        if (s < a) pool_free_owned(q, s, a);
        if (s + l > b) pool_free_owned(q, b, s + l);
    }
    free(gone);
    return n > 0;
}

void ga_pools_init(struct ga_pools *p)
{
    memset(p, 0, sizeof(*p));
    p->free_item = NONE;
    ga_ext_init(&p->vmm_ranges);
}

const struct ga_fseries *ga_pools_series(const struct ga_pools *p, size_t i)
{
    return i < p->n && p->pools[i].series >= 0 ? &p->pool_series[p->pools[i].series] : NULL;
}

void ga_pools_finish(struct ga_pools *p, uint64_t end_ts)
{
    uint64_t w = GA_SERIES_BASE_NS, end = rel(p, end_ts) > 0 ? (uint64_t)rel(p, end_ts) : 0;
    finish_at_peak(p);
    for (size_t i = 0; i < p->n_series; i++)
        w = max64(w, p->pool_series[i].width);
    for (size_t i = 0; i < p->ndev; i++) {
        w = max64(w, p->devs[i].series.width);
    }
    while (end / w >= GA_FRAG_BUCKETS)
        w *= 2;
    for (size_t i = 0; i < p->n_series; i++)
        fs_finish(&p->pool_series[i], w, end);
    for (size_t i = 0; i < p->ndev; i++)
        fs_finish(&p->devs[i].series, w, end);
    p->width = w;
    p->buckets = (size_t)(end / w) + 1;
}

void ga_pools_free(struct ga_pools *p)
{
    for (size_t i = 0; i < p->n; i++) {
        struct ga_pool *q = &p->pools[i];
        ga_ext_free(&q->ranges);
        ga_ext_free(&q->freex);
        free(q->name);
        free(q->map_at_peak.ext);
    }
    for (size_t i = 0; i < p->n_ooms; i++)
        free(p->ooms[i].map.ext);
    for (size_t i = 0; i < p->n_fails; i++)
        free(p->fails[i].map.ext);
    free(p->pools);
    for (size_t i = 0; i < p->ndev; i++)
        free(p->devs[i].heap);
    free(p->devs);
    free(p->pool_series);
    free(p->items);
    free(p->ooms);
    free(p->fails);
    ga_map_free(&p->live_idx);
    ga_map_free(&p->dev_idx);
    ga_map_free(&p->item_idx);
    ga_map_free(&p->blocks);
    ga_map_free(&p->current);
    ga_ext_free(&p->vmm_ranges);
    memset(p, 0, sizeof(*p));
}
