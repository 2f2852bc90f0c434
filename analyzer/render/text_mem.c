/* The text report's memory section (counts, peaks, what filled memory at the peak, temporaries,
 * the pools, PyTorch's allocator, leaks, by API) and its failed allocations: a table, then for
 * the first ones their verdict with the evidence in numbers, their top holders and advice.
 * Reads the memory view alone (model/view_mem.h), with the pools' and the allocator's. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/mem.h"
#include "render/nvml.h"
#include "render/pools.h"
#include "render/torch_render.h"
#include "base/util.h"

#define TOP_HOLDERS 5 /* sites listed at the peak (per failed allocation: GA_VMEM_OOM_HOLDERS) */
#define TOP_LARGEST 3 /* single allocations listed at the peak */
#define SITE_COLS   60
#define TOP_OOMS    10 /* rows of the failed allocations' table */

static void put_label(FILE *o, const char *label)
{
    ga_put_trimmed(o, label, SITE_COLS);
    fputc('\n', o);
}

static void peak_holders(const struct ga_vmem_peakview *p, FILE *o)
{
    char b[32];
    size_t n = p->by_site.n + (size_t)p->by_site.omitted;
    if (!n) return;
    fprintf(o, "  at peak   %10s %7s  site\n", "bytes", "count");
    for (size_t i = 0; i < p->by_site.n && i < TOP_HOLDERS; i++) {
        const struct ga_vmem_site_amount *x = &p->by_site.v[i];
        fprintf(o, "            %10s %7" PRIu64 "  ", ga_fmt_bytes(b, x->bytes), x->count);
        put_label(o, x->site.text);
    }
    if (p->no_stack.count)
        fprintf(o, "            %10s %7" PRIu64 "  <no stack recorded>\n",
                ga_fmt_bytes(b, p->no_stack.bytes), p->no_stack.count);
    if (n > TOP_HOLDERS)
        fprintf(o, "            ... %zu more sites (see --json)\n", n - TOP_HOLDERS);
}

static void peak_kinds(const struct ga_vmem_peakview *p, FILE *o)
{
    char b[32], t[32];
    fprintf(o, "  by api    ");
    for (size_t i = 0; i < p->n_by_api; i++)
        fprintf(o, "%s%s %s", i ? ", " : "", p->by_api[i].name,
                ga_fmt_bytes(b, p->by_api[i].bytes));
    fprintf(o, "\n  by size   ");
    for (size_t c = 0; c < p->n_by_class; c++)
        fprintf(o, "%s%s %s (%" PRIu64 ")", c ? ", " : "", p->by_class[c].name,
                ga_fmt_bytes(b, p->by_class[c].bytes), p->by_class[c].count);
    fputc('\n', o);
    for (size_t i = 0; i < p->n_largest && i < TOP_LARGEST; i++) {
        const struct ga_vmem_alloc *x = &p->largest[i];
        fprintf(o, "  %-9s %10s dev %d, ", i ? "" : "largest", ga_fmt_bytes(b, x->size), x->device);
        if (x->freed)
            fprintf(o, "freed at %s, ", ga_fmt_ms(t, x->free_ns));
        else
            fprintf(o, "live at the end, ");
        put_label(o, x->site.text);
    }
}

/* The peak by category, one line; PyTorch's part, when the replay or a snapshot split it,
 * marked with its moment. */
static void peak_cats(const struct ga_vmem_peakview *p, FILE *o)
{
    char b[32], t[32];
    if (!p->cats_valid || !p->n_cats) return;
    fprintf(o, "  by what   ");
    for (size_t i = 0; i < p->n_cats; i++)
        fprintf(o, "%s%s%s %s", i ? ", " : "", p->cats[i].name, p->cats[i].from_snapshot ? "*" : "",
                ga_fmt_bytes(b, p->cats[i].bytes));
    if (p->have_cat_replay && p->n_cat_splits > 1)
        fprintf(o,
                "\n            * PyTorch's segments at its peak on each of %zu devices, the last "
                "at %s (block events replayed)",
                p->n_cat_splits, ga_fmt_ms(t, p->cat_replay_ns));
    else if (p->have_cat_replay)
        fprintf(o, "\n            * PyTorch's segments at its peak, %s (block events replayed)",
                ga_fmt_ms(t, p->cat_replay_ns));
    else if (p->cats_expanded)
        fprintf(o, "\n            * PyTorch's segments as its snapshot at %s held them",
                ga_fmt_ms(t, p->cat_snapshot_ns));
    fputc('\n', o);
}

static void text_peak(const struct ga_vmem *v, FILE *o)
{
    char b[32];
    if (v->peak.valid) {
        peak_holders(&v->peak, o);
        peak_kinds(&v->peak, o);
        peak_cats(&v->peak, o);
    }
    if (v->temp_count) {
        fprintf(o, "  temporary %" PRIu64 " allocation%s (%s) freed right after they were made",
                v->temp_count, v->temp_count == 1 ? "" : "s", ga_fmt_bytes(b, v->temp_bytes));
        if (v->temps_most_from) fprintf(o, "; most from %s", v->temps_most_from);
        fputc('\n', o);
    }
}

