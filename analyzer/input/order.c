/* Watermark ordering. Host chunks of different threads interleave in the file; a watermark W
 * promises that no host record with ts < W follows it. So records are held until a watermark
 * passes them, then released sorted by (ts, file order). Memory is one watermark interval.
 *
 * Nothing is copied: the shim's threads write their records in time order, so a chunk payload
 * is one sorted run of records (or a few, where a record is skipped or time steps back), and
 * the run points into the payload, which the order keeps until the run is emitted. A thread's
 * next run usually starts where its last one ended in time: it is chained behind it in the same
 * stream, so the merge is over about one stream per thread (sorted in a small ring, or a binary
 * heap of their next keys when there are many), not over every chunk. Each emitted record costs
 * O(log streams); a watermark that passes nothing costs O(1), whatever is held.
 *
 * Memory: held buffers are whole payloads, so one held record can keep a 64 MiB chunk. When the
 * held buffers outweigh the held records (twice their bytes plus SLACK), the held records are
 * copied into one buffer and the rest freed: bounded by what is held, amortized O(1) per byte. */
#include <stdlib.h>
#include <string.h>

#include "input/reader.h"
#include "base/util.h"

#define NONE      UINT32_MAX
#define SLACK     (32u << 20)
#define SPARE_MAX (4u << 20) /* larger emptied buffers are freed, not kept for the reader */

void ga_order_init(struct ga_order *o)
{
    memset(o, 0, sizeof(*o));
    o->free_run = o->free_stream = o->free_buf = NONE;
    o->chunk_buf = o->cur = NONE;
}

void ga_order_free(struct ga_order *o)
{
    for (size_t i = 0; i < o->n_bufs; i++)
        if (o->bufs[i].refs != NONE) free(o->bufs[i].p); /* free slots hold NULL */
    for (int i = 0; i < GA_ORDER_SPARES; i++)
        free(o->spare[i]);
    free(o->runs);
    free(o->streams);
    free(o->heap);
    free(o->bufs);
    ga_map_free(&o->tid_stream);
    memset(o, 0, sizeof(*o));
}

static uint32_t rec_size(const unsigned char *p)
{
    uint32_t n;
    memcpy(&n, p + offsetof(struct gt_rec_header, size), 4);
    return n;
}

/* ga_rec_key of a framed record (size >= 8). */
static uint64_t rec_key(const unsigned char *p)
{
    return ga_rec_key(p, rec_size(p));
}

/* ---- slots: runs, streams and buffers, each with a free list ----------------------------------
 */

static uint32_t run_new(struct ga_order *o)
{
    if (o->free_run != NONE) {
        uint32_t i = o->free_run;
        o->free_run = o->runs[i].next;
        return i;
    }
    o->runs = ga_xgrow(o->runs, &o->runs_cap, o->n_runs, sizeof(*o->runs));
    return (uint32_t)o->n_runs++;
}

static uint32_t stream_new(struct ga_order *o)
{
    if (o->free_stream != NONE) {
        uint32_t i = o->free_stream;
        o->free_stream = o->streams[i].head;
        return i;
    }
    o->streams = ga_xgrow(o->streams, &o->streams_cap, o->n_streams, sizeof(*o->streams));
    return (uint32_t)o->n_streams++;
}

static uint32_t buf_new(struct ga_order *o)
{
    uint32_t i;
    if (o->free_buf != NONE) {
        i = o->free_buf;
        o->free_buf = (uint32_t)o->bufs[i].cap;
    } else {
        o->bufs = ga_xgrow(o->bufs, &o->bufs_cap, o->n_bufs, sizeof(*o->bufs));
        i = (uint32_t)o->n_bufs++;
    }
    o->bufs[i] = (struct ga_order_buf){NULL, 0, 0};
    return i;
}

static void buf_del(struct ga_order *o, uint32_t i)
{
    o->bufs[i] = (struct ga_order_buf){NULL, o->free_buf, NONE};
    o->free_buf = i;
}

