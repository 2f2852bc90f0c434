/* GPU idle time by what the host was doing: see hostidle.h. */
#include "analyses/hostidle.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

#define MAX_FRAMES 256

static const char *const class_names[GA_HI_CLASSES] = {
    "data_loading", "io_wait",         "cpu",      "communication", "synchronization",
    "allocation",   "launch_overhead", "unsampled"};

const char *ga_hi_class_name(unsigned cls)
{
    return cls < GA_HI_CLASSES ? class_names[cls] : "?";
}

void ga_hostidle_init(struct ga_hostidle *h)
{
    memset(h, 0, sizeof(*h));
    h->prune_at = 4096;
    h->wait_limit = GA_HI_WAIT_MAX;
}

static int by_ts(const void *a, const void *b)
{
    const struct ga_hi_sample *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The samples come out of order, sorted and merged into s (from its end: no other buffer). */
static void merge(struct ga_hostidle *h)
{
    if (!h->nr) return;
    qsort(h->r, h->nr, sizeof(*h->r), by_ts);
    h->s = ga_xgrow(h->s, &h->cap, h->n + h->nr - 1, sizeof(*h->s));
    size_t i = h->n, j = h->nr, w = h->n + h->nr;
    while (j) {
        if (i && by_ts(&h->s[i - 1], &h->r[j - 1]) > 0)
            h->s[--w] = h->s[--i];
        else
            h->s[--w] = h->r[--j];
    }
    h->n += h->nr;
    h->nr = 0;
}

/* s holds every sample kept before `end`. */
static inline void merged_before(struct ga_hostidle *h, uint64_t end)
{
    if (h->nr && h->r_min < end) merge(h);
}

static void join_passed(struct ga_hostidle *h);
static void prune(struct ga_hostidle *h, uint64_t low);
static uint64_t prune_low(const struct ga_hostidle *h);

void ga_hostidle_event(struct ga_hostidle *h, const struct ga_event *ev)
{
    if (ev->type != GT_REC_HOST_SAMPLE) return;
    const struct gt_rec_host_sample *r = &ev->r->host_sample;
    h->have_samples = 1;
    h->samples_seen++;
    if (h->n_wait) join_passed(h); /* (the host records have passed this sample's time) */
    if (h->n + h->nr >= h->prune_at) prune(h, prune_low(h));
    if (h->n + h->nr >= GA_HI_SAMPLES_MAX) {
        h->samples_dropped++;
        return;
    }
    struct ga_hi_sample x = {r->sample_ts, r->interval_ns, r->cpu_ns, r->tid, r->stack, r->flags,
                             (uint32_t)h->samples_seen};
    if (!h->n || h->s[h->n - 1].ts <= x.ts) { /* in order */
        h->s = ga_xgrow(h->s, &h->cap, h->n, sizeof(*h->s));
        h->s[h->n++] = x;
    } else {
        h->r = ga_xgrow(h->r, &h->r_cap, h->nr, sizeof(*h->r));
        if (!h->nr || x.ts < h->r_min) h->r_min = x.ts;
        h->r[h->nr++] = x;
        if (h->nr > 4096 && h->nr * 4 > h->n) merge(h);
    }
    if (h->n + h->nr > h->kept_max) h->kept_max = h->n + h->nr;
}

static struct ga_hi_device *device(struct ga_hostidle *h, uint32_t dev)
{
    for (size_t i = 0; i < h->n_dev; i++)
        if (h->dev[i].device == dev) return &h->dev[i];
    h->dev = ga_xgrow(h->dev, &h->dev_cap, h->n_dev, sizeof(*h->dev));
    struct ga_hi_device *d = &h->dev[h->n_dev++];
    memset(d, 0, sizeof(*d));
    d->device = dev;
    return d;
}

/* The thread whose samples explain the gap: its launch's, 0 (any thread's) without one or for an
 * async copy or memset, which a helper thread often queues for the code that waits on it (a
 * collective's worker, a pinned-memory or prefetching thread). */
uint32_t ga_hostidle_gap_tid(const struct ga_gap *gp)
{
    return gp->launch && !ga_api_enqueues(gp->launch->api) ? gp->launch->tid : 0;
}

static unsigned class_of_cause(unsigned cause);

/* Adds to the piece of (stack, key) in *p (*n of them, *cap room; idx: (stack, key) -> index). */
static void piece_add(struct ga_hi_piece **p, size_t *n, size_t *cap, struct ga_map *idx,
                      uint32_t stack, unsigned key, uint64_t ns, uint64_t on, uint64_t off,
                      uint64_t samples)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(idx, stack, key, *n, &added);
    if (added) {
        *p = ga_xgrow(*p, cap, *n, sizeof(**p));
        (*p)[(*n)++] = (struct ga_hi_piece){stack, (uint8_t)key, 0, 0, 0, 0};
    }
    struct ga_hi_piece *x = &(*p)[*v];
    x->idle_ns += ns;
    x->on_cpu_ns += on;
    x->off_cpu_ns += off;
    x->samples += samples;
}

