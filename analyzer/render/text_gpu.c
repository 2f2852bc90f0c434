/* The terminal report's GPU timeline section: per device span/busy/idle/utilization, kernels by
 * GPU time, copies, memsets, launch linking, idle gaps. Without GPU activity: one line saying
 * why. Reads the GPU view alone (model/view_gpu.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/gpu.h"
#include "base/util.h"

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

/* After each figure that CUPTI's dropped records make a bound, not a count. */
static const char *bound(const struct ga_vgpu *v)
{
    return v->dropped ? "  [incomplete: CUPTI dropped records]" : "";
}

static void text_devices(const struct ga_vgpu *v, FILE *o)
{
    char t[4][32];
    for (size_t i = 0; i < v->n_devices && i < MAX_DEVICES; i++) {
        const struct ga_vgpu_device *d = &v->devices[i];
        uint64_t span = d->span;
        fprintf(o, "  device %-3u span %s, busy %s, idle %s, utilization %.1f%%%s\n", d->device,
                fmt_dur(t[0], span), fmt_dur(t[1], d->busy_ns), fmt_dur(t[2], span - d->busy_ns),
                span ? 100.0 * (double)d->busy_ns / (double)span : 0.0, bound(v));
        fprintf(o, "             %" PRIu64 " kernel%s on %zu stream%s, first activity at %s\n",
                d->kernels, d->kernels == 1 ? "" : "s", d->n_streams, d->n_streams == 1 ? "" : "s",
                ga_fmt_ms(t[3], d->first_ns));
    }
    if (v->n_devices > MAX_DEVICES)
        fprintf(o, "  ... %zu more devices (see --json)\n", v->n_devices - MAX_DEVICES);
}

static void text_kernels(const struct ga_vgpu *g, FILE *o)
{
    char t[3][32];
    if (!g->n_kernels) return;
    fprintf(o, "  %10s %12s %12s %12s  %s%s\n", "kernels", "GPU time", "mean", "max",
            "name (by GPU time)", bound(g));
    for (size_t i = 0; i < g->n_kernels && i < TOP_GPU_KERNELS; i++) {
        const struct ga_vkernel *k = &g->kernels[i];
        fprintf(o, "  %10" PRIu64 " %12s %12s %12s  ", k->count, fmt_dur(t[0], k->total_ns),
                fmt_dur(t[1], k->total_ns / k->count), fmt_dur(t[2], k->max_ns));
        ga_put_trimmed(o, k->demangled, 80);
        fputc('\n', o);
    }
    if (g->n_kernels > TOP_GPU_KERNELS)
        fprintf(o, "  ... %zu more kernel names (see --json)\n", g->n_kernels - TOP_GPU_KERNELS);
}

static void text_copies(const struct ga_vgpu *g, FILE *o)
{
    char b[32], t[32];
    const char *sep = "  copies    ";
    for (unsigned k = 0; k < GA_VGPU_COPY_KINDS; k++) {
        const struct ga_vsum *s = &g->copies[k];
        if (!s->count) continue;
        fprintf(o, "%s%s %" PRIu64 " x, %s in %s", sep, g->copy_kind_names[k], s->count,
                ga_fmt_bytes(b, s->bytes), fmt_dur(t, s->total_ns));
        if (s->total_ns) fprintf(o, " (%.2f GB/s)", (double)s->bytes / (double)s->total_ns);
        sep = ";\n            ";
    }
    if (*sep == ';') fprintf(o, "%s\n", bound(g));
    if (g->memsets.count)
        fprintf(o, "  memsets   %" PRIu64 " x, %s in %s%s\n", g->memsets.count,
                ga_fmt_bytes(b, g->memsets.bytes), fmt_dur(t, g->memsets.total_ns), bound(g));
}

