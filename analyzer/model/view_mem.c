/* The memory view (view_mem.h): the memory analysis's results, with the call sites, PyTorch's
 * figures and the advice of each failure resolved, in the model's structs. Time and memory:
 * linear in what it copies; the site lists and their frames are bounded (view_site.h). */
#include "model/view_mem.h"

#include <stdlib.h>
#include <string.h>

#include "model/state.h"
#include "base/util.h"

_Static_assert(GA_VMEM_KINDS >= GT_MEM_KIND_COUNT, "a slot per memory kind");
_Static_assert(GA_VMEM_CLASSES == GA_SIZE_CLASSES, "the same size classes");
_Static_assert(GA_VMEM_CATS >= GA_VC_KINDS, "a slot per category of the chart");
_Static_assert(GA_VMEM_OOM_HOLDERS == GA_VIEW_OOM_HOLDERS, "the holders views.c keeps");

/* An API's name into buf ("api#N" for ids this reader does not know). */
static void api_name(char buf[GA_VMEM_NAME], unsigned api)
{
    char lb[16];
    snprintf(buf, GA_VMEM_NAME, "%s", ga_api_label(api, lb));
}

static int64_t rel(const struct ga_report *r, uint64_t ts)
{
    return (int64_t)(ts - r->read.header.start_monotonic_ns);
}

static struct ga_vmem_peak peak(const struct ga_report *r, uint64_t p, uint64_t ts, uint64_t live)
{
    return (struct ga_vmem_peak){.peak = p, .peak_ns = rel(r, ts), .live = live};
}

/* The most live bytes of each of at most GA_VMEM_SPARK_COLS columns over the device's total
 * series. */
static void spark(struct ga_vmem_dev *o, const struct ga_memory *m)
{
    const struct ga_series *s = ga_series_get(&m->series, o->device, GA_SERIES_TOTAL);
    size_t n = m->series.buckets, cols = n < GA_VMEM_SPARK_COLS ? n : GA_VMEM_SPARK_COLS;
    if (!s || !o->peak_total || !n) return;
    o->n_spark = cols;
    for (size_t c = 0; c < cols; c++)
        for (size_t b = c * n / cols; b < (c + 1) * n / cols; b++)
            if (s->max[b] > o->spark[c]) o->spark[c] = s->max[b];
}

static void devices(struct ga_vmem *v, const struct ga_report *r)
{
    const struct ga_memory *m = &r->mem;
    v->devs = ga_xcalloc(m->ndev + 1, sizeof(*v->devs));
    v->n_devs = m->ndev;
    for (size_t i = 0; i < m->ndev; i++) {
        const struct ga_dev_mem *d = &m->dev[i];
        struct ga_vmem_dev *o = &v->devs[i];
        o->device = d->device;
        o->peak_total = d->peak_total;
        o->live_total = d->live_total;
        o->peak_total_ns = rel(r, d->peak_total_ts);
        o->listed = d->device >= 0 || d->peak_total;
        for (unsigned k = 1; k < GT_MEM_KIND_COUNT; k++) {
            if (!d->peak[k]) continue;
            o->kinds[k].name = gt_mem_kind_name(k);
            o->kinds[k].p = peak(r, d->peak[k], d->peak_ts[k], d->live[k]);
            o->kinds[k].live_count = d->live_count[k];
        }
        spark(o, m);
    }
}

static const char *family_name(unsigned fam)
{
    return fam == GT_FAM_ALLOC ? "alloc" : fam == GT_FAM_FREE ? "free" : "other";
}

static void apis(struct ga_vmem *v, const struct ga_memory *m)
{
    v->apis = ga_xcalloc(GT_API_MAX, sizeof(*v->apis));
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const struct ga_api_mem *a = &m->api[api];
        if (!a->count && !a->failed) continue;
        struct ga_vmem_api *o = &v->apis[v->n_apis++];
        api_name(o->api, api);
        o->kind = gt_mem_kind_name(gt_api_table[api].mem_kind);
        o->family = family_name(gt_api_table[api].family);
        o->calls = a->calls;
        o->count = a->count;
        o->bytes = a->bytes;
        o->failed = a->failed;
        o->frees = a->frees;
        o->live_count = a->live_count;
        o->live_bytes = a->live_bytes;
    }
}