/* The call sites holding the most at the failure, one a line. */
static void oom_holders(const struct ga_vmem_oom *x, FILE *o)
{
    char b[32];
    for (size_t i = 0; i < x->n_holders; i++) {
        fprintf(o, "      %s %s ",
                i ? "        " : "held by:", ga_fmt_bytes(b, x->holders[i].bytes));
        put_label(o, x->holders[i].site.text);
    }
}

/* What PyTorch's allocator said of a failure it raised. */
static void torch_oom(const struct ga_vtorch_oom *a, FILE *o)
{
    char b[6][32];
    if (a->site) fprintf(o, "      raised at %s\n", a->site);
    fprintf(o, "      PyTorch: %s allocated, %s reserved but unallocated; device %s free of %s",
            ga_fmt_bytes(b[0], a->allocated), ga_fmt_bytes(b[1], a->unallocated),
            ga_fmt_bytes(b[2], a->device_free), ga_fmt_bytes(b[3], a->device_total));
    if (a->fraction_set) fprintf(o, "; fraction allows %s", ga_fmt_bytes(b[4], a->limit));
    if (a->driver_failures)
        fprintf(o, " (%u driver failure%s merged)", a->driver_failures,
                a->driver_failures == 1 ? "" : "s");
    fputc('\n', o);
    if (a->have_snap) {
        fprintf(o,
                "      largest free block %s against %s; %" PRIu64 " partly used segment%s (%s) "
                "pinned by %" PRIu64 " live block%s (%s)\n",
                ga_fmt_bytes(b[0], a->largest_fit), ga_fmt_bytes(b[1], a->requested),
                a->partly_used, a->partly_used == 1 ? "" : "s",
                ga_fmt_bytes(b[2], a->partly_used_bytes), a->pinning_blocks,
                a->pinning_blocks == 1 ? "" : "s", ga_fmt_bytes(b[3], a->pinning_bytes));
        ga_text_torch_sites(&a->pinned_by, o, "      pinned by: ");
    }
    fprintf(o, "      advice: %s\n", a->advice);
}

static void oom_details(const struct ga_vmem *v, const struct ga_vnvml *nv, FILE *o)
{
    char t[32], b[6][32];
    for (size_t k = 0; k < v->n_explained; k++) {
        size_t i = v->explained[k];
        const struct ga_vmem_oom *x = &v->ooms[i];
        fprintf(o, "  at %s: %s of %s on dev %d -> %s\n", ga_fmt_ms(t, x->ns), x->site.text,
                ga_fmt_bytes(b[0], x->requested), x->device, x->verdict);
        fprintf(o, "      device free %s of %s; this process %s; others ~%s; overhead ~%s\n",
                ga_fmt_bytes(b[0], x->free_bytes), ga_fmt_bytes(b[1], x->total_bytes),
                ga_fmt_bytes(b[2], x->held), ga_fmt_bytes(b[3], x->others),
                ga_fmt_bytes(b[4], x->overhead));
        ga_text_oom_processes(nv, o, i);
        if (x->have_pools)
            fprintf(o, "      pools: %s reserved but unused, largest free extent %s%s%s\n",
                    ga_fmt_bytes(b[0], x->reserved_unused), ga_fmt_bytes(b[1], x->largest_free),
                    x->pool_name ? " in " : "", x->pool_name ? x->pool_name : "");
        if (x->retry)
            fprintf(o, "      then freed %s in %" PRIu64 " call%s and retried: %s\n",
                    ga_fmt_bytes(b[0], x->freed_before_retry), x->freed_count,
                    x->freed_count == 1 ? "" : "s", x->retry_name);
        oom_holders(x, o);
        if (x->torch)
            torch_oom(x->torch, o);
        else
            fprintf(o, "      advice: %s\n", x->advice);
    }
}

/* One row per API that allocated or freed. */
static void text_by_api(const struct ga_vmem *v, FILE *o)
{
    char b[32];
    for (size_t i = 0; i < v->n_apis; i++) {
        const struct ga_vmem_api *m = &v->apis[i];
        if (!i)
            fprintf(o, "  %-30s %-12s %8s %10s %7s %8s\n", "api", "kind", "calls", "bytes",
                    "failed", "released");
        fprintf(o, "  %-30s %-12s %8" PRIu64 " %10s %7" PRIu64 " %8" PRIu64 "\n", m->api, m->kind,
                m->calls, ga_fmt_bytes(b, m->bytes), m->failed, m->frees);
    }
}

/* Sparkline level 0..8 of v against peak: ceil(8 v / peak). Live bytes are sums modulo 2^64,
 * so absurd sizes in a corrupt trace can leave a bucket above the recorded peak: that is a full
 * bar, never an index past the table. */
