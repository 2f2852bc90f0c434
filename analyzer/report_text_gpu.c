/* The terminal report's GPU timeline section: per device span/busy/idle/utilization, kernels by
 * GPU time, copies, memsets, launch linking. Without GPU activity: one line saying why. */
#include <inttypes.h>
#include <string.h>

#include "report_text.h"
#include "util.h"

#define TOP_GPU_KERNELS 10
#define MAX_DEVICES     8

/* A duration in the unit that reads best: ns, us, ms or s (the unit changes where the rounded
 * figure would reach 1000). */
static const char *fmt_dur(char buf[32], uint64_t ns)
{
    if (ns < 1000)
        snprintf(buf, 32, "%" PRIu64 " ns", ns);
    else if (ns < 999950)
        snprintf(buf, 32, "%.1f us", (double)ns / 1e3);
    else if (ns < 999999500)
        snprintf(buf, 32, "%.3f ms", (double)ns / 1e6);
    else
        snprintf(buf, 32, "%.3f s", (double)ns / 1e9);
    return buf;
}

static const char *fmt_sdur(char buf[32], int64_t ns)
{
    char t[32];
    if (ns >= 0) return fmt_dur(buf, (uint64_t)ns);
    snprintf(buf, 32, "-%.30s", fmt_dur(t, (uint64_t)0 - (uint64_t)ns));
    return buf;
}

static void text_devices(const struct ga_report *r, FILE *o)
{
    char t[4][32];
    for (size_t i = 0; i < r->gpu.n_devices && i < MAX_DEVICES; i++) {
        const struct ga_gpu_device *d = &r->gpu.devices[i];
        uint64_t span = d->last - d->first;
        fprintf(o, "  device %-3u span %s, busy %s, idle %s, utilization %.1f%%\n", d->device,
                fmt_dur(t[0], span), fmt_dur(t[1], d->busy_ns), fmt_dur(t[2], span - d->busy_ns),
                span ? 100.0 * (double)d->busy_ns / (double)span : 0.0);
        fprintf(o, "             %" PRIu64 " kernel%s on %zu stream%s, first activity at %s\n",
                d->kernels, d->kernels == 1 ? "" : "s", d->n_streams, d->n_streams == 1 ? "" : "s",
                ga_fmt_ms(t[3], ga_report_rel(r, d->first)));
    }
    if (r->gpu.n_devices > MAX_DEVICES)
        fprintf(o, "  ... %zu more devices (see --json)\n", r->gpu.n_devices - MAX_DEVICES);
}

static void text_kernels(const struct ga_report *r, FILE *o)
{
    const struct ga_gpu *g = &r->gpu;
    char t[3][32];
    if (!g->n_kernels) return;
    fprintf(o, "  %10s %12s %12s %12s  %s\n", "kernels", "GPU time", "mean", "max",
            "name (by GPU time)");
    for (size_t i = 0; i < g->n_kernels && i < TOP_GPU_KERNELS; i++) {
        const struct ga_gpu_kstat *k = &g->kernels[i];
        fprintf(o, "  %10" PRIu64 " %12s %12s %12s  ", k->count, fmt_dur(t[0], k->total_ns),
                fmt_dur(t[1], k->total_ns / k->count), fmt_dur(t[2], k->max_ns));
        ga_put_trimmed(o, k->demangled, 80);
        fputc('\n', o);
    }
    if (g->n_kernels > TOP_GPU_KERNELS)
        fprintf(o, "  ... %zu more kernel names (see --json)\n", g->n_kernels - TOP_GPU_KERNELS);
}

static void text_copies(const struct ga_report *r, FILE *o)
{
    const struct ga_gpu *g = &r->gpu;
    char b[32], t[32];
    const char *sep = "  copies    ";
    for (unsigned k = 0; k < GA_COPY_KINDS; k++) {
        const struct ga_gpu_sum *s = &g->copies[k];
        if (!s->count) continue;
        fprintf(o, "%s%s %" PRIu64 " x, %s in %s", sep, ga_copy_kind_name(k), s->count,
                ga_fmt_bytes(b, s->bytes), fmt_dur(t, s->total_ns));
        if (s->total_ns) fprintf(o, " (%.2f GB/s)", (double)s->bytes / (double)s->total_ns);
        sep = ";\n            ";
    }
    if (*sep == ';') fputc('\n', o);
    if (g->memsets.count)
        fprintf(o, "  memsets   %" PRIu64 " x, %s in %s\n", g->memsets.count,
                ga_fmt_bytes(b, g->memsets.bytes), fmt_dur(t, g->memsets.total_ns));
}

static void text_linking(const struct ga_report *r, FILE *o)
{
    const struct ga_gpu_link *l = &r->gpu.link;
    char t[3][32];
    if (!l->kernels) return;
    fprintf(o, "  launches  %" PRIu64 " of %" PRIu64 " kernels linked to their launch", l->linked,
            l->kernels);
    if (l->graph_kernels) fprintf(o, " (%" PRIu64 " through cuGraphLaunch)", l->graph_kernels);
    if (l->unlinked) fprintf(o, ", %" PRIu64 " unlinked", l->unlinked);
    fputc('\n', o);
    if (l->latency_n)
        fprintf(o, "            launch to start: min %s, median %s, max %s\n",
                fmt_sdur(t[0], l->latency_min), fmt_sdur(t[1], l->latency_median),
                fmt_sdur(t[2], l->latency_max));
}

void ga_text_gpu(const struct ga_report *r, FILE *o)
{
    char why[300];
    const char *status = ga_report_gpu_timeline(r, why, sizeof(why));
    if (!ga_gpu_has_activity(&r->gpu)) {
        fprintf(o, "\ngpu       timeline %s%s\n", status,
                strcmp(status, "available") == 0 ? ", but the trace has no GPU activity records"
                                                 : "");
    } else {
        fprintf(o, "\ngpu timeline  %s\n", status);
        text_devices(r, o);
        text_kernels(r, o);
        text_copies(r, o);
        text_linking(r, o);
    }
    if (r->gpu.dropped)
        fprintf(o, "DROPPED   %" PRIu64 " GPU activity records CUPTI could not deliver\n",
                r->gpu.dropped);
}
