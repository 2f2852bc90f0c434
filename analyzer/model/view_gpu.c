/* The GPU view (view_gpu.h): the GPU timeline, gap and host-idle analyses' results copied into
 * the model's structs, times from the trace start, names and stacks resolved. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view_gpu.h"
#include "analyses/gaps.h"
#include "analyses/gpu.h"
#include "analyses/hostidle.h"
#include "analyses/timeline.h"
#include "base/demangle.h"
#include "base/util.h"
#include "model/idle_host.h"

_Static_assert(GA_VGPU_COPY_KINDS == GA_COPY_KINDS, "one sum per copy kind");
_Static_assert(GA_VGPU_CAUSES == GA_CAUSES && (int)GA_VGPU_UNKNOWN == (int)GA_CAUSE_UNKNOWN &&
                   (int)GA_VGPU_SYNC == (int)GA_CAUSE_SYNC &&
                   (int)GA_VGPU_ALLOC == (int)GA_CAUSE_ALLOC,
               "the same causes, same values");
_Static_assert(GA_VGPU_BUCKETS == GA_GAP_BUCKETS, "one count per gap length bucket");
_Static_assert(GA_VGPU_HI_CLASSES == GA_HI_CLASSES &&
                   (int)GA_VGPU_HI_UNSAMPLED == (int)GA_HI_UNSAMPLED &&
                   (int)GA_VGPU_HI_LAUNCH == (int)GA_HI_LAUNCH &&
                   (int)GA_VGPU_HI_DATA_LOADING == (int)GA_HI_DATA_LOADING,
               "the same host classes, same values");
_Static_assert(GA_VGPU_IDLE_SITES == GA_GAPS_TOP, "the idle sites JSON always listed");
_Static_assert(GA_VGPU_GAPS_KEPT == GA_GAPS_TOP, "the gaps kept, as main.c says");
_Static_assert(GA_VGPU_GAP_SAMPLES <= 16, "ga_idle_host_in_gap groups 16 rows at most");

static int64_t rel(const struct ga_vgpu *v, uint64_t ts)
{
    return (int64_t)(ts - v->t0);
}

/* A kernel name demangled, once per name (names live as long as the analyses). */
static const char *demangled(struct ga_vgpu *v, const char *name)
{
    int added;
    uint64_t *slot = ga_map_upsert(&v->demangled_of, (uint64_t)(uintptr_t)name, 0, 0, &added);
    if (!added) return v->demangled[*slot - 1];
    char *d = ga_demangle(name);
    v->demangled = ga_xgrow(v->demangled, &v->demangled_cap, v->n_demangled, sizeof(char *));
    v->demangled[v->n_demangled++] = d ? d : ga_xstrdup(name);
    *slot = v->n_demangled;
    return v->demangled[v->n_demangled - 1];
}

static struct ga_vact act(struct ga_vgpu *v, const struct ga_gpu_act *a)
{
    static const char *const kinds[] = {"kernel", "memcpy", "memset"};
    const char *name = ga_gpu_act_name(v->gpu_src, v->tl_src, a);
    return (struct ga_vact){.name = name,
                            .demangled = a->kind == GA_GPU_KERNEL ? demangled(v, name) : name,
                            .kind = kinds[a->kind <= GA_GPU_MEMSET ? a->kind : 0],
                            .stream = a->stream,
                            .start_ns = rel(v, a->start),
                            .end_ns = rel(v, a->end)};
}

static void api_name(char out[64], unsigned api)
{
    char buf[16];
    snprintf(out, 64, "%s", ga_api_label(api, buf));
}

static void launch(struct ga_vgpu *v, const struct ga_gap *gp, struct ga_vlaunch *o)
{
    const struct ga_gpu_launch *l = gp->launch;
    api_name(o->api, l->api);
    o->tid = l->tid;
    o->time_ns = rel(v, l->ts);
    o->before_gap = l->ts < gp->start;
    o->have_prev = l->prev_end != 0;
    api_name(o->prev_api, l->prev_api);
    o->have_since = l->prev_end && l->ts >= l->prev_end;
    o->since_prev_ns = o->have_since ? l->ts - l->prev_end : 0;
    o->site = ga_vstacks_site_of(v->stacks, l->stack);
}

static void call(struct ga_vgpu *v, const struct ga_gap *gp, struct ga_vcall *o)
{
    const struct ga_host_call *c = &gp->call;
    o->kind = c->kind;
    if (!c->kind) return;
    api_name(o->api, c->api);
    o->tid = c->tid;
    o->enter_ns = rel(v, c->start);
    o->exit_ns = rel(v, c->end);
    o->overlap_ns = gp->call_ns;
    o->site = ga_vstacks_site_of(v->stacks, c->stack);
}