static void series(struct ga_vmem *v, const struct ga_memory *m)
{
    const struct ga_series_set *set = &m->series;
    v->series_bucket_ns = set->width;
    v->series_buckets = set->buckets < GA_SERIES_BUCKETS ? set->buckets : GA_SERIES_BUCKETS;
    v->series = ga_xcalloc(set->n + 1, sizeof(*v->series));
    v->n_series = set->n;
    for (size_t i = 0; i < set->n; i++) {
        const struct ga_series *s = &set->s[i];
        v->series[i] = (struct ga_vmem_series){
            .device = s->device,
            .kind = s->kind == GA_SERIES_TOTAL ? "total" : gt_mem_kind_name(s->kind),
            .max = s->max,
            .min = s->min};
    }
}

/* Site x (NULL: the site of `stack`, or none) with `stack`'s frames, spending *budget. in_list:
 * x is ranked in a list (its text label says "<unknown stack>" whatever the stack). */
static void site(struct ga_vmem_site *o, struct ga_report *r, const struct ga_site *x,
                 uint32_t stack, size_t *budget, int in_list)
{
    if (!x) x = ga_sites_of_stack(&r->sites, stack);
    o->site = ga_vstacks_site(&r->stackview, x);
    o->stack = x ? ga_vstacks_stack(&r->stackview, stack) : NULL;
    size_t k = o->stack ? o->stack->n : 0;
    if (k > *budget) k = *budget;
    *budget -= k;
    o->frames = (uint32_t)k;
    o->text = o->site && o->site->frame ? o->site->frame->label
              : in_list || stack        ? "<unknown stack>"
                                        : "<no stack recorded>";
}

/* Sites in order k, each weighed by it, at most GA_VMEM_SITES sharing one frame budget. */
static void site_list(struct ga_vmem_sites *l, struct ga_report *r, enum ga_site_order k)
{
    size_t n, budget = GA_VMEM_LIST_FRAMES;
    const struct ga_site **s = ga_sites_sorted(&r->sites, k, &n);
    size_t kept = n < GA_VMEM_SITES ? n : GA_VMEM_SITES;
    l->v = ga_xcalloc(kept + 1, sizeof(*l->v));
    l->n = kept;
    l->omitted = n - kept;
    for (size_t i = 0; i < kept; i++) {
        const struct ga_site_stats *st = &s[i]->st;
        struct ga_vmem_site_amount *o = &l->v[i];
        site(&o->site, r, s[i], s[i]->top_alloc, &budget, 1);
        o->bytes = k == GA_SITES_BY_PEAK   ? st->peak_bytes
                   : k == GA_SITES_BY_TEMP ? st->temp_bytes
                                           : st->leaked_bytes;
        o->count = k == GA_SITES_BY_PEAK   ? st->peak_count
                   : k == GA_SITES_BY_TEMP ? st->temp_count
                                           : st->leaked_count;
    }
    free(s);
}

static void amount(struct ga_vmem_amount *o, const char *name, uint64_t bytes, uint64_t count)
{
    snprintf(o->name, sizeof(o->name), "%s", name);
    o->bytes = bytes;
    o->count = count;
}

static void peak_libs(struct ga_vmem_peakview *p, const struct ga_report *r)
{
    const struct ga_library *l = r->views.libs_at_peak;
    p->libs = ga_xcalloc(r->views.n_libs_at_peak + 1, sizeof(*p->libs));
    p->n_libs = r->views.n_libs_at_peak;
    for (size_t i = 0; i < p->n_libs; i++) {
        const struct ga_module *mod =
            l[i].module == GA_NO_MODULE ? NULL : &r->stacks.mods[l[i].module];
        p->libs[i] = (struct ga_vmem_lib){.path = mod ? mod->path : NULL,
                                          .name = mod ? mod->name : NULL,
                                          .bytes = l[i].st.peak_bytes,
                                          .count = l[i].st.peak_count};
    }
}

