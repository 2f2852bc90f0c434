/* --json: the timeline section's host side (launches and blocking calls by API), with the GPU
 * timeline's fields (json_gpu.c) added (docs/REPORT_JSON.md). */
#include "render/json.h"

static jobj *jname(const char *s)
{
    return json_object_new_string(s);
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
    put(o, "top_kernels", ga_json_top_kernels(r));
    put(o, "spans", spans(r));
    ga_json_gpu_timeline(r, o);
    return o;
}
