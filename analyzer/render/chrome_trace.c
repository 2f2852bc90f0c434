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
 * a "gpu_idle" event on its own track, named by its cause; NVML's samples (SM clock,
 * temperature, power, memory used by all processes) as counters on the device's pid. Host events
 * never carry a "stream" arg: HTA takes every event with one for GPU work.
 *
 * Reads the model's export pass alone (model/export.h), which hands the events as the analyses
 * see them. Memory: one entry per (device, stream) seen; events are written as they come (the
 * JSON array does not need time order). */
#include "render/chrome_trace.h"

#include <inttypes.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

#define GAP_TRACK_TID 1000000000u /* tid of the idle-gap track on a device (not a stream id) */

struct ct {
    FILE *out;
    uint64_t origin;           /* realtime ns of ts 0; 0 until the header is known */
    int64_t shift;             /* monotonic -> ns from origin: + shift */
    uint32_t pid;              /* host process id */
    int first;                 /* no event written yet (no comma before it) */
    struct ga_map tracks;      /* (device, stream) seen: their metadata is written */
    const struct ga_vrun *run; /* handed after the pass */
};

static void put_str(FILE *f, const char *s, size_t n)
{
    ga_put_json_str(f, s, n);
}

/* Microseconds with nanosecond decimals, exact (no floating point). */
static void put_us(FILE *f, int64_t ns)
{
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns; /* (INT64_MIN too) */
    fprintf(f, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000, (unsigned)(a % 1000));
}

/* In unsigned arithmetic: a hostile trace's times wrap instead of overflowing (the fuzzer's
 * monotonic time near 2^63 with a realtime start far below it, 2026-12-07). */
static int64_t at(const struct ct *c, uint64_t mono)
{
    return (int64_t)(mono + (uint64_t)c->shift);
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

/* A device's process ("GPU n"), named once: before its first activity or NVML counter. */
static void name_device(struct ct *c, uint32_t device)
{
    int added = 0;
    char buf[48];
    ga_map_upsert(&c->tracks, device, GAP_TRACK_TID + 1ull, 0, &added);
    if (!added) return;
    snprintf(buf, sizeof(buf), "GPU %u", device);
    put_meta(c, "process_name", device, 0, buf, strlen(buf));
    put_sort(c, device, 1000u + device);
}

static void track(struct ct *c, uint32_t device, uint32_t stream)
{
    int added = 0;
    char buf[48];
    ga_map_upsert(&c->tracks, device, stream, 0, &added);
    if (!added) return;
    name_device(c, device);
    snprintf(buf, sizeof(buf), "stream %u", stream);
    put_meta(c, "thread_name", device, stream, buf, strlen(buf));
}

static const char *const act_cat[] = {"kernel", "gpu_memcpy", "gpu_memset"};

static void on_act(void *ctx, const struct ga_xact *a)
{
    struct ct *c = ctx;
    track(c, a->device, a->stream);
    put_x(c, act_cat[a->kind], a->name, strlen(a->name), a->device, a->stream, a->start,
          a->end - a->start);
    fprintf(c->out, ",\"args\":{\"device\":%u,\"stream\":%u", a->device, a->stream);
    if (a->kind != GA_XACT_KERNEL) fprintf(c->out, ",\"bytes\":%" PRIu64, a->bytes);
    if (a->graph_id) fprintf(c->out, ",\"graph id\":%u", a->graph_id);
    if (a->linked) fprintf(c->out, ",\"correlation\":%" PRIu64, a->corr);
    fputs("}}", c->out);
    if (!a->linked) return;
    /* the flow arrow from the launch to its kernel (Kineto's "ac2g") */
    begin(c);
    fprintf(c->out, "{\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":", a->corr,
            c->pid, a->launch_tid);
    put_us(c->out, at(c, a->launch_ts));
    fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\"}", c->out);
    begin(c);
    fprintf(c->out, "{\"ph\":\"f\",\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":", a->corr,
            a->device, a->stream);
    put_us(c->out, at(c, a->start));
    fputs(",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}", c->out);
}

/* ---- host records ------------------------------------------------------------------------------
 */

static void on_call(void *ctx, const struct ga_xcall *x)
{
    struct ct *c = ctx;
    put_x(c, "cuda_driver", x->api, strlen(x->api), c->pid, x->tid, x->ts, x->dur);
    switch (x->kind) {
    case GA_XCALL_LAUNCH:
        if (x->result == 0)
            fprintf(c->out, ",\"args\":{\"correlation\":%" PRIu64 "}}", x->corr);
        else
            fprintf(c->out, ",\"args\":{\"result\":%d}}", x->result);
        break;
    case GA_XCALL_SPAN:
        fprintf(c->out, ",\"args\":{\"result\":%d}}", x->result);
        break;
    case GA_XCALL_ALLOC:
        fprintf(c->out,
                ",\"args\":{\"bytes\":%" PRIu64 ",\"address\":\"0x%" PRIx64 "\",\"device\":%d}}",
                x->bytes, x->addr, x->device);
        break;
    case GA_XCALL_FREE:
        fprintf(c->out, ",\"args\":{\"address\":\"0x%" PRIx64 "\",\"result\":%d}}", x->addr,
                x->result);
        break;
    default:
        fprintf(c->out,
                ",\"args\":{\"bytes\":%" PRIu64 ",\"result\":%d,\"device free bytes\":%" PRIu64
                "}}",
                x->bytes, x->result, x->free_bytes);
        break;
    }
}

