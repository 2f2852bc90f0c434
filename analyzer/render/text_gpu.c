/* The terminal report's GPU timeline section: per device span/busy/idle/utilization, kernels by
 * GPU time, copies, memsets, launch linking. Without GPU activity: one line saying why. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/text.h"
#include "base/demangle.h"
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
static const char *bound(const struct ga_report *r)
{
    return r->gpu.dropped ? "  [incomplete: CUPTI dropped records]" : "";
}

static void text_devices(const struct ga_report *r, FILE *o)
{
    char t[4][32];
    for (size_t i = 0; i < r->gpu.n_devices && i < MAX_DEVICES; i++) {
        const struct ga_gpu_device *d = &r->gpu.devices[i];
        uint64_t span = d->last - d->first;
        fprintf(o, "  device %-3u span %s, busy %s, idle %s, utilization %.1f%%%s\n", d->device,
                fmt_dur(t[0], span), fmt_dur(t[1], d->busy_ns), fmt_dur(t[2], span - d->busy_ns),
                span ? 100.0 * (double)d->busy_ns / (double)span : 0.0, bound(r));
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
    fprintf(o, "  %10s %12s %12s %12s  %s%s\n", "kernels", "GPU time", "mean", "max",
            "name (by GPU time)", bound(r));
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
    if (*sep == ';') fprintf(o, "%s\n", bound(r));
    if (g->memsets.count)
        fprintf(o, "  memsets   %" PRIu64 " x, %s in %s%s\n", g->memsets.count,
                ga_fmt_bytes(b, g->memsets.bytes), fmt_dur(t, g->memsets.total_ns), bound(r));
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

/* ---- idle gaps ------------------------------------------------------------------------------- */

#define IDLE_DEVICES   8 /* devices with an idle summary */
#define IDLE_DETAILED  2 /* of them, the first with call sites and longest gaps (a screen) */
#define IDLE_SITE_ROWS 6
#define IDLE_GAPS      5

static const char *cause_text(unsigned c)
{
    static const char *const t[GA_CAUSES] = {"host busy",  "synchronize",    "allocation",
                                             "dependency", "launch latency", "unknown"};
    return c < GA_CAUSES ? t[c] : "unknown";
}

/* prefix and the site; nothing when the trace has no stacks at all (GPUTRACE_STACKS, depth 0). */
static void put_site_of(const struct ga_report *r, FILE *o, const char *prefix,
                        const struct ga_site *s)
{
    char label[512];
    if (!r->sites.have_stacks) return;
    fputs(prefix, o);
    if (!s) {
        fputs("(no host stack)", o);
        return;
    }
    ga_put_trimmed(
        o, s->frame ? ga_frame_label(&r->stacks, s->frame, label, sizeof(label), 0) : "<unknown>",
        70);
}

static void idle_header(const struct ga_report *r, const struct ga_gaps_device *x, FILE *o)
{
    char t[32];
    uint64_t span = x->last - x->first;
    fprintf(o, "  device %-3u idle %.1f%% of the span: %s in %" PRIu64 " gap%s%s\n", x->device,
            span ? 100.0 * (double)x->idle_ns / (double)span : 0.0, fmt_dur(t, x->idle_ns),
            x->n_gaps, x->n_gaps == 1 ? "" : "s", bound(r));
    if (x->n_gaps) {
        fputs("             lengths", o);
        for (unsigned b = 0; b < GA_GAP_BUCKETS; b++)
            fprintf(o, "%s %s %" PRIu64, b ? "," : "", ga_gap_bucket_name(b), x->bucket_n[b]);
        fputc('\n', o);
    }
    if (x->n_windows)
        fprintf(o, "             windows of %s: %" PRIu64 " of %zu under %.0f%% busy\n",
                fmt_dur(t, x->window_ns), x->low_windows, x->n_windows, 100 * GA_WINDOW_LOW);
}

static void idle_sites(const struct ga_report *r, const struct ga_gaps_device *x, FILE *o)
{
    char t[32];
    if (!x->n_sites) return;
    fprintf(o, "  %12s %6s %7s  %s\n", "idle time", "share", "gaps",
            r->sites.have_stacks ? "cause            where (host call site)" : "cause");
    for (size_t i = 0; i < x->n_sites && i < IDLE_SITE_ROWS; i++) {
        const struct ga_idle_site *s = &x->sites[i];
        fprintf(o, "  %12s %5.1f%% %7" PRIu64 "  %-*s", fmt_dur(t, s->idle_ns),
                x->idle_ns ? 100.0 * (double)s->idle_ns / (double)x->idle_ns : 0.0, s->gaps,
                r->sites.have_stacks ? 15 : 0, cause_text(s->cause));
        put_site_of(r, o, "  ", s->site);
        fputc('\n', o);
    }
    if (x->n_sites > IDLE_SITE_ROWS)
        fprintf(o, "  ... %zu more rows (see --json)\n", x->n_sites - IDLE_SITE_ROWS);
}

static void put_act(const struct ga_report *r, FILE *o, const struct ga_gpu_act *a)
{
    const char *name = ga_gpu_act_name(&r->gpu, &r->tl, a);
    char *d = a->kind == GA_GPU_KERNEL ? ga_demangle(name) : NULL;
    ga_put_trimmed(o, d ? d : name, 40);
    fprintf(o, " (stream %u)", a->stream);
    free(d);
}

