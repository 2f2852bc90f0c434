/* The terminal report: one screen, most important first. Sizes are human (KiB/MiB/GiB), times
 * are milliseconds from the trace start; --json has the exact numbers. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/report.h"
#include "render/text.h"
#include "render/gpu.h"
#include "render/nvml.h"
#include "render/pools.h"
#include "render/sites.h"
#include "base/demangle.h"
#include "render/torch_render.h"
#include "base/util.h"

#define TOP_KERNELS 10
#define TOP_OOMS    10
#define SPARK_COLS  60

static void text_process(const struct ga_report *r, FILE *o)
{
    const struct ga_facts *f = &r->facts;
    char t[32];
    fputs("gputrace report: ", o);
    ga_put_escaped(o, r->path, strlen(r->path));
    fputc('\n', o);
    fprintf(o, "  process   pid %u (ppid %u)", f->have_process ? f->pid : r->read.header.pid,
            f->have_process ? f->ppid : r->read.header.ppid);
    for (size_t i = 0, len = 0; i < f->argc && len < 100; len += strlen(f->argv[i++]) + 1) {
        fputc(' ', o);
        ga_put_trimmed(o, f->argv[i], 100 - len > 4 ? 100 - len : 4);
    }
    fputc('\n', o);
    if (f->host) {
        fputs("  host      ", o);
        ga_put_escaped(o, f->host, strlen(f->host));
        fputs(", exe ", o);
        ga_put_escaped(o, f->exe, strlen(f->exe));
        fputc('\n', o);
    }
    fprintf(o, "  duration  %s, %s\n", ga_fmt_ms(t, (int64_t)ga_report_duration(r)),
            f->have_end ? "ended cleanly"
                        : "no end record: the program ended without the tracer's exit path "
                          "(crash, _exit, kill) or the file was cut");
}

static void text_trace(const struct ga_report *r, FILE *o)
{
    const struct ga_read_stats *s = &r->read;
    fprintf(o, "  trace     %" PRIu64 " records in %" PRIu64 " chunks, %" PRIu64 " lost",
            s->records, s->chunks, r->facts.lost_records);
    if (s->unknown_records)
        fprintf(o, ", %" PRIu64 " of unknown types skipped", s->unknown_records);
    if (s->malformed_records) fprintf(o, ", %" PRIu64 " malformed skipped", s->malformed_records);
    if (s->late_records) fprintf(o, ", %" PRIu64 " out of watermark order", s->late_records);
    if (s->duplicate_chunks)
        fprintf(o, ", %" PRIu64 " repeated chunk%s skipped", s->duplicate_chunks,
                s->duplicate_chunks == 1 ? "" : "s");
    fputc('\n', o);
    if (s->truncated) fprintf(o, "  TRUNCATED %s\n", s->stop_reason);
}

static void text_devices(const struct ga_report *r, FILE *o)
{
    const struct ga_facts *f = &r->facts;
    char b[32];
    if (f->have_driver)
        fprintf(o, "  driver    CUDA %d.%d, %d device%s\n", f->driver_version / 1000,
                f->driver_version % 1000 / 10, f->device_count, f->device_count == 1 ? "" : "s");
    for (size_t i = 0; i < f->n_devices; i++) {
        const struct ga_device_info *d = &f->devices[i];
        fprintf(o, "  device %-2d ", d->ordinal);
        ga_put_trimmed(o, d->name, 60);
        fprintf(o, ", %s", ga_fmt_bytes(b, d->total_bytes));
        if (d->cc_major >= 0) fprintf(o, ", cc %d.%d", d->cc_major, d->cc_minor);
        fputc('\n', o);
    }
}

/* One row per API that allocated or freed. */
static void text_by_api(const struct ga_report *r, FILE *o)
{
    char b[32];
    int header = 0;
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const struct ga_api_mem *m = &r->mem.api[api];
        if (!m->count && !m->failed) continue;
        if (!header++)
            fprintf(o, "  %-30s %-12s %8s %10s %7s %8s\n", "api", "kind", "calls", "bytes",
                    "failed", "released");
        char lb[16];
        fprintf(o, "  %-30s %-12s %8" PRIu64 " %10s %7" PRIu64 " %8" PRIu64 "\n",
                ga_api_label(api, lb), gt_mem_kind_name(gt_api_table[api].mem_kind), m->calls,
                ga_fmt_bytes(b, m->bytes), m->failed, m->frees);
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
static void text_spark(const struct ga_report *r, FILE *o, int32_t device, uint64_t peak)
{
    static const char *const lv[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    const struct ga_series *s = ga_series_get(&r->mem.series, device, GA_SERIES_TOTAL);
    size_t n = r->mem.series.buckets, cols = n < SPARK_COLS ? n : SPARK_COLS;
    if (!s || !peak || !n) return;
    fprintf(o, "  dev %-3d   |", device);
    for (size_t c = 0; c < cols; c++) {
        uint64_t mx = 0;
        for (size_t b = c * n / cols; b < (c + 1) * n / cols; b++)
            if (s->max[b] > mx) mx = s->max[b];
        fputs(lv[spark_level(mx, peak)], o);
    }
    fputs("|\n", o);
}

static void text_peaks(const struct ga_report *r, FILE *o)
{
    const struct ga_memory *m = &r->mem;
    char b[32], t[32];
    fprintf(o, "  peak      %s", ga_fmt_bytes(b, m->peak_total));
    if (m->peak_total) fprintf(o, " at %s", ga_fmt_ms(t, ga_report_rel(r, m->peak_ts)));
    fprintf(o, " (device memory, whole process)\n");
    for (size_t i = 0; i < m->ndev; i++) {
        const struct ga_dev_mem *d = &m->dev[i];
        if (!d->peak_total) continue;
        fprintf(o, "  dev %-3d   peak %s at %s", d->device, ga_fmt_bytes(b, d->peak_total),
                ga_fmt_ms(t, ga_report_rel(r, d->peak_total_ts)));
        fprintf(o, ", %s live at end\n", ga_fmt_bytes(b, d->live_total));
        text_spark(r, o, d->device, d->peak_total);
    }
}

static void text_memory(const struct ga_report *r, FILE *o)
{
    const struct ga_memory *m = &r->mem;
    char b[32], b2[32];
    fprintf(o, "\nmemory    %" PRIu64 " allocations (%s), %" PRIu64 " frees, %" PRIu64 " failed\n",
            m->alloc_count, ga_fmt_bytes(b, m->alloc_bytes), m->free_count, m->failed_count);
    text_peaks(r, o);
    ga_text_peak(r, o);
    ga_text_pools(&r->poolview, o);
    ga_text_torch(r, o);
    fprintf(o, "  leaked    %s in %" PRIu64 " allocation%s (device memory live at the end)\n",
            ga_fmt_bytes(b, m->leaked_bytes), m->leaked_count, m->leaked_count == 1 ? "" : "s");
    if (m->cached_count)
        fprintf(o, "  cached    %s in %" PRIu64 " segment%s PyTorch's allocator held at exit "
                   "(its cache, not a leak)\n",
                ga_fmt_bytes(b, m->cached_bytes), m->cached_count,
                m->cached_count == 1 ? "" : "s");
    if (m->pinned_peak)
        fprintf(o, "  pinned    host memory: peak %s, %s live at the end\n",
                ga_fmt_bytes(b, m->pinned_peak), ga_fmt_bytes(b2, m->pinned_live));
    if (m->va_peak)
        fprintf(o, "  va        reserved address space: peak %s, %s at the end\n",
                ga_fmt_bytes(b, m->va_peak), ga_fmt_bytes(b2, m->va_live));
    if (m->ctx_release_count)
        fprintf(o, "  teardown  %" PRIu64 " allocations (%s) released with their context\n",
                m->ctx_release_count, ga_fmt_bytes(b, m->ctx_release_bytes));
    if (m->unmatched_frees || m->failed_frees || m->double_allocs)
        fprintf(o,
                "  oddities  %" PRIu64 " frees of unknown addresses, %" PRIu64
                " failed frees, %" PRIu64 " allocations of a live address\n",
                m->unmatched_frees, m->failed_frees, m->double_allocs);
    text_by_api(r, o);
}

static void text_ooms(const struct ga_report *r, FILE *o)
{
    const struct ga_memory *m = &r->mem;
    char t[32], b[5][32], lb[16];
    if (!m->n_ooms) return;
    fprintf(o, "\nfailed allocations (%zu)\n", m->n_ooms + (size_t)m->ooms_dropped);
    fprintf(o, "  %11s %-24s %3s %10s %10s %10s %10s %11s  %s\n", "time", "api", "dev", "request",
            "free", "total", "held", "unaccounted", "verdict");
    for (size_t i = 0; i < m->n_ooms && i < TOP_OOMS; i++) {
        const struct ga_oom *x = &m->ooms[i];
        fprintf(o, "  %11s %-24s %3d %10s %10s %10s %10s %11s  %s\n",
                ga_fmt_ms(t, ga_report_rel(r, x->ts)),
                x->alloc ? "pytorch allocator" : ga_api_label(x->api, lb), x->device,
                ga_fmt_bytes(b[0], x->requested), ga_fmt_bytes(b[1], x->free_bytes),
                ga_fmt_bytes(b[2], x->total_bytes), ga_fmt_bytes(b[3], x->held),
                ga_fmt_bytes(b[4], x->unaccounted), ga_verdict_name(x->verdict));
    }
    if (m->n_ooms + m->ooms_dropped > TOP_OOMS)
        fprintf(o, "  ... and %" PRIu64 " more (see --json)\n",
                m->n_ooms + m->ooms_dropped - TOP_OOMS);
    ga_text_oom_details(r, o);
}

static void text_launches(const struct ga_report *r, FILE *o)
{
    const struct ga_timeline *tl = &r->tl;
    char lb[16];
    fprintf(o, "\nlaunches  %" PRIu64 " (%" PRIu64 " failed)", tl->launch_count, tl->launch_failed);
    for (unsigned api = 0; api < GT_API_MAX; api++)
        if (tl->launch[api].count)
            fprintf(o, ", %s %" PRIu64, ga_api_label(api, lb), tl->launch[api].count);
    fputc('\n', o);
    if (r->gpu.kernel_count) return; /* kernels by GPU time follow in the GPU timeline */
    for (size_t i = 0; i < tl->n_kernels && i < TOP_KERNELS; i++) {
        char *d = ga_demangle(tl->kernels[i].name);
        fprintf(o, "  %10" PRIu64 "  ", tl->kernels[i].count);
        ga_put_trimmed(o, d ? d : tl->kernels[i].name, 100);
        free(d);
        fputc('\n', o);
    }
    if (tl->n_kernels > TOP_KERNELS)
        fprintf(o, "  ... %zu more kernel names (see --json)\n", tl->n_kernels - TOP_KERNELS);
}

static void text_spans(const struct ga_report *r, FILE *o)
{
    char t[32], lb[16];
    if (!r->tl.span_count) return;
    fprintf(o, "\nblocking calls\n");
    for (unsigned api = 0; api < GT_API_MAX; api++) {
        const struct ga_api_calls *c = &r->tl.span[api];
        if (!c->count && !c->failed) continue;
        fprintf(o, "  %-30s %8" PRIu64 " calls %14s", ga_api_label(api, lb), c->count + c->failed,
                ga_fmt_ms(t, (int64_t)c->total_ns));
        if (c->failed) fprintf(o, " (%" PRIu64 " failed)", c->failed);
        fputc('\n', o);
    }
}

static void text_misc(const struct ga_report *r, FILE *o)
{
    const struct ga_facts *f = &r->facts;
    char t[32];
    fprintf(o,
            "\nresolver  %" PRIu64 " entry-point lookups: %" PRIu64 " wrapped, %" PRIu64
            " passed through",
            f->resolve_total.lookups, f->resolve_total.wrapped, f->resolve_total.passed_through);
    for (unsigned how = 1; how < 4; how++)
        if (f->resolve[how].lookups)
            fprintf(o, "; %s %" PRIu64, ga_resolve_how_name(how), f->resolve[how].lookups);
    fputc('\n', o);
    if (f->lost_records)
        fprintf(o, "LOST      %" PRIu64 " records were dropped by the tracer\n", f->lost_records);
    for (size_t i = 0; i < f->n_notes; i++) {
        fprintf(o, "%-9s %s ", f->notes[i].level == GT_NOTE_WARNING ? "WARNING" : "note",
                ga_fmt_ms(t, ga_report_rel(r, f->notes[i].ts)));
        ga_put_escaped(o, f->notes[i].text, strlen(f->notes[i].text));
        fputc('\n', o);
    }
    if (f->notes_dropped) fprintf(o, "          ... %" PRIu64 " more notes\n", f->notes_dropped);
}

void ga_render_text(const struct ga_report *r, FILE *o)
{
    text_process(r, o);
    text_trace(r, o);
    text_devices(r, o);
    text_memory(r, o);
    text_ooms(r, o);
    text_launches(r, o);
    text_spans(r, o);
    ga_text_sites(&r->siteview, r->show_stacks, o);
    ga_text_gpu(&r->gpuview, r->show_stacks, o);
    ga_text_nvml(&r->nvmlview, o);
    text_misc(r, o);
}
