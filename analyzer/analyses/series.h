/* Live bytes over time, bounded: each series keeps at most GA_SERIES_BUCKETS buckets holding the
 * minimum and the maximum live bytes during the bucket (the value it entered with and every
 * value it took), so a spike or a dip as short as one update shows in its bucket. When time
 * runs past the last bucket, neighbouring buckets merge and the bucket width doubles, so memory
 * stays fixed however long the trace. GA_SERIES_BUCKETS is about the HTML chart's width in
 * pixels: the page draws one band (min to max) per pixel column. */
#ifndef GA_SERIES_H
#define GA_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

#define GA_SERIES_BUCKETS 1024
#define GA_SERIES_BASE_NS 1000u /* first bucket width: 1 us */
#define GA_SERIES_TOTAL   0     /* kind slot of a device's total device memory */
/* Series kept at most (16 KiB each): a real trace has a few devices times a few kinds; a corrupt
 * one can name millions of devices, whose series past this many are not kept. */
#define GA_SERIES_MAX 1024

struct ga_series {
    int32_t device;
    uint32_t kind;  /* enum gt_mem_kind, or GA_SERIES_TOTAL */
    uint64_t width; /* ns per bucket: GA_SERIES_BASE_NS << shift */
    uint32_t shift;
    int64_t last_idx; /* bucket of the last update, -1 before the first */
    uint64_t last_val;
    uint64_t max[GA_SERIES_BUCKETS];
    uint64_t min[GA_SERIES_BUCKETS]; /* UINT64_MAX: not reached yet */
};

struct ga_series_set {
    struct ga_series *s;
    size_t n, cap;
    struct ga_map idx; /* (device, kind) -> index into s */
    uint64_t width;    /* common width after ga_series_finish */
    size_t buckets;    /* buckets in use after ga_series_finish */
};

/* Live bytes of (device, kind) became `live` at `rel_ns` from the trace start (ignored for a new
 * (device, kind) once GA_SERIES_MAX series exist). */
void ga_series_update(struct ga_series_set *set, int32_t device, uint32_t kind, int64_t rel_ns,
                      uint64_t live);
/* The same in two steps, for a caller that keeps the index: the index of the series of
 * (device, kind) in set->s, made on first use (-1 once GA_SERIES_MAX exist; indices never
 * change), and the update of series i. */
int32_t ga_series_index(struct ga_series_set *set, int32_t device, uint32_t kind);

/* ga_series_put's rare steps (series.c): time ran past the last bucket; time left the bucket of
 * the last update (its value is carried through the buckets up to idx). Out of line: an update
 * is inline, and most stay in the bucket of the one before. */
void ga_series_widen_(struct ga_series *s, uint64_t units) __attribute__((cold));
void ga_series_carry_(struct ga_series *s, int64_t idx);

static inline void ga_series_put(struct ga_series_set *set, int32_t i, int64_t rel_ns,
                                 uint64_t live)
{
    struct ga_series *s = &set->s[i];
    uint64_t t = rel_ns > 0 ? (uint64_t)rel_ns : 0;
    /* t / width without a division per update: floor(floor(t / BASE) / 2^shift) is the same */
    uint64_t units = t / GA_SERIES_BASE_NS;
    if ((units >> s->shift) >= GA_SERIES_BUCKETS) ga_series_widen_(s, units);
    int64_t idx = (int64_t)(units >> s->shift);
    if (idx < s->last_idx) idx = s->last_idx; /* out of order: keep the series monotone */
    if (idx > s->last_idx) ga_series_carry_(s, idx);
    if (live > s->max[idx]) s->max[idx] = live;
    if (live < s->min[idx]) s->min[idx] = live;
    s->last_idx = idx;
    s->last_val = live;
}
/* Brings every series to one width and carries the last value to `end_rel_ns`. */
void ga_series_finish(struct ga_series_set *set, int64_t end_rel_ns);
const struct ga_series *ga_series_get(const struct ga_series_set *set, int32_t device,
                                      uint32_t kind);
void ga_series_free(struct ga_series_set *set);

#endif