/* What the host did: the blocking call, and the launch and the host time before it unless the
 * call is the gap's cause. */
static void gap_host(const struct ga_report *r, const struct ga_gap *gp, FILE *o)
{
    char t[32], api[16];
    const struct ga_gpu_launch *l = gp->launch;
    if (gp->call.kind) {
        fprintf(o, "               thread %u in %s for %s of it", gp->call.tid,
                ga_api_label(gp->call.api, api), fmt_dur(t, gp->call_ns));
        put_site_of(r, o, ", at ",
                    gp->call.stack ? ga_sites_of_stack(&r->sites, gp->call.stack) : NULL);
        fputc('\n', o);
        if (gp->cause == GA_CAUSE_SYNC || gp->cause == GA_CAUSE_ALLOC) return;
    }
    fputs("               ", o);
    if (l) {
        fprintf(o, "%s by thread %u %s the gap began", ga_api_label(l->api, api), l->tid,
                l->ts < gp->start ? "before" : "after");
        if (l->ts >= gp->start && l->prev_end && l->ts >= l->prev_end)
            fprintf(o, ", %s after its previous call (%s)", fmt_dur(t, l->ts - l->prev_end),
                    ga_api_label(l->prev_api, api));
        put_site_of(r, o, ", at ", l->stack ? ga_sites_of_stack(&r->sites, l->stack) : NULL);
    } else {
        fputs("the work after it is not linked to a launch", o);
    }
    fputc('\n', o);
}

/* The split of a gap of more than one phase (docs/ANALYSES.md, "Phases of a gap"). */
static void gap_phases(const struct ga_gap *gp, FILE *o)
{
    char t[32];
    unsigned n = 0;
    for (unsigned c = 0; c < GA_CAUSES; c++)
        n += gp->phase_ns[c] != 0;
    if (n < 2) return;
    fputs("               phases:", o);
    n = 0;
    for (unsigned c = 0; c < GA_CAUSES; c++)
        if (gp->phase_ns[c])
            fprintf(o, "%s %s %s", n++ ? "," : "", cause_text(c), fmt_dur(t, gp->phase_ns[c]));
    fputc('\n', o);
}

/* --stacks: the full stack the gap is attributed to. */
static void gap_stack(const struct ga_report *r, uint32_t stack, FILE *o)
{
    static const struct ga_frame *fr[64];
    char label[512];
    size_t n = stack ? ga_sites_stack_frames((struct ga_stacks *)&r->stacks, stack, fr, 64) : 0;
    for (size_t i = 0; i < n; i++) {
        fputs("                 ", o);
        ga_put_trimmed(o, ga_frame_label(&r->stacks, fr[i], label, sizeof(label), 0), 100);
        fputc('\n', o);
    }
}

static void idle_gaps(const struct ga_report *r, const struct ga_gaps_device *x, FILE *o)
{
    char t[2][32];
    if (!x->n_kept) return;
    fputs("  longest gaps\n", o);
    for (size_t i = 0; i < x->n_kept && i < IDLE_GAPS; i++) {
        const struct ga_gap *gp = &x->gaps[i];
        fprintf(o, "  %12s at %s  %s: after ", fmt_dur(t[0], gp->dur),
                ga_fmt_ms(t[1], ga_report_rel(r, gp->start)), cause_text(gp->cause));
        put_act(r, o, &gp->before);
        fputs(", before ", o);
        put_act(r, o, &gp->after);
        fputc('\n', o);
        gap_host(r, gp, o);
        gap_phases(gp, o);
        if (r->show_stacks) gap_stack(r, gp->stack, o);
    }
}

static void text_idle(const struct ga_report *r, FILE *o)
{
    const struct ga_gaps *g = &r->gaps;
    if (!g->n_devices) return;
    fputs("\ngpu idle  (gaps inside each device's active span; causes: docs/ANALYSES.md)\n", o);
    for (size_t i = 0; i < g->n_devices && i < IDLE_DEVICES; i++) {
        idle_header(r, &g->devices[i], o);
        if (i >= IDLE_DETAILED) continue;
        idle_sites(r, &g->devices[i], o);
        idle_gaps(r, &g->devices[i], o);
    }
    if (g->n_devices > IDLE_DETAILED)
        fprintf(o, "  (call sites and longest gaps of device%s after the first %d: see --json)\n",
                g->n_devices - IDLE_DETAILED == 1 ? "" : "s", IDLE_DETAILED);
    if (g->n_devices > IDLE_DEVICES)
        fprintf(o, "  ... %zu more devices (see --json)\n", g->n_devices - IDLE_DEVICES);
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
        if (ga_report_gpu_caveat(r, why, sizeof(why))) fprintf(o, "  INCOMPLETE %s\n", why);
        text_devices(r, o);
        text_kernels(r, o);
        text_copies(r, o);
        text_linking(r, o);
        text_idle(r, o);
    }
    if (r->gpu.dropped)
        fprintf(o, "DROPPED   %" PRIu64 " GPU activity records CUPTI could not deliver\n",
                r->gpu.dropped);
    if (r->gpu.late)
        fprintf(o,
                "LATE      %" PRIu64 " GPU activity records arrived after later ones were "
                "analyzed: left out\n",
                r->gpu.late);
}
