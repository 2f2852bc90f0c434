/* The NVML view (view_nvml.h): a copy of the NVML analysis's results in the model's structs. */
#include <stdlib.h>
#include <string.h>

#include "model/view_nvml.h"
#include "analyses/facts.h"
#include "analyses/gpu.h"
#include "analyses/memory.h"
#include "analyses/nvml.h"
#include "base/hashmap.h"
#include "base/util.h"

_Static_assert(GA_VNVML_REASONS == GA_NVML_REASONS, "one figure per clock-event reason");
_Static_assert(GA_VNVML_SLOW_KERNELS == GA_NVML_SLOW_KERNELS, "the slow kernels JSON lists");
_Static_assert((int)GA_VNVML_FAILED == (int)GA_NVML_FAILED, "the same statuses, same values");

/* A kernel's name from its gt_rec_gpu_name id, NULL when never named (as ga_report_kernel_name). */
static const char *kernel_name(const struct ga_gpu *g, uint32_t name_id)
{
    const uint64_t *i = ga_map_find(&g->name_idx, name_id, 0);
    return i && *i < g->n_names ? g->names[*i] : NULL;
}

static void device(struct ga_vnvml_device *o, const struct ga_nvml_device *d,
                   const struct ga_gpu *g, uint64_t t0)
{
    *o = (struct ga_vnvml_device){
        .device = d->device,
        .matched = !d->unmatched,
        .nvml_index = d->nvml_index,
        .max_sm_mhz = d->max_sm_mhz,
        .max_mem_mhz = d->max_mem_mhz,
        .samples = d->samples,
        .min_sm_mhz = d->min_sm_mhz,
        .max_temp_c = d->max_temp_c,
        .max_power_mw = d->max_power_mw,
        .power_limit_mw = d->power_limit_mw,
        .covered_ns = d->covered_ns,
        .slow_ns = d->slow_ns,
        .busy_ns = d->busy_ns,
        .slow_busy_ns = d->slow_busy_ns,
        .busy_not_laid_ns = d->busy_dropped_ns,
        .busy_unsampled_ns = d->busy_unsampled_ns,
        .samples_per_point = d->points ? d->per_point : 1,
        .n_points = d->n_points,
        .kernels_dropped = d->kernels_dropped,
    };
    memcpy(o->uuid, d->uuid, sizeof(o->uuid));
    memcpy(o->reason_ns, d->reason_ns, sizeof(o->reason_ns));
    memcpy(o->reason_busy_ns, d->reason_busy_ns, sizeof(o->reason_busy_ns));
    o->points = ga_xmalloc(d->n_points * sizeof(*o->points) + 1);
    for (size_t i = 0; i < d->n_points; i++) {
        const struct ga_nvml_point *p = &d->points[i];
        o->points[i] = (struct ga_vnvml_point){
            (int64_t)(p->ts - t0), p->sm_mhz, p->reasons, p->mem_used};
    }
    const struct ga_nvml_kname *k[GA_NVML_SLOW_KERNELS];
    o->n_kernels = ga_nvml_slow_kernels(d, k, GA_NVML_SLOW_KERNELS);
    for (size_t i = 0; i < o->n_kernels; i++)
        o->kernels[i] = (struct ga_vnvml_kernel){
            .name = kernel_name(g, k[i]->name_id),
            .slow_count = k[i]->n[1],
            .slow_mean_ns = k[i]->ns[1] / k[i]->n[1],
            .full_count = k[i]->n[0],
            .full_mean_ns = k[i]->ns[0] / k[i]->n[0],
            .extra_ns = (uint64_t)ga_nvml_kname_extra(k[i]),
        };
}

static void listing(struct ga_vnvml_listing *o, const struct ga_nvml *nv,
                    const struct ga_facts *f, const struct ga_oom *x)
{
    size_t n = 0;
    const struct ga_nvml_proc *p = ga_nvml_procs_after(nv, x->device, x->ts, &n);
    *o = (struct ga_vnvml_listing){0};
    if (!p) return;
    o->n = n;
    o->procs = ga_xmalloc(n * sizeof(*o->procs) + 1);
    for (size_t i = 0; i < n; i++)
        o->procs[i] = (struct ga_vnvml_proc){
            .pid = p[i].pid,
            .name = p[i].name[0] ? p[i].name : NULL,
            .bytes = p[i].bytes,
            .this_process = f->have_process && p[i].pid == f->pid,
        };
}

void ga_vnvml_build(struct ga_vnvml *v, const struct ga_nvml *x, const struct ga_memory *m,
                    const struct ga_facts *f, const struct ga_gpu *g, uint64_t t0)
{
    static const char *const status[] = {"none", "available", "absent", "failed"};
    memset(v, 0, sizeof(*v));
    v->status = (unsigned)x->status & 3;
    v->status_name = status[v->status];
    v->why = x->why;
    for (unsigned b = 0; b < GA_VNVML_REASONS; b++)
        v->reason_names[b] = ga_nvml_reason_name(b);
    v->n_devices = x->n_devices;
    v->devices = ga_xmalloc(x->n_devices * sizeof(*v->devices) + 1);
    for (size_t i = 0; i < x->n_devices; i++)
        device(&v->devices[i], &x->devices[i], g, t0);
    v->kernels_unsampled = v->status == GA_VNVML_AVAILABLE ? x->early_dropped : UINT64_MAX;
    v->busy_known = f->have_cupti && f->cupti.h.sub == GT_CUPTI_ON;
    v->n_ooms = m->n_ooms;
    v->oom_procs = ga_xmalloc(m->n_ooms * sizeof(*v->oom_procs) + 1);
    for (size_t i = 0; i < m->n_ooms; i++)
        listing(&v->oom_procs[i], x, f, &m->ooms[i]);
}

void ga_vnvml_free(struct ga_vnvml *v)
{
    for (size_t i = 0; i < v->n_devices; i++)
        free(v->devices[i].points);
    for (size_t i = 0; i < v->n_ooms; i++)
        free(v->oom_procs[i].procs);
    free(v->devices);
    free(v->oom_procs);
    memset(v, 0, sizeof(*v));
}
