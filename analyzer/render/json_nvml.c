/* JSON: device_state, the device state from NVML (docs/REPORT_JSON.md, "device_state"). Reads
 * the NVML view alone (model/view_nvml.h). */
#include <stdlib.h>

#include "render/json_put.h"
#include "render/nvml.h"
#include "base/util.h"

static jobj *reasons(const struct ga_vnvml *v, const struct ga_vnvml_device *d)
{
    jobj *a = json_object_new_array();
    for (unsigned b = 0; b < GA_VNVML_REASONS; b++) {
        if (!d->reason_ns[b]) continue;
        jobj *o = json_object_new_object();
        put(o, "reason", json_object_new_string(v->reason_names[b]));
        put(o, "slow_ns", ju64(d->reason_ns[b]));
        put(o, "slow_busy_ns", ju64(d->reason_busy_ns[b]));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *reason_names(const struct ga_vnvml *v, uint64_t bits)
{
    jobj *a = json_object_new_array();
    for (unsigned b = 0; b < GA_VNVML_REASONS; b++)
        if (bits >> b & 1) json_object_array_add(a, json_object_new_string(v->reason_names[b]));
    return a;
}

/* {samples_per_point, points[{time_ns, sm_mhz, reasons[], mem_used_bytes}]} (GA_NVML_POINTS_MAX) */
static jobj *series(const struct ga_vnvml *v, const struct ga_vnvml_device *d)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "samples_per_point", ju64(d->samples_per_point));
    for (size_t i = 0; i < d->n_points; i++) {
        const struct ga_vnvml_point *p = &d->points[i];
        jobj *e = json_object_new_object();
        put(e, "time_ns", json_object_new_int64(p->ns));
        put(e, "sm_mhz", p->sm_mhz == UINT32_MAX ? NULL : ju64(p->sm_mhz));
        put(e, "reasons", reason_names(v, p->reasons));
        put(e, "mem_used_bytes", p->mem_used == UINT64_MAX ? NULL : ju64(p->mem_used));
        json_object_array_add(a, e);
    }
    put(o, "points", a);
    return o;
}

/* Kernels slower below the maximum SM clock, the most time lost first: [{name, slow_count,
 * slow_mean_ns, full_count, full_mean_ns, extra_ns}]. */
static jobj *slow_kernels(const struct ga_vnvml_device *d)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < d->n_kernels; i++) {
        const struct ga_vnvml_kernel *k = &d->kernels[i];
        jobj *o = json_object_new_object();
        put(o, "name", k->name ? ga_json_str(k->name) : NULL);
        put(o, "slow_count", ju64(k->slow_count));
        put(o, "slow_mean_ns", ju64(k->slow_mean_ns));
        put(o, "full_count", ju64(k->full_count));
        put(o, "full_mean_ns", ju64(k->full_mean_ns));
        put(o, "extra_ns", ju64(k->extra_ns));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *device(const struct ga_vnvml *v, const struct ga_vnvml_device *d)
{
    jobj *o = json_object_new_object();
    put(o, "device", ji64(d->device));
    put(o, "matched", json_object_new_boolean(d->matched));
    put(o, "nvml_index", !d->matched ? NULL : ju64(d->nvml_index));
    put(o, "uuid", ga_json_str(d->uuid));
    put(o, "max_sm_mhz", ju64(d->max_sm_mhz));
    put(o, "max_mem_mhz", ju64(d->max_mem_mhz));
    put(o, "samples", ju64(d->samples));
    put(o, "covered_ns", ju64(d->covered_ns));
    put(o, "slow_ns", ju64(d->slow_ns));
    put(o, "busy_ns", ju64(d->busy_ns));
    put(o, "slow_busy_ns", ju64(d->slow_busy_ns));
    put(o, "busy_not_laid_ns", ju64(d->busy_not_laid_ns));
    put(o, "busy_unsampled_ns", ju64(d->busy_unsampled_ns));
    put(o, "reasons", reasons(v, d));
    put(o, "min_sm_mhz", d->samples ? ju64(d->min_sm_mhz) : NULL);
    put(o, "max_temp_c", d->samples ? ju64(d->max_temp_c) : NULL);
    put(o, "max_power_mw", d->samples ? ju64(d->max_power_mw) : NULL);
    put(o, "power_limit_mw", d->samples ? ju64(d->power_limit_mw) : NULL);
    put(o, "series", series(v, d));
    put(o, "slow_kernels", slow_kernels(d));
    put(o, "kernel_names_dropped", ju64(d->kernels_dropped));
    return o;
}

jobj *ga_json_device_state(const struct ga_vnvml *x)
{
    jobj *o = json_object_new_object();
    jobj *a = json_object_new_array();
    put(o, "nvml", json_object_new_string(x->status_name));
    put(o, "reason", x->why[0] ? ga_json_str(x->why) : NULL);
    for (size_t i = 0; i < x->n_devices; i++)
        json_object_array_add(a, device(x, &x->devices[i]));
    put(o, "devices", a);
    put(o, "busy_known", json_object_new_boolean(x->busy_known));
    put(o, "kernels_unsampled",
        x->kernels_unsampled == UINT64_MAX ? NULL : ju64(x->kernels_unsampled));
    return o;
}

jobj *ga_json_oom_processes(const struct ga_vnvml *v, size_t oom)
{
    const struct ga_vnvml_listing *l = &v->oom_procs[oom];
    const struct ga_vnvml_proc *p = l->procs;
    if (!p) return NULL;
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < l->n; i++) {
        jobj *o = json_object_new_object();
        put(o, "pid", ju64(p[i].pid));
        put(o, "name", p[i].name ? ga_json_str(p[i].name) : NULL);
        put(o, "bytes", p[i].bytes == UINT64_MAX ? NULL : ju64(p[i].bytes));
        put(o, "this_process", json_object_new_boolean(p[i].this_process));
        json_object_array_add(a, o);
    }
    return a;
}