static void agg_add(struct ga_hi_device *d, uint32_t stack, unsigned tag, uint64_t ns, uint64_t on,
                    uint64_t off, uint64_t samples)
{
    piece_add(&d->agg, &d->n_agg, &d->agg_cap, &d->agg_idx, stack, tag, ns, on, off, samples);
}

/* Gap gp of device d with the samples it holds, all of which have come: equal shares of its time
 * (the remainder to the first sample). */
static void join(struct ga_hostidle *h, struct ga_hi_device *d, const struct ga_hi_gap *gp)
{
    size_t first = 0, end = 0, mine = 0;
    merged_before(h, gp->start + gp->dur);
    if (h->have_samples) ga_hostidle_range(h, gp->start, gp->dur, &first, &end);
    for (size_t i = first; i < end; i++)
        mine += gp->tid && h->s[i].tid == gp->tid;
    size_t cnt = mine ? mine : end - first;
    if (!cnt) {
        agg_add(d, gp->stack, GA_HI_TAG_CAUSE + class_of_cause(gp->cause), gp->dur, 0, 0, 0);
        return;
    }
    uint64_t share = gp->dur / cnt, rest = gp->dur - share * cnt;
    for (size_t i = first; i < end; i++) {
        const struct ga_hi_sample *s = &h->s[i];
        if (mine && s->tid != gp->tid) continue;
        uint64_t ns = share + rest;
        rest = 0;
        int on = (s->flags & GT_SAMPLE_ON_CPU) != 0;
        unsigned tag = (on ? GA_HI_TAG_ON_CPU : 0) |
                       ((s->flags & GT_SAMPLE_IN_HOOK) ? GA_HI_TAG_IN_HOOK : 0);
        agg_add(d, s->stack, tag, ns, on ? ns : 0, on ? 0 : ns, 1);
    }
    d->sampled_ns += gp->dur;
}

void ga_hostidle_call_slow(struct ga_hostidle *h, uint32_t tid, uint64_t start)
{
    uint64_t *i = ga_map_find(&h->thr_idx, tid, 0);
    if (!i) {
        if (h->n_thr >= GA_HI_THREADS) return;
        int added = 0;
        i = ga_map_upsert(&h->thr_idx, tid, 0, h->n_thr, &added);
        h->thr_tid = ga_xgrow(h->thr_tid, &h->thr_cap, h->n_thr, sizeof(*h->thr_tid));
        size_t cap = h->thr_cap;
        h->thr_start = ga_xrealloc(h->thr_start, cap * sizeof(*h->thr_start));
        h->thr_tid[h->n_thr] = tid;
        h->thr_start[h->n_thr++] = 0;
        h->thr_dirty = h->n_thr; /* a new thread may be below the least: recomputed next time */
    }
    uint32_t c = (tid ^ tid >> 6 ^ tid >> 12) & (GA_HI_THR_CACHE - 1);
    h->thr_cache_tid[c] = tid;
    h->thr_cache_idx[c] = (uint32_t)*i + 1;
    if (start > h->thr_start[*i]) h->thr_start[*i] = start;
    h->thr_dirty++;
}