static void peak_amounts(struct ga_vmem_peakview *p, const struct ga_peak_breakdown *b)
{
    char lb[16];
    p->by_api = ga_xcalloc(GT_API_MAX, sizeof(*p->by_api));
    for (unsigned i = 0; i < GT_API_MAX; i++)
        if (b->by_api[i].bytes || b->by_api[i].count)
            amount(&p->by_api[p->n_by_api++], ga_api_label(i, lb), b->by_api[i].bytes,
                   b->by_api[i].count);
    for (unsigned c = 0; c < GA_SIZE_CLASSES; c++)
        if (b->by_class[c].count)
            amount(&p->by_class[p->n_by_class++], ga_size_class_name(c), b->by_class[c].bytes,
                   b->by_class[c].count);
    p->by_device = ga_xcalloc(b->n_by_device + 1, sizeof(*p->by_device));
    p->n_by_device = b->n_by_device;
    for (size_t i = 0; i < b->n_by_device; i++) {
        amount(&p->by_device[i], "", b->by_device[i].bytes, b->by_device[i].count);
        p->by_device[i].device = b->by_device[i].device;
    }
    amount(&p->no_stack, "", b->no_stack.bytes, b->no_stack.count);
}

static void largest(struct ga_vmem_peakview *p, struct ga_report *r, size_t *budget)
{
    const struct ga_peak_breakdown *b = &r->mem.peak;
    p->largest = ga_xcalloc(b->n_top + 1, sizeof(*p->largest));
    p->n_largest = b->n_top;
    for (size_t i = 0; i < b->n_top; i++) {
        const struct ga_peak_alloc *x = &b->top[i];
        struct ga_vmem_alloc *o = &p->largest[i];
        o->addr = x->addr;
        o->size = x->size;
        api_name(o->api, x->api);
        o->device = x->device;
        o->ns = rel(r, x->ts);
        o->freed = x->free_ts != 0;
        o->free_ns = x->free_ts ? rel(r, x->free_ts) : 0;
        site(&o->site, r, NULL, x->stack, budget, 0);
    }
}

static void categories(struct ga_vmem_peakview *p, const struct ga_report *r)
{
    const struct ga_vcats *c = &r->peakcats;
    p->cats_valid = c->valid;
    p->cats = ga_xcalloc(c->n + 1, sizeof(*p->cats));
    p->n_cats = c->n;
    for (size_t i = 0; i < c->n; i++)
        p->cats[i] = (struct ga_vmem_cat){.name = ga_vc_cat_name(c->lines[i].cat),
                                          .source = ga_vc_source_name(c->lines[i].source),
                                          .from_snapshot = c->lines[i].source != GA_VC_LIBRARY,
                                          .bytes = c->lines[i].bytes,
                                          .count = c->lines[i].count};
    p->cats_expanded = c->expanded;
    p->have_cat_snapshot = c->snapshot_ts != 0;
    p->cat_snapshot_ns = rel(r, c->snapshot_ts);
    p->have_cat_replay = c->replay_ts != 0;
    p->cat_replay_ns = rel(r, c->replay_ts);
    p->cat_replay_allocated = c->replay_allocated;
    p->cat_replay_reserved = c->replay_reserved;
    p->cat_snapshot_reserved = c->snapshot_reserved;
    p->cat_splits = ga_xcalloc(c->n_splits + 1, sizeof(*p->cat_splits));
    p->n_cat_splits = c->n_splits;
    for (size_t i = 0; i < c->n_splits; i++) {
        const struct ga_vc_split *x = &c->splits[i];
        p->cat_splits[i] = (struct ga_vmem_catsplit){.device = x->device,
                                                     .source = ga_vc_source_name(x->source),
                                                     .have_time = x->ts != 0,
                                                     .ns = rel(r, x->ts),
                                                     .reserved = x->reserved,
                                                     .allocated = x->allocated};
    }
    p->cat_pytorch_bytes = c->pytorch_bytes;
    p->cat_temps_left = c->temps_left;
    p->n_cat_names = GA_VC_KINDS;
    for (unsigned k = 0; k < GA_VC_KINDS; k++)
        p->cat_names[k] = ga_vc_cat_name(k);
    p->cat_points = ga_xcalloc(c->n_points + 1, sizeof(*p->cat_points));
    p->n_cat_points = c->n_points;
    for (size_t i = 0; i < c->n_points; i++) {
        const struct ga_vc_point *x = &c->points[i];
        struct ga_vmem_catpoint *o = &p->cat_points[i];
        o->ns = rel(r, x->ts);
        o->at = ga_vc_at_name(x->at);
        o->total = x->total;
        memcpy(o->bytes, x->bytes, sizeof(x->bytes));
    }
}

