/* --json: the GPU timeline parts of `timeline` (docs/REPORT_JSON.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "render/json.h"
#include "base/demangle.h"
#include "base/util.h"

/* A ratio rounded to 6 decimals (JSON stays readable, nothing a script needs is lost). */
static jobj *jratio(double v)
{
    return json_object_new_double(round(v * 1e6) / 1e6);
}

static jobj *kernel_obj(const char *name, const char *demangled, uint64_t count, uint64_t total,
                        uint64_t max)
{
    jobj *o = json_object_new_object();
    put(o, "name", ga_json_str(name));
    put(o, "demangled", ga_json_str(demangled));
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

static jobj *act_obj(const struct ga_report *r, const struct ga_gpu_act *a)
{
    static const char *const kinds[] = {"kernel", "memcpy", "memset"};
    jobj *o = json_object_new_object();
    put(o, "name", ga_json_str(ga_gpu_act_name(&r->gpu, &r->tl, a)));
    put(o, "kind", json_object_new_string(kinds[a->kind <= GA_GPU_MEMSET ? a->kind : 0]));
    put(o, "stream", ju64(a->stream));
    put(o, "start_ns", ji64(ga_report_rel(r, a->start)));
    put(o, "end_ns", ji64(ga_report_rel(r, a->end)));
    return o;
}

static const char *site_label(const struct ga_report *r, uint32_t stack, char *buf, size_t n)
{
    const struct ga_site *s = stack ? ga_sites_of_stack(&r->sites, stack) : NULL;
    if (!s) return NULL;
    return s->frame ? ga_frame_label(&r->stacks, s->frame, buf, n, 1) : "<unknown>";
}

static jobj *launch_obj(const struct ga_report *r, const struct ga_gap *gp)
{
    const struct ga_gpu_launch *l = gp->launch;
    if (!l) return NULL;
    jobj *o = json_object_new_object();
    put(o, "api", api_name(l->api));
    put(o, "tid", ju64(l->tid));
    put(o, "time_ns", ji64(ga_report_rel(r, l->ts)));
    put(o, "before_gap", json_object_new_boolean(l->ts < gp->start));
    put(o, "since_previous_call_ns",
        l->prev_end && l->ts >= l->prev_end ? ju64(l->ts - l->prev_end) : NULL);
    put(o, "previous_call", l->prev_end ? api_name(l->prev_api) : NULL);
    return o;
}

static jobj *host_call_obj(const struct ga_report *r, const struct ga_gap *gp)
{
    const struct ga_host_call *c = &gp->call;
    char label[1024];
    if (!c->kind) return NULL;
    jobj *o = json_object_new_object();
    put(o, "api", api_name(c->api));
    put(o, "tid", ju64(c->tid));
    put(o, "enter_ns", ji64(ga_report_rel(r, c->start)));
    put(o, "exit_ns", ji64(ga_report_rel(r, c->end)));
    put(o, "overlap_ns", ju64(gp->call_ns));
    put(o, "site", ga_json_str(site_label(r, c->stack, label, sizeof(label))));
    return o;
}

static jobj *phases_obj(const struct ga_gap *gp)
{
    jobj *o = json_object_new_object();
    for (unsigned c = 0; c < GA_CAUSES; c++)
        put(o, ga_cause_name(c), ju64(gp->phase_ns[c]));
    return o;
}

static jobj *gap_obj(const struct ga_report *r, const struct ga_gap *gp)
{
    char label[1024];
    jobj *o = json_object_new_object();
    put(o, "start_ns", ji64(ga_report_rel(r, gp->start)));
    put(o, "duration_ns", ju64(gp->dur));
    put(o, "cause", json_object_new_string(ga_cause_name(gp->cause)));
    put(o, "phases", phases_obj(gp));
    put(o, "site", ga_json_str(site_label(r, gp->stack, label, sizeof(label))));
    put(o, "before", act_obj(r, &gp->before));
    put(o, "after", act_obj(r, &gp->after));
    put(o, "launch", launch_obj(r, gp));
    put(o, "host_call", host_call_obj(r, gp));
    return o;
}

static jobj *idle_by_cause(const struct ga_gaps_device *x)
{
    jobj *o = json_object_new_object();
    for (unsigned c = 0; c < GA_CAUSES; c++) {
        jobj *e = json_object_new_object();
        put(e, "idle_ns", ju64(x->cause_ns[c]));
        put(e, "gaps", ju64(x->cause_n[c]));
        put(o, ga_cause_name(c), e);
    }
    return o;
}

static jobj *idle_by_site(const struct ga_report *r, const struct ga_gaps_device *x)
{
    char label[1024];
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < x->n_sites && i < GA_GAPS_TOP; i++) {
        const struct ga_idle_site *s = &x->sites[i];
        jobj *o = json_object_new_object();
        put(o, "cause", json_object_new_string(ga_cause_name(s->cause)));
        put(o, "site",
            s->site ? ga_json_str(s->site->frame ? ga_frame_label(&r->stacks, s->site->frame, label,
                                                             sizeof(label), 1)
                                            : "<unknown>")
                    : NULL);
        put(o, "idle_ns", ju64(s->idle_ns));
        put(o, "gaps", ju64(s->gaps));
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *histogram(const struct ga_gaps_device *x)
{
    jobj *a = json_object_new_array();
    for (unsigned b = 0; b < GA_GAP_BUCKETS; b++) {
        jobj *o = json_object_new_object();
        put(o, "bucket", json_object_new_string(ga_gap_bucket_name(b)));
        put(o, "count", ju64(x->bucket_n[b]));
        put(o, "idle_ns", ju64(x->bucket_ns[b]));
        json_object_array_add(a, o);
    }
    return a;
}

/* --all-gaps: the list of every gap would hold the whole file's gaps as JSON objects (9.85 GB
 * of memory for a 185 MB trace). The document is built with a marker string in place of each
 * device's list, and ga_json_write streams the gaps there one at a time. The marker holds a
 * random nonce and a control character, so no string of the trace can pass for it. */
static const char *gaps_marker(char buf[64], uint32_t device)
{
    static uint64_t nonce;
    if (!nonce && getentropy(&nonce, sizeof(nonce)) != 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        nonce = (uint64_t)ts.tv_nsec << 24 ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 44;
    }
    nonce |= 1;
    snprintf(buf, 64, "\x01gaps %" PRIu32 " %016" PRIx64, device, nonce);
    return buf;
}

struct gap_writer {
    const struct ga_report *r;
    FILE *out;
    const char *indent;
    int flags;
    size_t n;
};

/* Writes text, each line after the first indented. */
static void put_reindented(FILE *out, const char *s, const char *indent)
{
    for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1) {
        fwrite(s, 1, (size_t)(nl - s) + 1, out);
        fputs(indent, out);
    }
    fputs(s, out);
}

static int write_gap(void *ctx, const struct ga_gap *gp)
{
    struct gap_writer *w = ctx;
    jobj *o = gap_obj(w->r, gp);
    fprintf(w->out, "%s\n%s  ", w->n++ ? "," : "", w->indent);
    char in[80];
    snprintf(in, sizeof(in), "%s  ", w->indent);
    put_reindented(w->out, json_object_to_json_string_ext(o, w->flags), in);
    json_object_put(o);
    return ferror(w->out) ? -1 : 0;
}

int ga_json_write(const struct ga_report *r, jobj *root, int flags, FILE *out)
{
    const char *s = json_object_to_json_string_ext(root, flags);
    char mark[64], quoted[80];
    if (!r->gaps.spill) return fprintf(out, "%s\n", s) < 0 ? -1 : 0;
    gaps_marker(mark, 0); /* "\x01gaps 0 NONCE": as JSON "\u0001gaps 0 NONCE" */
    const char *nonce = strrchr(mark, ' ');
    static const char prefix[] = "\"\\u0001gaps ";
    for (const char *at; (at = strstr(s, prefix));) {
        uint32_t device = (uint32_t)strtoul(at + sizeof(prefix) - 1, NULL, 10);
        snprintf(quoted, sizeof(quoted), "\"\\u0001gaps %" PRIu32 "%s\"", device, nonce);
        if (strncmp(at, quoted, strlen(quoted)) != 0) { /* not ours: as it is */
            fwrite(s, 1, (size_t)(at - s) + 1, out);
            s = at + 1;
            continue;
        }
        const char *line = at;
        while (line > s && line[-1] != '\n')
            line--;
        char indent[64];
        size_t k = 0;
        while (line + k < at && line[k] == ' ' && k < sizeof(indent) - 3)
            k++;
        memcpy(indent, line, k);
        indent[k] = 0;
        fwrite(s, 1, (size_t)(at - s), out);
        struct gap_writer w = {r, out, indent, flags, 0};
        fputc('[', out);
        if (ga_gaps_each(&r->gaps, device, write_gap, &w) != 0) {
            fprintf(stderr, "%s: --all-gaps: the temporary file of gaps: %s\n", GA_PROG,
                    strerror(r->gaps.spill_errno ? r->gaps.spill_errno : EIO));
            return -1;
        }
        fprintf(out, w.n ? "\n%s]" : " ]", indent);
        s = at + strlen(quoted);
    }
    return fprintf(out, "%s\n", s) < 0 ? -1 : 0;
}

/* The idle fields of one device (docs/REPORT_JSON.md, timeline.devices[]). */
static void device_gaps(const struct ga_report *r, const struct ga_gpu_device *d, jobj *o)
{
    const struct ga_gaps_device *x = ga_gaps_device_of(&r->gaps, d->device);
    uint64_t span = d->last - d->first;
    if (!x) return;
    put(o, "idle_share", span ? jratio((double)x->idle_ns / (double)span) : NULL);
    put(o, "gap_count", ju64(x->n_gaps));
    if (r->gaps.spill) { /* every gap: written by ga_json_write, one at a time */
        char mark[64];
        put(o, "gaps", json_object_new_string(gaps_marker(mark, x->device)));
        put(o, "gaps_omitted", ju64(0));
    } else {
        jobj *gaps = json_object_new_array();
        for (size_t i = 0; i < x->n_kept; i++)
            json_object_array_add(gaps, gap_obj(r, &x->gaps[i]));
        put(o, "gaps", gaps);
        put(o, "gaps_omitted", ju64(x->n_gaps - x->n_kept));
    }
    put(o, "idle_by_cause", idle_by_cause(x));
    put(o, "idle_by_site", idle_by_site(r, x));
    put(o, "gap_histogram", histogram(x));
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
        put(o, "compute_ns", ju64(d->compute_ns));
        put(o, "idle_ns", ju64(span - d->busy_ns));
        put(o, "utilization", span ? jratio((double)d->busy_ns / (double)span) : NULL);
        put(o, "first_ns", ji64(ga_report_rel(r, d->first)));
        put(o, "last_ns", ji64(ga_report_rel(r, d->last)));
        put(o, "kernel_count", ju64(d->kernels));
        put(o, "streams", streams(d));
        device_gaps(r, d, o);
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

static jobj *hta(const struct ga_report *r)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "kernel_wait_threshold_ns", ju64(GA_HTA_KERNEL_WAIT_NS));
    for (size_t i = 0; i < r->gaps.n_devices; i++) {
        const struct ga_gaps_device *x = &r->gaps.devices[i];
        for (size_t k = 0; k < x->n_hta; k++) {
            const struct ga_hta_stream *h = &x->hta[k];
            jobj *s = json_object_new_object();
            put(s, "device", ju64(x->device));
            put(s, "stream", ju64(h->stream));
            put(s, "host_wait_ns", ju64(h->host_wait_ns));
            put(s, "kernel_wait_ns", ju64(h->kernel_wait_ns));
            put(s, "other_ns", ju64(h->other_ns));
            put(s, "host_wait_count", ju64(h->host_wait_n));
            put(s, "kernel_wait_count", ju64(h->kernel_wait_n));
            put(s, "other_count", ju64(h->other_n));
            json_object_array_add(a, s);
        }
    }
    put(o, "streams", a);
    return o;
}