/* An emptied buffer goes to the spares (the smallest one makes room), or is freed. */
static void keep_spare(struct ga_order *o, unsigned char *p, size_t cap)
{
    int k = 0;
    for (int i = 1; i < GA_ORDER_SPARES; i++)
        if (o->spare_cap[i] < o->spare_cap[k]) k = i;
    if (cap > SPARE_MAX || cap <= o->spare_cap[k]) {
        free(p);
        return;
    }
    free(o->spare[k]);
    o->spare[k] = p;
    o->spare_cap[k] = cap;
}

/* One run pointing into buffer i is done with it. */
static void buf_release(struct ga_order *o, uint32_t i)
{
    struct ga_order_buf *b = &o->bufs[i];
    if (--b->refs || !b->p) return; /* still used, or still the reader's (chunk being parsed) */
    o->pinned -= b->cap;
    keep_spare(o, b->p, b->cap);
    buf_del(o, i);
}

/* ---- the heap of streams, by (key, file order) of their next record ----------------------------
 */

/* Without branches: which stream comes next is a coin toss when threads interleave. */
static inline unsigned less(const struct ga_order_top *a, const struct ga_order_top *b)
{
#ifdef __SIZEOF_INT128__
    typedef unsigned __int128 u128; /* (key, order) as one number: a compare and a borrow */
    return ((u128)a->key << 64 | a->order) < ((u128)b->key << 64 | b->order);
#else
    return (unsigned)(a->key < b->key) | ((unsigned)(a->key == b->key) & (a->order < b->order));
#endif
}

/* Puts x in the place of the top. Bottom-up: the hole goes down to a leaf along the smaller
 * children (no comparison with x, whose outcome is unpredictable), then x climbs back; with
 * threads taking turns, the stream just emitted has the latest key and stays at the bottom. */
