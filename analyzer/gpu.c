/* GPU timeline analysis: collects GPU activity while reading, computes everything at the end
 * (see gpu.h for what is kept and why). */
#include "gpu.h"

#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "util.h"

void ga_gpu_init(struct ga_gpu *g)
{
    memset(g, 0, sizeof(*g));
}

/* ---- while reading ----------------------------------------------------------------------------
 */

static void add_act(struct ga_gpu *g, const struct ga_gpu_act *a)
{
    g->acts = ga_xgrow(g->acts, &g->acts_cap, g->n_acts, sizeof(*g->acts));
    g->acts[g->n_acts++] = *a;
}

static void on_kernel(struct ga_gpu *g, const struct gt_rec_gpu_kernel *k)
{
    struct ga_gpu_act a = {.start = k->start,
                           .end = k->end,
                           .corr = k->corr,
                           .device = k->device,
                           .stream = k->stream,
                           .name_id = k->name_id,
                           .graph_id = k->graph_id,
                           .kind = GA_GPU_KERNEL};
    add_act(g, &a);
}

static void on_memcpy(struct ga_gpu *g, const struct ga_event *ev)
{
    const struct gt_rec_gpu_memcpy *m = &ev->r.gpu_memcpy;
    struct ga_gpu_act a = {.start = m->start,
                           .end = m->end,
                           .bytes = m->bytes,
                           .corr = m->corr,
                           .device = m->device,
                           .stream = m->stream,
                           .kind = GA_GPU_MEMCPY,
                           .copy_kind = (uint8_t)(ev->sub < GA_COPY_KINDS ? ev->sub : 0)};
    add_act(g, &a);
}

static void on_memset(struct ga_gpu *g, const struct gt_rec_gpu_memset *m)
{
    struct ga_gpu_act a = {.start = m->start,
                           .end = m->end,
                           .bytes = m->bytes,
                           .corr = m->corr,
                           .device = m->device,
                           .stream = m->stream,
                           .kind = GA_GPU_MEMSET};
    add_act(g, &a);
}

/* An id named twice keeps the latest name. */
static void on_name(struct ga_gpu *g, const struct ga_event *ev)
{
    int added = 0;
    uint64_t *idx = ga_map_upsert(&g->name_idx, ev->r.gpu_name.id, 0, g->n_names, &added);
    char *name = ga_xstrndup(ev->str[0], ev->str_len[0]);
    if (!added) {
        free(g->names[*idx]);
        g->names[*idx] = name;
        return;
    }
    g->names = ga_xgrow(g->names, &g->names_cap, g->n_names, sizeof(*g->names));
    g->names[g->n_names++] = name;
}

/* Records come in runs of one thread's chunk: the previous thread's entry is kept at hand. */
static struct ga_gpu_call *last_call(struct ga_gpu *g, uint32_t tid)
{
    int added = 0;
    if (g->n_last_call && g->last_tid == tid) return &g->last_call[g->last_tid_idx];
    uint64_t *i = ga_map_upsert(&g->last_call_idx, tid, 0, g->n_last_call, &added);
    if (added) {
        g->last_call =
            ga_xgrow(g->last_call, &g->last_call_cap, g->n_last_call, sizeof(*g->last_call));
        g->last_call[g->n_last_call++] = (struct ga_gpu_call){0, 0};
    }
    g->last_tid = tid;
    g->last_tid_idx = (size_t)*i;
    return &g->last_call[*i];
}

/* When a host record's CUDA call ended: launches and frees are stamped before the call was
 * forwarded (plus the time inside it), allocations after it returned, spans at their exit. */
static int call_end(const struct ga_event *ev, uint64_t *end)
{
    switch (ev->type) {
    case GT_REC_LAUNCH:
        *end = ev->r.launch.ts + ev->r.launch.dur_ns;
        return 1;
    case GT_REC_SPAN:
        *end = ev->r.span.ts_exit > ev->r.span.ts_enter ? ev->r.span.ts_exit : ev->r.span.ts_enter;
        return 1;
    case GT_REC_FREE:
        *end = ev->r.free.ts + ev->r.free.dur_ns;
        return 1;
    case GT_REC_ALLOC:
    case GT_REC_ALLOC_FAIL:
    case GT_REC_VMM_MAP:
    case GT_REC_OBJECT:
        *end = ev->ts;
        return 1;
    default:
        return 0;
    }
}

