/* Watermark ordering. Host chunks of different threads interleave in the file; a watermark W
 * promises that no host record with ts < W follows it. So records are held until a watermark
 * passes them, then released sorted by (ts, file order). Memory is one watermark interval. */
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
    if (o->n > o->max_held) o->max_held = o->n;
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

/* Natural merge sort. The buffer holds one sorted run per chunk (a thread writes in time order)
 * plus what stayed from the last flush, so there are few runs and sorting is nearly linear. */
static void sort_entries(struct ga_order *o)
{
    size_t n = o->n;
    struct ga_order_ent *src = o->ent, *dst;
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
    if (src != o->ent) memcpy(o->ent, src, n * sizeof(*src));
}

/* Moves the records that stay (entries [from, n)) to the front, into the spare arena. */
static void keep_rest(struct ga_order *o, size_t from)
{
    size_t used = 0, k = 0;
    for (size_t i = from; i < o->n; i++)
        used += o->ent[i].size;
    o->spare = ga_xgrow(o->spare, &o->spare_cap, used, 1);
    used = 0;
    for (size_t i = from; i < o->n; i++, k++) {
        struct ga_order_ent e = o->ent[i];
        memcpy(o->spare + used, o->arena + e.off, e.size);
        e.off = used;
        used += e.size;
        o->ent[k] = e;
    }
    char *t = o->arena;
    size_t tc = o->arena_cap;
    o->arena = o->spare;
    o->arena_cap = o->spare_cap;
    o->spare = t;
    o->spare_cap = tc;
    o->n = k;
    o->used = used;
}

uint64_t ga_order_flush(struct ga_order *o, uint64_t w, int all, ga_sink_fn sink, void *ctx)
{
    struct ga_event ev;
    size_t i = 0;
    if (o->n > 1) sort_entries(o);
    for (; i < o->n && (all || o->ent[i].key < w); i++) {
        const struct ga_order_ent *e = &o->ent[i];
        ga_rec_decode(o->arena + e->off, e->size, e->tid, e->order, &ev);
        sink(ctx, &ev);
    }
    if (!all && w > o->passed) o->passed = w;
    keep_rest(o, i);
    return i;
}
