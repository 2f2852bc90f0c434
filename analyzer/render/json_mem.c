/* --json: the memory section (docs/REPORT_JSON.md). Reads the memory view alone
 * (model/view_mem.h), with the pools' and NVML's views. */
#include <stdlib.h>
#include <string.h>

#include "render/json_put.h"
#include "render/mem.h"
#include "render/nvml.h"
#include "render/pools.h"
#include "render/torch_render.h"
#include "base/util.h"

static jobj *jname(const char *s)
{
    return json_object_new_string(s);
}

static jobj *peak_obj(const struct ga_vmem_peak *p)
{
    jobj *o = json_object_new_object();
    put(o, "peak_bytes", ju64(p->peak));
    put(o, "peak_time_ns", p->peak ? ji64(p->peak_ns) : NULL);
    put(o, "live_at_exit", ju64(p->live));
    return o;
}

static jobj *device_kinds(const struct ga_vmem_dev *d)
{
    jobj *o = json_object_new_object();
    for (unsigned k = 1; k < GA_VMEM_KINDS; k++) {
        if (!d->kinds[k].name) continue;
        jobj *kind = peak_obj(&d->kinds[k].p);
        put(kind, "live_count_at_exit", ju64(d->kinds[k].live_count));
        put(o, d->kinds[k].name, kind);
    }
    return o;
}

static jobj *peak_by_device(const struct ga_vmem *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_devs; i++) {
        const struct ga_vmem_dev *d = &v->devs[i];
        if (!d->listed) continue; /* host memory only: see pinned_host */
        jobj *o = json_object_new_object();
        put(o, "device", ji64(d->device));
        put(o, "peak_bytes", ju64(d->peak_total));
        put(o, "peak_time_ns", d->peak_total ? ji64(d->peak_total_ns) : NULL);
        put(o, "leaked_bytes", ju64(d->live_total));
        put(o, "by_kind", device_kinds(d));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *jmaybe(uint64_t v, int known)
{
    return known ? ju64(v) : NULL;
}

/* memory.ooms[] entry fields: level, and for PyTorch's OOMs allocator, its figures, evidence. */
static void torch_oom(const struct ga_vmem_oom *x, jobj *o)
{
    const struct ga_vtorch_oom *a = x->torch;
    put(o, "level", jname(a ? "allocator" : "driver"));
    if (!a && !x->allocator_cached) return;
    put(o, "allocator", jname("pytorch"));
    if (!a) return;
    put(o, "reserved_bytes", ju64(a->reserved));
    put(o, "allocated_bytes", ju64(a->allocated));
    put(o, "free_in_segments_bytes", ju64(a->unallocated));
    put(o, "largest_free_block_bytes", jmaybe(a->largest_fit, a->have_snap));
    put(o, "device_free_bytes", ju64(a->device_free));
    put(o, "device_total_bytes", ju64(a->device_total));
    put(o, "limit_bytes", ju64(a->limit));
    put(o, "memory_fraction_set", json_object_new_boolean(a->fraction_set));
    put(o, "driver_failures_merged", ju64(a->driver_failures));
    put(o, "python_site",
        a->have_stack ? jname(a->site ? a->site : "(no Python frames: history off)") : NULL);
    if (a->have_snap) {
        put(o, "partly_used_segments", ju64(a->partly_used));
        put(o, "partly_used_segment_bytes", ju64(a->partly_used_bytes));
        put(o, "pinning_blocks", ju64(a->pinning_blocks));
        put(o, "pinning_bytes", ju64(a->pinning_bytes));
        put(o, "pinned_by", ga_json_torch_sites(&a->pinned_by));
    }
    put(o, "advice", jname(a->advice));
}

static jobj *oom_obj(const struct ga_vmem_oom *x, const struct ga_vnvml *nv, size_t i)
{
    jobj *o = json_object_new_object();
    put(o, "time_ns", ji64(x->ns));
    put(o, "tid", ju64(x->tid));
    /* An allocator-level OOM that no driver call saw (a memory fraction) has no API. */
    put(o, "api", x->have_api ? jname(x->api) : NULL);
    put(o, "result", ji64(x->result));
    put(o, "requested_bytes", ju64(x->requested));
    put(o, "device", ji64(x->device));
    put(o, "free_bytes", ju64(x->free_bytes));
    put(o, "total_bytes", ju64(x->total_bytes));
    put(o, "held_bytes", ju64(x->held));
    put(o, "unaccounted_bytes", ju64(x->unaccounted));
    put(o, "verdict", jname(x->verdict));
    ga_json_oom_evidence(x, o);
    torch_oom(x, o);
    put(o, "processes", ga_json_oom_processes(nv, i));
    return o;
}

static jobj *ooms(const struct ga_vmem *v, const struct ga_vnvml *nv)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_ooms; i++)
        json_object_array_add(a, oom_obj(&v->ooms[i], nv, i));
    return a;
}