/* The least start of the threads' latest calls; recomputed once as many updates as threads came
 * since (any number with few threads), and after a new thread: a value stale from updates alone
 * is lower (a thread's start only grows), so gaps only wait longer. */
static uint64_t threads_floor(struct ga_hostidle *h)
{
    if (h->thr_dirty && (h->n_thr <= 64 || h->thr_dirty >= h->n_thr)) {
        uint64_t m = UINT64_MAX;
        for (size_t i = 0; i < h->n_thr; i++)
            if (h->thr_start[i] < m) m = h->thr_start[i];
        h->thr_min = m;
        h->thr_dirty = 0;
    }
    return h->n_thr ? h->thr_min : UINT64_MAX;
}

/* Every sample taken inside gap gp has come: the host records have passed its end (a thread not
 * seen yet starts sampling at its first hooked call, later), and so has every thread's latest
 * hooked call (a thread writes the samples taken since its previous call at its next one). */
static int passed(struct ga_hostidle *h, const struct ga_hi_gap *gp)
{
    uint64_t end = gp->start + gp->dur;
    return h->host_max && *h->host_max > end && threads_floor(h) > end;
}

/* The waiting gaps at the front that the host records have passed, joined (gaps are found about
 * in time order: one not passed yet holds those behind it, which costs memory, not exactness). */
static void join_passed(struct ga_hostidle *h)
{
    while (h->wait_head < h->n_wait && passed(h, &h->wait[h->wait_head])) {
        const struct ga_hi_gap *gp = &h->wait[h->wait_head++];
        join(h, device(h, gp->device), gp);
    }
    if (h->wait_head == h->n_wait) h->wait_head = h->n_wait = 0;
}

void ga_hostidle_gap(void *ctx, uint32_t dev, const struct ga_gap *gp)
{
    struct ga_hostidle *h = ctx;
    struct ga_hi_device *d = device(h, dev);
    d->idle_ns += gp->dur;
    struct ga_hi_gap g = {gp->start, gp->dur, ga_hostidle_gap_tid(gp), gp->stack, dev, gp->cause};
    if (h->n_wait) join_passed(h);
    if (h->n_wait == h->wait_head && passed(h, &g)) {
        join(h, d, &g);
        return;
    }
    if (h->n_wait - h->wait_head >= h->wait_limit) { /* the oldest joined with what has come */
        const struct ga_hi_gap *old = &h->wait[h->wait_head++];
        join(h, device(h, old->device), old);
        h->gaps_early++;
    }
    if (h->wait_head && h->wait_head * 2 >= h->n_wait) { /* (the front's room, taken back) */
        memmove(h->wait, h->wait + h->wait_head, (h->n_wait - h->wait_head) * sizeof(*h->wait));
        h->n_wait -= h->wait_head;
        h->wait_head = 0;
    }
    h->wait = ga_xgrow(h->wait, &h->wait_cap, h->n_wait, sizeof(*h->wait));
    h->wait[h->n_wait++] = g;
    if (h->n_wait - h->wait_head > h->wait_peak) h->wait_peak = h->n_wait - h->wait_head;
}

struct span {
    uint64_t s, e;
};

static int by_span_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* No gap still to come or waiting holds a sample before this: the gaps analysis' floor, the
 * waiting gaps' starts (0 without the gaps analysis: every sample may still be needed). */
static uint64_t prune_low(const struct ga_hostidle *h)
{
    uint64_t low = h->gaps ? ga_gaps_floor(h->gaps) : 0;
    for (size_t i = h->wait_head; i < h->n_wait; i++)
        if (h->wait[i].start < low) low = h->wait[i].start;
    return low;
}

/* Lets go of the samples before low that lie in none of the gaps the gaps analysis keeps (whose
 * samples the report lists). Runs when the samples kept have doubled since the last time. */
