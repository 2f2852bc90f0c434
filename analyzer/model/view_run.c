/* The run's view (view_run.h): the facts, the reader's statistics and the timeline's counts
 * copied into the model's structs. Strings point into the analyses' results, which live as long
 * as the report; kernel names are demangled here (the only copies this view owns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view_run.h"
#include "analyses/facts.h"
#include "analyses/gpu.h"
#include "analyses/timeline.h"
#include "input/reader.h"
#include "base/demangle.h"
#include "base/util.h"

static void process(struct ga_vrun *v, const struct ga_read_stats *rs, const struct ga_facts *f)
{
    v->pid = f->have_process ? f->pid : rs->header.pid;
    v->ppid = f->have_process ? f->ppid : rs->header.ppid;
    v->argv = (const char *const *)f->argv;
    v->argc = f->argc;
    v->host = f->host;
    v->exe = f->exe;
    v->clean_end = f->have_end;
    if (f->have_end) {
        v->end_reason = f->end.reason == GT_END_EXIT       ? "exit"
                        : f->end.reason == GT_END_DISABLED ? "disabled"
                                                           : "unknown";
        v->records_written = f->end.records;
    }
    v->have_driver = f->have_driver;
    v->driver_version = f->driver_version;
    v->device_count = f->device_count;
}

static void trace(struct ga_vrun *v, const struct ga_read_stats *rs, const struct ga_facts *f)
{
    v->format_version = rs->header.version;
    v->header_pid = rs->header.pid;
    v->start_realtime_ns = rs->header.start_realtime_ns;
    v->records = rs->records;
    v->chunks = rs->chunks;
    v->gpu_chunks = rs->gpu_chunks;
    v->gpu_records = rs->gpu_records;
    v->unknown_records = rs->unknown_records;
    v->malformed_records = rs->malformed_records;
    v->late_records = rs->late_records;
    v->duplicate_chunks = rs->duplicate_chunks;
    v->lost_records = f->lost_records;
    v->truncated = rs->truncated;
    v->concatenated = rs->concatenated;
    v->stop_reason = rs->stop_reason;
    v->have_cupti = f->have_cupti;
    if (!f->have_cupti) return;
    v->cupti_status = ga_cupti_status_name(f->cupti.h.sub);
    v->cupti_version = f->cupti.version;
    v->cupti_result = f->cupti.result;
    v->cupti_clock_offset_ns = f->cupti.clock_offset_ns;
    v->cupti_path = f->cupti_path;
    v->cupti_reason = f->cupti_reason;
}

static void devices(struct ga_vrun *v, const struct ga_facts *f)
{
    v->devices = ga_xmalloc((f->n_devices + 1) * sizeof(*v->devices));
    v->n_devices = f->n_devices;
    for (size_t i = 0; i < f->n_devices; i++) {
        const struct ga_device_info *d = &f->devices[i];
        struct ga_vrun_device *o = &v->devices[i];
        int any = 0;
        *o = (struct ga_vrun_device){.ordinal = d->ordinal,
                                     .cc_major = d->cc_major,
                                     .cc_minor = d->cc_minor,
                                     .name = d->name,
                                     .total_bytes = d->total_bytes};
        for (int k = 0; k < 16; k++) {
            snprintf(o->uuid + 2 * k, 3, "%02x", d->uuid[k]);
            any |= d->uuid[k];
        }
        if (!any) o->uuid[0] = 0;
    }
    v->threads = ga_xmalloc((f->n_threads + 1) * sizeof(*v->threads));
    v->n_threads = f->n_threads;
    for (size_t i = 0; i < f->n_threads; i++)
        v->threads[i] = (struct ga_vrun_thread){f->threads[i].tid, f->threads[i].name};
}

static void api_name(unsigned api, char name[64])
{
    char lb[16];
    snprintf(name, 64, "%s", ga_api_label(api, lb));
}

static const char *family(unsigned api)
{
    static const char *const fam[] = {
        [GT_FAM_SYNC] = "sync", [GT_FAM_COPY] = "copy", [GT_FAM_WAIT] = "wait",
        [GT_FAM_ENQUEUE] = "async"};
    unsigned f = api < GT_API_MAX ? gt_api_table[api].family : GT_API_MAX;
    return f <= GT_FAM_ENQUEUE && fam[f] ? fam[f] : "other";
}

/* The APIs with calls in `per` (count or failed not 0), in the API table's order. */
static struct ga_vrun_api *by_api(const struct ga_api_calls *per, size_t *n)
{
    struct ga_vrun_api *a = ga_xmalloc(GT_API_MAX * sizeof(*a));
    *n = 0;
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        if (!per[api].count && !per[api].failed) continue;
        struct ga_vrun_api *o = &a[(*n)++];
        api_name(api, o->name);
        o->count = per[api].count;
        o->failed = per[api].failed;
        o->total_ns = per[api].total_ns;
        o->bytes = per[api].bytes;
        o->family = family(api);
    }
    return a;
}