static void peak_view(struct ga_vmem *v, struct ga_report *r, size_t *loose)
{
    struct ga_vmem_peakview *p = &v->peak;
    p->valid = r->mem.peak.valid;
    p->ns = rel(r, r->mem.peak_ts);
    site_list(&p->by_site, r, GA_SITES_BY_PEAK);
    peak_amounts(p, &r->mem.peak);
    peak_libs(p, r);
    largest(p, r, loose);
    categories(p, r);
}

/* ---- PyTorch's part of a failure --------------------------------------------------------------
 */

static void torch_oom(struct ga_vtorch_oom *o, const struct ga_report *r,
                      const struct ga_torch_oom *a)
{
    char buf[1024];
    const char *site = ga_torch_site_label(&r->torch, a->stack, buf, sizeof(buf));
    o->requested = a->requested;
    o->reserved = a->reserved;
    o->allocated = a->allocated;
    o->unallocated = a->reserved > a->allocated ? a->reserved - a->allocated : 0;
    o->device_free = a->device_free;
    o->device_total = a->device_total;
    o->limit = a->limit;
    o->fraction_set = a->fraction_set;
    o->driver_failures = a->driver_failures;
    o->have_stack = a->stack != 0;
    o->site = site ? ga_xstrdup(site) : NULL;
    o->have_snap = a->have_snap;
    o->largest_fit = a->largest_fit;
    o->partly_used = a->frag.partly_used;
    o->partly_used_bytes = a->frag.partly_used_bytes;
    o->pinning_blocks = a->frag.pinning_blocks;
    o->pinning_bytes = a->frag.pinning_bytes;
    if (a->have_snap) ga_vtorch_sites_make(&o->pinned_by, r, &a->pinning);
    o->advice = ga_torch_verdict_advice(a->verdict);
}

/* ---- failed allocations ---------------------------------------------------------------------- */

static const char *retry_name(enum ga_retry x)
{
    return x == GA_RETRY_OK ? "succeeded" : x == GA_RETRY_FAILED ? "failed" : "none";
}

static void oom_holders(struct ga_vmem_oom *o, struct ga_report *r, const struct ga_oom_view *w,
                        size_t *budget)
{
    o->have_holders = w->have_holders;
    o->n_holders = w->n_holders;
    for (size_t k = 0; k < w->n_holders; k++) {
        const struct ga_holder_view *h = &w->holders[k];
        site(&o->holders[k].site, r, h->site, h->stack, budget, 0);
        o->holders[k].bytes = h->bytes;
        o->holders[k].count = h->count;
    }
}

/* The advice line of a failed allocation: its verdict's; for other_processes it names the other
 * processes NVML listed on the device at that moment (pid, name, bytes; heaviest first, at most
 * GA_VMEM_ADVICE_PROCS) when the trace has that listing. */
