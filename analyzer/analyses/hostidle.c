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
}

void ga_hostidle_event(struct ga_hostidle *h, const struct ga_event *ev)
{
    if (ev->type != GT_REC_HOST_SAMPLE) return;
    const struct gt_rec_host_sample *r = &ev->r->host_sample;
    h->have_samples = 1;
    if (h->n >= GA_HI_SAMPLES_MAX) {
        h->samples_dropped++;
        return;
    }
    h->s = ga_xgrow(h->s, &h->cap, h->n, sizeof(*h->s));
    h->s[h->n++] =
        (struct ga_hi_sample){r->sample_ts, r->interval_ns, r->cpu_ns, r->tid, r->stack, r->flags};
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

void ga_hostidle_gap(void *ctx, uint32_t dev, const struct ga_gap *gp)
{
    struct ga_hostidle *h = ctx;
    struct ga_hi_device *d = device(h, dev);
    d->idle_ns += gp->dur;
    if (d->n_gaps >= GA_HI_GAPS_MAX) {
        h->gaps_dropped++;
        return;
    }
    d->gaps = ga_xgrow(d->gaps, &d->gaps_cap, d->n_gaps, sizeof(*d->gaps));
    d->gaps[d->n_gaps++] = (struct ga_hi_gap){gp->start, gp->dur, ga_hostidle_gap_tid(gp), gp->stack,
                                              gp->cause};
}

static int by_ts(const void *a, const void *b)
{
    const struct ga_hi_sample *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
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
    int added = 0;
    uint64_t *v = ga_map_upsert(idx, stack, cls, d->n_pieces, &added);
    if (added) {
        d->pieces = ga_xgrow(d->pieces, &d->pieces_cap, d->n_pieces, sizeof(*d->pieces));
        d->pieces[d->n_pieces++] = (struct ga_hi_piece){stack, (uint8_t)cls, 0, 0, 0, 0};
    }
    struct ga_hi_piece *p = &d->pieces[*v];
    p->idle_ns += ns;
    p->on_cpu_ns += on;
    p->off_cpu_ns += off;
    p->samples += samples;
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
    if (h->n) qsort(h->s, h->n, sizeof(*h->s), by_ts);
    for (size_t k = 0; k < h->n_dev; k++) {
        struct ga_hi_device *d = &h->dev[k];
        struct ga_map idx = {0};
        for (size_t g = 0; g < d->n_gaps; g++) {
            const struct ga_hi_gap *gp = &d->gaps[g];
            size_t first = 0, end = 0, mine = 0;
            if (h->have_samples) ga_hostidle_range(h, gp->start, gp->dur, &first, &end);
            for (size_t i = first; i < end; i++)
                mine += gp->tid && h->s[i].tid == gp->tid;
            size_t cnt = mine ? mine : end - first;
            if (!cnt) {
                add(d, &idx, gp->stack, class_of_cause(gp->cause), gp->dur, 0, 0, 0);
                continue;
            }
            /* equal shares; the remainder goes to the first sample */
            uint64_t share = gp->dur / cnt, rest = gp->dur - share * cnt;
            for (size_t i = first; i < end; i++) {
                const struct ga_hi_sample *s = &h->s[i];
                if (mine && s->tid != gp->tid) continue;
                const struct ga_frame *site;
                unsigned cls = ga_hostidle_classify(sites, st, s->stack, s->flags, &site);
                uint64_t ns = share + rest;
                rest = 0;
                int on = (s->flags & GT_SAMPLE_ON_CPU) != 0;
                add(d, &idx, s->stack, cls, ns, on ? ns : 0, on ? 0 : ns, 1);
            }
            d->sampled_ns += gp->dur;
        }
        ga_map_free(&idx);
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
        free(h->dev[i].gaps);
        free(h->dev[i].pieces);
    }
    free(h->dev);
    free(h->s);
    memset(h, 0, sizeof(*h));
}
