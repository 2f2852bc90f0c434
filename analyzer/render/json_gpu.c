/* --json: the GPU timeline parts of `timeline` (docs/REPORT_JSON.md). Reads the GPU view alone
 * (model/view_gpu.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "render/gpu.h"
#include "render/json_put.h"
#include "base/util.h"

/* A ratio rounded to 6 decimals (JSON stays readable, nothing a script needs is lost). */
static jobj *jratio(double v)
{
    return json_object_new_double(round(v * 1e6) / 1e6);
}

static jobj *jstr(const char *s)
{
    return json_object_new_string(s);
}

static jobj *kernel_obj(const struct ga_vkernel *k)
{
    jobj *o = json_object_new_object();
    put(o, "name", ga_json_str(k->name));
    put(o, "demangled", ga_json_str(k->demangled));
    put(o, "count", ju64(k->count));
    put(o, "total_ns", ju64(k->total_ns));
    put(o, "mean_ns", ju64(k->count ? k->total_ns / k->count : 0));
    put(o, "max_ns", ju64(k->max_ns));
    return o;
}

jobj *ga_json_top_kernels(const struct ga_vgpu *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_top_kernels; i++)
        json_object_array_add(a, kernel_obj(&v->top_kernels[i]));
    return a;
}

static jobj *streams(const struct ga_vgpu_device *d)
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

static jobj *act_obj(const struct ga_vact *a)
{
    jobj *o = json_object_new_object();
    put(o, "name", ga_json_str(a->name));
    put(o, "kind", jstr(a->kind));
    put(o, "stream", ju64(a->stream));
    put(o, "start_ns", ji64(a->start_ns));
    put(o, "end_ns", ji64(a->end_ns));
    return o;
}

/* A site's label, "<unknown>" for a site of an unknown stack, null without a site. */
static jobj *site_label(const struct ga_vsite *s)
{
    if (!s) return NULL;
    return ga_json_str(s->frame ? s->frame->label_path : "<unknown>");
}

static jobj *launch_obj(const struct ga_vgap *gp)
{
    const struct ga_vlaunch *l = &gp->launch;
    if (!gp->have_launch) return NULL;
    jobj *o = json_object_new_object();
    put(o, "api", jstr(l->api));
    put(o, "tid", ju64(l->tid));
    put(o, "time_ns", ji64(l->time_ns));
    put(o, "before_gap", json_object_new_boolean(l->before_gap));
    put(o, "since_previous_call_ns", l->have_since ? ju64(l->since_prev_ns) : NULL);
    put(o, "previous_call", l->have_prev ? jstr(l->prev_api) : NULL);
    return o;
}

static jobj *host_call_obj(const struct ga_vgap *gp)
{
    const struct ga_vcall *c = &gp->call;
    if (!c->kind) return NULL;
    jobj *o = json_object_new_object();
    put(o, "api", jstr(c->api));
    put(o, "tid", ju64(c->tid));
    put(o, "enter_ns", ji64(c->enter_ns));
    put(o, "exit_ns", ji64(c->exit_ns));
    put(o, "overlap_ns", ju64(c->overlap_ns));
    put(o, "site", site_label(c->site));
    return o;
}

static jobj *phases_obj(const struct ga_vgpu *v, const struct ga_vgap *gp)
{
    jobj *o = json_object_new_object();
    for (unsigned c = 0; c < GA_VGPU_CAUSES; c++)
        put(o, v->cause_names[c], ju64(gp->phase_ns[c]));
    return o;
}

static jobj *gap_obj(const struct ga_vgpu *v, const struct ga_vgap *gp)
{
    jobj *o = json_object_new_object();
    put(o, "start_ns", ji64(gp->start_ns));
    put(o, "duration_ns", ju64(gp->dur));
    put(o, "cause", jstr(v->cause_names[gp->cause]));
    put(o, "phases", phases_obj(v, gp));
    put(o, "site", site_label(gp->site));
    put(o, "before", act_obj(&gp->before));
    put(o, "after", act_obj(&gp->after));
    put(o, "launch", launch_obj(gp));
    put(o, "host_call", host_call_obj(gp));
    return o;
}

static jobj *idle_by_cause(const struct ga_vgpu *v, const struct ga_vidle *x)
{
    jobj *o = json_object_new_object();
    for (unsigned c = 0; c < GA_VGPU_CAUSES; c++) {
        jobj *e = json_object_new_object();
        put(e, "idle_ns", ju64(x->cause_ns[c]));
        put(e, "gaps", ju64(x->cause_n[c]));
        put(o, v->cause_names[c], e);
    }
    return o;
}

