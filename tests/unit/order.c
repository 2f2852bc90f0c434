/* Watermark ordering (analyzer/input/order.c) against a model: every record held until a watermark
 * passes it, then all of those released sorted by (ts, file order), the late ones counted. The
 * order holds records in place inside the chunk payloads it keeps; random scenarios (threads
 * interleaving, time steps back inside a chunk, skipped records, watermarks inside chunks and
 * between them, equal times) must come out exactly as the model says, and so must the bytes of
 * each record, also after the order compacted what it held (a few records kept across many
 * 1 MiB payloads). Every scenario runs twice: records pushed one by one (ga_order_push), and
 * grouped into runs as the reader pushes them (ga_order_push_run: back to back, keys not
 * decreasing, no skipped record or watermark inside). */
#include <stdlib.h>
#include <string.h>

#include "input/reader.h"
#include "check.h"

struct item {
    uint64_t key, order;
    uint32_t tid;
};

struct model {
    struct item *held;
    size_t n, cap;
    uint64_t passed, late, max_held;
};

struct got {
    struct item *ev;
    size_t n, cap;
    int bad_bytes; /* a record whose tag word is not its file order */
};

#define RNG_SEED 88172645463325252ull
#include "rng.h"

static void sink(void *ctx, const struct ga_event *ev)
{
    struct got *g = ctx;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 1024;
        g->ev = realloc(g->ev, g->cap * sizeof(*g->ev));
    }
    g->ev[g->n++] = (struct item){ev->ts, ev->order, ev->tid};
    if (ev->r->lost.count != ev->order) g->bad_bytes = 1; /* the tag word, see put_rec */
}

static int cmp_item(const void *a, const void *b)
{
    const struct item *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void model_push(struct model *m, struct item it)
{
    if (it.key < m->passed) m->late++;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 1024;
        m->held = realloc(m->held, m->cap * sizeof(*m->held));
    }
    m->held[m->n++] = it;
    if (m->n > m->max_held) m->max_held = m->n;
}

/* Appends what the model releases at w (everything when all) to want. */
static void model_flush(struct model *m, uint64_t w, int all, struct got *want)
{
    size_t k = 0;
    qsort(m->held, m->n, sizeof(*m->held), cmp_item);
    for (size_t i = 0; i < m->n; i++) {
        if (all || m->held[i].key < w) {
            if (want->n == want->cap) {
                want->cap = want->cap ? 2 * want->cap : 1024;
                want->ev = realloc(want->ev, want->cap * sizeof(*want->ev));
            }
            want->ev[want->n++] = m->held[i];
        } else {
            m->held[k++] = m->held[i];
        }
    }
    m->n = k;
    if (!all && w > m->passed) m->passed = w;
}

/* A 24-byte LOST record: ts = key, count = its file order (the tag the sink checks). */
static void put_rec(unsigned char *p, uint64_t key, uint64_t order)
{
    struct gt_rec_lost r = {{GT_REC_LOST, 0, sizeof(r)}, key, order};
    memcpy(p, &r, sizeof(r));
}

struct scenario {
    unsigned threads;
    unsigned max_chunk; /* records per chunk, at most */
    unsigned back_pct;  /* chance that a record's time steps back */
    unsigned skip_pct;  /* chance that a record is skipped (unknown type, malformed) */
    unsigned wm_pct;    /* chance of a watermark after a record */
    size_t pad;         /* payload buffer size when > the records (keeps big buffers held) */
    unsigned far_pct;   /* chance that a record's time is far in the future (held long) */
    unsigned chunks;
};

/* The run being grouped for ga_order_push_run: records [first, first + count) of the payload. */
struct pending {
    unsigned first, count, late;
    uint64_t first_key, last_key, order;
};

static void push_pending(struct ga_order *o, struct pending *p, const unsigned char *buf,
                         uint32_t tid)
{
    if (p->count)
        ga_order_push_run(o, buf + 24 * p->first, buf + 24 * (p->first + p->count), p->count,
                          p->first_key, p->last_key, p->late, tid, p->order);
    p->count = 0;
}

static uint64_t compactions;

