/* What was live at the process peak (by stack, API, size class, device; the largest single
 * allocations), temporary allocations, and the holders at each failed allocation.
 *
 * The peak breakdown is exact and O(1) per event: live bytes are kept per bucket (stack, api,
 * size class, device); when the process peak rises, a version counter moves on; a bucket about
 * to change saves its current value first if it has not done so since the latest peak, because
 * that value is what it held at the peak. At the end a bucket's value at the peak is its saved
 * value if it changed after the latest peak, else its live value. */
#include <stdlib.h>
#include <string.h>

#include "analyses/memory.h"
#include "base/util.h"

#define NONE UINT32_MAX

/* The classes' lower bounds are 4 KiB, 64 KiB, ... 4 GiB: 2^12 and then every 4 bits, so the
 * class is the bit length past 12 in steps of 4 (names below). */
static inline unsigned size_class(uint64_t size)
{
    if (size < 4096) return 0;
    unsigned c = (unsigned)(63 - __builtin_clzll(size) - 12) / 4 + 1;
    return c < GA_SIZE_CLASSES - 1 ? c : GA_SIZE_CLASSES - 1;
}

unsigned ga_size_class(uint64_t size)
{
    return size_class(size);
}

const char *ga_size_class_name(unsigned c)
{
    static const char *const names[GA_SIZE_CLASSES] = {
        "<4KiB", "4KiB-64KiB", "64KiB-1MiB", "1MiB-16MiB", "16MiB-256MiB", "256MiB-4GiB", ">=4GiB"};
    return c < GA_SIZE_CLASSES ? names[c] : "?";
}

static struct ga_bucket *touch(struct ga_memory *m, uint32_t i)
{
    struct ga_bucket *b = &m->buckets[i];
    if (b->ver != m->peak_ver) { /* first change since the latest peak: keep what it held then */
        b->peak_bytes = b->live_bytes;
        b->peak_count = b->live_count;
        b->ver = m->peak_ver;
    }
    return b;
}

/* The slow path of bucket_of: the map, where a new key gets its bucket; `slot`: the key's place
 * in the cache. */
static __attribute__((noinline)) uint32_t
bucket_lookup(struct ga_memory *m, const struct ga_live *e, unsigned c, uint32_t *slot)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&m->bucket_idx, e->stack | (uint64_t)e->api << 32,
                                c | (uint64_t)(uint32_t)e->device << 8, m->n_buckets, &added);
    if (added) {
        m->buckets = ga_xgrow(m->buckets, &m->buckets_cap, m->n_buckets, sizeof(*m->buckets));
        m->buckets[m->n_buckets] = (struct ga_bucket){.ver = 0,
                                                      .stack = e->stack,
                                                      .device = e->device,
                                                      .api = e->api,
                                                      .size_class = (uint8_t)c};
        m->n_buckets++;
    }
    if (*v < UINT32_MAX) *slot = (uint32_t)*v + 1;
    return (uint32_t)*v;
}

/* The bucket of e, made on first use. Allocations mostly repeat a few (stack, api, class,
 * device) keys: a direct-mapped cache of bucket indices, checked against the bucket's own key,
 * answers most before the map. */
static inline uint32_t bucket_of(struct ga_memory *m, const struct ga_live *e)
{
    unsigned c = size_class(e->size);
    uint64_t key = e->stack ^ (uint64_t)e->api << 32 ^ (uint64_t)c << 48 ^
                   (uint64_t)(uint32_t)e->device * 0xff51afd7ed558ccdull;
    uint32_t *slot = &m->bucket_cache[key * 0x9e3779b97f4a7c15ull >> (64 - GA_BUCKET_CACHE_BITS)];
    if (*slot) {
        const struct ga_bucket *b = &m->buckets[*slot - 1];
        if (b->stack == e->stack && b->api == e->api && b->size_class == c &&
            b->device == e->device)
            return *slot - 1;
    }
    return bucket_lookup(m, e, c, slot);
}

void ga_peak_add(struct ga_memory *m, struct ga_live *e)
{
    if (m->peak_ver == 0) m->peak_ver = 1; /* version 0 means "never saved" */
    e->bucket = bucket_of(m, e);
    struct ga_bucket *b = touch(m, e->bucket);
    b->live_bytes += e->size;
    b->live_count++;
}