static jobj *idle_by_site(const struct ga_vgpu *v, const struct ga_vidle *x)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < x->n_sites; i++) {
        const struct ga_vidle_site *s = &x->sites[i];
        jobj *o = json_object_new_object();
        put(o, "cause", jstr(v->cause_names[s->cause]));
        put(o, "site", site_label(s->site));
        put(o, "idle_ns", ju64(s->idle_ns));
        put(o, "gaps", ju64(s->gaps));
        json_object_array_add(a, o);
    }
    return a;
}

/* idle_by_host_site and idle_by_class (docs/REPORT_JSON.md), from the host stack samples. */
static void idle_host(const struct ga_vgpu *v, const struct ga_vidle *x, jobj *o)
{
    if (!x->have_host) {
        put(o, "idle_by_host_site", NULL);
        put(o, "idle_by_class", NULL);
        return;
    }
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < x->n_host_sites; i++) {
        const struct ga_vhost_site *s = &x->host_sites[i];
        jobj *e = json_object_new_object();
        put(e, "site", s->site ? ga_json_str(s->site->label_path) : NULL);
        put(e, "class", jstr(v->class_names[s->cls]));
        put(e, "idle_ns", ju64(s->idle_ns));
        put(e, "on_cpu_ns", ju64(s->on_cpu_ns));
        put(e, "off_cpu_ns", ju64(s->off_cpu_ns));
        put(e, "samples", ju64(s->samples));
        jobj *f = json_object_new_array();
        for (size_t k = 0; s->stack && k < s->stack->n && k < 64; k++)
            json_object_array_add(f, ga_json_str(s->stack->frames[k]->label_path));
        put(e, "frames", f);
        json_object_array_add(a, e);
    }
    put(o, "idle_by_host_site", a);
    jobj *c = json_object_new_object();
    for (unsigned k = 0; k < GA_VGPU_HI_CLASSES; k++)
        put(c, v->class_names[k], ju64(x->class_ns[k]));
    put(o, "idle_by_class", c);
}

