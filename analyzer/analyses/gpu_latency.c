/* The launch-latency sketch of the GPU analysis: the exact median of a stream of latencies in
 * bounded memory, as long as the values of the bucket the median falls in were all kept.
 *
 * Every value is counted in one of 2 x GA_LAT_BUCKETS log-linear buckets (64 per power of two,
 * values below 64 ns each their own; negative values mirrored), so the bucket of the median and the
 * median's rank inside it are always exact. The values themselves are kept in one table (value ->
 * count) while it holds at most GA_LATENCY_VALUES distinct ones; beyond that, the buckets farthest
 * from the running median's are given up (their values forgotten, the bucket marked) until half
 * the budget is left. A median in a bucket never given up is exact; otherwise ga_latency_median
 * says so and returns the bucket's lowest value. Latencies of one workload crowd around their
 * median, so the buckets given up are the tails. */
#include <stdlib.h>
#include <string.h>

#include "analyses/gpu.h"
#include "base/util.h"

#define GA_LAT_SUB     64 /* buckets per power of two */
#define GA_LAT_BUCKETS (GA_LAT_SUB + 58 * GA_LAT_SUB)
#define GA_LAT_ALL     (2 * GA_LAT_BUCKETS)

static unsigned mag_bucket(uint64_t u)
{
    if (u < GA_LAT_SUB) return (unsigned)u;
    unsigned e = 63u - (unsigned)__builtin_clzll(u); /* >= 6 */
    return GA_LAT_SUB + (e - 6) * GA_LAT_SUB + (unsigned)((u >> (e - 6)) & (GA_LAT_SUB - 1));
}

/* Monotone in v: negative values below, ordered by value. */
static unsigned bucket_of(int64_t v)
{
    if (v < 0) return GA_LAT_BUCKETS - 1 - mag_bucket((uint64_t)(-(v + 1)));
    return GA_LAT_BUCKETS + mag_bucket((uint64_t)v);
}

/* The lowest value of bucket b (for a median whose bucket was given up). */
static int64_t bucket_low(unsigned b)
{
    int neg = b < GA_LAT_BUCKETS;
    unsigned m = neg ? GA_LAT_BUCKETS - 1 - b : b - GA_LAT_BUCKETS;
    uint64_t lo, hi;
    if (m < GA_LAT_SUB) {
        lo = hi = m;
    } else {
        unsigned e = 6 + (m - GA_LAT_SUB) / GA_LAT_SUB, sub = (m - GA_LAT_SUB) % GA_LAT_SUB;
        lo = ((uint64_t)(GA_LAT_SUB + sub)) << (e - 6);
        hi = lo + (1ull << (e - 6)) - 1;
    }
    return neg ? -(int64_t)hi - 1 : (int64_t)lo;
}

/* The bucket holding the value of rank k (0-based), and the rank inside it. */
static unsigned bucket_at(const struct ga_latency *l, uint64_t k, uint64_t *rank)
{
    for (unsigned b = 0; b < GA_LAT_ALL; b++) {
        if (k < l->count[b]) {
            *rank = k;
            return b;
        }
        k -= l->count[b];
    }
    *rank = 0;
    return GA_LAT_ALL - 1;
}

static uint64_t give_up(struct ga_latency *l, long b)
{
    uint64_t n;
    if (b < 0 || b >= GA_LAT_ALL || l->dropped[b]) return 0;
    n = l->distinct[b];
    l->distinct[b] = 0;
    l->dropped[b] = 1;
    return n;
}

/* Gives up the buckets farthest from the running median's until half the budget is left. */
static void shrink(struct ga_latency *l)
{
    uint64_t rank, kept = l->values.count;
    long m = (long)bucket_at(l, (l->n - 1) / 2, &rank);
    struct ga_map keep = {0};
    const struct ga_map_slot *s;
    for (long d = GA_LAT_ALL; d-- > 0 && kept > GA_LATENCY_VALUES / 2;) {
        kept -= give_up(l, m + d);
        if (d && kept > GA_LATENCY_VALUES / 2) kept -= give_up(l, m - d);
    }
    for (size_t i = 0; ga_map_next(&l->values, &i, &s);)
        if (!l->dropped[bucket_of((int64_t)s->a)])
            *ga_map_upsert(&keep, s->a, 0, 0, NULL) = s->value;
    ga_map_free(&l->values);
    l->values = keep;
}

void ga_latency_add(struct ga_latency *l, int64_t v)
{
    int added = 0;
    if (!l->count) {
        l->count = ga_xcalloc(GA_LAT_ALL, sizeof(*l->count));
        l->distinct = ga_xcalloc(GA_LAT_ALL, sizeof(*l->distinct));
        l->dropped = ga_xcalloc(GA_LAT_ALL, 1);
    }
    if (!l->n || v < l->min) l->min = v;
    if (!l->n || v > l->max) l->max = v;
    l->n++;
    unsigned b = bucket_of(v);
    l->count[b]++;
    if (l->dropped[b]) return;
    (*ga_map_upsert(&l->values, (uint64_t)v, 0, 0, &added))++;
    if (!added) return;
    l->distinct[b]++;
    if (l->values.count > GA_LATENCY_VALUES) shrink(l);
}

struct lat_val {
    int64_t v;
    uint64_t n;
};

static int by_value(const void *a, const void *b)
{
    const struct lat_val *x = a, *y = b;
    return x->v < y->v ? -1 : x->v > y->v;
}

int64_t ga_latency_median(const struct ga_latency *l, int *exact)
{
    uint64_t rank;
    const struct ga_map_slot *s;
    *exact = 1;
    if (!l->n) return 0;
    unsigned b = bucket_at(l, (l->n - 1) / 2, &rank);
    if (l->dropped[b]) {
        *exact = 0;
        return bucket_low(b);
    }
    struct lat_val *v = ga_xcalloc(l->distinct[b] ? l->distinct[b] : 1, sizeof(*v));
    size_t n = 0;
    for (size_t i = 0; ga_map_next(&l->values, &i, &s);)
        if (bucket_of((int64_t)s->a) == b && n < l->distinct[b])
            v[n++] = (struct lat_val){(int64_t)s->a, s->value};
    qsort(v, n, sizeof(*v), by_value);
    int64_t out = n ? v[n - 1].v : bucket_low(b);
    for (size_t i = 0; i < n; i++) {
        if (rank < v[i].n) {
            out = v[i].v;
            break;
        }
        rank -= v[i].n;
    }
    free(v);
    return out;
}

void ga_latency_free(struct ga_latency *l)
{
    free(l->count);
    free(l->distinct);
    free(l->dropped);
    ga_map_free(&l->values);
    memset(l, 0, sizeof(*l));
}