/* Keeps the GA_TOP_PEAK_ALLOCS largest (size, then earliest) in a small sorted array. */
static void top_insert(struct ga_peak_alloc *top, size_t *n, const struct ga_peak_alloc *a)
{
    size_t i = *n;
    if (i == GA_TOP_PEAK_ALLOCS) {
        if (a->size <= top[i - 1].size) return;
        i--;
    } else {
        (*n)++;
    }
    while (i > 0 && top[i - 1].size < a->size) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = *a;
}

static struct ga_peak_alloc peak_alloc(const struct ga_live *e, uint64_t free_ts)
{
    return (struct ga_peak_alloc){.addr = e->addr,
                                  .size = e->size,
                                  .ts = e->ts,
                                  .free_ts = free_ts,
                                  .stack = e->stack,
                                  .device = e->device,
                                  .api = e->api};
}

void ga_peak_sub(struct ga_memory *m, const struct ga_live *e, uint64_t free_ts)
{
    if (e->bucket == NONE) return;
    struct ga_bucket *b = touch(m, e->bucket);
    b->live_bytes -= e->size;
    b->live_count--;
    if (m->peak_total && e->seq <= m->peak_seq) { /* it was live at the latest peak */
        struct ga_peak_alloc a = peak_alloc(e, free_ts);
        top_insert(m->freed_top, &m->n_freed_top, &a);
    }
}

void ga_peak_new(struct ga_memory *m, const struct ga_live *e)
{
    m->peak_ver++;
    m->peak_seq = e->seq;
    m->n_freed_top = 0; /* freed before this peak: not live at it */
    m->n_peak_temps = 0, m->peak_temps_dropped = 0;
}

/* A temporary allocation freed after the latest peak and made before it was live at it. */
static void peak_temp_live(struct ga_memory *m, const struct ga_live *e)
{
    size_t i = 0;
    if (e->bucket == NONE || !m->peak_total || e->seq > m->peak_seq) return;
    while (i < m->n_peak_temps && m->peak_temps[i].stack != e->stack)
        i++;
    if (i == GA_PEAK_TEMPS_MAX) {
        m->peak_temps_dropped++;
        return;
    }
    if (i == m->n_peak_temps)
        m->peak_temps[m->n_peak_temps++] = (struct ga_temp){.stack = e->stack};
    m->peak_temps[i].count++;
    m->peak_temps[i].bytes += e->size;
}

void ga_peak_temp(struct ga_memory *m, const struct ga_live *e)
{
    int added = 0;
    uint64_t *i = ga_map_upsert(&m->temp_idx, e->stack, 0, m->n_temps, &added);
    if (added) {
        m->temps = ga_xgrow(m->temps, &m->temps_cap, m->n_temps, sizeof(*m->temps));
        m->temps[m->n_temps++] = (struct ga_temp){.stack = e->stack};
    }
    m->temps[*i].count++;
    m->temps[*i].bytes += e->size;
    m->temp_count++;
    m->temp_bytes += e->size;
    peak_temp_live(m, e);
}

static int cmp_holder(const void *a, const void *b)
{
    const struct ga_holder *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Sums per stack the (bytes, count) that value() gives each bucket (of `device` unless -2),
 * sorted largest first; *n of them. */
static struct ga_holder *per_stack(const struct ga_memory *m, int32_t device,
                                   void (*value)(const struct ga_memory *, const struct ga_bucket *,
                                                 struct ga_amount *),
                                   size_t *n)
{
    struct ga_map idx = {0};
    struct ga_holder *h = NULL;
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < m->n_buckets; i++) {
        const struct ga_bucket *b = &m->buckets[i];
        struct ga_amount v;
        if (device != -2 && b->device != device) continue;
        value(m, b, &v);
        if (!v.bytes && !v.count) continue;
        int added = 0;
        uint64_t *j = ga_map_upsert(&idx, b->stack, 0, *n, &added);
        if (added) {
            h = ga_xgrow(h, &cap, *n, sizeof(*h));
            h[(*n)++] = (struct ga_holder){.stack = b->stack};
        }
        h[*j].bytes += v.bytes;
        h[*j].count += v.count;
    }
    ga_map_free(&idx);
    if (*n > 1) qsort(h, *n, sizeof(*h), cmp_holder);
    return h;
}

