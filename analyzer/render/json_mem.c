/* --json: the memory and timeline sections (docs/REPORT_JSON.md). */
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "render/nvml.h"
#include "render/pools.h"
#include "render/torch_render.h"
#include "base/util.h"

static jobj *jname(const char *s)
{
    return json_object_new_string(s);
}

static jobj *peak_obj(const struct ga_report *r, uint64_t peak, uint64_t ts, uint64_t live)
{
    jobj *o = json_object_new_object();
    put(o, "peak_bytes", ju64(peak));
    put(o, "peak_time_ns", jtime(r, ts, peak != 0));
    put(o, "live_at_exit", ju64(live));
    return o;
}

static jobj *device_kinds(const struct ga_report *r, const struct ga_dev_mem *d)
{
    jobj *o = json_object_new_object();
    for (unsigned k = 1; k < GT_MEM_KIND_COUNT; k++) {
        if (!d->peak[k]) continue;
        jobj *kind = peak_obj(r, d->peak[k], d->peak_ts[k], d->live[k]);
        put(kind, "live_count_at_exit", ju64(d->live_count[k]));
        put(o, gt_mem_kind_name(k), kind);
    }
    return o;
}

static jobj *peak_by_device(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->mem.ndev; i++) {
        const struct ga_dev_mem *d = &r->mem.dev[i];
        if (d->device < 0 && !d->peak_total) continue; /* host memory only: see pinned_host */
        jobj *o = json_object_new_object();
        put(o, "device", json_object_new_int64(d->device));
        put(o, "peak_bytes", ju64(d->peak_total));
        put(o, "peak_time_ns", jtime(r, d->peak_total_ts, d->peak_total != 0));
        put(o, "leaked_bytes", ju64(d->live_total));
        put(o, "by_kind", device_kinds(r, d));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *oom_obj(const struct ga_report *r, size_t i)
{
    const struct ga_oom *x = &r->mem.ooms[i];
    jobj *o = json_object_new_object();
    put(o, "time_ns", jtime(r, x->ts, 1));
    put(o, "tid", ju64(x->tid));
    /* An allocator-level OOM that no driver call saw (a memory fraction) has no API. */
    put(o, "api", x->api == GT_API_NONE ? NULL : api_name(x->api));
    put(o, "result", json_object_new_int64(x->result));
    put(o, "requested_bytes", ju64(x->requested));
    put(o, "device", json_object_new_int64(x->device));
    put(o, "free_bytes", ju64(x->free_bytes));
    put(o, "total_bytes", ju64(x->total_bytes));
    put(o, "held_bytes", ju64(x->held));
    put(o, "unaccounted_bytes", ju64(x->unaccounted));
    put(o, "verdict", jname(ga_verdict_name(x->verdict)));
    ga_json_oom_evidence(r, x, &r->views.ooms[i], o);
    ga_json_torch_oom(r, x, o);
    put(o, "processes", ga_json_oom_processes(&r->nvmlview, i));
    return o;
}

static jobj *ooms(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->mem.n_ooms; i++)
        json_object_array_add(a, oom_obj(r, i));
    return a;
}

static const char *family_name(unsigned fam)
{
    return fam == GT_FAM_ALLOC ? "alloc" : fam == GT_FAM_FREE ? "free" : "other";
}

static jobj *by_api(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const struct ga_api_mem *m = &r->mem.api[api];
        if (!m->count && !m->failed) continue;
        jobj *o = json_object_new_object();
        put(o, "api", api_name(api));
        put(o, "kind", jname(gt_mem_kind_name(gt_api_table[api].mem_kind)));
        put(o, "family", jname(family_name(gt_api_table[api].family)));
        put(o, "calls", ju64(m->calls));
        put(o, "count", ju64(m->count));
        put(o, "bytes", ju64(m->bytes));
        put(o, "failed", ju64(m->failed));
        put(o, "frees", ju64(m->frees));
        put(o, "live_count_at_exit", ju64(m->live_count));
        put(o, "live_bytes_at_exit", ju64(m->live_bytes));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *series(const struct ga_report *r)
{
    const struct ga_series_set *set = &r->mem.series;
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "bucket_ns", ju64(set->width));
    put(o, "buckets", ju64(set->buckets));
    for (size_t i = 0; i < set->n; i++) {
        const struct ga_series *s = &set->s[i];
        jobj *so = json_object_new_object(), *v = json_object_new_array();
        jobj *lo = json_object_new_array();
        put(so, "device", json_object_new_int64(s->device));
        put(so, "kind", jname(s->kind == GA_SERIES_TOTAL ? "total" : gt_mem_kind_name(s->kind)));
        for (size_t b = 0; b < set->buckets && b < GA_SERIES_BUCKETS; b++) {
            json_object_array_add(v, ju64(s->max[b]));
            json_object_array_add(lo, ju64(s->min[b]));
        }
        put(so, "max_bytes", v);
        put(so, "min_bytes", lo);
        json_object_array_add(a, so);
    }
    put(o, "series", a);
    return o;
}

