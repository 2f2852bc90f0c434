/* The text report's memory details: what filled memory at the peak, temporaries, and for each
 * failed allocation its verdict with the evidence in numbers, its top holders and advice. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/report.h"
#include "render/text.h"
#include "render/nvml.h"
#include "render/torch_render.h"
#include "base/util.h"

#define TOP_HOLDERS 5 /* sites listed at the peak (per failed allocation: GA_VIEW_OOM_HOLDERS) */
#define TOP_LARGEST 3 /* single allocations listed at the peak */
#define OOM_DETAILS 3 /* failed allocations explained in full (the rest: see --json) */
#define SITE_COLS   60

static const char *site_label(const struct ga_report *r, uint32_t stack, char *buf, size_t n)
{
    const struct ga_site *x = ga_sites_of_stack(&r->sites, stack);
    if (x && x->frame) return ga_frame_label(&r->stacks, x->frame, buf, n, 0);
    snprintf(buf, n, "%s", stack ? "<unknown stack>" : "<no stack recorded>");
    return buf;
}

static void put_site(const struct ga_report *r, FILE *o, const struct ga_site *x)
{
    char label[1024];
    if (x->frame)
        ga_frame_label(&r->stacks, x->frame, label, sizeof(label), 0);
    else
        snprintf(label, sizeof(label), "<unknown stack>");
    ga_put_trimmed(o, label, SITE_COLS);
    fputc('\n', o);
}

static void peak_holders(const struct ga_report *r, FILE *o)
{
    const struct ga_peak_breakdown *p = &r->mem.peak;
    char b[32];
    size_t n;
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_PEAK, &n);
    if (n) {
        fprintf(o, "  at peak   %10s %7s  site\n", "bytes", "count");
        for (size_t i = 0; i < n && i < TOP_HOLDERS; i++) {
            fprintf(o, "            %10s %7" PRIu64 "  ", ga_fmt_bytes(b, v[i]->st.peak_bytes),
                    v[i]->st.peak_count);
            put_site(r, o, v[i]);
        }
        if (p->no_stack.count)
            fprintf(o, "            %10s %7" PRIu64 "  <no stack recorded>\n",
                    ga_fmt_bytes(b, p->no_stack.bytes), p->no_stack.count);
        if (n > TOP_HOLDERS)
            fprintf(o, "            ... %zu more sites (see --json)\n", n - TOP_HOLDERS);
    }
    free(v);
}

static void peak_kinds(const struct ga_report *r, FILE *o)
{
    const struct ga_peak_breakdown *p = &r->mem.peak;
    char b[32], lb[16];
    const char *sep = "";
    fprintf(o, "  by api    ");
    for (unsigned i = 0; i < GT_API_MAX; i++)
        if (p->by_api[i].count) {
            fprintf(o, "%s%s %s", sep, ga_api_label(i, lb), ga_fmt_bytes(b, p->by_api[i].bytes));
            sep = ", ";
        }
    fprintf(o, "\n  by size   ");
    sep = "";
    for (unsigned c = 0; c < GA_SIZE_CLASSES; c++)
        if (p->by_class[c].count) {
            fprintf(o, "%s%s %s (%" PRIu64 ")", sep, ga_size_class_name(c),
                    ga_fmt_bytes(b, p->by_class[c].bytes), p->by_class[c].count);
            sep = ", ";
        }
    fputc('\n', o);
    for (size_t i = 0; i < p->n_top && i < TOP_LARGEST; i++) {
        char label[1024], t[32];
        const struct ga_peak_alloc *x = &p->top[i];
        fprintf(o, "  %-9s %10s dev %d, ", i ? "" : "largest", ga_fmt_bytes(b, x->size), x->device);
        if (x->free_ts)
            fprintf(o, "freed at %s, ", ga_fmt_ms(t, ga_report_rel(r, x->free_ts)));
        else
            fprintf(o, "live at the end, ");
        ga_put_trimmed(o, site_label(r, x->stack, label, sizeof(label)), SITE_COLS);
        fputc('\n', o);
    }
}

/* The peak by category (model/view_cats.h), one line; PyTorch's part, when the replay or a
 * snapshot split it, marked with its moment. */
