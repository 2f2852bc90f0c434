/* --json: what filled memory at the peak (memory.peak_breakdown), leaks and temporary
 * allocations by call site, and the evidence of each failed allocation (docs/REPORT_JSON.md). */
#include <stdlib.h>
#include <string.h>

#include "render/json.h"
#include "base/util.h"


static jobj *amount(jobj *o, uint64_t bytes, uint64_t count)
{
    put(o, "bytes", ju64(bytes));
    put(o, "count", ju64(count));
    return o;
}

/* The call-site object of a stack: its site with this stack, or an unknown site. */
static jobj *stack_site(const struct ga_report *r, uint32_t stack)
{
    const struct ga_site *x = ga_sites_of_stack(&r->sites, stack);
    if (x) return ga_json_site(r, x, stack);
    jobj *o = json_object_new_object();
    put(o, "site", json_object_new_string(stack ? "<unknown stack>" : "<no stack recorded>"));
    return o;
}

/* parent.key: sites with a weight in order k, each with bytes/count of that weight (a bounded
 * site list: parent.key_omitted counts the sites left out). */
static void sites_by(const struct ga_report *r, enum ga_site_order k, jobj *parent, const char *key)
{
    size_t n;
    struct ga_json_list l;
    const struct ga_site **v = ga_sites_sorted(&r->sites, k, &n);
    ga_json_list_init(&l);
    for (size_t i = 0; i < n; i++) {
        const struct ga_site_stats *s = &v[i]->st;
        jobj *o = ga_json_list_site(r, &l, v[i], v[i]->top_alloc);
        if (!o) continue;
        if (k == GA_SITES_BY_PEAK)
            amount(o, s->peak_bytes, s->peak_count);
        else if (k == GA_SITES_BY_TEMP)
            amount(o, s->temp_bytes, s->temp_count);
        else
            amount(o, s->leaked_bytes, s->leaked_count);
    }
    free(v);
    ga_json_list_put(parent, key, &l);
}

static jobj *libs_at_peak(const struct ga_report *r)
{
    const struct ga_library *v = r->views.libs_at_peak;
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->views.n_libs_at_peak; i++) {
        jobj *o = json_object_new_object();
        const char *path = v[i].module == GA_NO_MODULE ? NULL : r->stacks.mods[v[i].module].path;
        put(o, "library", ga_json_str(path));
        put(o, "name", path ? ga_json_str(r->stacks.mods[v[i].module].name) : NULL);
        amount(o, v[i].st.peak_bytes, v[i].st.peak_count);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *top_allocs(const struct ga_report *r, const struct ga_peak_breakdown *p)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < p->n_top; i++) {
        const struct ga_peak_alloc *x = &p->top[i];
        jobj *o = json_object_new_object();
        put(o, "address", ju64(x->addr));
        put(o, "bytes", ju64(x->size));
        put(o, "api", api_name(x->api));
        put(o, "device", json_object_new_int64(x->device));
        put(o, "time_ns", json_object_new_int64(ga_report_rel(r, x->ts)));
        put(o, "freed_time_ns",
            x->free_ts ? json_object_new_int64(ga_report_rel(r, x->free_ts)) : NULL);
        put(o, "site", stack_site(r, x->stack));
        json_object_array_add(a, o);
    }
    return a;
}

/* memory.peak_breakdown.by_category, .by_category_snapshot and _replay (model/view_cats.h). */
static void categories(const struct ga_report *r, jobj *o)
{
    const struct ga_vcats *v = &r->peakcats;
    jobj *a = json_object_new_array(), *s = NULL;
    for (size_t i = 0; i < v->n; i++) {
        jobj *e = json_object_new_object();
        put(e, "category", json_object_new_string(ga_vc_cat_name(v->lines[i].cat)));
        put(e, "source", json_object_new_string(ga_vc_source_name(v->lines[i].source)));
        put(e, "bytes", ju64(v->lines[i].bytes));
        /* a snapshot's points keep bytes per category, not blocks */
        put(e, "count", v->lines[i].source == GA_VC_LIBRARY ? ju64(v->lines[i].count) : NULL);
        json_object_array_add(a, e);
    }
    put(o, "by_category", v->valid ? a : (json_object_put(a), NULL));
    put(o, "by_category_temporaries_left", ju64(v->temps_left));
    if (v->snapshot_ts) {
        s = json_object_new_object();
        put(s, "time_ns", json_object_new_int64(ga_report_rel(r, v->snapshot_ts)));
        put(s, "reserved_bytes", ju64(v->snapshot_reserved));
        put(s, "pytorch_reserved_at_peak", ju64(v->pytorch_bytes));
    }
    put(o, "by_category_snapshot", s);
    s = NULL;
    if (v->replay_ts) {
        s = json_object_new_object();
        put(s, "time_ns", json_object_new_int64(ga_report_rel(r, v->replay_ts)));
        put(s, "allocated_bytes", ju64(v->replay_allocated));
        put(s, "reserved_bytes", ju64(v->pytorch_bytes));
    }
    put(o, "by_category_replay", s);
}