static void samples(struct ga_vgpu *v, const struct ga_gap *gp, struct ga_vgap *o)
{
    struct ga_ih_site rows[GA_VGPU_GAP_SAMPLES];
    o->n_samples = ga_idle_host_in_gap(v->hostidle_src, v->sites_src, v->stacks->st, gp, rows,
                                       GA_VGPU_GAP_SAMPLES);
    for (size_t i = 0; i < o->n_samples; i++)
        o->samples[i] = (struct ga_vgap_sample){.site = ga_vstacks_frame(v->stacks, rows[i].site),
                                                .cls = rows[i].cls,
                                                .samples = rows[i].samples,
                                                .on_cpu = rows[i].on_cpu_ns};
}

/* with_samples: the host samples inside it too (the kept gaps, not the streamed ones). */
static void gap(struct ga_vgpu *v, const struct ga_gap *gp, int with_samples, struct ga_vgap *o)
{
    memset(o, 0, sizeof(*o));
    o->start_ns = rel(v, gp->start);
    o->dur = gp->dur;
    o->cause = gp->cause;
    memcpy(o->phase_ns, gp->phase_ns, sizeof(o->phase_ns));
    o->site = ga_vstacks_site_of(v->stacks, gp->stack);
    o->stack = ga_vstacks_stack(v->stacks, gp->stack);
    o->before = act(v, &gp->before);
    o->after = act(v, &gp->after);
    o->have_launch = gp->launch != NULL;
    if (gp->launch) launch(v, gp, &o->launch);
    call(v, gp, &o->call);
    if (with_samples) samples(v, gp, o);
}

static void idle_sites(struct ga_vgpu *v, const struct ga_gaps_device *x, struct ga_vidle *o)
{
    o->sites_total = x->n_sites;
    o->n_sites = x->n_sites < GA_VGPU_IDLE_SITES ? x->n_sites : GA_VGPU_IDLE_SITES;
    o->sites = ga_xcalloc(o->n_sites ? o->n_sites : 1, sizeof(*o->sites));
    for (size_t i = 0; i < o->n_sites; i++)
        o->sites[i] = (struct ga_vidle_site){.cause = x->sites[i].cause,
                                             .site = ga_vstacks_site(v->stacks, x->sites[i].site),
                                             .idle_ns = x->sites[i].idle_ns,
                                             .gaps = x->sites[i].gaps};
}

static void host_sites(struct ga_vgpu *v, const struct ga_ih_device *d, struct ga_vidle *o)
{
    o->have_host = 1;
    o->n_host_sites = d->n_sites;
    o->host_sites = ga_xcalloc(d->n_sites ? d->n_sites : 1, sizeof(*o->host_sites));
    for (size_t i = 0; i < d->n_sites; i++) {
        const struct ga_ih_site *s = &d->sites[i];
        o->host_sites[i] = (struct ga_vhost_site){.site = ga_vstacks_frame(v->stacks, s->site),
                                                  .cls = s->cls,
                                                  .stack = ga_vstacks_stack(v->stacks, s->stack),
                                                  .idle_ns = s->idle_ns,
                                                  .on_cpu_ns = s->on_cpu_ns,
                                                  .off_cpu_ns = s->off_cpu_ns,
                                                  .samples = s->samples};
    }
    memcpy(o->class_ns, d->d->class_ns, sizeof(o->class_ns));
}

static void windows(struct ga_vgpu *v, const struct ga_gaps_device *x, struct ga_vidle *o)
{
    o->window_ns = x->window_ns;
    o->low_windows = x->low_windows;
    o->n_windows = x->n_windows;
    o->windows = ga_xcalloc(x->n_windows ? x->n_windows : 1, sizeof(*o->windows));
    for (size_t k = 0; k < x->n_windows; k++) {
        const struct ga_window *g = &x->windows[k];
        o->windows[k] =
            (struct ga_vwindow){.start_ns = rel(v, g->start),
                                .len = g->len,
                                .busy = g->busy,
                                .low = (double)g->busy < GA_WINDOW_LOW * (double)g->len};
    }
    o->n_hta = x->n_hta;
    o->hta = ga_xcalloc(x->n_hta ? x->n_hta : 1, sizeof(*o->hta));
    for (size_t k = 0; k < x->n_hta; k++) {
        const struct ga_hta_stream *h = &x->hta[k];
        o->hta[k] =
            (struct ga_vhta){h->stream,      h->host_wait_ns,  h->kernel_wait_ns, h->other_ns,
                             h->host_wait_n, h->kernel_wait_n, h->other_n};
    }
}