static void prune(struct ga_hostidle *h, uint64_t low)
{
    merge(h);
    struct span *keep = NULL;
    size_t nk = 0, cap = 0;
    for (size_t k = 0; h->gaps && k < h->gaps->n_devices; k++) {
        const struct ga_gaps_device *gd = &h->gaps->devices[k];
        for (size_t j = 0; j < gd->n_kept; j++) {
            const struct ga_gap *gp = &gd->gaps[j];
            if (gp->start >= low || !gp->dur) continue;
            keep = ga_xgrow(keep, &cap, nk, sizeof(*keep));
            keep[nk++] = (struct span){gp->start, gp->start + gp->dur};
        }
    }
    if (nk > 1) qsort(keep, nk, sizeof(*keep), by_span_start);
    size_t w = 0, k = 0;
    for (size_t i = 0; i < h->n; i++) {
        uint64_t t = h->s[i].ts;
        while (k < nk && keep[k].e <= t) /* (spans sorted by start: skip those ended) */
            k++;
        int in = 0;
        for (size_t j = k; j < nk && keep[j].s <= t; j++)
            if (t < keep[j].e) {
                in = 1;
                break;
            }
        if (t >= low || in)
            h->s[w++] = h->s[i];
    }
    free(keep);
    h->samples_pruned += h->n - w;
    h->n = w;
    h->prune_at = 2 * w + 4096;
}

void ga_hostidle_range(const struct ga_hostidle *h, uint64_t start, uint64_t dur, size_t *first,
                       size_t *end)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->s[mid].ts < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t e = lo;
    while (e < h->n && h->s[e].ts < start + dur)
        e++;
    *first = lo;
    *end = e;
}

static int has(const char *s, const char *what)
{
    return s && strstr(s, what);
}

/* C and C++ runtime libraries: a blocking call's wrapper is not where the program waits. */
static int system_lib(const struct ga_stacks *st, const struct ga_frame *f)
{
    if (f->module == GA_NO_MODULE) return 0;
    const char *n = st->mods[f->module].name;
    static const char *const libs[] = {"libc.so", "libc-", "libpthread", "ld-linux", "libstdc++",
                                       "libgcc_s", "libm.so", "librt", "linux-vdso",
                                       /* sanitizer runtimes intercept libc's functions */
                                       "libasan", "libubsan", "libtsan"};
    for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
        if (n && strncmp(n, libs[i], strlen(libs[i])) == 0) return 1;
    return 0;
}

unsigned ga_hostidle_classify(struct ga_sites *sites, struct ga_stacks *st, uint32_t stack,
                              uint32_t flags, const struct ga_frame **site)
{
    static const struct ga_frame *fr[MAX_FRAMES];
    size_t n = stack ? ga_sites_stack_frames(st, stack, fr, MAX_FRAMES) : 0;
    const struct ga_frame *native = NULL, *py = NULL, *py_any = NULL, *rt = NULL;
    int data = 0, comm = 0;
    for (size_t i = 0; i < n; i++) {
        const struct ga_frame *f = fr[i];
        const char *fn = f->func, *file = f->file;
        if (has(file, "torch/utils/data") || has(fn, "DataLoader") ||
            ((has(fn, "queue") || has(fn, "Queue") || has(file, "queue.py")) &&
             (has(fn, "get") || has(fn, "pop"))))
            data = 1;
        /* torch.distributed in Python, its C++ process groups (c10d::), NCCL, gloo */
        if (has(file, "torch/distributed") || has(fn, "nccl") || has(fn, "c10d::") ||
            has(fn, "gloo::"))
            comm = 1;
        unsigned c = ga_sites_frame_class(sites, st, f);
        if (f->source == GA_SYM_PYTHON) {
            if (!py_any) py_any = f;
            if (!py && !(c & 2)) py = f;
            continue;
        }
        if (c & 1) {
            if (!rt) rt = f;
            continue;
        }
        if (!native && !(c & 2) && !system_lib(st, f)) native = f;
    }
    *site = py ? py : py_any ? py_any : native;
    if (data) return GA_HI_DATA_LOADING;
    if (comm) return GA_HI_COMM;
    if (flags & GT_SAMPLE_IN_HOOK) {
        const char *fn = rt ? rt->func : NULL;
        if (has(fn, "Alloc") || has(fn, "Free") || has(fn, "MemCreate") || has(fn, "MemMap"))
            return GA_HI_ALLOC;
        if (has(fn, "Launch")) return GA_HI_LAUNCH;
        return GA_HI_SYNC;
    }
    return (flags & GT_SAMPLE_ON_CPU) ? GA_HI_CPU : GA_HI_IO_WAIT;
}

