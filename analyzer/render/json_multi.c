/* --json with several traces: {schema_version, generator, processes: [...], cross: {...}}
 * (docs/REPORT_JSON.md, "Several traces"). Written as it goes: each process object is the
 * single-trace report, rendered while its model exists and indented into the array
 * (render/json_process.c), so memory stays one report's whatever the number of ranks. This file
 * reads only the ranks' summaries (model/multi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/multi.h"
#include "render/json_put.h"
#include "base/util.h"

/* A stream that writes to `out` with `indent` after every newline but the trailing ones (pretty
 * JSON: strings hold no raw newline, so this only moves lines). The process object goes through
 * it as it is rendered: with --all-gaps it can be far larger than memory. */
struct indenter {
    FILE *out;
    const char *indent;
    size_t newlines; /* held until a character follows them */
};

static ssize_t indent_write(void *c, const char *buf, size_t n)
{
    struct indenter *x = c;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            x->newlines++;
            continue;
        }
        for (; x->newlines; x->newlines--) {
            fputc('\n', x->out);
            fputs(x->indent, x->out);
        }
        fputc(buf[i], x->out);
    }
    return ferror(x->out) ? -1 : (ssize_t)n;
}

int ga_json_indented(FILE *o, const char *lead, const char *indent,
                     int (*write)(const void *ctx, FILE *f), const void *ctx)
{
    struct indenter x = {o, indent, 0};
    FILE *f = fopencookie(&x, "w", (cookie_io_functions_t){.write = indent_write});
    if (!f) return -1;
    fputs(lead, o);
    int rc = write(ctx, f);
    if (fclose(f) != 0) rc = -1;
    return rc;
}

void ga_json_multi_begin(FILE *o)
{
    fprintf(o, "{\n  \"schema_version\": %d,\n  \"generator\": \"%s\",\n  \"processes\": [",
            GA_SCHEMA_VERSION, GA_GENERATOR);
}

static jobj *json_gpu(const struct ga_multi *m, const struct ga_rank *k)
{
    char share[32];
    if (!k->have_gpu) return NULL;
    jobj *g = json_object_new_object();
    snprintf(share, sizeof(share), "%.6f", ga_rank_idle_share(k) < 0 ? 0 : ga_rank_idle_share(k));
    put(g, "first_time_ns", ji64(ga_multi_at(m, k, k->gpu_first)));
    put(g, "last_time_ns", ji64(ga_multi_at(m, k, k->gpu_last)));
    put(g, "span_ns", ju64(k->gpu_span_ns));
    put(g, "busy_ns", ju64(k->gpu_busy_ns));
    put(g, "idle_ns", ju64(k->gpu_span_ns - k->gpu_busy_ns));
    put(g, "idle_share", json_object_new_double_s(atof(share), share));
    put(g, "cupti_dropped", ju64(k->gpu_dropped));
    return g;
}

static jobj *json_idle_cause(const struct ga_rank *k)
{
    char share[32];
    if (k->idle_cause < 0) return NULL;
    jobj *o = json_object_new_object();
    snprintf(share, sizeof(share), "%.6f", (double)k->idle_cause_ns / (double)k->gaps_idle_ns);
    put(o, "cause", ga_json_str(k->idle_cause_name));
    put(o, "idle_ns", ju64(k->idle_cause_ns));
    put(o, "share_of_idle", json_object_new_double_s(atof(share), share));
    put(o, "site", ga_json_str(k->idle_site));
    put(o, "site_idle_ns", ju64(k->idle_site_ns));
    return o;
}

static jobj *json_rank(const struct ga_multi *m, size_t i)
{
    const struct ga_rank *k = &m->ranks[i];
    jobj *o = json_object_new_object();
    put(o, "rank", ju64(i));
    put(o, "path", ga_json_str(k->path));
    put(o, "pid", ju64(k->pid));
    put(o, "host", ga_json_str(k->host));
    put(o, "start_realtime_ns", ju64(k->start_realtime_ns));
    put(o, "start_monotonic_ns", ju64(k->start_monotonic_ns));
    put(o, "start_time_ns", ji64(ga_multi_at(m, k, k->start_monotonic_ns)));
    put(o, "end_time_ns", ji64(ga_multi_at(m, k, k->start_monotonic_ns + k->duration_ns)));
    put(o, "duration_ns", ju64(k->duration_ns));
    put(o, "truncated", json_object_new_boolean(k->truncated));
    put(o, "clean_end", json_object_new_boolean(k->clean_end));
    put(o, "gpu", json_gpu(m, k));
    put(o, "sync_calls", ju64(k->sync_calls));
    put(o, "sync_ns", ju64(k->sync_ns));
    put(o, "own_work_ns", ju64(k->own_work_ns));
    put(o, "wait_ns", ju64(k->wait_ns));
    put(o, "wait_basis", ga_json_str(k->have_gpu ? "gpu_timeline" : "host_only"));
    put(o, "collective_ns", ju64(k->collective_ns));
    put(o, "top_idle_cause", json_idle_cause(k));
    put(o, "peak_bytes", ju64(k->peak_bytes));
    put(o, "peak_time_ns", k->peak_bytes ? ji64(ga_multi_at(m, k, k->peak_ts)) : NULL);
    put(o, "leaked_bytes", ju64(k->leaked_bytes));
    return o;
}

static jobj *json_straggler(const struct ga_multi *m)
{
    if (m->straggler < 0) return NULL;
    const struct ga_rank *k = &m->ranks[m->straggler];
    jobj *o = json_object_new_object();
    put(o, "rank", ju64((uint64_t)m->straggler));
    put(o, "path", ga_json_str(k->path));
    put(o, "wait_ns", ju64(k->wait_ns));
    put(o, "margin_ns", ju64(m->straggler_margin_ns));
    return o;
}

static jobj *json_cross(const struct ga_multi *m)
{
    jobj *o = json_object_new_object(), *ranks = json_object_new_array();
    for (size_t i = 0; i < m->n; i++)
        json_object_array_add(ranks, json_rank(m, i));
    put(o, "processes", ju64(m->n));
    put(o, "origin_realtime_ns", ju64(m->origin_realtime_ns));
    put(o, "clock_alignment", ga_json_str(m->same_host ? "same_host" : "several_hosts"));
    put(o, "ranks", ranks);
    put(o, "straggler", json_straggler(m));
    return o;
}

int ga_json_multi_end(const struct ga_multi *m, FILE *o)
{
    int flags = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
    jobj *cross = json_cross(m);
    const char *s = json_object_to_json_string_ext(cross, flags);
    fputs(m->n ? "\n  ],\n  \"cross\": " : "],\n  \"cross\": ", o);
    struct indenter x = {o, "  ", 0};
    indent_write(&x, s, strlen(s));
    int rc = fputs("\n}\n", o) < 0 ? -1 : 0;
    json_object_put(cross);
    return rc;
}