static jobj *histogram(const struct ga_vgpu *v, const struct ga_vidle *x)
{
    jobj *a = json_object_new_array();
    for (unsigned b = 0; b < GA_VGPU_BUCKETS; b++) {
        jobj *o = json_object_new_object();
        put(o, "bucket", jstr(v->bucket_names[b]));
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
    const struct ga_vgpu *v;
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

static int write_gap(void *ctx, const struct ga_vgap *gp)
{
    struct gap_writer *w = ctx;
    jobj *o = gap_obj(w->v, gp);
    fprintf(w->out, "%s\n%s  ", w->n++ ? "," : "", w->indent);
    char in[80];
    snprintf(in, sizeof(in), "%s  ", w->indent);
    put_reindented(w->out, json_object_to_json_string_ext(o, w->flags), in);
    json_object_put(o);
    return ferror(w->out) ? -1 : 0;
}

int ga_json_write(const struct ga_vgpu *v, jobj *root, int flags, FILE *out)
{
    const char *s = json_object_to_json_string_ext(root, flags);
    char mark[64], quoted[80];
    if (!v->all_gaps_streamed) return fprintf(out, "%s\n", s) < 0 ? -1 : 0;
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
        struct gap_writer w = {v, out, indent, flags, 0};
        fputc('[', out);
        int err = ga_vgpu_each_gap(v, device, write_gap, &w);
        if (err) {
            fprintf(stderr, "%s: --all-gaps: the temporary file of gaps: %s\n", GA_PROG,
                    strerror(err));
            return -1;
        }
        fprintf(out, w.n ? "\n%s]" : " ]", indent);
        s = at + strlen(quoted);
    }
    return fprintf(out, "%s\n", s) < 0 ? -1 : 0;
}

/* The idle fields of one device (docs/REPORT_JSON.md, timeline.devices[]). */
static void device_gaps(const struct ga_vgpu *v, const struct ga_vgpu_device *d, jobj *o)
{
    const struct ga_vidle *x = d->idle;
    uint64_t span = d->span;
    if (!x) return;
    put(o, "idle_share", span ? jratio((double)x->idle_ns / (double)span) : NULL);
    put(o, "gap_count", ju64(x->n_gaps));
    if (v->all_gaps_streamed) { /* every gap: written by ga_json_write, one at a time */
        char mark[64];
        put(o, "gaps", json_object_new_string(gaps_marker(mark, x->device)));
        put(o, "gaps_omitted", ju64(0));
    } else {
        jobj *gaps = json_object_new_array();
        for (size_t i = 0; i < x->n_kept; i++)
            json_object_array_add(gaps, gap_obj(v, &x->gaps[i]));
        put(o, "gaps", gaps);
        put(o, "gaps_omitted", ju64(x->n_gaps - x->n_kept));
    }
    put(o, "idle_by_cause", idle_by_cause(v, x));
    put(o, "idle_by_site", idle_by_site(v, x));
    idle_host(v, x, o);
    put(o, "gap_histogram", histogram(v, x));
}

static jobj *devices(const struct ga_vgpu *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_devices; i++) {
        const struct ga_vgpu_device *d = &v->devices[i];
        uint64_t span = d->span;
        jobj *o = json_object_new_object();
        put(o, "device", ju64(d->device));
        put(o, "span_ns", ju64(span));
        put(o, "busy_ns", ju64(d->busy_ns));
        put(o, "compute_ns", ju64(d->compute_ns));
        put(o, "idle_ns", ju64(span - d->busy_ns));
        put(o, "utilization", span ? jratio((double)d->busy_ns / (double)span) : NULL);
        put(o, "first_ns", ji64(d->first_ns));
        put(o, "last_ns", ji64(d->last_ns));
        put(o, "kernel_count", ju64(d->kernels));
        put(o, "streams", streams(d));
        device_gaps(v, d, o);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *sum_obj(const struct ga_vsum *s)
{
    jobj *o = json_object_new_object();
    put(o, "count", ju64(s->count));
    put(o, "bytes", ju64(s->bytes));
    put(o, "total_ns", ju64(s->total_ns));
    return o;
}

static jobj *copies(const struct ga_vgpu *v)
{
    jobj *a = json_object_new_array();
    for (unsigned k = 0; k < GA_VGPU_COPY_KINDS; k++) {
        const struct ga_vsum *s = &v->copies[k];
        if (!s->count) continue;
        jobj *o = sum_obj(s);
        put(o, "kind", jstr(v->copy_kind_names[k]));
        /* bytes per ns = GB/s (10^9 bytes per second) */
        put(o, "bandwidth_gbps",
            s->total_ns ? jratio((double)s->bytes / (double)s->total_ns) : NULL);
        json_object_array_add(a, o);
    }
    return a;
}

static jobj *latency(const struct ga_vlink *l)
{
    if (!l->latency_n) return NULL;
    jobj *o = json_object_new_object();
    put(o, "count", ju64(l->latency_n));
    put(o, "min", ji64(l->latency_min));
    put(o, "median", ji64(l->latency_median));
    put(o, "max", ji64(l->latency_max));
    return o;
}

static jobj *linking(const struct ga_vlink *l)
{
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

static jobj *hta(const struct ga_vgpu *v)
{
    jobj *o = json_object_new_object(), *a = json_object_new_array();
    put(o, "kernel_wait_threshold_ns", ju64(v->hta_kernel_wait_ns));
    for (size_t i = 0; i < v->n_idle; i++) {
        const struct ga_vidle *x = &v->idle[i];
        for (size_t k = 0; k < x->n_hta; k++) {
            const struct ga_vhta *h = &x->hta[k];
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

static jobj *windows(const struct ga_vgpu *v)
{
    jobj *a = json_object_new_array();
    for (size_t i = 0; i < v->n_idle; i++) {
        const struct ga_vidle *x = &v->idle[i];
        jobj *o = json_object_new_object(), *w = json_object_new_array();
        put(o, "device", ju64(x->device));
        put(o, "window_ns", ju64(x->window_ns));
        put(o, "low_threshold", jratio(v->window_low));
        put(o, "low_count", ju64(x->low_windows));
        for (size_t k = 0; k < x->n_windows; k++) {
            const struct ga_vwindow *g = &x->windows[k];
            jobj *e = json_object_new_object();
            put(e, "start_ns", ji64(g->start_ns));
            put(e, "duration_ns", ju64(g->len));
            put(e, "busy_ns", ju64(g->busy));
            put(e, "utilization", jratio((double)g->busy / (double)g->len));
            put(e, "low", json_object_new_boolean(g->low));
            json_object_array_add(w, e);
        }
        put(o, "windows", w);
        json_object_array_add(a, o);
    }
    return a;
}

void ga_json_gpu_timeline(const struct ga_vgpu *v, jobj *timeline)
{
    put(timeline, "top_kernels_by", jstr(v->top_by));
    put(timeline, "devices", devices(v));
    put(timeline, "copies", copies(v));
    put(timeline, "memsets", sum_obj(&v->memsets));
    put(timeline, "linking", linking(&v->link));
    put(timeline, "skipped_activities", ju64(v->skipped));
    put(timeline, "late_activities", ju64(v->late));
    put(timeline, "launches_evicted", ju64(v->launches_evicted));
    put(timeline, "correlations_evicted", ju64(v->correlations_evicted));
    put(timeline, "launch_latency_median_exact", json_object_new_boolean(v->link.latency_exact));
    put(timeline, "hta", hta(v));
    put(timeline, "windows", windows(v));
    put(timeline, "idle_host_calls_dropped", ju64(v->calls_dropped));
    put(timeline, "idle_by_host_gaps_early", ju64(v->host_gaps_early));
    put(timeline, "idle_by_host_samples_dropped", ju64(v->host_samples_dropped));
}