static void calls(struct ga_vrun *v, const struct ga_timeline *tl, const struct ga_gpu *g)
{
    v->launch_count = tl->launch_count;
    v->launch_failed = tl->launch_failed;
    v->span_count = tl->span_count;
    v->launches = by_api(tl->launch, &v->n_launches);
    v->spans = by_api(tl->span, &v->n_spans);
    v->gpu_kernel_count = g->kernel_count;
    v->n_kernel_names = tl->n_kernels;
    for (size_t i = 0; i < tl->n_kernels && i < GA_VRUN_KERNELS; i++) {
        char *d = ga_demangle(tl->kernels[i].name);
        v->kernels[i].name = d ? d : ga_xstrdup(tl->kernels[i].name);
        v->kernels[i].count = tl->kernels[i].count;
        v->n_kernels_kept = i + 1;
    }
}

static void resolve_copy(struct ga_vrun_resolve *o, const struct ga_resolve_how *c, unsigned how)
{
    *o = (struct ga_vrun_resolve){.how = how < 4 ? ga_resolve_how_name(how) : NULL,
                                  .other = how == 0,
                                  .lookups = c->lookups,
                                  .wrapped = c->wrapped,
                                  .passed_through = c->passed_through,
                                  .not_found = c->not_found};
}

static void resolver(struct ga_vrun *v, const struct ga_facts *f)
{
    resolve_copy(&v->resolve_total, &f->resolve_total, 4);
    for (unsigned how = 0; how < 4; how++)
        if (f->resolve[how].lookups)
            resolve_copy(&v->resolve[v->n_resolve++], &f->resolve[how], how);
    v->objects = ga_xmalloc(GT_API_MAX * sizeof(*v->objects));
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const uint64_t *c = f->objects[api];
        if (!c[0] && !c[1]) continue;
        struct ga_vrun_api *o = &v->objects[v->n_objects++];
        *o = (struct ga_vrun_api){.count = c[0], .failed = c[1]};
        api_name(api, o->name);
    }
}

static void notes(struct ga_vrun *v, const struct ga_facts *f, uint64_t t0)
{
    v->notes = ga_xmalloc((f->n_notes + 1) * sizeof(*v->notes));
    v->n_notes = f->n_notes;
    for (size_t i = 0; i < f->n_notes; i++) {
        const struct ga_note *n = &f->notes[i];
        v->notes[i] = (struct ga_vrun_note){.ns = (int64_t)(n->ts - t0),
                                            .tid = n->tid,
                                            .warning = n->level == GT_NOTE_WARNING,
                                            .text = n->text};
    }
    v->notes_dropped = f->notes_dropped;
}

void ga_vrun_build(struct ga_vrun *v, const char *path, const struct ga_read_stats *rs,
                   const struct ga_facts *f, const struct ga_timeline *tl, const struct ga_gpu *g,
                   uint64_t t0, uint64_t duration_ns)
{
    memset(v, 0, sizeof(*v));
    v->path = path;
    v->duration_ns = duration_ns;
    v->cupti_dropped = g->dropped;
    process(v, rs, f);
    trace(v, rs, f);
    devices(v, f);
    calls(v, tl, g);
    resolver(v, f);
    notes(v, f, t0);
}

void ga_vrun_free(struct ga_vrun *v)
{
    for (size_t i = 0; i < v->n_kernels_kept; i++)
        free(v->kernels[i].name);
    free(v->devices);
    free(v->threads);
    free(v->launches);
    free(v->spans);
    free(v->objects);
    free(v->notes);
    memset(v, 0, sizeof(*v));
}