static const char *oom_advice(const struct ga_report *r, const struct ga_oom *x, char *buf,
                              size_t n)
{
    const char *base = ga_verdict_advice(x->verdict);
    size_t k = 0;
    const struct ga_nvml_proc *p = x->verdict == GA_VERDICT_OTHER_PROCESSES
                                       ? ga_nvml_procs_after(&r->nvml, x->device, x->ts, &k)
                                       : NULL;
    const struct ga_nvml_proc *top[GA_VMEM_ADVICE_PROCS];
    size_t nt = 0, others = 0;
    for (size_t i = 0; p && i < k; i++) { /* the others, heaviest first (unknown bytes last) */
        if (r->facts.have_process && p[i].pid == r->facts.pid) continue;
        others++;
        size_t j = nt < GA_VMEM_ADVICE_PROCS ? nt++ : GA_VMEM_ADVICE_PROCS;
        uint64_t b = p[i].bytes == UINT64_MAX ? 0 : p[i].bytes;
        for (; j > 0 && (top[j - 1]->bytes == UINT64_MAX ? 0 : top[j - 1]->bytes) < b; j--)
            if (j < GA_VMEM_ADVICE_PROCS) top[j] = top[j - 1];
        if (j < GA_VMEM_ADVICE_PROCS) top[j] = &p[i];
    }
    if (!nt) return base;
    size_t w = (size_t)snprintf(buf, n, "other processes hold memory on this device:");
    for (size_t i = 0; i < nt && w < n; i++) {
        char b[32];
        w += (size_t)snprintf(buf + w, n - w, "%s pid %u%s%s (%s)", i ? "," : "", top[i]->pid,
                              top[i]->name[0] ? " " : "", top[i]->name,
                              top[i]->bytes == UINT64_MAX ? "? bytes"
                                                          : ga_fmt_bytes(b, top[i]->bytes));
    }
    if (w < n && others > nt) w += (size_t)snprintf(buf + w, n - w, " and %zu more", others - nt);
    if (w < n)
        snprintf(buf + w, n - w,
                 "; stop them or give the job its own GPU (CUDA_VISIBLE_DEVICES), "
                 "or cap the others (MPS memory limits)");
    return buf;
}

static void oom(struct ga_vmem *v, struct ga_report *r, size_t i, size_t *budget)
{
    const struct ga_oom *x = &r->mem.ooms[i];
    struct ga_vmem_oom *o = &v->ooms[i];
    char adv[1024];
    o->ns = rel(r, x->ts);
    o->tid = x->tid;
    o->have_api = x->api != GT_API_NONE;
    api_name(o->api, x->api);
    o->result = x->result;
    o->device = x->device;
    o->out_of_memory = x->result == GA_CUDA_ERROR_OUT_OF_MEMORY;
    o->requested = x->requested;
    o->free_bytes = x->free_bytes;
    o->total_bytes = x->total_bytes;
    o->held = x->held;
    o->unaccounted = x->unaccounted;
    o->overhead = x->overhead;
    o->others = x->others;
    o->verdict = ga_verdict_name(x->verdict);
    o->have_pools = x->have_pools;
    o->pools = x->pools.pools;
    o->reserved_unused = x->pools.reserved_unused;
    o->largest_free = x->pools.largest_free;
    o->pool = x->pools.pool;
    o->pool_name = x->pools.pool_name;
    o->retry = x->retry;
    o->retry_name = retry_name(x->retry);
    o->freed_before_retry = x->freed_before_retry;
    o->freed_count = x->freed_count;
    o->retry_ns = rel(r, x->retry_ts);
    o->retry_size = x->retry_size;
    o->advice = ga_xstrdup(oom_advice(r, x, adv, sizeof(adv)));
    site(&o->site, r, NULL, x->stack, budget, 0);
    oom_holders(o, r, &r->views.ooms[i], budget);
    o->repeat_of = r->views.ooms[i].repeat_of;
    o->allocator_cached = x->allocator_cached;
    if (x->alloc) {
        torch_oom(&v->torch_ooms[i], r, x->alloc);
        o->torch = &v->torch_ooms[i];
    }
}