/* A counter event ("ph":"C") up to its args: Perfetto draws a track per name and process. */
static void counter_head(struct ct *c, const char *name, int64_t pid, uint64_t ts)
{
    begin(c);
    fprintf(c->out, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":0,\"ts\":", name,
            pid);
    put_us(c->out, at(c, ts));
}

static void on_live(void *ctx, uint64_t ts, uint64_t live)
{
    struct ct *c = ctx;
    counter_head(c, "device memory", c->pid, ts);
    fprintf(c->out, ",\"args\":{\"live bytes\":%" PRIu64 "}}", live);
}

static void on_pools(void *ctx, uint64_t ts, uint64_t reserved, uint64_t used)
{
    struct ct *c = ctx;
    counter_head(c, "pool memory", c->pid, ts);
    fprintf(c->out, ",\"args\":{\"reserved bytes\":%" PRIu64 ",\"used bytes\":%" PRIu64 "}}",
            reserved, used);
}

/* One counter event with one value on a device's process (its GPU work's pid). */
static void put_counter(struct ct *c, const char *name, int32_t device, uint64_t ts,
                        const char *arg, uint64_t v)
{
    counter_head(c, name, device, ts);
    fprintf(c->out, ",\"args\":{\"%s\":%" PRIu64 "}}", arg, v);
}

/* An NVML sample: the SM clock, temperature, power and memory used by all processes, each a
 * counter on the device's process (only those the sample has). */
static void on_nvml(void *ctx, const struct ga_xnvml *n)
{
    struct ct *c = ctx;
    name_device(c, (uint32_t)n->device);
    if (n->has_sm) put_counter(c, "SM clock (NVML)", n->device, n->ts, "MHz", n->sm_mhz);
    if (n->has_temp) put_counter(c, "temperature (NVML)", n->device, n->ts, "C", n->temp_c);
    if (n->has_power) put_counter(c, "power (NVML)", n->device, n->ts, "mW", n->power_mw);
    if (n->has_mem_used)
        put_counter(c, "memory used, all processes (NVML)", n->device, n->ts, "bytes", n->mem_used);
}

static void on_thread(void *ctx, uint32_t tid, const char *name, size_t len)
{
    struct ct *c = ctx;
    put_meta(c, "thread_name", c->pid, tid, name, len);
}

static void on_start(void *ctx, const struct ga_xstart *s)
{
    struct ct *c = ctx;
    if (!c->origin) c->origin = s->start_realtime_ns;
    c->shift = (int64_t)(s->start_realtime_ns - c->origin - s->start_monotonic_ns);
    c->pid = s->pid;
}

/* ---- after the pass ----------------------------------------------------------------------------
 */

static void on_run(void *ctx, const struct ga_vrun *run)
{
    struct ct *c = ctx;
    const char *name = run->exe ? run->exe : run->path;
    c->run = run;
    put_meta(c, "process_name", c->pid, 0, name, strlen(name));
    put_sort(c, c->pid, 0);
}

static void on_gap_track(void *ctx, uint32_t device)
{
    put_meta(ctx, "thread_name", device, GAP_TRACK_TID, "idle gaps", 9);
}

/* One idle gap, named by its cause. */
static int on_gap(void *ctx, uint32_t device, uint64_t start, uint64_t dur, const char *cause)
{
    struct ct *c = ctx;
    put_x(c, "gpu_idle", cause, strlen(cause), device, GAP_TRACK_TID, start, dur);
    fputs(",\"args\":{\"cause\":", c->out);
    put_str(c->out, cause, strlen(cause));
    fputs("}}", c->out);
    return ferror(c->out) ? -1 : 0;
}

static void put_devices(struct ct *c, int rank)
{
    const struct ga_vrun *r = c->run;
    FILE *o = c->out;
    fputs("\n],\n\"deviceProperties\":[", o);
    for (size_t i = 0; i < r->n_devices; i++) {
        const struct ga_vrun_device *d = &r->devices[i];
        fprintf(o, "%s\n{\"id\":%d,\"name\":", i ? "," : "", d->ordinal);
        put_str(o, d->name ? d->name : "", d->name ? strlen(d->name) : 0);
        fprintf(o, ",\"totalGlobalMem\":%" PRIu64 ",\"computeMajor\":%d,\"computeMinor\":%d}",
                d->total_bytes, d->cc_major, d->cc_minor);
    }
    /* HTA finds the rank with the regex "rank":\s+(\d+): the space is needed */
    fprintf(o, "],\n\"distributedInfo\": {\"rank\": %d},\n", rank);
    fprintf(o, "\"baseTimeNanoseconds\":%" PRIu64 ",\n\"traceName\":", c->origin);
    put_str(o, r->path, strlen(r->path));
    fputs("\n}\n", o);
}

static const struct ga_xsink writer = {
    .start = on_start,
    .call = on_call,
    .thread = on_thread,
    .live = on_live,
    .pools = on_pools,
    .act = on_act,
    .nvml = on_nvml,
    .run = on_run,
    .gap_track = on_gap_track,
    .gap = on_gap,
};

int ga_chrome_trace(struct ga_report *r, int rank, uint64_t origin_realtime_ns, FILE *out)
{
    struct ct c = {.out = out, .origin = origin_realtime_ns, .first = 1};
    fputs("{\"schemaVersion\":1,\n\"traceEvents\":[", out);
    int rc = ga_report_export(r, &writer, &c);
    if (c.run) put_devices(&c, rank); /* the pass ran (the gaps may have failed) */
    ga_map_free(&c.tracks);
    return rc;
}