static inline void replace_top(struct ga_order *o, uint64_t key, uint64_t order, uint32_t stream)
{
    struct ga_order_top *h = o->heap, x = {key, order, stream};
    size_t i = 0, n = o->n_live;
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n) c += less(&h[c + 1], &h[c]);
        h[i] = h[c];
    }
    while (i > 0 && less(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static void heap_push(struct ga_order *o, struct ga_order_top x)
{
    o->heap = ga_xgrow(o->heap, &o->heap_cap, o->n_live, sizeof(*o->heap));
    size_t i = o->n_live++;
    while (i > 0 && less(&x, &o->heap[(i - 1) / 2])) {
        o->heap[i] = o->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    o->heap[i] = x;
}

/* ---- the ring: up to GA_ORDER_RING streams, sorted ------------------------------------------
 * With few streams they stay sorted in a ring: the next record is the front's, and the stream
 * just emitted goes back in from the end it is nearest to, which is one comparison in the two
 * usual cases: a thread going on alone (its next record is still the earliest: the front) and
 * threads taking turns (its next record is the latest: the back). Anything else moves the
 * streams between (fewer than GA_ORDER_RING). More streams than the ring holds: the heap above,
 * until they drop to half of it again. A sorted array is a heap: moving to the heap is a copy. */

#define RING_MASK (GA_ORDER_RING - 1)

static inline struct ga_order_top *ring_at(struct ga_order *o, size_t i)
{
    return &o->ring[(o->ring_head + i) & RING_MASK];
}

/* Inserts x; the ring has room. */
static inline void ring_insert(struct ga_order *o, struct ga_order_top x)
{
    size_t i = o->n_live;
    if (i == 0 || less(&x, ring_at(o, 0))) { /* before the front */
        o->ring_head = (o->ring_head - 1) & RING_MASK;
        o->ring[o->ring_head] = x;
    } else { /* from the back: x is not below the front, so this stops there at the latest */
        while (less(&x, ring_at(o, i - 1))) {
            *ring_at(o, i) = *ring_at(o, i - 1);
            i--;
        }
        *ring_at(o, i) = x;
    }
    o->n_live++;
}

/* The stream of the next record to emit. */
static inline const struct ga_order_top *next_top(struct ga_order *o)
{
    return o->in_heap ? &o->heap[0] : ring_at(o, 0);
}

/* A new stream. */
static void streams_add(struct ga_order *o, struct ga_order_top x)
{
    if (o->in_heap) {
        heap_push(o, x);
        return;
    }
    if (o->n_live < GA_ORDER_RING) {
        ring_insert(o, x);
        return;
    }
    o->heap = ga_xgrow(o->heap, &o->heap_cap, o->n_live, sizeof(*o->heap));
    for (size_t i = 0; i < o->n_live; i++)
        o->heap[i] = *ring_at(o, i);
    o->in_heap = 1;
    heap_push(o, x);
}

/* The top stream goes on with its record of (key, order). */
static inline void streams_replace_top(struct ga_order *o, uint64_t key, uint64_t order,
                                       uint32_t stream)
{
    if (o->in_heap) {
        replace_top(o, key, order, stream);
        return;
    }
    o->ring_head = (o->ring_head + 1) & RING_MASK;
    o->n_live--;
    ring_insert(o, (struct ga_order_top){key, order, stream});
}

/* The top stream is done. */
static void streams_pop(struct ga_order *o)
{
    if (!o->in_heap) {
        o->ring_head = (o->ring_head + 1) & RING_MASK;
        o->n_live--;
        return;
    }
    struct ga_order_top last = o->heap[--o->n_live];
    if (o->n_live) replace_top(o, last.key, last.order, last.stream);
    if (o->n_live > GA_ORDER_RING / 2) return;
    o->in_heap = 0; /* back to the ring: the few left, inserted one by one */
    size_t n = o->n_live;
    o->n_live = 0;
    for (size_t i = 0; i < n; i++)
        ring_insert(o, o->heap[i]);
}

/* ---- runs --------------------------------------------------------------------------------------
 */

/* The run being extended is complete: it joins its thread's stream when it starts no earlier
 * than that stream ends (its records come later in the file, so ties keep file order), else it
 * starts a stream of its own, which the thread's next runs will join. */
static void close_cur(struct ga_order *o)
{
    uint32_t r = o->cur;
    if (r == NONE) return;
    o->cur = NONE;
    struct ga_order_run *run = &o->runs[r];
    uint64_t key = rec_key(run->pos);
    uint64_t *sv = ga_map_find(&o->tid_stream, run->tid, 0);
    if (sv) {
        struct ga_order_stream *s = &o->streams[*sv];
        if (o->runs[s->tail].last_key <= key) {
            o->runs[s->tail].next = r;
            s->tail = r;
            return;
        }
    }
    uint32_t s = stream_new(o);
    o->streams[s] = (struct ga_order_stream){r, r};
    streams_add(o, (struct ga_order_top){key, run->order, s});
    *ga_map_upsert(&o->tid_stream, run->tid, 0, s, NULL) = s;
}

void ga_order_push_run(struct ga_order *o, const unsigned char *rec, const unsigned char *end,
                       uint32_t count, uint64_t first_key, uint64_t last_key, uint32_t late,
                       uint32_t tid, uint64_t order)
{
    o->late += late;
    o->held += count;
    o->held_bytes += (size_t)(end - rec);
    if (o->held > o->max_held) o->max_held = o->held;
    if (o->cur != NONE) {
        struct ga_order_run *run = &o->runs[o->cur];
        if (run->end == rec && first_key >= run->last_key) { /* the common case: the run goes on */
            run->end = end;
            run->last_key = last_key;
            return;
        }
        close_cur(o);
    }
    uint32_t r = run_new(o);
    o->runs[r] = (struct ga_order_run){rec, end, last_key, order, tid, o->chunk_buf, NONE};
    o->bufs[o->chunk_buf].refs++;
    o->cur = r;
}

void ga_order_push(struct ga_order *o, const unsigned char *rec, uint32_t size, uint32_t tid,
                   uint64_t order)
{
    uint64_t key = ga_rec_key(rec, size);
    ga_order_push_run(o, rec, rec + size, 1, key, key, key < o->passed, tid, order);
}

void ga_order_chunk_begin(struct ga_order *o)
{
    o->chunk_buf = buf_new(o);
}

/* Copies every held record into one new buffer and frees the old ones. */
static void compact(struct ga_order *o)
{
    uint32_t nb = buf_new(o);
    unsigned char *p = ga_xmalloc(o->held_bytes ? o->held_bytes : 8);
    size_t used = 0;
    o->bufs[nb] = (struct ga_order_buf){p, o->held_bytes, 0};
    for (size_t s = 0; s < o->n_streams; s++) {
        if (o->streams[s].tail == NONE) continue; /* a free slot */
        for (uint32_t r = o->streams[s].head; r != NONE; r = o->runs[r].next) {
            struct ga_order_run *run = &o->runs[r];
            size_t len = (size_t)(run->end - run->pos);
            memcpy(p + used, run->pos, len);
            uint32_t old = run->buf;
            run->pos = p + used;
            run->end = run->pos + len;
            run->buf = nb;
            o->bufs[nb].refs++;
            used += len;
            struct ga_order_buf *b = &o->bufs[old];
            if (--b->refs == 0) {
                o->pinned -= b->cap;
                free(b->p);
                buf_del(o, old);
            }
        }
    }
    o->pinned += o->bufs[nb].cap;
    o->compactions++;
}

void ga_order_chunk_end(struct ga_order *o, unsigned char **p, size_t *cap)
{
    uint32_t b = o->chunk_buf;
    close_cur(o);
    o->chunk_buf = NONE;
    if (o->bufs[b].refs == 0) {
        buf_del(o, b);
        return;
    }
    o->bufs[b].p = *p;
    o->bufs[b].cap = *cap;
    o->pinned += *cap;
    int k = 0; /* the reader gets the largest spare */
    for (int i = 1; i < GA_ORDER_SPARES; i++)
        if (o->spare_cap[i] > o->spare_cap[k]) k = i;
    *p = o->spare[k];
    *cap = o->spare_cap[k];
    o->spare[k] = NULL;
    o->spare_cap[k] = 0;
    if (o->pinned > 2 * o->held_bytes + SLACK) compact(o);
}

uint64_t ga_order_flush(struct ga_order *o, uint64_t w, int all, ga_sink_fn sink, void *ctx)
{
    struct ga_event ev;
    uint64_t emitted = 0, bytes = 0;
    close_cur(o);
    while (o->n_live && (all || next_top(o)->key < w)) {
        uint32_t s = next_top(o)->stream, r = o->streams[s].head;
        struct ga_order_run *run = &o->runs[r];
        uint32_t size = rec_size(run->pos);
        ga_rec_decode(run->pos, size, run->tid, run->order, &ev);
        sink(ctx, &ev);
        emitted++;
        bytes += size;
        run->pos += size;
        run->order++;
        if (run->pos == run->end) { /* the run is done: the stream goes on with its next one */
            uint32_t next = run->next, tid = run->tid;
            buf_release(o, run->buf);
            run->next = o->free_run;
            o->free_run = r;
            if (next == NONE) { /* and so is the stream */
                uint64_t *sv = ga_map_find(&o->tid_stream, tid, 0);
                if (sv && *sv == s) ga_map_remove(&o->tid_stream, tid, 0, NULL);
                o->streams[s] = (struct ga_order_stream){o->free_stream, NONE};
                o->free_stream = s;
                streams_pop(o);
                continue;
            }
            o->streams[s].head = next;
            run = &o->runs[next];
        }
        streams_replace_top(o, rec_key(run->pos), run->order, s);
    }
    o->held -= emitted; /* the sink never sees the order: counted here, not per record */
    o->held_bytes -= bytes;
    if (!all && w > o->passed) o->passed = w;
    return emitted;
}
