/* --chrome-trace: one pass over the trace, writing each event as the analyses see it.
 *
 * Dialect (PyTorch profiler / Kineto, what Holistic Trace Analysis parses): complete events
 * ("ph":"X") with "ts"/"dur" in microseconds (three decimals: nanoseconds); GPU work on pid =
 * device ordinal, tid = CUPTI stream id, categories "kernel", "gpu_memcpy", "gpu_memset" with
 * args device/stream (and, for kernels linked to their launch, "correlation" = the launch's
 * tracer correlation id); host CUDA calls in category "cuda_driver" on pid = process id, tid =
 * thread id, a launch with the same "correlation"; flow events "ac2g" from launch to kernel;
 * counters ("ph":"C") of live device bytes at each allocation and free and of the pools'
 * reserved and used bytes when they change; every idle gap (not only those the report lists) as
 * a "gpu_idle" event on its own track, named by its cause. Host events never carry a "stream"
 * arg: HTA takes every event with one for GPU work.
 *
 * Memory: one entry per (kernel name, function) and per (device, stream) seen; the gaps go to a
 * temporary file as found and are copied out of it at the end; events are written as they come
 * (the JSON array does not need time order). */
#include "render/chrome_trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "base/hashmap.h"
#include "base/demangle.h"
#include "base/util.h"

#define GAP_TRACK_TID 1000000000u /* tid of the idle-gap track on a device (not a stream id) */

struct ct {
    struct ga_report *r;
    FILE *out;
    uint64_t origin;     /* realtime ns of ts 0; 0 until the header is known */
    int64_t shift;       /* monotonic -> ns from origin: + shift */
    uint32_t pid;        /* host process id */
    int first;           /* no event written yet (no comma before it) */
    struct ga_map names; /* (name_id, func) -> 1 + index into name */
    char **name;
    size_t n_name, name_cap;
    struct ga_map tracks;              /* (device, stream) seen: their metadata is written */
    struct ga_map threads;             /* host tid named */
    uint64_t pool_reserved, pool_used; /* the pool counter's last values */
    uint32_t gap_device;               /* put_gap's device */
};

static void put_str(FILE *f, const char *s, size_t n)
{
    ga_put_json_str(f, s, n);
}