static void idle(struct ga_vgpu *v, const struct ga_gaps_device *x, const struct ga_idle_host *ih,
                 struct ga_vidle *o)
{
    o->device = x->device;
    o->span = x->last - x->first;
    o->idle_ns = x->idle_ns;
    o->n_gaps = x->n_gaps;
    memcpy(o->cause_ns, x->cause_ns, sizeof(o->cause_ns));
    memcpy(o->cause_n, x->cause_n, sizeof(o->cause_n));
    memcpy(o->bucket_n, x->bucket_n, sizeof(o->bucket_n));
    memcpy(o->bucket_ns, x->bucket_ns, sizeof(o->bucket_ns));
    o->n_kept = x->n_kept;
    o->gaps = ga_xcalloc(x->n_kept ? x->n_kept : 1, sizeof(*o->gaps));
    for (size_t i = 0; i < x->n_kept; i++)
        gap(v, &x->gaps[i], 1, &o->gaps[i]);
    idle_sites(v, x, o);
    const struct ga_ih_device *d = ga_idle_host_device(ih, x->device);
    if (ih->have_samples && d) host_sites(v, d, o);
    windows(v, x, o);
}

static void devices(struct ga_vgpu *v, const struct ga_gpu *g)
{
    v->n_devices = g->n_devices;
    v->devices = ga_xcalloc(g->n_devices ? g->n_devices : 1, sizeof(*v->devices));
    for (size_t i = 0; i < g->n_devices; i++) {
        const struct ga_gpu_device *d = &g->devices[i];
        struct ga_vgpu_device *o = &v->devices[i];
        o->device = d->device;
        o->span = d->last - d->first;
        o->busy_ns = d->busy_ns;
        o->compute_ns = d->compute_ns;
        o->kernels = d->kernels;
        o->first_ns = rel(v, d->first);
        o->last_ns = rel(v, d->last);
        o->n_streams = d->n_streams;
        o->streams = ga_xcalloc(d->n_streams ? d->n_streams : 1, sizeof(*o->streams));
        for (size_t k = 0; k < d->n_streams; k++)
            o->streams[k] = (struct ga_vstream){d->streams[k].stream, d->streams[k].kernels,
                                                d->streams[k].busy_ns};
        for (size_t k = 0; k < v->n_idle; k++)
            if (v->idle[k].device == d->device) o->idle = &v->idle[k];
    }
}

static void kernels(struct ga_vgpu *v, const struct ga_gpu *g, const struct ga_timeline *tl)
{
    v->n_kernels = g->n_kernels;
    v->kernels = ga_xcalloc(g->n_kernels ? g->n_kernels : 1, sizeof(*v->kernels));
    for (size_t i = 0; i < g->n_kernels; i++) {
        const struct ga_gpu_kstat *k = &g->kernels[i];
        v->kernels[i] =
            (struct ga_vkernel){k->name, k->demangled, k->count, k->total_ns, k->max_ns};
    }
    v->top_by = g->kernel_count ? "gpu_time" : "launch_count";
    if (g->kernel_count) {
        v->top_kernels = v->kernels, v->n_top_kernels = v->n_kernels;
        return;
    }
    v->launched = ga_xcalloc(tl->n_kernels ? tl->n_kernels : 1, sizeof(*v->launched));
    for (size_t i = 0; i < tl->n_kernels; i++) {
        const struct ga_kernel *k = &tl->kernels[i];
        v->launched[i] = (struct ga_vkernel){k->name, demangled(v, k->name), k->count, 0, 0};
    }
    v->top_kernels = v->launched, v->n_top_kernels = tl->n_kernels;
}

static void linking(struct ga_vgpu *v, const struct ga_gpu_link *l)
{
    v->link.kernels = l->kernels;
    v->link.linked = l->linked;
    v->link.graph_kernels = l->graph_kernels;
    v->link.unlinked = l->unlinked;
    v->link.latency_n = l->latency_n;
    v->link.latency_min = l->latency_min;
    v->link.latency_median = l->latency_median;
    v->link.latency_max = l->latency_max;
    v->link.latency_exact = l->latency_exact;
    v->link.n_threads = l->n_threads;
    v->link.threads = ga_xcalloc(l->n_threads ? l->n_threads : 1, sizeof(*v->link.threads));
    for (size_t i = 0; i < l->n_threads; i++)
        v->link.threads[i] = (struct ga_vthread){l->threads[i].tid, l->threads[i].kernels};
}

