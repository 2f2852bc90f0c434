/* --json: the GPU timeline parts of `timeline` (docs/REPORT_JSON.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "util.h"

typedef struct json_object jobj;

static void put(jobj *o, const char *key, jobj *v)
{
    json_object_object_add(o, key, v);
}

static jobj *ju64(uint64_t v)
{
    return json_object_new_uint64(v);
}

static jobj *ji64(int64_t v)
{
    return json_object_new_int64(v);
}

/* A ratio rounded to 6 decimals (JSON stays readable, nothing a script needs is lost). */
static jobj *jratio(double v)
{
    return json_object_new_double(round(v * 1e6) / 1e6);
}

static jobj *jclean(const char *s)
{
    char *c = ga_utf8_clean(s, strlen(s));
    jobj *o = json_object_new_string(c);
    free(c);
    return o;
}

static jobj *kernel_obj(const char *name, const char *demangled, uint64_t count, uint64_t total,
                        uint64_t max)
{
    jobj *o = json_object_new_object();
    put(o, "name", jclean(name));
    put(o, "demangled", jclean(demangled));
    put(o, "count", ju64(count));
    put(o, "total_ns", ju64(total));
    put(o, "mean_ns", ju64(count ? total / count : 0));
    put(o, "max_ns", ju64(max));
    return o;
}

/* Without GPU kernels: every kernel name launched, by launch count, GPU times 0. */
static jobj *kernels_by_launches(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->tl.n_kernels; i++) {
        const struct ga_kernel *k = &r->tl.kernels[i];
        char *d = ga_demangle(k->name);
        json_object_array_add(a, kernel_obj(k->name, d ? d : k->name, k->count, 0, 0));
        free(d);
    }
    return a;
}

jobj *ga_json_top_kernels(const struct ga_report *r)
{
    if (!r->gpu.kernel_count) return kernels_by_launches(r);
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->gpu.n_kernels; i++) {
        const struct ga_gpu_kstat *k = &r->gpu.kernels[i];
        json_object_array_add(a,
                              kernel_obj(k->name, k->demangled, k->count, k->total_ns, k->max_ns));
    }
    return a;
}

static jobj *streams(const struct ga_gpu_device *d)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < d->n_streams; i++) {
        jobj *o = json_object_new_object();
        put(o, "stream", ju64(d->streams[i].stream));
        put(o, "kernel_count", ju64(d->streams[i].kernels));
        put(o, "busy_ns", ju64(d->streams[i].busy_ns));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *devices(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->gpu.n_devices; i++) {
        const struct ga_gpu_device *d = &r->gpu.devices[i];
        uint64_t span = d->last - d->first;
        jobj *o = json_object_new_object();
        put(o, "device", ju64(d->device));
        put(o, "span_ns", ju64(span));
        put(o, "busy_ns", ju64(d->busy_ns));
        put(o, "idle_ns", ju64(span - d->busy_ns));
        put(o, "utilization", span ? jratio((double)d->busy_ns / (double)span) : NULL);
        put(o, "first_ns", ji64(ga_report_rel(r, d->first)));
        put(o, "last_ns", ji64(ga_report_rel(r, d->last)));
        put(o, "kernel_count", ju64(d->kernels));
        put(o, "streams", streams(d));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *sum_obj(const struct ga_gpu_sum *s)
{
    jobj *o = json_object_new_object();
    put(o, "count", ju64(s->count));
    put(o, "bytes", ju64(s->bytes));
    put(o, "total_ns", ju64(s->total_ns));
    return o;
}

static jobj *copies(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (unsigned k = 0; k < GA_COPY_KINDS; k++) {
        const struct ga_gpu_sum *s = &r->gpu.copies[k];
        if (!s->count) continue;
        jobj *o = sum_obj(s);
        put(o, "kind", json_object_new_string(ga_copy_kind_name(k)));
        /* bytes per ns = GB/s (10^9 bytes per second) */
        put(o, "bandwidth_gbps",
            s->total_ns ? jratio((double)s->bytes / (double)s->total_ns) : NULL);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *latency(const struct ga_gpu_link *l)
{
    if (!l->latency_n) return NULL;
    jobj *o = json_object_new_object();
    put(o, "count", ju64(l->latency_n));
    put(o, "min", ji64(l->latency_min));
    put(o, "median", ji64(l->latency_median));
    put(o, "max", ji64(l->latency_max));
    return o;
}

static jobj *linking(const struct ga_report *r)
{
    const struct ga_gpu_link *l = &r->gpu.link;
    jobj *o = json_object_new_object(), *t = json_object_new_array();
    put(o, "kernels", ju64(l->kernels));
    put(o, "linked", ju64(l->linked));
    put(o, "graph_kernels", ju64(l->graph_kernels));
    put(o, "unlinked", ju64(l->unlinked));
    put(o, "launch_latency_ns", latency(l));
    for (size_t i = 0; i < l->n_threads; i++) {
        jobj *x = json_object_new_object();
        put(x, "tid", ju64(l->threads[i].tid));
        put(x, "kernels", ju64(l->threads[i].kernels));
        json_object_array_add(t, x);
    }
    put(o, "by_thread", t);
    return o;
}

void ga_json_gpu_timeline(const struct ga_report *r, jobj *timeline)
{
    put(timeline, "top_kernels_by",
        json_object_new_string(r->gpu.kernel_count ? "gpu_time" : "launch_count"));
    put(timeline, "devices", devices(r));
    put(timeline, "copies", copies(r));
    put(timeline, "memsets", sum_obj(&r->gpu.memsets));
    put(timeline, "linking", linking(r));
    put(timeline, "skipped_activities", ju64(r->gpu.skipped));
}