static jobj *by_api(const struct ga_vmem *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_apis; i++) {
        const struct ga_vmem_api *m = &v->apis[i];
        jobj *o = json_object_new_object();
        put(o, "api", jname(m->api));
        put(o, "kind", jname(m->kind));
        put(o, "family", jname(m->family));
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

static jobj *series(const struct ga_vmem *v)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "bucket_ns", ju64(v->series_bucket_ns));
    put(o, "buckets", ju64(v->series_buckets));
    for (size_t i = 0; i < v->n_series; i++) {
        const struct ga_vmem_series *s = &v->series[i];
        jobj *so = json_object_new_object(), *hi = json_object_new_array();
        jobj *lo = json_object_new_array();
        put(so, "device", ji64(s->device));
        put(so, "kind", jname(s->kind));
        for (size_t b = 0; b < v->series_buckets; b++) {
            json_object_array_add(hi, ju64(s->max[b]));
            json_object_array_add(lo, ju64(s->min[b]));
        }
        put(so, "max_bytes", hi);
        put(so, "min_bytes", lo);
        json_object_array_add(a, so);
    }
    put(o, "series", a);
    return o;
}

static void counters(const struct ga_vmem *v, jobj *o)
{
    jobj *ctx = json_object_new_object(), *vmm = json_object_new_object();
    put(o, "unmatched_frees", ju64(v->unmatched_frees));
    put(o, "failed_frees", ju64(v->failed_frees));
    put(o, "null_frees", ju64(v->null_frees));
    put(o, "double_allocs", ju64(v->double_allocs));
    put(o, "meminfo_samples", ju64(v->meminfo_samples));
    put(vmm, "maps", ju64(v->vmm_maps));
    put(vmm, "unmaps", ju64(v->vmm_unmaps));
    put(vmm, "failed", ju64(v->vmm_failed));
    put(o, "vmm", vmm);
    put(ctx, "created", ju64(v->ctx_created));
    put(ctx, "destroyed", ju64(v->ctx_destroyed));
    put(ctx, "primary_resets", ju64(v->primary_resets));
    put(o, "contexts", ctx);
}

jobj *ga_json_memory(const struct ga_vmem *v, const struct ga_vpools *pools,
                     const struct ga_vnvml *nv)
{
    jobj *o = json_object_new_object(), *rel = json_object_new_object();
    put(o, "alloc_count", ju64(v->alloc_count));
    put(o, "alloc_bytes", ju64(v->alloc_bytes));
    put(o, "free_count", ju64(v->free_count));
    put(rel, "count", ju64(v->ctx_release_count));
    put(rel, "bytes", ju64(v->ctx_release_bytes));
    put(o, "released_by_context", rel);
    put(o, "failed_count", ju64(v->failed_count));
    put(o, "peak_bytes", ju64(v->peak_total));
    put(o, "peak_time_ns", v->peak_total ? ji64(v->peak_ns) : NULL);
    put(o, "leaked_bytes", ju64(v->leaked_bytes));
    put(o, "leaked_count", ju64(v->leaked_count));
    put(o, "allocator_cached_bytes", ju64(v->cached_bytes));
    put(o, "allocator_cached_count", ju64(v->cached_count));
    put(o, "peak_by_device", peak_by_device(v));
    put(o, "ooms", ooms(v, nv));
    put(o, "ooms_omitted", ju64(v->ooms_omitted));
    put(o, "by_api", by_api(v));
    put(o, "pinned_host", peak_obj(&v->pinned));
    put(o, "va_reserved", peak_obj(&v->va));
    counters(v, o);
    put(o, "live_series", series(v));
    ga_json_pools(pools, o);
    ga_json_peak(v, o);
    return o;
}
