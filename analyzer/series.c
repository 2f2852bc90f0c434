/* Bounded live-bytes series (see series.h). */
#include "series.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The series of (device, kind), made on first use; NULL once GA_SERIES_MAX exist. */
static struct ga_series *find(struct ga_series_set *set, int32_t device, uint32_t kind)
{
    for (int i = 0; i < 2; i++) {
        struct ga_series *r = set->recent[i] < set->n ? &set->s[set->recent[i]] : NULL;
        if (r && r->device == device && r->kind == kind) return r;
    }
    const uint64_t *idx = ga_map_find(&set->idx, (uint32_t)device, kind);
    if (idx) {
        set->recent[1] = set->recent[0];
        set->recent[0] = (size_t)*idx;
        return &set->s[*idx];
    }
    if (set->n >= GA_SERIES_MAX) return NULL;
    *ga_map_upsert(&set->idx, (uint32_t)device, kind, set->n, NULL) = set->n;
    set->s = ga_xgrow(set->s, &set->cap, set->n, sizeof(*set->s));
    struct ga_series *s = &set->s[set->n++];
    memset(s, 0, sizeof(*s));
    s->device = device;
    s->kind = kind;
    s->width = GA_SERIES_BASE_NS;
    s->shift = 0;
    s->last_idx = -1;
    return s;
}

/* Halves the resolution: bucket i takes the maximum of buckets 2i and 2i+1. */
static void widen(struct ga_series *s)
{
    for (size_t i = 0; i < GA_SERIES_BUCKETS / 2; i++)
        s->max[i] = max64(s->max[2 * i], s->max[2 * i + 1]);
    memset(s->max + GA_SERIES_BUCKETS / 2, 0, sizeof(s->max) / 2);
    s->width *= 2;
    s->shift++;
    if (s->last_idx >= 0) s->last_idx /= 2;
}

/* Carries the last value through the buckets up to and including idx. */
static void carry(struct ga_series *s, int64_t idx)
{
    for (int64_t i = s->last_idx + 1; i <= idx; i++)
        s->max[i] = max64(s->max[i], s->last_val);
}

void ga_series_update(struct ga_series_set *set, int32_t device, uint32_t kind, int64_t rel_ns,
                      uint64_t live)
{
    struct ga_series *s = find(set, device, kind);
    uint64_t t = rel_ns > 0 ? (uint64_t)rel_ns : 0;
    if (!s) return;
    /* t / width without a division per update: floor(floor(t / BASE) / 2^shift) is the same */
    uint64_t units = t / GA_SERIES_BASE_NS;
    while ((units >> s->shift) >= GA_SERIES_BUCKETS)
        widen(s);
    int64_t idx = (int64_t)(units >> s->shift);
    if (idx < s->last_idx) idx = s->last_idx; /* out of order: keep the series monotone */
    carry(s, idx);
    s->max[idx] = max64(s->max[idx], live);
    s->last_idx = idx;
    s->last_val = live;
}

void ga_series_finish(struct ga_series_set *set, int64_t end_rel_ns)
{
    uint64_t end = end_rel_ns > 0 ? (uint64_t)end_rel_ns : 0, w = GA_SERIES_BASE_NS;
    for (size_t i = 0; i < set->n; i++)
        w = max64(w, set->s[i].width);
    while (end / w >= GA_SERIES_BUCKETS)
        w *= 2;
    for (size_t i = 0; i < set->n; i++) {
        struct ga_series *s = &set->s[i];
        while (s->width < w)
            widen(s);
        carry(s, (int64_t)(end / w));
        s->last_idx = (int64_t)(end / w);
    }
    set->width = w;
    set->buckets = (size_t)(end / w) + 1;
}

const struct ga_series *ga_series_get(const struct ga_series_set *set, int32_t device,
                                      uint32_t kind)
{
    const uint64_t *idx = ga_map_find(&set->idx, (uint32_t)device, kind);
    return idx ? &set->s[*idx] : NULL;
}

void ga_series_free(struct ga_series_set *set)
{
    free(set->s);
    ga_map_free(&set->idx);
    memset(set, 0, sizeof(*set));
}