/* memory.category_series (model/view_cats.h): null without categories. */
static jobj *category_series(const struct ga_report *r)
{
    const struct ga_vcats *v = &r->peakcats;
    if (!v->n_points) return NULL;
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_points; i++) {
        const struct ga_vc_point *p = &v->points[i];
        jobj *e = json_object_new_object();
        put(e, "time_ns", json_object_new_int64(ga_report_rel(r, p->ts)));
        put(e, "at", json_object_new_string(ga_vc_at_name(p->at)));
        put(e, "total_bytes", ju64(p->total));
        for (unsigned c = 0; c < GA_VC_KINDS; c++)
            put(e, ga_vc_cat_name(c), ju64(p->bytes[c]));
        json_object_array_add(a, e);
    }
    return a;
}

static jobj *breakdown(const struct ga_report *r)
{
    const struct ga_memory *m = &r->mem;
    const struct ga_peak_breakdown *p = &m->peak;
    jobj *o = json_object_new_object(), *api = json_object_new_array(),
         *cls = json_object_new_array(), *dev = json_object_new_array();
    put(o, "peak_bytes", ju64(m->peak_total));
    put(o, "peak_time_ns", p->valid ? json_object_new_int64(ga_report_rel(r, m->peak_ts)) : NULL);
    sites_by(r, GA_SITES_BY_PEAK, o, "by_site");
    put(o, "no_stack", amount(json_object_new_object(), p->no_stack.bytes, p->no_stack.count));
    put(o, "by_library", libs_at_peak(r));
    categories(r, o);
    for (unsigned i = 0; i < GT_API_MAX; i++) {
        if (!p->by_api[i].bytes && !p->by_api[i].count) continue;
        jobj *e = json_object_new_object();
        put(e, "api", api_name(i));
        json_object_array_add(api, amount(e, p->by_api[i].bytes, p->by_api[i].count));
    }
    put(o, "by_api", api);
    for (unsigned c = 0; c < GA_SIZE_CLASSES; c++) {
        if (!p->by_class[c].count) continue;
        jobj *e = json_object_new_object();
        put(e, "class", json_object_new_string(ga_size_class_name(c)));
        json_object_array_add(cls, amount(e, p->by_class[c].bytes, p->by_class[c].count));
    }
    put(o, "by_size_class", cls);
    for (size_t i = 0; i < p->n_by_device; i++) {
        jobj *e = json_object_new_object();
        put(e, "device", json_object_new_int64(p->by_device[i].device));
        json_object_array_add(dev, amount(e, p->by_device[i].bytes, p->by_device[i].count));
    }
    put(o, "by_device", dev);
    put(o, "largest_allocations", top_allocs(r, p));
    return o;
}

void ga_json_peak(const struct ga_report *r, jobj *memory)
{
    jobj *t = json_object_new_object();
    put(memory, "peak_breakdown", breakdown(r));
    put(memory, "category_series", category_series(r));
    sites_by(r, GA_SITES_BY_LEAK, memory, "leaks");
    put(t, "count", ju64(r->mem.temp_count));
    put(t, "bytes", ju64(r->mem.temp_bytes));
    put(memory, "temporary_allocations", t);
    sites_by(r, GA_SITES_BY_TEMP, memory, "temporaries");
}

static const char *retry_name(enum ga_retry x)
{
    return x == GA_RETRY_OK ? "succeeded" : x == GA_RETRY_FAILED ? "failed" : "none";
}

/* The holders at the failed allocation (the model's view: grouped by site, largest first). */
static jobj *holders(const struct ga_report *r, const struct ga_oom_view *v)
{
    jobj *a = json_object_new_array();
    for (size_t k = 0; k < v->n_holders; k++) {
        const struct ga_holder_view *h = &v->holders[k];
        jobj *o = h->site ? ga_json_site(r, h->site, h->stack) : stack_site(r, h->stack);
        json_object_array_add(a, amount(o, h->bytes, h->count));
    }
    return a;
}

void ga_json_oom_evidence(const struct ga_report *r, const struct ga_oom *x,
                          const struct ga_oom_view *v, jobj *o)
{
    put(o, "overhead_estimate_bytes", ju64(x->overhead));
    put(o, "others_bytes", ju64(x->others));
    if (x->have_pools) {
        jobj *p = json_object_new_object();
        put(p, "pools", ju64(x->pools.pools));
        put(p, "reserved_unused_bytes", ju64(x->pools.reserved_unused));
        put(p, "largest_free_bytes", ju64(x->pools.largest_free));
        put(p, "pool", x->pools.pool ? ju64(x->pools.pool) : NULL);
        put(p, "pool_name", ga_json_str(x->pools.pool_name));
        put(o, "pools", p);
    } else {
        put(o, "pools", NULL);
    }
    jobj *rt = json_object_new_object();
    put(rt, "outcome", json_object_new_string(retry_name(x->retry)));
    put(rt, "freed_bytes", ju64(x->freed_before_retry));
    put(rt, "freed_count", ju64(x->freed_count));
    put(rt, "time_ns", x->retry ? json_object_new_int64(ga_report_rel(r, x->retry_ts)) : NULL);
    put(rt, "requested_bytes", x->retry ? ju64(x->retry_size) : NULL);
    put(o, "retry", rt);
    char adv[512];
    put(o, "advice", json_object_new_string(ga_report_oom_advice(r, x, adv, sizeof(adv))));
    put(o, "site", stack_site(r, x->stack));
    put(o, "top_holders", v->have_holders ? holders(r, v) : NULL);
    put(o, "repeat_of", v->repeat_of >= 0 ? ju64((uint64_t)v->repeat_of) : NULL);
}