static jobj *windows(const struct ga_report *r)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < r->gaps.n_devices; i++) {
        const struct ga_gaps_device *x = &r->gaps.devices[i];
        jobj *o = json_object_new_object(), *w = json_object_new_array();
        put(o, "device", ju64(x->device));
        put(o, "window_ns", ju64(x->window_ns));
        put(o, "low_threshold", jratio(GA_WINDOW_LOW));
        put(o, "low_count", ju64(x->low_windows));
        for (size_t k = 0; k < x->n_windows; k++) {
            const struct ga_window *g = &x->windows[k];
            jobj *e = json_object_new_object();
            put(e, "start_ns", ji64(ga_report_rel(r, g->start)));
            put(e, "duration_ns", ju64(g->len));
            put(e, "busy_ns", ju64(g->busy));
            put(e, "utilization", jratio((double)g->busy / (double)g->len));
            put(e, "low",
                json_object_new_boolean((double)g->busy < GA_WINDOW_LOW * (double)g->len));
            json_object_array_add(w, e);
        }
        put(o, "windows", w);
        json_object_array_add(a, o);
    }
    return a;
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
    put(timeline, "late_activities", ju64(r->gpu.late));
    put(timeline, "launches_evicted", ju64(r->gpu.launches_evicted));
    put(timeline, "correlations_evicted", ju64(r->gpu.extcorr_evicted));
    put(timeline, "launch_latency_median_exact",
        json_object_new_boolean(r->gpu.link.latency_exact));
    put(timeline, "hta", hta(r));
    put(timeline, "windows", windows(r));
    put(timeline, "idle_host_calls_dropped", ju64(r->gaps.calls_dropped));
}