/* Host records arrive in time order, so the thread's latest call so far is its previous one. */
static void on_host_call(struct ga_gpu *g, const struct ga_event *ev)
{
    uint64_t end;
    if (!call_end(ev, &end)) return;
    struct ga_gpu_call *c = last_call(g, ev->tid);
    if (end >= c->end) *c = (struct ga_gpu_call){end, ev->sub};
}

static void on_launch(struct ga_gpu *g, const struct ga_event *ev)
{
    const struct gt_rec_launch *l = &ev->r.launch;
    int added = 0;
    if (l->result != 0) return;                                  /* nothing ran */
    if (g->cupti_seen && g->cupti_status != GT_CUPTI_ON) return; /* no GPU records will follow */
    ga_map_upsert(&g->launch_idx, l->corr, 0, g->n_launches, &added);
    if (!added) return; /* a corr is unique per launch; keep the first */
    const struct ga_gpu_call *prev = last_call(g, ev->tid);
    g->launches = ga_xgrow(g->launches, &g->launches_cap, g->n_launches, sizeof(*g->launches));
    g->launches[g->n_launches++] = (struct ga_gpu_launch){
        .ts = l->ts,
        .func = l->func,
        .prev_end = prev->end,
        .tid = ev->tid,
        .stack = l->stack,
        .api = ev->sub,
        .prev_api = prev->api,
    };
}

static void on_cupti(struct ga_gpu *g, const struct ga_event *ev)
{
    g->cupti_seen = 1;
    g->cupti_status = ev->sub;
    g->clock_offset = ev->r.cupti.clock_offset_ns;
}

static void on_gpu_record(struct ga_gpu *g, const struct ga_event *ev)
{
    g->records++;
    switch (ev->type) {
    case GT_REC_GPU_KERNEL:
        on_kernel(g, &ev->r.gpu_kernel);
        break;
    case GT_REC_GPU_MEMCPY:
        on_memcpy(g, ev);
        break;
    case GT_REC_GPU_MEMSET:
        on_memset(g, &ev->r.gpu_memset);
        break;
    case GT_REC_GPU_EXTCORR:
        *ga_map_upsert(&g->extcorr, ev->r.gpu_extcorr.corr, 0, 0, NULL) = ev->r.gpu_extcorr.ext;
        break;
    case GT_REC_GPU_NAME:
        on_name(g, ev);
        break;
    case GT_REC_GPU_DROPPED:
        g->dropped += ev->r.gpu_dropped.count;
        break;
    case GT_REC_GPU_API:
        g->api_records++;
        break;
    default:
        break;
    }
}

void ga_gpu_event(struct ga_gpu *g, const struct ga_event *ev)
{
    if (ga_rec_is_gpu(ev->type)) {
        on_gpu_record(g, ev);
        return;
    }
    if (ev->type == GT_REC_LAUNCH)
        on_launch(g, ev);
    else if (ev->type == GT_REC_CUPTI)
        on_cupti(g, ev);
    on_host_call(g, ev);
}

/* ---- intervals ----------------------------------------------------------------------------------
 */