/* Microseconds with nanosecond decimals, exact (no floating point). */
static void put_us(FILE *f, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
    fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

static int64_t at(const struct ct *c, uint64_t mono)
{
    return (int64_t)mono + c->shift;
}

/* Opens an event object: `{"ph":"X","cat":...,"name":` is up to the caller after this. */
static void begin(struct ct *c)
{
    fputs(c->first ? "\n" : ",\n", c->out);
    c->first = 0;
}

static void put_x(struct ct *c, const char *cat, const char *name, size_t name_len, uint64_t pid,
                  uint64_t tid, uint64_t ts, uint64_t dur)
{
    begin(c);
    fprintf(c->out, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
    put_str(c->out, name, name_len);
    fprintf(c->out, ",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":", pid, tid);
    put_us(c->out, at(c, ts));
    fputs(",\"dur\":", c->out);
    put_us(c->out, (int64_t)dur);
}

static void put_meta(struct ct *c, const char *what, uint64_t pid, uint64_t tid, const char *name,
                     size_t n)
{
    begin(c);
    fprintf(c->out,
            "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
            ",\"args\":{\"name\":",
            what, pid, tid);
    put_str(c->out, name, n);
    fputs("}}", c->out);
}

static void put_sort(struct ct *c, uint64_t pid, uint64_t index)
{
    begin(c);
    fprintf(c->out,
            "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRIu64
            ",\"tid\":0,\"args\":{\"sort_index\":%" PRIu64 "}}",
            pid, index);
}

/* ---- GPU activities ----------------------------------------------------------------------------
 */

/* The demangled kernel name, once per (GPU name id, launch function). */
static const char *kernel_name(struct ct *c, const struct ga_gpu_act *a)
{
    int added = 0;
    uint64_t *i = ga_map_upsert(&c->names, a->name_id, a->linked ? a->func : ~0ull, 0, &added);
    if (added) {
        const char *raw = ga_gpu_act_name(&c->r->gpu, &c->r->tl, a);
        char *d = ga_demangle(raw);
        c->name = ga_xgrow(c->name, &c->name_cap, c->n_name, sizeof(*c->name));
        c->name[c->n_name++] = d ? d : ga_xstrdup(raw);
        *i = c->n_name;
    }
    return c->name[*i - 1];
}

static void track(struct ct *c, uint32_t device, uint32_t stream)
{
    int added = 0;
    char buf[48];
    ga_map_upsert(&c->tracks, device, stream, 0, &added);
    if (!added) return;
    if (!ga_map_find(&c->tracks, device, GAP_TRACK_TID + 1ull)) {
        ga_map_upsert(&c->tracks, device, GAP_TRACK_TID + 1ull, 0, &added);
        snprintf(buf, sizeof(buf), "GPU %u", device);
        put_meta(c, "process_name", device, 0, buf, strlen(buf));
        put_sort(c, device, 1000u + device);
    }
    snprintf(buf, sizeof(buf), "stream %u", stream);
    put_meta(c, "thread_name", device, stream, buf, strlen(buf));
}

/* Kineto's memcpy names: "Memcpy HtoD (Pageable -> Device)"; the kinds are enough here. */
static void put_copy_name(struct ct *c, const struct ga_gpu_act *a, char *buf, size_t n)
{
    if (a->kind == GA_GPU_MEMSET)
        snprintf(buf, n, "Memset (Device)");
    else
        snprintf(buf, n, "Memcpy %s", ga_copy_kind_name(a->copy_kind));
}

static void on_act(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la)
{
    struct ct *c = ctx;
    char buf[64];
    track(c, a->device, a->stream);
    if (a->kind == GA_GPU_KERNEL) {
        const char *name = kernel_name(c, a);
        put_x(c, "kernel", name, strlen(name), a->device, a->stream, a->start, a->end - a->start);
    } else {
        put_copy_name(c, a, buf, sizeof(buf));
        put_x(c, a->kind == GA_GPU_MEMSET ? "gpu_memset" : "gpu_memcpy", buf, strlen(buf),
              a->device, a->stream, a->start, a->end - a->start);
    }
    fprintf(c->out, ",\"args\":{\"device\":%u,\"stream\":%u", a->device, a->stream);
    if (a->kind != GA_GPU_KERNEL) fprintf(c->out, ",\"bytes\":%" PRIu64, a->bytes);
    if (a->graph_id) fprintf(c->out, ",\"graph id\":%u", a->graph_id);
    if (la) fprintf(c->out, ",\"correlation\":%" PRIu64, la->corr);
    fputs("}}", c->out);
    if (!la) return;
    /* the flow arrow from the launch to its kernel (Kineto's "ac2g") */
    begin(c);
    fprintf(c->out, "{\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":", la->corr,
            c->pid, la->tid);
    put_us(c->out, at(c, la->ts));
    fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}", c->out);
    begin(c);
    fprintf(c->out, "{\"ph\":\"f\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":", la->corr,
            a->device, a->stream);
    put_us(c->out, at(c, a->start));
    fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", c->out);
}

/* ---- host records ------------------------------------------------------------------------------
 */

static void host_call(struct ct *c, const struct ga_event *ev, uint64_t ts, uint64_t dur)
{
    char lb[16];
    const char *name = ga_api_label(ev->sub, lb);
    put_x(c, "cuda_driver", name, strlen(name), c->pid, ev->tid, ts, dur);
}

static void live_counter(struct ct *c, uint64_t ts)
{
    begin(c);
    fprintf(c->out,
            "{\"ph\":\"C\",\"name\":\"device memory\",\"pid\":%u,\"tid\":0,\"ts\":", c->pid);
    put_us(c->out, at(c, ts));
    fprintf(c->out, ",\"args\":{\"live bytes\":%" PRIu64 "}}", c->r->mem.live_total);
}

/* The pools' reserved and used bytes over all devices (annotated and stream-ordered pools), as
 * a counter written when they change. */
static void pool_counter(struct ct *c, uint64_t ts)
{
    const struct ga_pools *p = &c->r->pools;
    uint64_t reserved = 0, used = 0;
    for (size_t i = 0; i < p->ndev; i++) {
        reserved += p->devs[i].now.reserved + p->devs[i].stream_reserved;
        used += p->devs[i].now.used + p->devs[i].stream_used;
    }
    if (reserved == c->pool_reserved && used == c->pool_used) return;
    c->pool_reserved = reserved;
    c->pool_used = used;
    begin(c);
    fprintf(c->out, "{\"ph\":\"C\",\"name\":\"pool memory\",\"pid\":%u,\"tid\":0,\"ts\":", c->pid);
    put_us(c->out, at(c, ts));
    fprintf(c->out, ",\"args\":{\"reserved bytes\":%" PRIu64 ",\"used bytes\":%" PRIu64 "}}",
            reserved, used);
}

static void on_thread(struct ct *c, const struct ga_event *ev)
{
    int added = 0;
    ga_map_upsert(&c->threads, ev->r->thread.tid, 0, 0, &added);
    if (added) put_meta(c, "thread_name", c->pid, ev->r->thread.tid, ev->str[0], ev->str_len[0]);
}

static void on_host(struct ct *c, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_LAUNCH: {
        const struct gt_rec_launch *l = &ev->r->launch;
        host_call(c, ev, l->ts, l->dur_ns);
        if (l->result == 0)
            fprintf(c->out, ",\"args\":{\"correlation\":%" PRIu64 "}}", l->corr);
        else
            fprintf(c->out, ",\"args\":{\"result\":%d}}", l->result);
        break;
    }
    case GT_REC_SPAN: {
        const struct gt_rec_span *s = &ev->r->span;
        host_call(c, ev, s->ts_enter, s->ts_exit > s->ts_enter ? s->ts_exit - s->ts_enter : 0);
        fprintf(c->out, ",\"args\":{\"result\":%d}}", s->result);
        break;
    }
    case GT_REC_ALLOC: {
        const struct gt_rec_alloc *a = &ev->r->alloc;
        uint64_t d = a->dur_ns < a->ts ? a->dur_ns : 0;
        host_call(c, ev, a->ts - d, d);
        fprintf(c->out,
                ",\"args\":{\"bytes\":%" PRIu64 ",\"address\":\"0x%" PRIx64 "\",\"device\":%d}}",
                a->size, a->addr, a->device);
        live_counter(c, a->ts);
        break;
    }
    case GT_REC_FREE: {
        const struct gt_rec_free *f = &ev->r->free;
        host_call(c, ev, f->ts, f->dur_ns);
        fprintf(c->out, ",\"args\":{\"address\":\"0x%" PRIx64 "\",\"result\":%d}}", f->addr,
                f->result);
        live_counter(c, f->ts);
        break;
    }
    case GT_REC_ALLOC_FAIL: {
        const struct gt_rec_alloc_fail *a = &ev->r->alloc_fail;
        uint64_t d = a->dur_ns < a->ts ? a->dur_ns : 0;
        host_call(c, ev, a->ts - d, d);
        fprintf(c->out,
                ",\"args\":{\"bytes\":%" PRIu64 ",\"result\":%d,\"device free bytes\":%" PRIu64
                "}}",
                a->size, a->result, a->free_bytes);
        break;
    }
    case GT_REC_THREAD:
        on_thread(c, ev);
        break;
    default:
        break;
    }
    if (ev->type == GT_REC_ALLOC || ev->type == GT_REC_FREE || ev->type == GT_REC_POOL ||
        ev->type == GT_REC_BLOCK || ev->type == GT_REC_POOL_USAGE || ev->type == GT_REC_OBJECT ||
        ev->type == GT_REC_VMM_MAP)
        pool_counter(c, ev->ts);
}

static void start(struct ct *c)
{
    const struct gt_file_header *h = &c->r->read.header;
    if (!c->origin) c->origin = h->start_realtime_ns;
    c->shift = (int64_t)(h->start_realtime_ns - c->origin) - (int64_t)h->start_monotonic_ns;
    c->pid = h->pid;
}

static void sink(void *ctx, const struct ga_event *ev)
{
    struct ct *c = ctx;
    if (!c->r->started) start(c);
    ga_report_event(c->r, ev);
    if (!ga_rec_is_gpu(ev->type)) on_host(c, ev);
}

/* ---- after the pass ----------------------------------------------------------------------------
 */

/* One idle gap, named by its cause. */
static int put_gap(void *ctx, const struct ga_gap *g)
{
    struct ct *c = ctx;
    const char *name = ga_cause_name(g->cause);
    put_x(c, "gpu_idle", name, strlen(name), c->gap_device, GAP_TRACK_TID, g->start, g->dur);
    fputs(",\"args\":{\"cause\":", c->out);
    put_str(c->out, name, strlen(name));
    fputs("}}", c->out);
    return ferror(c->out) ? -1 : 0;
}

/* Every idle gap, streamed back from the gaps' temporary file (ga_gaps_keep_all) one at a time,
 * per device in time order; without that file (no temporary space) the analysis kept them all
 * in memory instead (top = 0). */
static int put_gaps(struct ct *c)
{
    const struct ga_gaps *x = &c->r->gaps;
    for (size_t i = 0; i < x->n_devices; i++) {
        const struct ga_gaps_device *d = &x->devices[i];
        if (!d->n_gaps) continue;
        put_meta(c, "thread_name", d->device, GAP_TRACK_TID, "idle gaps", 9);
        c->gap_device = d->device;
        if (!x->spill) {
            for (size_t k = 0; k < d->n_kept; k++)
                put_gap(c, &d->gaps[k]);
        } else if (ga_gaps_each(x, d->device, put_gap, c) != 0) {
            int e = x->spill_errno ? x->spill_errno : errno ? errno : EIO;
            snprintf(c->r->read.error, sizeof(c->r->read.error),
                     "the temporary file of idle gaps: %s", strerror(e));
            return -1;
        }
    }
    return 0;
}

static void put_process(struct ct *c)
{
    const struct ga_facts *f = &c->r->facts;
    const char *name = f->exe ? f->exe : c->r->path;
    put_meta(c, "process_name", c->pid, 0, name, strlen(name));
    put_sort(c, c->pid, 0);
}

static void put_devices(struct ct *c, int rank)
{
    const struct ga_facts *f = &c->r->facts;
    FILE *o = c->out;
    fputs("\n],\n\"deviceProperties\":[", o);
    for (size_t i = 0; i < f->n_devices; i++) {
        const struct ga_device_info *d = &f->devices[i];
        fprintf(o, "%s\n{\"id\":%d,\"name\":", i ? "," : "", d->ordinal);
        put_str(o, d->name ? d->name : "", d->name ? strlen(d->name) : 0);
        fprintf(o, ",\"totalGlobalMem\":%" PRIu64 ",\"computeMajor\":%d,\"computeMinor\":%d}",
                d->total_bytes, d->cc_major, d->cc_minor);
    }
    /* HTA finds the rank with the regex "rank":\s+(\d+): the space is needed */
    fprintf(o, "],\n\"distributedInfo\": {\"rank\": %d},\n", rank);
    fprintf(o, "\"baseTimeNanoseconds\":%" PRIu64 ",\n\"traceName\":", c->origin);
    put_str(o, c->r->path, strlen(c->r->path));
    fputs("\n}\n", o);
}

static void ct_free(struct ct *c)
{
    for (size_t i = 0; i < c->n_name; i++)
        free(c->name[i]);
    free(c->name);
    ga_map_free(&c->names);
    ga_map_free(&c->tracks);
    ga_map_free(&c->threads);
}

int ga_chrome_trace(struct ga_report *r, int rank, uint64_t origin_realtime_ns, FILE *out)
{
    struct ct c = {.r = r, .out = out, .origin = origin_realtime_ns, .first = 1};
    ga_gaps_keep_all(&r->gaps);
    r->gpu.act_sink = on_act;
    r->gpu.act_ctx = &c;
    fputs("{\"schemaVersion\":1,\n\"traceEvents\":[", out);
    if (ga_read_trace(r->path, sink, &c, &r->read) != 0) {
        ct_free(&c);
        return -1;
    }
    if (!r->started) start(&c);
    ga_report_finish(r); /* the held activities leave through on_act */
    put_process(&c);
    int rc = put_gaps(&c);
    put_devices(&c, rank);
    r->gpu.act_sink = NULL;
    ct_free(&c);
    return rc;
}