static int run(const struct scenario *sc, int grouped, int *bytes_ok, uint64_t *compare_n)
{
    struct ga_order o;
    struct model m = {0};
    struct got got = {0}, want = {0};
    uint64_t clock[17] = {0}, order = 0, now = 1000;
    unsigned char *buf = NULL;
    size_t cap = 0;
    ga_order_init(&o);
    for (unsigned c = 0; c < sc->chunks; c++) {
        uint32_t tid = (uint32_t)rng(sc->threads) + 1;
        unsigned n = (unsigned)rng(sc->max_chunk) + 1;
        size_t need = (size_t)n * 24 > sc->pad ? (size_t)n * 24 : sc->pad;
        if (cap < need) {
            free(buf);
            buf = malloc(need);
            cap = need;
        }
        struct pending pend = {0};
        ga_order_chunk_begin(&o);
        for (unsigned i = 0; i < n; i++) {
            uint64_t key = clock[tid] += rng(3) * 100; /* equal times happen */
            if (rng(100) < sc->back_pct)
                key = clock[tid] = clock[tid] > 5000 ? clock[tid] - rng(5000) : 0;
            if (rng(1000) < sc->far_pct * 10) key = (1ull << 62) + rng(1000);
            if (key > now) now = key < (1ull << 62) ? key : now;
            put_rec(buf + 24 * i, key, order);
            if (rng(100) < sc->skip_pct) { /* framed, counted in file order, never pushed */
                push_pending(&o, &pend, buf, tid);
                order++;
                continue;
            }
            if (!grouped) {
                ga_order_push(&o, buf + 24 * i, 24, tid, order);
            } else {
                if (pend.count && key < pend.last_key) push_pending(&o, &pend, buf, tid);
                if (!pend.count)
                    pend = (struct pending){i, 0, 0, key, key, order};
                pend.count++;
                pend.last_key = key;
                pend.late += key < o.passed;
            }
            model_push(&m, (struct item){key, order, tid});
            order++;
            if (rng(100) < sc->wm_pct) {
                uint64_t w = now > 3000 ? now - rng(3000) : now;
                push_pending(&o, &pend, buf, tid);
                ga_order_flush(&o, w, 0, sink, &got);
                model_flush(&m, w, 0, &want);
            }
        }
        push_pending(&o, &pend, buf, tid);
        ga_order_chunk_end(&o, &buf, &cap);
        for (uint32_t t = 1; t <= sc->threads; t++) /* the other threads move on too */
            if (clock[t] + 400 < now) clock[t] += rng(400);
    }
    ga_order_flush(&o, 0, 1, sink, &got);
    model_flush(&m, 0, 1, &want);
    int same = got.n == want.n && o.late == m.late && o.max_held == m.max_held && o.held == 0;
    for (size_t i = 0; same && i < got.n; i++)
        same = got.ev[i].key == want.ev[i].key && got.ev[i].order == want.ev[i].order &&
               got.ev[i].tid == want.ev[i].tid;
    if (!same)
        printf("     got %zu records, late %llu, most held %llu; model %zu, %llu, %llu\n", got.n,
               (unsigned long long)o.late, (unsigned long long)o.max_held, want.n,
               (unsigned long long)m.late, (unsigned long long)m.max_held);
    *bytes_ok = !got.bad_bytes;
    *compare_n = got.n;
    compactions = o.compactions;
    ga_order_free(&o);
    free(buf);
    free(m.held);
    free(got.ev);
    free(want.ev);
    return same;
}

int main(void)
{
    static const struct scenario sc[] = {
        /* threads max_chunk back skip wm pad far chunks */
        {1, 50, 0, 0, 0, 0, 0, 200},       /* one thread, no watermark: one stream */
        {4, 200, 0, 0, 5, 0, 0, 400},      /* the shim's shape */
        {4, 200, 5, 3, 5, 0, 0, 400},      /* steps back, skipped records */
        {8, 20, 30, 10, 20, 0, 0, 2000},   /* many short runs */
        {3, 5, 50, 0, 50, 0, 0, 5000},     /* chaos */
        {16, 100, 2, 2, 1, 0, 1, 1000},    /* some held to the end */
        {4, 8, 0, 0, 10, 1 << 20, 5, 200}, /* 1 MiB payloads, a few held: compaction */
    };
    for (int grouped = 0; grouped < 2; grouped++)
        for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
            int bytes_ok = 0;
            uint64_t n = 0;
            char what[200];
            int same = run(&sc[i], grouped, &bytes_ok, &n);
            snprintf(what, sizeof(what),
                     "scenario %zu (%u threads, %u%% back, %u%% skipped, %u%% watermarks%s): "
                     "order, late count and most held as the model",
                     i + 1, sc[i].threads, sc[i].back_pct, sc[i].skip_pct, sc[i].wm_pct,
                     grouped ? ", pushed as runs" : "");
            CHECK(what, same && n > 0);
            snprintf(what, sizeof(what), "scenario %zu%s: every record's bytes intact", i + 1,
                     grouped ? " (runs)" : "");
            CHECK(what, bytes_ok);
            if (sc[i].pad) CHECK("... and the held records were compacted", compactions > 0);
        }
    return check_done();
}
