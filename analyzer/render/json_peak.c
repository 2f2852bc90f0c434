/* --json: what filled memory at the peak (memory.peak_breakdown), leaks and temporary
 * allocations by call site, and the evidence of each failed allocation (docs/REPORT_JSON.md).
 * Reads the memory view alone (model/view_mem.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/json_put.h"
#include "render/mem.h"
#include "render/sites.h"
#include "base/util.h"

static jobj *amount(jobj *o, uint64_t bytes, uint64_t count)
{
    put(o, "bytes", ju64(bytes));
    put(o, "count", ju64(count));
    return o;
}

/* A site's object (render/sites.h), or {"site": label} for a stack without a site. */
static jobj *site_obj(const struct ga_vmem_site *s)
{
    if (s->site) return ga_json_vsite(s->site, s->stack, s->frames);
    jobj *o = json_object_new_object();
    put(o, "site", json_object_new_string(s->text));
    return o;
}

/* parent.key: the sites of a ranking with their weights; parent.key_omitted: those left out. */
static void site_list(const struct ga_vmem_sites *l, jobj *parent, const char *key)
{
    char k[128];
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < l->n; i++)
        json_object_array_add(a, amount(site_obj(&l->v[i].site), l->v[i].bytes, l->v[i].count));
    snprintf(k, sizeof(k), "%s_omitted", key);
    put(parent, key, a);
    put(parent, k, ju64(l->omitted));
}

static jobj *libs_at_peak(const struct ga_vmem_peakview *p)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < p->n_libs; i++) {
        jobj *o = json_object_new_object();
        put(o, "library", ga_json_str(p->libs[i].path));
        put(o, "name", p->libs[i].path ? ga_json_str(p->libs[i].name) : NULL);
        amount(o, p->libs[i].bytes, p->libs[i].count);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *largest(const struct ga_vmem_peakview *p)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < p->n_largest; i++) {
        const struct ga_vmem_alloc *x = &p->largest[i];
        jobj *o = json_object_new_object();
        put(o, "address", ju64(x->addr));
        put(o, "bytes", ju64(x->size));
        put(o, "api", json_object_new_string(x->api));
        put(o, "device", ji64(x->device));
        put(o, "time_ns", ji64(x->ns));
        put(o, "freed_time_ns", x->freed ? ji64(x->free_ns) : NULL);
        put(o, "site", site_obj(&x->site));
        json_object_array_add(a, o);
    }
    return a;
}

/* memory.peak_breakdown.by_category, .by_category_snapshot and _replay. */
static void categories(const struct ga_vmem_peakview *p, jobj *o)
{
    jobj *a = json_object_new_array(), *s = NULL;
    for (size_t i = 0; i < p->n_cats; i++) {
        const struct ga_vmem_cat *c = &p->cats[i];
        jobj *e = json_object_new_object();
        put(e, "category", json_object_new_string(c->name));
        put(e, "source", json_object_new_string(c->source));
        put(e, "bytes", ju64(c->bytes));
        /* a snapshot's points keep bytes per category, not blocks */
        put(e, "count", c->from_snapshot ? NULL : ju64(c->count));
        json_object_array_add(a, e);
    }
    put(o, "by_category", p->cats_valid ? a : (json_object_put(a), NULL));
    put(o, "by_category_temporaries_left", ju64(p->cat_temps_left));
    if (p->have_cat_snapshot) {
        s = json_object_new_object();
        put(s, "time_ns", ji64(p->cat_snapshot_ns));
        put(s, "reserved_bytes", ju64(p->cat_snapshot_reserved));
        put(s, "pytorch_reserved_at_peak", ju64(p->cat_pytorch_bytes));
    }
    put(o, "by_category_snapshot", s);
    s = NULL;
    if (p->have_cat_replay) {
        s = json_object_new_object();
        put(s, "time_ns", ji64(p->cat_replay_ns));
        put(s, "allocated_bytes", ju64(p->cat_replay_allocated));
        put(s, "reserved_bytes", ju64(p->cat_replay_reserved));
    }
    put(o, "by_category_replay", s);
    s = NULL;
    if (p->n_cat_splits) {
        s = json_object_new_array();
        for (size_t i = 0; i < p->n_cat_splits; i++) {
            const struct ga_vmem_catsplit *x = &p->cat_splits[i];
            jobj *e = json_object_new_object();
            put(e, "device", ji64(x->device));
            put(e, "source", json_object_new_string(x->source));
            put(e, "reserved_bytes", ju64(x->reserved));
            put(e, "time_ns", x->have_time ? ji64(x->ns) : NULL);
            put(e, "allocated_bytes", strcmp(x->source, "replay") ? NULL : ju64(x->allocated));
            json_object_array_add(s, e);
        }
    }
    put(o, "by_category_devices", s);
}