static int by_start(const void *a, const void *b)
{
    const struct ga_gpu_act *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Device, then time; ties broken by every field that can differ, so that the order (and what
 * the idle-gap analysis reports as the work around a gap) does not depend on qsort's whims. */
int ga_gpu_act_cmp(const void *a, const void *b)
{
    const struct ga_gpu_act *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* Union length of intervals sorted by start: one sweep, touching intervals merge. */
static uint64_t union_sorted(const struct ga_gpu_act *a, size_t n)
{
    uint64_t busy = 0, s, e;
    if (!n) return 0;
    s = a[0].start;
    e = a[0].end;
    for (size_t i = 1; i < n; i++) {
        if (a[i].start > e) {
            busy += e - s;
            s = a[i].start;
            e = a[i].end;
        } else if (a[i].end > e) {
            e = a[i].end;
        }
    }
    return busy + (e - s);
}

uint64_t ga_gpu_union_ns(struct ga_gpu_act *a, size_t n)
{
    if (n > 1) qsort(a, n, sizeof(*a), by_start);
    return union_sorted(a, n);
}

/* ---- finish: clock, devices, streams ------------------------------------------------------------
 */

/* GPU record times are already CLOCK_MONOTONIC (trace_format.h; clock_offset_ns is a fact the
 * shim already applied). Activities without both
 * times, or ending before they start, are left out. */
static void fix_times(struct ga_gpu *g)
{
    size_t out = 0;
    for (size_t i = 0; i < g->n_acts; i++) {
        struct ga_gpu_act a = g->acts[i];
        if (!a.start || !a.end || a.end < a.start) {
            g->skipped++;
            continue;
        }
        g->acts[out++] = a;
    }
    g->n_acts = out;
}

/* Length of the run of activities from i on that share a device. */
static size_t run_len(const struct ga_gpu *g, size_t i)
{
    size_t j = i + 1;
    while (j < g->n_acts && g->acts[j].device == g->acts[i].device)
        j++;
    return j - i;
}

/* Streams of one device: per stream the busy union of its activities, which come in start order
 * within the device's (so within each stream's), accumulated in one pass: the current merged
 * interval [s, e) of each stream stays open until a later start leaves it behind. */
struct stream_acc {
    uint64_t s, e;
};

static int stream_cmp(const void *a, const void *b)
{
    const struct ga_gpu_stream *x = a, *y = b;
    return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static void device_streams(struct ga_gpu_device *d, const struct ga_gpu_act *a, size_t n)
{
    struct ga_map idx = {0};
    struct stream_acc *acc = NULL;
    size_t acc_cap = 0, last = 0;
    for (size_t k = 0; k < n; k++) {
        int added = 0;
        size_t i = last;
        if (!d->n_streams || d->streams[last].stream != a[k].stream) {
            i = (size_t)*ga_map_upsert(&idx, a[k].stream, 0, d->n_streams, &added);
            if (added) {
                d->streams = ga_xgrow(d->streams, &d->streams_cap, i, sizeof(*d->streams));
                acc = ga_xgrow(acc, &acc_cap, i, sizeof(*acc));
                d->streams[i] = (struct ga_gpu_stream){a[k].stream, 0, 0};
                acc[i] = (struct stream_acc){a[k].start, a[k].end};
                d->n_streams++;
            }
            last = i;
        }
        struct ga_gpu_stream *st = &d->streams[i];
        st->kernels += a[k].kind == GA_GPU_KERNEL;
        if (added) continue;
        if (a[k].start > acc[i].e) {
            st->busy_ns += acc[i].e - acc[i].s;
            acc[i] = (struct stream_acc){a[k].start, a[k].end};
        } else if (a[k].end > acc[i].e) {
            acc[i].e = a[k].end;
        }
    }
    for (size_t i = 0; i < d->n_streams; i++)
        d->streams[i].busy_ns += acc[i].e - acc[i].s;
    if (d->n_streams > 1) qsort(d->streams, d->n_streams, sizeof(*d->streams), stream_cmp);
    free(acc);
    ga_map_free(&idx);
}

static uint64_t count_kernels(const struct ga_gpu_act *a, size_t n)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += a[i].kind == GA_GPU_KERNEL;
    return k;
}

/* One sort (device, time) for everything: devices, their streams, and the idle-gap sweep. */
static void device_pass(struct ga_gpu *g)
{
    size_t cap = 0;
    if (g->n_acts > 1) qsort(g->acts, g->n_acts, sizeof(*g->acts), ga_gpu_act_cmp);
    for (size_t i = 0, n; i < g->n_acts; i += n) {
        const struct ga_gpu_act *a = &g->acts[i];
        n = run_len(g, i);
        g->devices = ga_xgrow(g->devices, &cap, g->n_devices, sizeof(*g->devices));
        struct ga_gpu_device *d = &g->devices[g->n_devices++];
        *d = (struct ga_gpu_device){.device = a->device, .first = a->start};
        for (size_t k = 0; k < n; k++)
            if (a[k].end > d->last) d->last = a[k].end;
        d->busy_ns = union_sorted(a, n);
        d->kernels = count_kernels(a, n);
        g->kernel_count += d->kernels;
        device_streams(d, a, n);
    }
}

static void copies_pass(struct ga_gpu *g)
{
    for (size_t i = 0; i < g->n_acts; i++) {
        const struct ga_gpu_act *a = &g->acts[i];
        struct ga_gpu_sum *s = a->kind == GA_GPU_MEMCPY   ? &g->copies[a->copy_kind]
                               : a->kind == GA_GPU_MEMSET ? &g->memsets
                                                          : NULL;
        if (!s) continue;
        s->count++;
        s->bytes += a->bytes;
        s->total_ns += a->end - a->start;
    }
}

/* ---- finish: linking
 * ------------------------------------------------------------------------------ */

static const struct ga_gpu_launch *launch_of(const struct ga_gpu *g, uint32_t corr)
{
    const uint64_t *ext = ga_map_find(&g->extcorr, corr, 0);
    const uint64_t *idx = ext ? ga_map_find(&g->launch_idx, *ext, 0) : NULL;
    return idx ? &g->launches[*idx] : NULL;
}

/* Only launches push our correlation id, so only kernels are linked (a copy's CUPTI corr has no
 * external-correlation record, and could not name a launch if it had). */
const struct ga_gpu_launch *ga_gpu_launch_of(const struct ga_gpu *g, const struct ga_gpu_act *a)
{
    if (a->kind != GA_GPU_KERNEL || !a->launch || a->launch > g->n_launches) return NULL;
    return &g->launches[a->launch - 1];
}

static int by_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int by_kernels(const void *a, const void *b)
{
    const struct ga_gpu_thread *x = a, *y = b;
    if (x->kernels != y->kernels) return x->kernels > y->kernels ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void latency_stats(struct ga_gpu_link *l, int64_t *lat, size_t n)
{
    if (!n) return;
    qsort(lat, n, sizeof(*lat), by_i64);
    l->latency_n = n;
    l->latency_min = lat[0];
    l->latency_median = lat[(n - 1) / 2];
    l->latency_max = lat[n - 1];
}

static void thread_list(struct ga_gpu_link *l, const struct ga_map *per_tid)
{
    const struct ga_map_slot *s;
    l->threads = ga_xcalloc(per_tid->count ? per_tid->count : 1, sizeof(*l->threads));
    for (size_t i = 0; ga_map_next(per_tid, &i, &s);)
        l->threads[l->n_threads++] = (struct ga_gpu_thread){(uint32_t)s->a, s->value};
    qsort(l->threads, l->n_threads, sizeof(*l->threads), by_kernels);
}

static void link_pass(struct ga_gpu *g)
{
    struct ga_gpu_link *l = &g->link;
    struct ga_map per_tid = {0};
    int64_t *lat = ga_xcalloc(g->kernel_count ? g->kernel_count : 1, sizeof(*lat));
    size_t n_lat = 0;
    for (size_t i = 0; i < g->n_acts; i++) {
        const struct ga_gpu_act *a = &g->acts[i];
        if (a->kind != GA_GPU_KERNEL) continue;
        const struct ga_gpu_launch *la = launch_of(g, a->corr);
        l->kernels++;
        if (!la) {
            l->unlinked++;
            continue;
        }
        g->acts[i].launch = (uint64_t)(la - g->launches) + 1;
        l->linked++;
        (*ga_map_upsert(&per_tid, la->tid, 0, 0, NULL))++;
        if (a->graph_id)
            l->graph_kernels++;
        else
            lat[n_lat++] = (int64_t)(a->start - la->ts);
    }
    latency_stats(l, lat, n_lat);
    thread_list(l, &per_tid);
    ga_map_free(&per_tid);
    free(lat);
}

/* ---- finish: kernel names
 * ------------------------------------------------------------------------- */

struct kacc {
    const char *name;
    uint64_t count, total, max;
};

/* Launch APIs whose handle is a CUfunction/CUkernel (graph and host-function launches are not). */
static int launches_kernel(unsigned api)
{
    return api >= GT_API_cuLaunchKernel && api <= GT_API_cuLaunchCooperativeKernel_ptsz;
}

/* The accumulator of a kernel: its GPU name, else its launch's function name, else unknown
 * (the last slot). Slots: [0, n_names) GPU names, then the timeline's names, then unknown. */
static size_t slot_of(const struct ga_gpu *g, const struct ga_timeline *tl,
                      const struct ga_gpu_act *a)
{
    const uint64_t *idx = a->name_id ? ga_map_find(&g->name_idx, a->name_id, 0) : NULL;
    if (idx && g->names[*idx][0]) return *idx;
    const struct ga_gpu_launch *la = ga_gpu_launch_of(g, a);
    idx = la && launches_kernel(la->api) ? ga_map_find(&tl->handle_name, la->func, 0) : NULL;
    if (idx && tl->names[*idx][0]) return g->n_names + *idx;
    return g->n_names + tl->n_names;
}

static int acc_by_name(const void *a, const void *b)
{
    const struct kacc *x = a, *y = b;
    return x->name == y->name ? 0 : strcmp(x->name, y->name);
}

static int stat_by_total(const void *a, const void *b)
{
    const struct ga_gpu_kstat *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Per slot sums, then merged by name (a GPU name and a function name may be the same). */
static struct kacc *accumulate(const struct ga_gpu *g, const struct ga_timeline *tl, size_t *n)
{
    size_t slots = g->n_names + tl->n_names + 1;
    struct kacc *acc = ga_xcalloc(slots, sizeof(*acc));
    for (size_t i = 0; i < g->n_names; i++)
        acc[i].name = g->names[i];
    for (size_t i = 0; i < tl->n_names; i++)
        acc[g->n_names + i].name = tl->names[i];
    acc[slots - 1].name = "<unknown>";
    for (size_t i = 0; i < g->n_acts; i++) {
        const struct ga_gpu_act *a = &g->acts[i];
        if (a->kind != GA_GPU_KERNEL) continue;
        struct kacc *k = &acc[slot_of(g, tl, a)];
        uint64_t d = a->end - a->start;
        k->count++;
        k->total += d;
        if (d > k->max) k->max = d;
    }
    *n = slots;
    return acc;
}

static void kernel_pass(struct ga_gpu *g, const struct ga_timeline *tl)
{
    size_t n = 0, out = 0;
    struct kacc *acc = accumulate(g, tl, &n);
    qsort(acc, n, sizeof(*acc), acc_by_name);
    g->kernels = ga_xcalloc(n, sizeof(*g->kernels));
    for (size_t i = 0; i < n; i++) {
        if (!acc[i].count) continue;
        struct ga_gpu_kstat *k = out ? &g->kernels[out - 1] : NULL;
        if (!k || strcmp(k->name, acc[i].name) != 0) {
            k = &g->kernels[out++];
            k->name = ga_xstrdup(acc[i].name);
        }
        k->count += acc[i].count;
        k->total_ns += acc[i].total;
        if (acc[i].max > k->max_ns) k->max_ns = acc[i].max;
    }
    for (size_t i = 0; i < out; i++) {
        char *d = ga_demangle(g->kernels[i].name);
        g->kernels[i].demangled = d ? d : ga_xstrdup(g->kernels[i].name);
    }
    g->n_kernels = out;
    qsort(g->kernels, out, sizeof(*g->kernels), stat_by_total);
    free(acc);
}

void ga_gpu_finish(struct ga_gpu *g, const struct ga_timeline *tl)
{
    fix_times(g);
    device_pass(g);
    copies_pass(g);
    link_pass(g);
    kernel_pass(g, tl);
}

const char *ga_gpu_act_name(const struct ga_gpu *g, const struct ga_timeline *tl,
                            const struct ga_gpu_act *a)
{
    static const char *const copy_names[GA_COPY_KINDS] = {
        "memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA", "memcpy AtoH", "memcpy AtoA",
        "memcpy AtoD", "memcpy DtoA", "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
    if (a->kind == GA_GPU_MEMCPY)
        return copy_names[a->copy_kind < GA_COPY_KINDS ? a->copy_kind : 0];
    if (a->kind == GA_GPU_MEMSET) return "memset";
    size_t slot = slot_of(g, tl, a);
    if (slot < g->n_names) return g->names[slot];
    if (slot < g->n_names + tl->n_names) return tl->names[slot - g->n_names];
    return "<unknown>";
}

int ga_gpu_has_activity(const struct ga_gpu *g)
{
    return g->n_devices > 0;
}

const char *ga_copy_kind_name(unsigned kind)
{
    static const char *const names[GA_COPY_KINDS] = {
        "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
    return kind < GA_COPY_KINDS ? names[kind] : "unknown";
}

void ga_gpu_free(struct ga_gpu *g)
{
    for (size_t i = 0; i < g->n_names; i++)
        free(g->names[i]);
    for (size_t i = 0; i < g->n_devices; i++)
        free(g->devices[i].streams);
    for (size_t i = 0; i < g->n_kernels; i++) {
        free(g->kernels[i].name);
        free(g->kernels[i].demangled);
    }
    free(g->names);
    free(g->acts);
    free(g->launches);
    free(g->devices);
    free(g->kernels);
    free(g->link.threads);
    ga_map_free(&g->name_idx);
    ga_map_free(&g->extcorr);
    ga_map_free(&g->launch_idx);
    ga_map_free(&g->last_call_idx);
    free(g->last_call);
    memset(g, 0, sizeof(*g));
}