static jobj *counters(const struct ga_report *r, jobj *o)
{
    const struct ga_memory *m = &r->mem;
    jobj *ctx = json_object_new_object(), *vmm = json_object_new_object();
    put(o, "unmatched_frees", ju64(m->unmatched_frees));
    put(o, "failed_frees", ju64(m->failed_frees));
    put(o, "null_frees", ju64(m->null_frees));
    put(o, "double_allocs", ju64(m->double_allocs));
    put(o, "meminfo_samples", ju64(m->meminfo_samples));
    put(vmm, "maps", ju64(m->vmm_maps));
    put(vmm, "unmaps", ju64(m->vmm_unmaps));
    put(vmm, "failed", ju64(m->vmm_failed));
    put(o, "vmm", vmm);
    put(ctx, "created", ju64(m->ctx_created));
    put(ctx, "destroyed", ju64(m->ctx_destroyed));
    put(ctx, "primary_resets", ju64(m->primary_resets));
    put(o, "contexts", ctx);
    return o;
}

jobj *ga_json_memory(const struct ga_report *r)
{
    const struct ga_memory *m = &r->mem;
    jobj *o = json_object_new_object(), *rel = json_object_new_object();
    put(o, "alloc_count", ju64(m->alloc_count));
    put(o, "alloc_bytes", ju64(m->alloc_bytes));
    put(o, "free_count", ju64(m->free_count));
    put(rel, "count", ju64(m->ctx_release_count));
    put(rel, "bytes", ju64(m->ctx_release_bytes));
    put(o, "released_by_context", rel);
    put(o, "failed_count", ju64(m->failed_count));
    put(o, "peak_bytes", ju64(m->peak_total));
    put(o, "peak_time_ns", jtime(r, m->peak_ts, m->peak_total != 0));
    put(o, "leaked_bytes", ju64(m->leaked_bytes));
    put(o, "leaked_count", ju64(m->leaked_count));
    put(o, "allocator_cached_bytes", ju64(m->cached_bytes));
    put(o, "allocator_cached_count", ju64(m->cached_count));
    put(o, "peak_by_device", peak_by_device(r));
    put(o, "ooms", ooms(r));
    put(o, "ooms_omitted", ju64(m->ooms_dropped));
    put(o, "by_api", by_api(r));
    put(o, "pinned_host", peak_obj(r, m->pinned_peak, m->pinned_peak_ts, m->pinned_live));
    put(o, "va_reserved", peak_obj(r, m->va_peak, m->va_peak_ts, m->va_live));
    counters(r, o);
    put(o, "live_series", series(r));
    ga_json_pools(&r->poolview, o);
    ga_json_peak(r, o);
    ga_json_torch(r, o);
    return o;
}

static jobj *launches_by_api(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const struct ga_api_calls *c = &r->tl.launch[api];
        if (!c->count && !c->failed) continue;
        jobj *o = json_object_new_object();
        put(o, "api", api_name(api));
        put(o, "count", ju64(c->count));
        put(o, "failed", ju64(c->failed));
        put(o, "call_ns", ju64(c->total_ns));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *spans(const struct ga_report *r)
{
    static const char *const fam[] = {
        [GT_FAM_SYNC] = "sync", [GT_FAM_COPY] = "copy", [GT_FAM_WAIT] = "wait"};
    jobj *a = json_object_new_array();
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const struct ga_api_calls *c = &r->tl.span[api];
        if (!c->count && !c->failed) continue;
        unsigned f = gt_api_table[api].family;
        jobj *o = json_object_new_object();
        put(o, "api", api_name(api));
        put(o, "family", jname(f <= GT_FAM_WAIT && fam[f] ? fam[f] : "other"));
        put(o, "count", ju64(c->count));
        put(o, "failed", ju64(c->failed));
        put(o, "total_ns", ju64(c->total_ns));
        put(o, "bytes", ju64(c->bytes));
        json_object_array_add(a, o);
    }
    return a;
}

jobj *ga_json_timeline(const struct ga_report *r)
{
    jobj *o = json_object_new_object();
    put(o, "launch_count", ju64(r->tl.launch_count));
    put(o, "launch_failed", ju64(r->tl.launch_failed));
    put(o, "kernel_count", ju64(r->gpu.kernel_count)); /* kernels seen executing on the GPU */
    put(o, "kernel_names", ju64(r->tl.n_kernels));
    put(o, "launches_by_api", launches_by_api(r));
    put(o, "top_kernels", ga_json_top_kernels(&r->gpuview));
    put(o, "spans", spans(r));
    ga_json_gpu_timeline(&r->gpuview, o);
    return o;
}
