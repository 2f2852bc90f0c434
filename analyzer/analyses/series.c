/* Bounded live-bytes series (see series.h). */
#include "analyses/series.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

int32_t ga_series_index(struct ga_series_set *set, int32_t device, uint32_t kind)
{
    const uint64_t *idx = ga_map_find(&set->idx, (uint32_t)device, kind);
    if (idx) return (int32_t)*idx;
    if (set->n >= GA_SERIES_MAX) return -1;
    *ga_map_upsert(&set->idx, (uint32_t)device, kind, set->n, NULL) = set->n;
    set->s = ga_xgrow(set->s, &set->cap, set->n, sizeof(*set->s));
    struct ga_series *s = &set->s[set->n++];
    memset(s, 0, sizeof(*s));
    s->device = device;
    s->kind = kind;
    s->width = GA_SERIES_BASE_NS;
    s->shift = 0;
    s->last_idx = -1;
    memset(s->min, 0xff, sizeof(s->min));
    return (int32_t)(set->n - 1);
}

/* Divides the resolution by 2^k in one pass: bucket i takes the maximum and the minimum of
 * buckets i * 2^k to (i + 1) * 2^k - 1 (a bucket not reached yet holds max 0 and min UINT64_MAX,
 * neutral to both), as k halvings would (a hostile trace's span took up to 54 of them per series
 * and 1,024 series at the end: 56 M bucket moves). In place: bucket i is written after the
 * buckets it reads, all at i or beyond. */
static void widen_by(struct ga_series *s, unsigned k)
{
    if (!k) return;
    size_t step = k < 63 ? (size_t)1 << k : SIZE_MAX, kept = 0;
    for (size_t i = 0; i < GA_SERIES_BUCKETS && (i == 0 || step <= GA_SERIES_BUCKETS / i); i++) {
        size_t from = i * step;
        if (from >= GA_SERIES_BUCKETS) break;
        size_t to = GA_SERIES_BUCKETS - from > step ? from + step : GA_SERIES_BUCKETS;
        uint64_t mx = 0, mn = UINT64_MAX;
        for (size_t j = from; j < to; j++) {
            mx = max64(mx, s->max[j]);
            mn = min64(mn, s->min[j]);
        }
        s->max[i] = mx;
        s->min[i] = mn;
        kept = i + 1;
    }
    memset(s->max + kept, 0, (GA_SERIES_BUCKETS - kept) * sizeof(s->max[0]));
    memset(s->min + kept, 0xff, (GA_SERIES_BUCKETS - kept) * sizeof(s->min[0]));
    s->width = k < 64 && s->width <= UINT64_MAX >> k ? s->width << k : UINT64_MAX;
    s->shift += k;
    if (s->last_idx >= 0) s->last_idx = k < 63 ? s->last_idx >> k : 0;
}

/* Time ran past the last bucket: widen until `units` (of GA_SERIES_BASE_NS) fits. */
void ga_series_widen_(struct ga_series *s, uint64_t units)
{
    unsigned k = 0;
    while (s->shift + k < 64 && (units >> (s->shift + k)) >= GA_SERIES_BUCKETS)
        k++;
    widen_by(s, k);
}

/* Carries the last value through the buckets up to and including idx: each is entered with it
 * (before the first update the series is 0). */
static void carry(struct ga_series *s, int64_t idx)
{
    for (int64_t i = s->last_idx + 1; i <= idx; i++) {
        s->max[i] = max64(s->max[i], s->last_val);
        s->min[i] = min64(s->min[i], s->last_val);
    }
}

void ga_series_carry_(struct ga_series *s, int64_t idx)
{
    carry(s, idx);
}

void ga_series_update(struct ga_series_set *set, int32_t device, uint32_t kind, int64_t rel_ns,
                      uint64_t live)
{
    int32_t i = ga_series_index(set, device, kind);
    if (i >= 0) ga_series_put(set, i, rel_ns, live);
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
        unsigned k = 0;
        while (k < 64 && (s->width << k) < w && s->width <= UINT64_MAX >> (k + 1))
            k++;
        widen_by(s, k);
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