static void peak_cats(const struct ga_report *r, FILE *o)
{
    const struct ga_vcats *v = &r->peakcats;
    char b[32], t[32];
    if (!v->valid || !v->n) return;
    fprintf(o, "  by what   ");
    for (size_t i = 0; i < v->n; i++)
        fprintf(o, "%s%s%s %s", i ? ", " : "", ga_vc_cat_name(v->lines[i].cat),
                v->lines[i].source != GA_VC_LIBRARY ? "*" : "", ga_fmt_bytes(b, v->lines[i].bytes));
    if (v->replay_ts)
        fprintf(o, "\n            * PyTorch's segments at its peak, %s (block events replayed)",
                ga_fmt_ms(t, ga_report_rel(r, v->replay_ts)));
    else if (v->expanded)
        fprintf(o, "\n            * PyTorch's segments as its snapshot at %s held them",
                ga_fmt_ms(t, ga_report_rel(r, v->snapshot_ts)));
    fputc('\n', o);
}

void ga_text_peak(const struct ga_report *r, FILE *o)
{
    const struct ga_memory *m = &r->mem;
    char b[32], label[1024];
    if (m->peak.valid) {
        peak_holders(r, o);
        peak_kinds(r, o);
        peak_cats(r, o);
    }
    if (m->temp_count) {
        fprintf(o, "  temporary %" PRIu64 " allocation%s (%s) freed right after they were made",
                m->temp_count, m->temp_count == 1 ? "" : "s", ga_fmt_bytes(b, m->temp_bytes));
        if (m->n_temps && m->temps[0].stack)
            fprintf(o, "; most from %s", site_label(r, m->temps[0].stack, label, sizeof(label)));
        fputc('\n', o);
    }
}

/* The call sites holding the most at the failure, one a line (the model's view: grouped by site,
 * largest first, capped). */
static void oom_holders(const struct ga_report *r, FILE *o, const struct ga_oom_view *v)
{
    char b[32], label[1024];
    for (size_t i = 0; i < v->n_holders; i++) {
        const struct ga_holder_view *h = &v->holders[i];
        fprintf(o, "      %s %s ", i ? "        " : "held by:", ga_fmt_bytes(b, h->bytes));
        if (h->site && h->site->frame)
            ga_frame_label(&r->stacks, h->site->frame, label, sizeof(label), 0);
        else
            snprintf(label, sizeof(label), "%s", h->stack ? "<unknown stack>" : "<no stack recorded>");
        ga_put_trimmed(o, label, SITE_COLS);
        fputc('\n', o);
    }
}

void ga_text_oom_details(const struct ga_report *r, FILE *o)
{
    const struct ga_memory *m = &r->mem;
    char t[32], b[6][32], label[1024];
    size_t shown = 0;
    for (size_t i = 0; i < m->n_ooms && shown < OOM_DETAILS; i++) {
        const struct ga_oom *x = &m->ooms[i];
        const struct ga_oom_view *v = &r->views.ooms[i];
        if (x->result != GA_CUDA_ERROR_OUT_OF_MEMORY) continue;
        if (v->repeat_of >= 0) continue; /* explained with the one it repeats */
        shown++;
        fprintf(o, "  at %s: %s of %s on dev %d -> %s\n", ga_fmt_ms(t, ga_report_rel(r, x->ts)),
                site_label(r, x->stack, label, sizeof(label)), ga_fmt_bytes(b[0], x->requested),
                x->device, ga_verdict_name(x->verdict));
        fprintf(o, "      device free %s of %s; this process %s; others ~%s; overhead ~%s\n",
                ga_fmt_bytes(b[0], x->free_bytes), ga_fmt_bytes(b[1], x->total_bytes),
                ga_fmt_bytes(b[2], x->held), ga_fmt_bytes(b[3], x->others),
                ga_fmt_bytes(b[4], x->overhead));
        ga_text_oom_processes(&r->nvmlview, o, i);
        if (x->have_pools)
            fprintf(o, "      pools: %s reserved but unused, largest free extent %s%s%s\n",
                    ga_fmt_bytes(b[0], x->pools.reserved_unused),
                    ga_fmt_bytes(b[1], x->pools.largest_free), x->pools.pool_name ? " in " : "",
                    x->pools.pool_name ? x->pools.pool_name : "");
        if (x->retry)
            fprintf(o, "      then freed %s in %" PRIu64 " call%s and retried: %s\n",
                    ga_fmt_bytes(b[0], x->freed_before_retry), x->freed_count,
                    x->freed_count == 1 ? "" : "s",
                    x->retry == GA_RETRY_OK ? "succeeded" : "failed");
        oom_holders(r, o, v);
        if (x->alloc)
            ga_text_torch_oom(r, o, x);
        else
            fprintf(o, "      advice: %s\n", ga_report_oom_advice(r, x, label, sizeof(label)));
    }
}