static void live_value(const struct ga_memory *m, const struct ga_bucket *b, struct ga_amount *v)
{
    (void)m;
    v->bytes = b->live_bytes;
    v->count = b->live_count;
}

void ga_peak_bucket_value(const struct ga_memory *m, const struct ga_bucket *b, struct ga_amount *v)
{
    int saved = b->ver == m->peak_ver;
    v->bytes = saved ? b->peak_bytes : b->live_bytes;
    v->count = saved ? b->peak_count : b->live_count;
}

void ga_peak_snapshot(struct ga_memory *m, struct ga_oom *o)
{
    size_t n;
    struct ga_holder *h = per_stack(m, o->device, live_value, &n);
    o->holders_omitted_bytes = 0;
    for (size_t i = GA_OOM_HOLDERS_MAX; i < n; i++)
        o->holders_omitted_bytes += h[i].bytes;
    o->n_holders = n < GA_OOM_HOLDERS_MAX ? n : GA_OOM_HOLDERS_MAX;
    o->holders = h;
}

static void add_device(struct ga_peak_breakdown *p, int32_t device, const struct ga_amount *v)
{
    size_t i = 0;
    while (i < p->n_by_device && p->by_device[i].device != device)
        i++;
    if (i == p->n_by_device) {
        if (i == GA_PEAK_DEVICES_MAX) return; /* a corrupt trace naming thousands of devices */
        p->by_device[p->n_by_device++] = (struct ga_dev_amount){.device = device};
    }
    p->by_device[i].bytes += v->bytes;
    p->by_device[i].count += v->count;
}

static int cmp_temp(const void *a, const void *b)
{
    const struct ga_temp *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

void ga_peak_finish(struct ga_memory *m)
{
    struct ga_peak_breakdown *p = &m->peak;
    if (m->n_temps > 1) qsort(m->temps, m->n_temps, sizeof(*m->temps), cmp_temp);
    if (!m->peak_total) return;
    p->valid = 1;
    for (size_t i = 0; i < m->n_buckets; i++) {
        const struct ga_bucket *b = &m->buckets[i];
        struct ga_amount v;
        ga_peak_bucket_value(m, b, &v);
        if (!v.bytes && !v.count) continue;
        if (b->api < GT_API_MAX) {
            p->by_api[b->api].bytes += v.bytes;
            p->by_api[b->api].count += v.count;
        }
        p->by_class[b->size_class].bytes += v.bytes;
        p->by_class[b->size_class].count += v.count;
        add_device(p, b->device, &v);
        p->total += v.bytes;
        if (!b->stack) {
            p->no_stack.bytes += v.bytes;
            p->no_stack.count += v.count;
        }
    }
    p->by_stack = per_stack(m, -2, ga_peak_bucket_value, &p->n_by_stack);
    /* the largest allocations live at the peak: freed since, or still live */
    memcpy(p->top, m->freed_top, m->n_freed_top * sizeof(*p->top));
    p->n_top = m->n_freed_top;
    for (size_t i = 0; i < m->slab_n; i++) {
        const struct ga_live *e = &m->slab[i];
        if (e->bucket == NONE || e->seq == 0 || e->seq > m->peak_seq) continue;
        if (ga_live_find(m, e->ns, e->addr) != i) continue; /* a free slab slot */
        struct ga_peak_alloc a = peak_alloc(e, 0);
        top_insert(p->top, &p->n_top, &a);
    }
}

void ga_peak_free(struct ga_memory *m)
{
    free(m->peak.by_stack);
    free(m->temps);
    free(m->buckets);
    ga_map_free(&m->temp_idx);
    ga_map_free(&m->bucket_idx);
    ga_map_free(&m->overhead);
    for (size_t i = 0; i < m->n_ooms; i++)
        free(m->ooms[i].holders);
}
