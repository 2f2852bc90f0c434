/* Watermark ordering. Host chunks of different threads interleave in the file; a watermark W
 * promises that no host record with ts < W follows it. So records are held until a watermark
 * passes them, then released sorted by (ts, file order). Memory is one watermark interval.
 *
 * Held records live in sorted runs. At each watermark the records pushed since the last one are
 * sorted into a new run (natural merge sort: one thread's chunk is already in time order), the
 * runs' heads are merged out while below W, and runs are merged pairwise when the newer one's
 * weight reaches half the older one's (a binary counter), so there are few runs and every
 * record is merged O(log n) times. A flush therefore costs what it sorts and emits, not what
 * stays held: a trace whose watermarks pass nothing, or one record at a time, while millions
 * of records wait stays O(n log n) instead of O(n) per watermark. Emitted records leave garbage
 * in the entry array and the arena; both are compacted when garbage outweighs what is held. */
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "util.h"

void ga_order_init(struct ga_order *o)
{
    memset(o, 0, sizeof(*o));
}

void ga_order_free(struct ga_order *o)
{
    free(o->ent);
    free(o->tmp);
    free(o->arena);
    free(o->spare);
    memset(o, 0, sizeof(*o));
}

void ga_order_push(struct ga_order *o, const void *rec, uint32_t size, uint32_t tid, uint64_t order)
{
    uint64_t key = ga_rec_key(rec, size);
    if (key < o->passed) o->late++;
    o->ent = ga_xgrow(o->ent, &o->cap, o->n, sizeof(*o->ent));
    o->arena = ga_xgrow(o->arena, &o->arena_cap, o->used + size, 1);
    memcpy(o->arena + o->used, rec, size);
    o->ent[o->n++] = (struct ga_order_ent){key, order, tid, size, o->used};
    o->used += size;
    o->live_bytes += size;
    o->held++;
    if (o->held > o->max_held) o->max_held = o->held;
}

static int before(const struct ga_order_ent *x, const struct ga_order_ent *y)
{
    return x->key != y->key ? x->key < y->key : x->order < y->order;
}

/* Merges sorted a[0..na) and b[0..nb) into out. */
static void merge(const struct ga_order_ent *a, size_t na, const struct ga_order_ent *b, size_t nb,
                  struct ga_order_ent *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = before(&b[j], &a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* Natural merge sort of ent[0..n) (a slice of the entry array), with tmp as scratch. The
 * records pushed between two watermarks are one sorted run per chunk, so there are few runs
 * and sorting is nearly linear. */
static void sort_slice(struct ga_order *o, struct ga_order_ent *ent, size_t n)
{
    struct ga_order_ent *src = ent, *dst;
    o->tmp = ga_xgrow(o->tmp, &o->tmp_cap, n, sizeof(*o->tmp));
    dst = o->tmp;
    for (;;) {
        size_t runs = 0;
        for (size_t i = 0; i < n; runs++) {
            size_t a = i + 1, b;
            while (a < n && !before(&src[a], &src[a - 1]))
                a++;
            b = a < n ? a + 1 : a;
            while (b < n && !before(&src[b], &src[b - 1]))
                b++;
            merge(src + i, a - i, src + a, b - a, dst + i);
            i = b;
        }
        struct ga_order_ent *t = src;
        src = dst;
        dst = t;
        if (runs <= 1) break;
    }
    if (src != ent) memcpy(ent, src, n * sizeof(*src));
}

/* The records pushed since the last flush become the newest run. */
static void close_tail(struct ga_order *o)
{
    size_t k = o->n - o->sorted;
    if (!k) return;
    if (k > 1) sort_slice(o, o->ent + o->sorted, k);
    o->runs[o->n_runs++] = (struct ga_order_run){o->sorted, o->n, k};
    o->sorted = o->n;
}

/* Index of the run whose head comes first, or n_runs when every run is empty. */
static size_t first_run(const struct ga_order *o)
{
    size_t best = o->n_runs;
    for (size_t r = 0; r < o->n_runs; r++) {
        const struct ga_order_run *x = &o->runs[r];
        if (x->begin == x->end) continue;
        if (best == o->n_runs || before(&o->ent[x->begin], &o->ent[o->runs[best].begin])) best = r;
    }
    return best;
}

static void drop_empty_runs(struct ga_order *o)
{
    size_t k = 0;
    for (size_t r = 0; r < o->n_runs; r++)
        if (o->runs[r].begin < o->runs[r].end) o->runs[k++] = o->runs[r];
    o->n_runs = k;
}

/* Merges the two newest runs into the place of the older one (it starts lower, and the pair's
 * entries fit between its start and the newer one's end). */
static void merge_top(struct ga_order *o)
{
    struct ga_order_run *a = &o->runs[o->n_runs - 2], *b = &o->runs[o->n_runs - 1];
    size_t na = a->end - a->begin, nb = b->end - b->begin;
    o->tmp = ga_xgrow(o->tmp, &o->tmp_cap, na + nb, sizeof(*o->tmp));
    merge(o->ent + a->begin, na, o->ent + b->begin, nb, o->tmp);
    memcpy(o->ent + a->begin, o->tmp, (na + nb) * sizeof(*o->tmp));
    a->end = a->begin + na + nb;
    a->weight += b->weight;
    o->n_runs--;
    o->n = o->sorted = a->end;
}

/* Rewrites the held entries to the front of the entry array and their records to the front of
 * a fresh arena, in run order. */
static void compact(struct ga_order *o)
{
    size_t k = 0, used = 0;
    o->spare = ga_xgrow(o->spare, &o->spare_cap, o->live_bytes, 1);
    for (size_t r = 0; r < o->n_runs; r++) {
        struct ga_order_run *x = &o->runs[r];
        size_t begin = k;
        for (size_t i = x->begin; i < x->end; i++, k++) {
            struct ga_order_ent e = o->ent[i];
            memcpy(o->spare + used, o->arena + e.off, e.size);
            e.off = used;
            used += e.size;
            o->ent[k] = e;
        }
        x->begin = begin;
        x->end = k;
    }
    char *t = o->arena;
    size_t tc = o->arena_cap;
    o->arena = o->spare;
    o->arena_cap = o->spare_cap;
    o->spare = t;
    o->spare_cap = tc;
    o->n = o->sorted = k;
    o->used = used;
}

uint64_t ga_order_flush(struct ga_order *o, uint64_t w, int all, ga_sink_fn sink, void *ctx)
{
    struct ga_event ev;
    uint64_t emitted = 0;
    close_tail(o);
    for (size_t r; (r = first_run(o)) < o->n_runs; emitted++) {
        const struct ga_order_ent *e = &o->ent[o->runs[r].begin];
        if (!all && e->key >= w) break;
        ga_rec_decode(o->arena + e->off, e->size, e->tid, e->order, &ev);
        sink(ctx, &ev);
        o->runs[r].begin++;
        o->held--;
        o->live_bytes -= e->size;
    }
    if (!all && w > o->passed) o->passed = w;
    drop_empty_runs(o);
    while (o->n_runs >= 2 && o->runs[o->n_runs - 2].weight <= 2 * o->runs[o->n_runs - 1].weight)
        merge_top(o);
    if (o->n > 2 * o->held || o->used > 2 * o->live_bytes) compact(o);
    return emitted;
}