static unsigned spark_level(uint64_t v, uint64_t peak)
{
    if (v >= peak) return 8;
    return (unsigned)(((unsigned __int128)v * 8 + peak - 1) / peak);
}

/* A sparkline of one device's live device bytes over the trace. */
static void text_spark(const struct ga_vmem_dev *d, FILE *o)
{
    static const char *const lv[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    if (!d->n_spark) return;
    fprintf(o, "  dev %-3d   |", d->device);
    for (size_t c = 0; c < d->n_spark; c++)
        fputs(lv[spark_level(d->spark[c], d->peak_total)], o);
    fputs("|\n", o);
}

static void text_peaks(const struct ga_vmem *v, FILE *o)
{
    char b[32], t[32];
    fprintf(o, "  peak      %s", ga_fmt_bytes(b, v->peak_total));
    if (v->peak_total) fprintf(o, " at %s", ga_fmt_ms(t, v->peak_ns));
    fprintf(o, " (device memory, whole process)\n");
    for (size_t i = 0; i < v->n_devs; i++) {
        const struct ga_vmem_dev *d = &v->devs[i];
        if (!d->peak_total) continue;
        fprintf(o, "  dev %-3d   peak %s at %s", d->device, ga_fmt_bytes(b, d->peak_total),
                ga_fmt_ms(t, d->peak_total_ns));
        fprintf(o, ", %s live at end\n", ga_fmt_bytes(b, d->live_total));
        text_spark(d, o);
    }
}

void ga_text_memory(const struct ga_vmem *v, const struct ga_vpools *pools,
                    const struct ga_vtorch *torch, FILE *o)
{
    char b[32], b2[32];
    fprintf(o, "\nmemory    %" PRIu64 " allocations (%s), %" PRIu64 " frees, %" PRIu64 " failed\n",
            v->alloc_count, ga_fmt_bytes(b, v->alloc_bytes), v->free_count, v->failed_count);
    text_peaks(v, o);
    text_peak(v, o);
    ga_text_pools(pools, o);
    ga_text_torch(torch, o);
    fprintf(o, "  leaked    %s in %" PRIu64 " allocation%s (device memory live at the end)\n",
            ga_fmt_bytes(b, v->leaked_bytes), v->leaked_count, v->leaked_count == 1 ? "" : "s");
    if (v->cached_count)
        fprintf(o,
                "  cached    %s in %" PRIu64 " segment%s PyTorch's allocator held at exit "
                "(its cache, not a leak)\n",
                ga_fmt_bytes(b, v->cached_bytes), v->cached_count, v->cached_count == 1 ? "" : "s");
    if (v->pinned.peak)
        fprintf(o, "  pinned    host memory: peak %s, %s live at the end\n",
                ga_fmt_bytes(b, v->pinned.peak), ga_fmt_bytes(b2, v->pinned.live));
    if (v->va.peak)
        fprintf(o, "  va        reserved address space: peak %s, %s at the end\n",
                ga_fmt_bytes(b, v->va.peak), ga_fmt_bytes(b2, v->va.live));
    if (v->ctx_release_count)
        fprintf(o, "  teardown  %" PRIu64 " allocations (%s) released with their context\n",
                v->ctx_release_count, ga_fmt_bytes(b, v->ctx_release_bytes));
    if (v->unmatched_frees || v->failed_frees || v->double_allocs)
        fprintf(o,
                "  oddities  %" PRIu64 " frees of unknown addresses, %" PRIu64
                " failed frees, %" PRIu64 " allocations of a live address\n",
                v->unmatched_frees, v->failed_frees, v->double_allocs);
    text_by_api(v, o);
}

void ga_text_ooms(const struct ga_vmem *v, const struct ga_vnvml *nv, FILE *o)
{
    char t[32], b[5][32];
    if (!v->n_ooms) return;
    fprintf(o, "\nfailed allocations (%zu)\n", v->n_ooms + (size_t)v->ooms_omitted);
    fprintf(o, "  %11s %-24s %3s %10s %10s %10s %10s %11s  %s\n", "time", "api", "dev", "request",
            "free", "total", "held", "unaccounted", "verdict");
    for (size_t i = 0; i < v->n_ooms && i < TOP_OOMS; i++) {
        const struct ga_vmem_oom *x = &v->ooms[i];
        fprintf(o, "  %11s %-24s %3d %10s %10s %10s %10s %11s  %s\n", ga_fmt_ms(t, x->ns),
                x->torch ? "pytorch allocator" : x->api, x->device,
                ga_fmt_bytes(b[0], x->requested), ga_fmt_bytes(b[1], x->free_bytes),
                ga_fmt_bytes(b[2], x->total_bytes), ga_fmt_bytes(b[3], x->held),
                ga_fmt_bytes(b[4], x->unaccounted), x->verdict);
    }
    if (v->n_ooms + v->ooms_omitted > TOP_OOMS)
        fprintf(o, "  ... and %" PRIu64 " more (see --json)\n",
                v->n_ooms + v->ooms_omitted - TOP_OOMS);
    oom_details(v, nv, o);
}