static void ooms(struct ga_vmem *v, struct ga_report *r, size_t *budget)
{
    v->n_ooms = r->mem.n_ooms;
    v->ooms_omitted = r->mem.ooms_dropped;
    v->ooms = ga_xcalloc(v->n_ooms + 1, sizeof(*v->ooms));
    v->torch_ooms = ga_xcalloc(v->n_ooms + 1, sizeof(*v->torch_ooms));
    v->n_torch_ooms = v->n_ooms;
    v->explained = ga_xcalloc(GA_VMEM_OOM_DETAILS, sizeof(*v->explained));
    for (size_t i = 0; i < v->n_ooms; i++) {
        oom(v, r, i, budget);
        /* the text report explains the first few out-of-memory failures; a repeat is explained
         * with the one it repeats */
        if (v->n_explained < GA_VMEM_OOM_DETAILS && v->ooms[i].out_of_memory &&
            v->ooms[i].repeat_of < 0)
            v->explained[v->n_explained++] = i;
    }
}

static void counts(struct ga_vmem *v, const struct ga_report *r)
{
    const struct ga_memory *m = &r->mem;
    v->alloc_count = m->alloc_count;
    v->alloc_bytes = m->alloc_bytes;
    v->free_count = m->free_count;
    v->failed_count = m->failed_count;
    v->ctx_release_count = m->ctx_release_count;
    v->ctx_release_bytes = m->ctx_release_bytes;
    v->peak_total = m->peak_total;
    v->peak_ns = rel(r, m->peak_ts);
    v->leaked_bytes = m->leaked_bytes;
    v->leaked_count = m->leaked_count;
    v->cached_bytes = m->cached_bytes;
    v->cached_count = m->cached_count;
    v->pinned = peak(r, m->pinned_peak, m->pinned_peak_ts, m->pinned_live);
    v->va = peak(r, m->va_peak, m->va_peak_ts, m->va_live);
    v->unmatched_frees = m->unmatched_frees;
    v->failed_frees = m->failed_frees;
    v->null_frees = m->null_frees;
    v->double_allocs = m->double_allocs;
    v->meminfo_samples = m->meminfo_samples;
    v->vmm_maps = m->vmm_maps;
    v->vmm_unmaps = m->vmm_unmaps;
    v->vmm_failed = m->vmm_failed;
    v->ctx_created = m->ctx_created;
    v->ctx_destroyed = m->ctx_destroyed;
    v->primary_resets = m->primary_resets;
    v->temp_count = m->temp_count;
    v->temp_bytes = m->temp_bytes;
}

void ga_vmem_build(struct ga_vmem *v, struct ga_report *r)
{
    /* the sites outside lists share one frame budget, spent in the JSON report's order: each
     * failure's site and holders, then the largest allocations at the peak */
    size_t loose = GA_VMEM_LOOSE_FRAMES;
    memset(v, 0, sizeof(*v));
    counts(v, r);
    devices(v, r);
    apis(v, &r->mem);
    series(v, &r->mem);
    ooms(v, r, &loose);
    peak_view(v, r, &loose);
    if (r->mem.n_temps && r->mem.temps[0].stack) {
        size_t none = 0;
        struct ga_vmem_site s;
        site(&s, r, NULL, r->mem.temps[0].stack, &none, 0);
        v->temps_most_from = s.text;
    }
    site_list(&v->leaks, r, GA_SITES_BY_LEAK);
    site_list(&v->temporaries, r, GA_SITES_BY_TEMP);
}

void ga_vmem_free(struct ga_vmem *v)
{
    free(v->devs);
    free(v->apis);
    free(v->series);
    free(v->peak.by_site.v);
    free(v->peak.libs);
    free(v->peak.by_api);
    free(v->peak.by_device);
    free(v->peak.largest);
    free(v->peak.cats);
    free(v->peak.cat_points);
    free(v->peak.cat_splits);
    free(v->leaks.v);
    free(v->temporaries.v);
    for (size_t i = 0; i < v->n_ooms; i++) {
        struct ga_vmem_oom *o = &v->ooms[i];
        free(o->advice);
        if (o->torch) {
            free(v->torch_ooms[i].site);
            ga_vtorch_sites_free(&v->torch_ooms[i].pinned_by);
        }
    }
    free(v->ooms);
    free(v->torch_ooms);
    free(v->explained);
    memset(v, 0, sizeof(*v));
}