static void names(struct ga_vgpu *v)
{
    for (unsigned k = 0; k < GA_VGPU_COPY_KINDS; k++)
        v->copy_kind_names[k] = ga_copy_kind_name(k);
    for (unsigned c = 0; c < GA_VGPU_CAUSES; c++)
        v->cause_names[c] = ga_cause_name(c);
    for (unsigned b = 0; b < GA_VGPU_BUCKETS; b++)
        v->bucket_names[b] = ga_gap_bucket_name(b);
    for (unsigned k = 0; k < GA_VGPU_HI_CLASSES; k++)
        v->class_names[k] = ga_hi_class_name(k);
}

void ga_vgpu_build(struct ga_vgpu *v, const struct ga_gpu *g, const struct ga_timeline *tl,
                   const struct ga_gaps *x, const struct ga_hostidle *h,
                   const struct ga_idle_host *ih, struct ga_sites *s, struct ga_vstacks *t,
                   uint64_t t0)
{
    memset(v, 0, sizeof(*v));
    v->gaps_src = x, v->gpu_src = g, v->tl_src = tl, v->hostidle_src = h, v->sites_src = s;
    v->stacks = t, v->t0 = t0;
    names(v);
    v->have_activity = ga_gpu_has_activity(g);
    v->have_stacks = s->have_stacks;
    v->have_host_samples = ih->have_samples;
    v->dropped = g->dropped, v->late = g->late, v->skipped = g->skipped;
    v->launches_evicted = g->launches_evicted, v->correlations_evicted = g->extcorr_evicted;
    v->kernel_count = g->kernel_count;
    v->calls_dropped = x->calls_dropped;
    v->host_gaps_early = h->gaps_early, v->host_samples_dropped = h->samples_dropped;
    v->hta_kernel_wait_ns = GA_HTA_KERNEL_WAIT_NS;
    v->window_low = GA_WINDOW_LOW;
    v->all_gaps_streamed = x->spill != NULL;
    v->n_idle = x->n_devices;
    v->idle = ga_xcalloc(x->n_devices ? x->n_devices : 1, sizeof(*v->idle));
    for (size_t i = 0; i < x->n_devices; i++)
        idle(v, &x->devices[i], ih, &v->idle[i]);
    devices(v, g);
    kernels(v, g, tl);
    memcpy(v->copies, g->copies, sizeof(v->copies));
    v->memsets = (struct ga_vsum){g->memsets.count, g->memsets.bytes, g->memsets.total_ns};
    linking(v, &g->link);
}

_Static_assert(sizeof(struct ga_vsum) == sizeof(struct ga_gpu_sum),
               "the copies copied as they are");

struct each {
    struct ga_vgpu *v;
    int (*fn)(void *ctx, const struct ga_vgap *gap);
    void *ctx;
};

static int each_gap(void *ctx, const struct ga_gap *gp)
{
    struct each *e = ctx;
    struct ga_vgap o;
    gap(e->v, gp, 0, &o);
    return e->fn(e->ctx, &o);
}

int ga_vgpu_each_gap(const struct ga_vgpu *v, uint32_t device,
                     int (*fn)(void *ctx, const struct ga_vgap *gap), void *ctx)
{
    /* the streamed gaps' names and sites are interned as they come (the view's tables grow) */
    struct each e = {(struct ga_vgpu *)v, fn, ctx};
    if (ga_gaps_each(v->gaps_src, device, each_gap, &e) == 0) return 0;
    return v->gaps_src->spill_errno ? v->gaps_src->spill_errno : EIO;
}

void ga_vgpu_free(struct ga_vgpu *v)
{
    for (size_t i = 0; i < v->n_idle; i++) {
        struct ga_vidle *o = &v->idle[i];
        free(o->gaps);
        free(o->sites);
        free(o->host_sites);
        free(o->windows);
        free(o->hta);
    }
    free(v->idle);
    for (size_t i = 0; i < v->n_devices; i++)
        free(v->devices[i].streams);
    free(v->devices);
    free(v->kernels);
    free(v->launched);
    free(v->link.threads);
    for (size_t i = 0; i < v->n_demangled; i++)
        free(v->demangled[i]);
    free(v->demangled);
    ga_map_free(&v->demangled_of);
    memset(v, 0, sizeof(*v));
}