static void text_linking(const struct ga_vgpu *v, FILE *o)
{
    const struct ga_vlink *l = &v->link;
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

/* ---- idle gaps ------------------------------------------------------------------------------- */

#define IDLE_DEVICES   8 /* devices with an idle summary */
#define IDLE_DETAILED  2 /* of them, the first with call sites and longest gaps (a screen) */
#define IDLE_SITE_ROWS 6
#define IDLE_GAPS      5

static const char *cause_text(unsigned c)
{
    static const char *const t[GA_VGPU_CAUSES] = {"host busy",  "synchronize",    "allocation",
                                                  "dependency", "launch latency", "unknown"};
    return c < GA_VGPU_CAUSES ? t[c] : "unknown";
}

/* prefix and the site; nothing when the trace has no stacks at all (GPUTRACE_STACKS, depth 0). */
static void put_site_of(const struct ga_vgpu *v, FILE *o, const char *prefix,
                        const struct ga_vsite *s)
{
    if (!v->have_stacks) return;
    fputs(prefix, o);
    if (!s) {
        fputs("(no host stack)", o);
        return;
    }
    ga_put_trimmed(o, s->frame ? s->frame->label : "<unknown>", 70);
}

static void idle_header(const struct ga_vgpu *v, const struct ga_vidle *x, FILE *o)
{
    char t[32];
    uint64_t span = x->span;
    fprintf(o, "  device %-3u idle %.1f%% of the span: %s in %" PRIu64 " gap%s%s\n", x->device,
            span ? 100.0 * (double)x->idle_ns / (double)span : 0.0, fmt_dur(t, x->idle_ns),
            x->n_gaps, x->n_gaps == 1 ? "" : "s", bound(v));
    if (x->n_gaps) {
        fputs("             lengths", o);
        for (unsigned b = 0; b < GA_VGPU_BUCKETS; b++)
            fprintf(o, "%s %s %" PRIu64, b ? "," : "", v->bucket_names[b], x->bucket_n[b]);
        fputc('\n', o);
    }
    if (x->n_windows)
        fprintf(o, "             windows of %s: %" PRIu64 " of %zu under %.0f%% busy\n",
                fmt_dur(t, x->window_ns), x->low_windows, x->n_windows, 100 * v->window_low);
}

static void idle_sites(const struct ga_vgpu *v, const struct ga_vidle *x, FILE *o)
{
    char t[32];
    if (!x->n_sites) return;
    fprintf(o, "  %12s %6s %7s  %s\n", "idle time", "share", "gaps",
            v->have_stacks ? "cause            where (host call site)" : "cause");
    for (size_t i = 0; i < x->n_sites && i < IDLE_SITE_ROWS; i++) {
        const struct ga_vidle_site *s = &x->sites[i];
        fprintf(o, "  %12s %5.1f%% %7" PRIu64 "  %-*s", fmt_dur(t, s->idle_ns),
                x->idle_ns ? 100.0 * (double)s->idle_ns / (double)x->idle_ns : 0.0, s->gaps,
                v->have_stacks ? 15 : 0, cause_text(s->cause));
        put_site_of(v, o, "  ", s->site);
        fputc('\n', o);
    }
    if (x->sites_total > IDLE_SITE_ROWS)
        fprintf(o, "  ... %zu more rows (see --json)\n", x->sites_total - IDLE_SITE_ROWS);
}

static const char *ih_class_text(unsigned cls, int on_cpu)
{
    switch (cls) {
    case GA_VGPU_HI_DATA_LOADING:
        return on_cpu ? "data loading, on CPU" : "data loading, blocked";
    case GA_VGPU_HI_IO_WAIT:
        return "blocked";
    case GA_VGPU_HI_CPU:
        return "on CPU";
    case GA_VGPU_HI_COMM:
        return "communication";
    case GA_VGPU_HI_SYNC:
        return "synchronization";
    case GA_VGPU_HI_ALLOC:
        return "allocation";
    case GA_VGPU_HI_LAUNCH:
        return "launch overhead";
    default:
        return "host busy, unsampled";
    }
}

/* A frame's label where the text report prints it whole: cut at 511 bytes, as it always was. */
#define LABEL_MAX "511"

/* "GPU 0 idle 41%: 35% while the host was in load_batch (train.py:40), blocked; ...": the idle
 * time by host site and class from the host stack samples (model/view_gpu.h). */
static void idle_host(const struct ga_vidle *x, FILE *o)
{
    if (!x->have_host || !x->n_host_sites) return;
    uint64_t span = x->span;
    fprintf(o, "  GPU %u idle %.0f%%:", x->device,
            span ? 100.0 * (double)x->idle_ns / (double)span : 0.0);
    for (size_t i = 0; i < x->n_host_sites && i < IDLE_SITE_ROWS; i++) {
        const struct ga_vhost_site *s = &x->host_sites[i];
        double pct = span ? 100.0 * (double)s->idle_ns / (double)span : 0.0;
        fprintf(o, "%s %.1f%% while the host was in %." LABEL_MAX "s, %s", i ? ";" : "", pct,
                s->site ? s->site->label : "<unknown>",
                ih_class_text(s->cls, s->on_cpu_ns > s->off_cpu_ns));
    }
    if (x->n_host_sites > IDLE_SITE_ROWS)
        fprintf(o, "; ... %zu more (see --json)", x->n_host_sites - IDLE_SITE_ROWS);
    fputc('\n', o);
}

static void put_act(FILE *o, const struct ga_vact *a)
{
    ga_put_trimmed(o, a->demangled, 40);
    fprintf(o, " (stream %u)", a->stream);
}

/* What the host did: the blocking call, and the launch and the host time before it unless the
 * call is the gap's cause. */
static void gap_host(const struct ga_vgpu *v, const struct ga_vgap *gp, FILE *o)
{
    char t[32];
    const struct ga_vlaunch *l = &gp->launch;
    if (gp->call.kind) {
        fprintf(o, "               thread %u in %s for %s of it", gp->call.tid, gp->call.api,
                fmt_dur(t, gp->call.overlap_ns));
        put_site_of(v, o, ", at ", gp->call.site);
        fputc('\n', o);
        if (gp->cause == GA_VGPU_SYNC || gp->cause == GA_VGPU_ALLOC) return;
    }
    fputs("               ", o);
    if (gp->have_launch) {
        fprintf(o, "%s by thread %u %s the gap began", l->api, l->tid,
                l->before_gap ? "before" : "after");
        if (!l->before_gap && l->have_since)
            fprintf(o, ", %s after its previous call (%s)", fmt_dur(t, l->since_prev_ns),
                    l->prev_api);
        put_site_of(v, o, ", at ", l->site);
    } else {
        fputs("the work after it is not linked to a launch", o);
    }
    fputc('\n', o);
}

/* The split of a gap of more than one phase (docs/ANALYSES.md, "Phases of a gap"). */
static void gap_phases(const struct ga_vgap *gp, FILE *o)
{
    char t[32];
    unsigned n = 0;
    for (unsigned c = 0; c < GA_VGPU_CAUSES; c++)
        n += gp->phase_ns[c] != 0;
    if (n < 2) return;
    fputs("               phases:", o);
    n = 0;
    for (unsigned c = 0; c < GA_VGPU_CAUSES; c++)
        if (gp->phase_ns[c])
            fprintf(o, "%s %s %s", n++ ? "," : "", cause_text(c), fmt_dur(t, gp->phase_ns[c]));
    fputc('\n', o);
}

/* --stacks: the full stack the gap is attributed to. */
static void gap_stack(const struct ga_vstack *s, FILE *o)
{
    for (size_t i = 0; s && i < s->n && i < 64; i++) {
        fputs("                 ", o);
        ga_put_trimmed(o, s->frames[i]->label, 100);
        fputc('\n', o);
    }
}

/* The host samples inside a listed gap: where the host was while the GPU waited. */
static void gap_samples(const struct ga_vgap *gp, FILE *o)
{
    if (!gp->n_samples) return;
    fputs("               host samples:", o);
    for (size_t i = 0; i < gp->n_samples; i++) {
        const struct ga_vgap_sample *s = &gp->samples[i];
        fprintf(o, "%s %" PRIu64 " in %." LABEL_MAX "s, %s", i ? ";" : "", s->samples,
                s->site ? s->site->label : "<unknown>",
                ih_class_text(s->cls, s->on_cpu * 2 > s->samples));
    }
    fputc('\n', o);
}

static void idle_gaps(const struct ga_vgpu *v, const struct ga_vidle *x, int show_stacks, FILE *o)
{
    char t[2][32];
    if (!x->n_kept) return;
    fputs("  longest gaps\n", o);
    for (size_t i = 0; i < x->n_kept && i < IDLE_GAPS; i++) {
        const struct ga_vgap *gp = &x->gaps[i];
        fprintf(o, "  %12s at %s  %s: after ", fmt_dur(t[0], gp->dur),
                ga_fmt_ms(t[1], gp->start_ns), cause_text(gp->cause));
        put_act(o, &gp->before);
        fputs(", before ", o);
        put_act(o, &gp->after);
        fputc('\n', o);
        gap_host(v, gp, o);
        gap_phases(gp, o);
        gap_samples(gp, o);
        if (show_stacks) gap_stack(gp->stack, o);
    }
}

static void text_idle(const struct ga_vgpu *v, int show_stacks, FILE *o)
{
    if (!v->n_idle) return;
    fputs("\ngpu idle  (gaps inside each device's active span; causes: docs/ANALYSES.md)\n", o);
    for (size_t i = 0; i < v->n_idle && i < IDLE_DEVICES; i++) {
        idle_header(v, &v->idle[i], o);
        if (i >= IDLE_DETAILED) continue;
        idle_sites(v, &v->idle[i], o);
        idle_host(&v->idle[i], o);
        idle_gaps(v, &v->idle[i], show_stacks, o);
    }
    if (v->n_idle > IDLE_DETAILED)
        fprintf(o, "  (call sites and longest gaps of device%s after the first %d: see --json)\n",
                v->n_idle - IDLE_DETAILED == 1 ? "" : "s", IDLE_DETAILED);
    if (v->n_idle > IDLE_DEVICES)
        fprintf(o, "  ... %zu more devices (see --json)\n", v->n_idle - IDLE_DEVICES);
    if (v->host_gaps_early) /* (timeline.idle_by_host_gaps_early) */
        fprintf(o, "  (%" PRIu64 " gap%s joined with the host samples before a thread that stopped "
                   "making CUDA calls wrote its own: they may miss up to 64 of its samples)\n",
                v->host_gaps_early, v->host_gaps_early == 1 ? "" : "s");
    if (v->host_samples_dropped)
        fprintf(o, "  (%" PRIu64 " host sample%s past the join's bound explain no gap)\n",
                v->host_samples_dropped, v->host_samples_dropped == 1 ? "" : "s");
}

void ga_text_gpu(const struct ga_vgpu *v, int show_stacks, FILE *o)
{
    const char *status = v->status;
    if (!v->have_activity) {
        fprintf(o, "\ngpu       timeline %s%s\n", status,
                strcmp(status, "available") == 0 ? ", but the trace has no GPU activity records"
                                                 : "");
    } else {
        fprintf(o, "\ngpu timeline  %s\n", status);
        if (v->have_caveat) fprintf(o, "  INCOMPLETE %s\n", v->caveat);
        text_devices(v, o);
        text_kernels(v, o);
        text_copies(v, o);
        text_linking(v, o);
        text_idle(v, show_stacks, o);
    }
    if (v->dropped)
        fprintf(o, "DROPPED   %" PRIu64 " GPU activity records CUPTI could not deliver\n",
                v->dropped);
    if (v->late)
        fprintf(o,
                "LATE      %" PRIu64 " GPU activity records arrived after later ones were "
                "analyzed: left out\n",
                v->late);
}
