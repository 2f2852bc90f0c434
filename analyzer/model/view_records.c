/* The records in time order (view_records.h), and the names of the format's codes for the record
 * printer. */
#include <stdlib.h>
#include <string.h>

#include "model/view_records.h"
#include "model/state.h"
#include "analyses/facts.h"
#include "analyses/gpu.h"
#include "analyses/tiers.h"
#include "analyses/torch_alloc.h"
#include "input/reader.h"
#include "input/records.h"
#include "base/util.h"

void ga_vrecord_of(struct ga_vrecord *v, const struct ga_event *ev)
{
    *v = (struct ga_vrecord){
        .type = ev->type, .sub = ev->sub, .tid = ev->tid, .ts = ev->ts, .r = ev->r};
    for (int i = 0; i < 3; i++) {
        v->str[i] = ev->str[i];
        v->str_len[i] = ev->str_len[i];
    }
}

const char *ga_vrec_type_name(unsigned type)
{
    return ga_rec_type_name(type);
}

const char *ga_vrec_api_name(unsigned api, char buf[16])
{
    return ga_api_label(api, buf);
}

const char *ga_vrec_copy_kind_name(unsigned kind)
{
    return ga_copy_kind_name(kind);
}

const char *ga_vrec_cupti_status_name(unsigned status)
{
    return ga_cupti_status_name(status);
}

const char *ga_vrec_resolve_how_name(unsigned how)
{
    return ga_resolve_how_name(how);
}

const char *ga_vrec_torch_why_name(unsigned why)
{
    return ga_torch_why_name(why);
}

const char *ga_vrec_torch_state_name(unsigned state)
{
    return ga_torch_state_name(state);
}

const char *ga_vrec_tiers_role_name(unsigned role)
{
    return ga_tiers_role_name(role);
}

/* The reader hands host records in time order and GPU records as CUPTI delivered them: late, by
 * up to a flush period or more. This holds every timed record in a heap by (time, file
 * order) and hands one on when it is ORDER_WINDOW_NS older than the newest host record seen, or
 * when ORDER_HELD_MAX are held; one that arrives older than what was handed is handed at once
 * and counted (the caller says so). Records without a time (GPU_EXTCORR, GPU_NAME) are handed on
 * as they come. Memory: the records of ORDER_WINDOW_NS of trace, at most ORDER_HELD_MAX. */
#define ORDER_WINDOW_NS 1000000000ull
#define ORDER_HELD_MAX  (1u << 18)

struct held {
    struct ga_event ev; /* its strings point into `strings` */
    char strings[];
};

struct order_ctx {
    ga_vrecord_fn fn;
    void *ctx;
    struct ga_read_stats *stats;
    struct held **heap;
    size_t n, cap;
    uint64_t newest_host, handed; /* handed: time of the last record handed from the heap */
    int any_handed;
    uint64_t late;
};

static int held_before(const struct held *a, const struct held *b)
{
    return a->ev.ts != b->ev.ts ? a->ev.ts < b->ev.ts : a->ev.order < b->ev.order;
}

static void heap_push(struct order_ctx *d, struct held *h)
{
    d->heap = ga_xgrow(d->heap, &d->cap, d->n, sizeof(*d->heap));
    size_t i = d->n++;
    while (i && held_before(h, d->heap[(i - 1) / 2])) {
        d->heap[i] = d->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    d->heap[i] = h;
}

static struct held *heap_pop(struct order_ctx *d)
{
    struct held *top = d->heap[0], *last = d->heap[--d->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= d->n) break;
        if (c + 1 < d->n && held_before(d->heap[c + 1], d->heap[c])) c++;
        if (!held_before(d->heap[c], last)) break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (d->n) d->heap[i] = last;
    return top;
}

/* A copy of ev that outlives the sink call: its fixed part and its strings. */
static struct held *hold(const struct ga_event *ev)
{
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        n += ev->str_len[i];
    struct held *h = ga_xmalloc(sizeof(*h) + n);
    ga_event_keep(&h->ev, ev);
    char *s = h->strings;
    for (int i = 0; i < 3; i++) {
        if (!ev->str[i]) continue;
        memcpy(s, ev->str[i], ev->str_len[i]);
        h->ev.str[i] = s;
        s += ev->str_len[i];
    }
    return h;
}

static void hand(struct order_ctx *d, const struct ga_event *ev)
{
    struct ga_vrecord v;
    ga_vrecord_of(&v, ev);
    d->fn(d->ctx, d->stats->header.start_monotonic_ns, &v);
}

static void hand_oldest(struct order_ctx *d)
{
    struct held *h = heap_pop(d);
    hand(d, &h->ev);
    d->handed = h->ev.ts;
    d->any_handed = 1;
    free(h);
}

static void order_sink(void *p, const struct ga_event *ev)
{
    struct order_ctx *d = p;
    if (ev->type == GT_REC_GPU_EXTCORR || ev->type == GT_REC_GPU_NAME) { /* no time */
        hand(d, ev);
        return;
    }
    if (d->any_handed && ev->ts < d->handed) { /* too late for its place */
        d->late++;
        hand(d, ev);
        return;
    }
    if (!ga_rec_is_gpu(ev->type) && ev->ts != UINT64_MAX && ev->ts > d->newest_host)
        d->newest_host = ev->ts;
    heap_push(d, hold(ev));
    while (d->n && (d->n > ORDER_HELD_MAX || d->heap[0]->ev.ts + ORDER_WINDOW_NS < d->newest_host))
        hand_oldest(d);
}

void ga_read_notes_of(const struct ga_read_stats *s, struct ga_read_notes *n)
{
    n->truncated = s->truncated;
    n->malformed_records = s->malformed_records;
    n->duplicate_chunks = s->duplicate_chunks;
    n->late_records = s->late_records;
    snprintf(n->stop_reason, sizeof(n->stop_reason), "%s", s->stop_reason);
    snprintf(n->error, sizeof(n->error), "%s", s->error);
}

int ga_vrecords_each(const char *path, ga_vrecord_fn fn, void *ctx, struct ga_read_notes *notes,
                     uint64_t *late)
{
    struct ga_read_stats stats;
    struct order_ctx d = {.fn = fn, .ctx = ctx, .stats = &stats};
    int rc = ga_read_trace(path, order_sink, &d, &stats);
    while (d.n)
        hand_oldest(&d);
    free(d.heap);
    *late = d.late;
    ga_read_notes_of(&stats, notes);
    return rc;
}
