/* --json: memory.fragmentation (docs/REPORT_JSON.md): pools, devices, series, pool OOMs, the
 * pools at each failed allocation. Reads the pools view alone (model/view_pools.h). */
#include <stdlib.h>
#include <string.h>

#include "render/json_put.h"
#include "render/pools.h"
#include "base/util.h"

/* Nanoseconds from the trace start, or null when not known. */
static jobj *jns(int64_t ns, int known)
{
    return known ? ji64(ns) : NULL;
}

/* {reserved_bytes, used_bytes, free_bytes, free_extents, largest_free_bytes, fragmentation}:
 * extents, largest and fragmentation are null when the layout is unknown. */
static jobj *frag_obj(const struct ga_vfrag *f)
{
    jobj *o = json_object_new_object();
    put(o, "reserved_bytes", ju64(f->reserved));
    put(o, "used_bytes", ju64(f->used));
    put(o, "free_bytes", ju64(f->free));
    put(o, "free_extents", f->layout_known ? ju64(f->extents) : NULL);
    put(o, "largest_free_bytes", f->layout_known ? ju64(f->largest) : NULL);
    put(o, "fragmentation", f->layout_known ? json_object_new_double(f->ratio) : NULL);
    return o;
}

static jobj *map_obj(const struct ga_vmap *m)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    for (uint32_t i = 0; m->ext && i < m->n; i++) {
        jobj *e = json_object_new_object();
        put(e, "addr", ju64(m->ext[i].addr));
        put(e, "size", ju64(m->ext[i].size));
        put(e, "state", json_object_new_string(m->ext[i].used ? "used" : "free"));
        json_object_array_add(a, e);
    }
    put(o, "extents", a);
    put(o, "truncated", json_object_new_boolean(m->truncated));
    return o;
}

static jobj *errors_obj(const struct ga_vpools *v, const uint64_t *errors)
{
    jobj *o = json_object_new_object();
    for (unsigned e = 0; e < GA_VPOOL_ERRORS; e++)
        put(o, v->error_names[e], ju64(errors[e]));
    return o;
}

static jobj *pool_obj(const struct ga_vpools *v, const struct ga_vpool *q, size_t i)
{
    jobj *o = json_object_new_object();
    put(o, "index", ju64(i));
    put(o, "kind", json_object_new_string(q->kind_name));
    put(o, "id", ju64(q->id));
    put(o, "name", ga_json_str(q->name));
    put(o, "device", json_object_new_int64(q->device));
    put(o, "created_ns", jns(q->created_ns, 1));
    put(o, "destroyed_ns", jns(q->destroyed_ns, !q->live));
    put(o, "at_end", frag_obj(&q->now));
    put(o, "peak_reserved_bytes", ju64(q->peak_reserved));
    put(o, "peak_reserved_time_ns", jns(q->peak_reserved_ns, q->peak_reserved != 0));
    put(o, "peak_used_bytes", ju64(q->peak_used));
    put(o, "peak_used_time_ns", jns(q->peak_used_ns, q->peak_used != 0));
    jobj *peak = NULL, *worst = NULL;
    if (q->have_at_peak) {
        peak = frag_obj(&q->at_peak);
        if (q->kind != GA_VPOOL_STREAM) put(peak, "map", map_obj(&q->map_at_peak));
    }
    put(o, "at_peak", peak);
    if (q->have_worst) {
        worst = frag_obj(&q->worst);
        put(worst, "time_ns", jns(q->worst_ns, 1));
    }
    put(o, "worst", worst);
    if (q->kind == GA_VPOOL_ANNOTATED) {
        jobj *b = json_object_new_object();
        put(b, "allocs", ju64(q->block_allocs));
        put(b, "frees", ju64(q->block_frees));
        put(b, "fails", ju64(q->block_fails));
        put(b, "live_at_end", ju64(q->live_blocks));
        put(o, "blocks", b);
        put(o, "annotation_errors", errors_obj(v, q->errors));
    } else if (q->kind == GA_VPOOL_STREAM) {
        jobj *s = json_object_new_object();
        put(s, "samples", ju64(q->samples));
        put(s, "live_bytes_at_end", ju64(q->live_bytes));
        put(s, "live_count_at_end", ju64(q->live_count));
        put(s, "reserved_high_bytes", ju64(q->reserved_high));
        put(s, "used_high_bytes", ju64(q->used_high));
        put(o, "stream", s);
    }
    return o;
}

static jobj *device_obj(const struct ga_vpool_dev *d)
{
    jobj *o = json_object_new_object(), *peak = NULL, *worst = NULL;
    put(o, "device", json_object_new_int64(d->device));
    put(o, "annotated_at_end", frag_obj(&d->now));
    if (d->have_at_peak) {
        peak = frag_obj(&d->at_peak);
        put(peak, "stream_reserved_bytes", ju64(d->stream_reserved_at_peak));
        put(peak, "stream_used_bytes", ju64(d->stream_used_at_peak));
        put(peak, "vmm_unmapped_physical_bytes", ju64(d->phys_unused_at_peak));
    }
    put(o, "at_peak", peak);
    if (d->have_worst) {
        worst = frag_obj(&d->worst);
        put(worst, "time_ns", jns(d->worst_ns, 1));
    }
    put(o, "worst", worst);
    put(o, "stream_reserved_bytes", ju64(d->stream_reserved));
    put(o, "stream_used_bytes", ju64(d->stream_used));
    put(o, "vmm_physical_bytes", ju64(d->phys_created));
    put(o, "vmm_unmapped_physical_bytes", ju64(d->phys_unused));
    return o;
}