static unsigned class_of_cause(unsigned cause)
{
    switch (cause) {
    case GA_CAUSE_SYNC:
        return GA_HI_SYNC;
    case GA_CAUSE_ALLOC:
        return GA_HI_ALLOC;
    case GA_CAUSE_LAUNCH_LATENCY:
    case GA_CAUSE_DEPENDENCY:
        return GA_HI_LAUNCH;
    default:
        return GA_HI_UNSAMPLED;
    }
}

static void add(struct ga_hi_device *d, struct ga_map *idx, uint32_t stack, unsigned cls,
                uint64_t ns, uint64_t on, uint64_t off, uint64_t samples)
{
    piece_add(&d->pieces, &d->n_pieces, &d->pieces_cap, idx, stack, cls, ns, on, off, samples);
    d->class_ns[cls] += ns;
}

static int by_idle(const void *a, const void *b)
{
    const struct ga_hi_piece *x = a, *y = b;
    return x->idle_ns != y->idle_ns ? (x->idle_ns < y->idle_ns ? 1 : -1)
                                    : (x->stack != y->stack ? (x->stack < y->stack ? -1 : 1)
                                                            : (x->cls < y->cls ? -1 : 1));
}

void ga_hostidle_finish(struct ga_hostidle *h, struct ga_sites *sites, struct ga_stacks *st)
{
    for (size_t i = h->wait_head; i < h->n_wait; i++) /* the host records end: all samples came */
        join(h, device(h, h->wait[i].device), &h->wait[i]);
    h->wait_head = h->n_wait = 0;
    merge(h);
    if (h->n && h->gaps) prune(h, UINT64_MAX); /* only the kept gaps' samples are asked for now */
    for (size_t k = 0; k < h->n_dev; k++) {
        struct ga_hi_device *d = &h->dev[k];
        struct ga_map idx = {0};
        for (size_t i = 0; i < d->n_agg; i++) {
            const struct ga_hi_piece *g = &d->agg[i];
            unsigned cls, tag = g->cls;
            if (tag >= GA_HI_TAG_CAUSE) {
                cls = tag - GA_HI_TAG_CAUSE;
            } else {
                const struct ga_frame *site;
                uint32_t flags = ((tag & GA_HI_TAG_ON_CPU) ? GT_SAMPLE_ON_CPU : 0) |
                                 ((tag & GA_HI_TAG_IN_HOOK) ? GT_SAMPLE_IN_HOOK : 0);
                cls = ga_hostidle_classify(sites, st, g->stack, flags, &site);
            }
            add(d, &idx, g->stack, cls, g->idle_ns, g->on_cpu_ns, g->off_cpu_ns, g->samples);
        }
        ga_map_free(&idx);
        free(d->agg);
        d->agg = NULL;
        d->n_agg = d->agg_cap = 0;
        ga_map_free(&d->agg_idx);
        if (d->n_pieces) qsort(d->pieces, d->n_pieces, sizeof(*d->pieces), by_idle);
    }
}

const struct ga_hi_device *ga_hostidle_device_of(const struct ga_hostidle *h, uint32_t dev)
{
    for (size_t i = 0; i < h->n_dev; i++)
        if (h->dev[i].device == dev) return &h->dev[i];
    return NULL;
}

void ga_hostidle_free(struct ga_hostidle *h)
{
    for (size_t i = 0; i < h->n_dev; i++) {
        free(h->dev[i].agg);
        ga_map_free(&h->dev[i].agg_idx);
        free(h->dev[i].pieces);
    }
    free(h->dev);
    free(h->wait);
    free(h->s);
    free(h->r);
    free(h->thr_tid);
    free(h->thr_start);
    ga_map_free(&h->thr_idx);
    memset(h, 0, sizeof(*h));
}
