/* JSON: device_state, the device state from NVML (docs/REPORT_JSON.md, "device_state"). */
#include <stdlib.h>

#include "render/json.h"
#include "base/util.h"

static jobj *reasons(const struct ga_nvml_device *d)
{
    jobj *a = json_object_new_array();
    for (unsigned b = 0; b < GA_NVML_REASONS; b++) {
        if (!d->reason_ns[b]) continue;
        jobj *o = json_object_new_object();
        put(o, "reason", json_object_new_string(ga_nvml_reason_name(b)));
        put(o, "slow_ns", ju64(d->reason_ns[b]));
        put(o, "slow_busy_ns", ju64(d->reason_busy_ns[b]));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *reason_names(uint64_t bits)
{
    jobj *a = json_object_new_array();
    for (unsigned b = 0; b < GA_NVML_REASONS; b++)
        if (bits >> b & 1) json_object_array_add(a, json_object_new_string(ga_nvml_reason_name(b)));
    return a;
}

/* {samples_per_point, points[{time_ns, sm_mhz, reasons[], mem_used_bytes}]} (GA_NVML_POINTS_MAX) */
static jobj *series(const struct ga_report *r, const struct ga_nvml_device *d)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "samples_per_point", ju64(d->points ? d->per_point : 1));
    for (size_t i = 0; i < d->n_points; i++) {
        const struct ga_nvml_point *p = &d->points[i];
        jobj *e = json_object_new_object();
        put(e, "time_ns", json_object_new_int64(ga_report_rel(r, p->ts)));
        put(e, "sm_mhz", p->sm_mhz == UINT32_MAX ? NULL : ju64(p->sm_mhz));
        put(e, "reasons", reason_names(p->reasons));
        put(e, "mem_used_bytes", p->mem_used == UINT64_MAX ? NULL : ju64(p->mem_used));
        json_object_array_add(a, e);
    }
    put(o, "points", a);
    return o;
}

/* Kernels slower below the maximum SM clock (ga_nvml_slow_kernels): [{name, slow_count,
 * slow_mean_ns, full_count, full_mean_ns, extra_ns}]. */
static jobj *slow_kernels(const struct ga_report *r, const struct ga_nvml_device *d)
{
    const struct ga_nvml_kname *v[GA_NVML_SLOW_KERNELS];
    size_t n = ga_nvml_slow_kernels(d, v, GA_NVML_SLOW_KERNELS);
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        const struct ga_nvml_kname *k = v[i];
        const char *name = ga_report_kernel_name(r, k->name_id);
        jobj *o = json_object_new_object();
        put(o, "name", name ? ga_json_str(name) : NULL);
        put(o, "slow_count", ju64(k->n[1]));
        put(o, "slow_mean_ns", ju64(k->ns[1] / k->n[1]));
        put(o, "full_count", ju64(k->n[0]));
        put(o, "full_mean_ns", ju64(k->ns[0] / k->n[0]));
        put(o, "extra_ns", ju64((uint64_t)ga_nvml_kname_extra(k)));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *device(const struct ga_report *r, const struct ga_nvml_device *d)
{
    jobj *o = json_object_new_object();
    put(o, "device", ji64(d->device));
    put(o, "matched", json_object_new_boolean(!d->unmatched));
    put(o, "nvml_index", d->unmatched ? NULL : ju64(d->nvml_index));
    put(o, "uuid", ga_json_str(d->uuid));
    put(o, "max_sm_mhz", ju64(d->max_sm_mhz));
    put(o, "max_mem_mhz", ju64(d->max_mem_mhz));
    put(o, "samples", ju64(d->samples));
    put(o, "covered_ns", ju64(d->covered_ns));
    put(o, "slow_ns", ju64(d->slow_ns));
    put(o, "busy_ns", ju64(d->busy_ns));
    put(o, "slow_busy_ns", ju64(d->slow_busy_ns));
    put(o, "busy_not_laid_ns", ju64(d->busy_dropped_ns));
    put(o, "reasons", reasons(d));
    put(o, "min_sm_mhz", d->samples ? ju64(d->min_sm_mhz) : NULL);
    put(o, "max_temp_c", d->samples ? ju64(d->max_temp_c) : NULL);
    put(o, "max_power_mw", d->samples ? ju64(d->max_power_mw) : NULL);
    put(o, "power_limit_mw", d->samples ? ju64(d->power_limit_mw) : NULL);
    put(o, "series", series(r, d));
    put(o, "slow_kernels", slow_kernels(r, d));
    put(o, "kernel_names_dropped", ju64(d->kernels_dropped));
    return o;
}

jobj *ga_json_device_state(const struct ga_report *r)
{
    static const char *const status[] = {"none", "available", "absent", "failed"};
    const struct ga_nvml *x = &r->nvml;
    jobj *o = json_object_new_object();
    jobj *a = json_object_new_array();
    put(o, "nvml", json_object_new_string(status[x->status & 3]));
    put(o, "reason", x->why[0] ? ga_json_str(x->why) : NULL);
    for (size_t i = 0; i < x->n_devices; i++)
        json_object_array_add(a, device(r, &x->devices[i]));
    put(o, "devices", a);
    return o;
}

jobj *ga_json_oom_processes(const struct ga_report *r, const struct ga_oom *x)
{
    size_t n = 0;
    const struct ga_nvml_proc *p = ga_nvml_procs_after(&r->nvml, x->device, x->ts, &n);
    if (!p) return NULL;
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        jobj *o = json_object_new_object();
        put(o, "pid", ju64(p[i].pid));
        put(o, "name", p[i].name[0] ? ga_json_str(p[i].name) : NULL);
        put(o, "bytes", p[i].bytes == UINT64_MAX ? NULL : ju64(p[i].bytes));
        put(o, "this_process",
            json_object_new_boolean(r->facts.have_process && p[i].pid == r->facts.pid));
        json_object_array_add(a, o);
    }
    return a;
}