static jobj *series_obj(const struct ga_vpools *p, const struct ga_vbucket *s, jobj *o)
{
    jobj *a[5];
    for (int k = 0; k < 5; k++)
        a[k] = json_object_new_array();
    for (size_t b = 0; b < p->buckets; b++) {
        json_object_array_add(a[0], ju64(s[b].reserved_max));
        json_object_array_add(a[1], ju64(s[b].used_max));
        json_object_array_add(a[2], ju64(s[b].free));
        json_object_array_add(a[3], ju64(s[b].largest));
        json_object_array_add(a[4], ju64(s[b].extents));
    }
    put(o, "reserved_max", a[0]);
    put(o, "used_max", a[1]);
    put(o, "free", a[2]);
    put(o, "largest_free", a[3]);
    put(o, "free_extents", a[4]);
    return o;
}

static jobj *series(const struct ga_vpools *p)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "bucket_ns", ju64(p->bucket_ns));
    put(o, "buckets", ju64(p->buckets));
    for (size_t i = 0; i < p->ndev; i++) {
        jobj *s = json_object_new_object();
        put(s, "pool", NULL);
        put(s, "device", json_object_new_int64(p->devs[i].device));
        json_object_array_add(a, series_obj(p, p->devs[i].series, s));
    }
    for (size_t i = 0; i < p->n; i++) {
        const struct ga_vbucket *fs = p->pools[i].series;
        if (!fs) continue;
        jobj *s = json_object_new_object();
        put(s, "pool", ju64(i));
        put(s, "device", json_object_new_int64(p->pools[i].device));
        json_object_array_add(a, series_obj(p, fs, s));
    }
    put(o, "series", a);
    return o;
}

static jobj *pool_ooms(const struct ga_vpools *p)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < p->n_ooms; i++) {
        const struct ga_vpool_oom *x = &p->ooms[i];
        jobj *o = frag_obj(&x->f);
        put(o, "time_ns", jns(x->ns, 1));
        put(o, "pool", ju64(x->pool));
        put(o, "pool_name", ga_json_str(p->pools[x->pool].name));
        put(o, "requested_bytes", ju64(x->request));
        put(o, "verdict", json_object_new_string(x->verdict));
        put(o, "map", map_obj(&x->map));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *failures(const struct ga_vpools *p)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < p->n_fails; i++) {
        const struct ga_vpool_failure *f = &p->fails[i];
        jobj *o = json_object_new_object(), *list = json_object_new_array();
        put(o, "time_ns", jns(f->ns, 1));
        put(o, "device", json_object_new_int64(f->device));
        put(o, "api", json_object_new_string(f->api));
        put(o, "requested_bytes", ju64(f->request));
        put(o, "reserved_unused_bytes", ju64(f->reserved_unused));
        put(o, "largest_free_bytes", ju64(f->largest_free));
        put(o, "unused_layout_unknown_bytes", ju64(f->unused_layout_unknown));
        for (uint32_t k = 0; k < f->n_pools; k++) {
            jobj *q = frag_obj(&f->pool_f[k]);
            put(q, "pool", ju64(f->pool[k]));
            json_object_array_add(list, q);
        }
        put(o, "pools", list);
        put(o, "map_pool", f->map_pool >= 0 ? ju64((uint64_t)f->map_pool) : NULL);
        put(o, "map", f->map.ext ? map_obj(&f->map) : NULL);
        json_object_array_add(a, o);
    }
    return a;
}

void ga_json_pools(const struct ga_vpools *p, jobj *memory)
{
    jobj *o = json_object_new_object(), *pools = json_object_new_array(),
         *devs = json_object_new_array();
    for (size_t i = 0; i < p->n; i++)
        json_object_array_add(pools, pool_obj(p, &p->pools[i], i));
    for (size_t i = 0; i < p->ndev; i++)
        json_object_array_add(devs, device_obj(&p->devs[i]));
    put(o, "pools", pools);
    put(o, "pools_untracked", ju64(p->pools_untracked));
    put(o, "devices", devs);
    put(o, "series", series(p));
    put(o, "pool_ooms", pool_ooms(p));
    put(o, "pool_ooms_omitted", ju64(p->ooms_omitted));
    put(o, "failures", failures(p));
    put(o, "failures_omitted", ju64(p->fails_omitted));
    put(o, "annotation_errors", errors_obj(p, p->errors));
    put(o, "vmm_unmatched", ju64(p->vmm_unmatched));
    put(memory, "fragmentation", o);
}