/* memory.category_series: null without categories. */
static jobj *category_series(const struct ga_vmem_peakview *p)
{
    if (!p->n_cat_points) return NULL;
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < p->n_cat_points; i++) {
        const struct ga_vmem_catpoint *x = &p->cat_points[i];
        jobj *e = json_object_new_object();
        put(e, "time_ns", ji64(x->ns));
        put(e, "at", json_object_new_string(x->at));
        put(e, "total_bytes", ju64(x->total));
        for (size_t c = 0; c < p->n_cat_names; c++)
            put(e, p->cat_names[c], ju64(x->bytes[c]));
        json_object_array_add(a, e);
    }
    return a;
}

static jobj *amounts(const struct ga_vmem_amount *v, size_t n, const char *key)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        jobj *e = json_object_new_object();
        if (key)
            put(e, key, json_object_new_string(v[i].name));
        else
            put(e, "device", ji64(v[i].device));
        json_object_array_add(a, amount(e, v[i].bytes, v[i].count));
    }
    return a;
}

static jobj *breakdown(const struct ga_vmem *v)
{
    const struct ga_vmem_peakview *p = &v->peak;
    jobj *o = json_object_new_object();
    put(o, "peak_bytes", ju64(v->peak_total));
    put(o, "peak_time_ns", p->valid ? ji64(p->ns) : NULL);
    site_list(&p->by_site, o, "by_site");
    put(o, "no_stack", amount(json_object_new_object(), p->no_stack.bytes, p->no_stack.count));
    put(o, "by_library", libs_at_peak(p));
    categories(p, o);
    put(o, "by_api", amounts(p->by_api, p->n_by_api, "api"));
    put(o, "by_size_class", amounts(p->by_class, p->n_by_class, "class"));
    put(o, "by_device", amounts(p->by_device, p->n_by_device, NULL));
    put(o, "largest_allocations", largest(p));
    return o;
}

void ga_json_peak(const struct ga_vmem *v, jobj *memory)
{
    jobj *t = json_object_new_object();
    put(memory, "peak_breakdown", breakdown(v));
    put(memory, "category_series", category_series(&v->peak));
    site_list(&v->leaks, memory, "leaks");
    put(t, "count", ju64(v->temp_count));
    put(t, "bytes", ju64(v->temp_bytes));
    put(memory, "temporary_allocations", t);
    site_list(&v->temporaries, memory, "temporaries");
}

/* The holders at the failed allocation (grouped by site, largest first). */
static jobj *holders(const struct ga_vmem_oom *x)
{
    jobj *a = json_object_new_array();
    for (size_t k = 0; k < x->n_holders; k++)
        json_object_array_add(
            a, amount(site_obj(&x->holders[k].site), x->holders[k].bytes, x->holders[k].count));
    return a;
}

void ga_json_oom_evidence(const struct ga_vmem_oom *x, jobj *o)
{
    put(o, "overhead_estimate_bytes", ju64(x->overhead));
    put(o, "others_bytes", ju64(x->others));
    if (x->have_pools) {
        jobj *p = json_object_new_object();
        put(p, "pools", ju64(x->pools));
        put(p, "reserved_unused_bytes", ju64(x->reserved_unused));
        put(p, "largest_free_bytes", ju64(x->largest_free));
        put(p, "pool", x->pool ? ju64(x->pool) : NULL);
        put(p, "pool_name", ga_json_str(x->pool_name));
        put(o, "pools", p);
    } else {
        put(o, "pools", NULL);
    }
    jobj *rt = json_object_new_object();
    put(rt, "outcome", json_object_new_string(x->retry_name));
    put(rt, "freed_bytes", ju64(x->freed_before_retry));
    put(rt, "freed_count", ju64(x->freed_count));
    put(rt, "time_ns", x->retry ? ji64(x->retry_ns) : NULL);
    put(rt, "requested_bytes", x->retry ? ju64(x->retry_size) : NULL);
    put(o, "retry", rt);
    put(o, "advice", json_object_new_string(x->advice));
    put(o, "site", site_obj(&x->site));
    put(o, "top_holders", x->have_holders ? holders(x) : NULL);
    put(o, "repeat_of", x->repeat_of >= 0 ? ju64((uint64_t)x->repeat_of) : NULL);
}
