/* The terminal report's head and tail: the process, the trace as read, the driver and devices;
 * launches and blocking calls by API; the resolver, losses and notes. Reads the run's view alone
 * (model/view_run.h). */
#include <inttypes.h>
#include <string.h>

#include "render/run.h"
#include "base/util.h"

static void process(const struct ga_vrun *v, FILE *o)
{
    char t[32];
    fputs("gputrace report: ", o);
    ga_put_escaped(o, v->path, strlen(v->path));
    fputc('\n', o);
    fprintf(o, "  process   pid %u (ppid %u)", v->pid, v->ppid);
    for (size_t i = 0, len = 0; i < v->argc && len < 100; len += strlen(v->argv[i++]) + 1) {
        fputc(' ', o);
        ga_put_trimmed(o, v->argv[i], 100 - len > 4 ? 100 - len : 4);
    }
    fputc('\n', o);
    if (v->host) {
        fputs("  host      ", o);
        ga_put_escaped(o, v->host, strlen(v->host));
        fputs(", exe ", o);
        ga_put_escaped(o, v->exe, strlen(v->exe));
        fputc('\n', o);
    }
    fprintf(o, "  duration  %s, %s\n", ga_fmt_ms(t, (int64_t)v->duration_ns),
            v->clean_end ? "ended cleanly"
                         : "no end record: the program ended without the tracer's exit path "
                           "(crash, _exit, kill) or the file was cut");
}

static void trace(const struct ga_vrun *v, FILE *o)
{
    fprintf(o, "  trace     %" PRIu64 " records in %" PRIu64 " chunks, %" PRIu64 " lost",
            v->records, v->chunks, v->lost_records);
    if (v->unknown_records)
        fprintf(o, ", %" PRIu64 " of unknown types skipped", v->unknown_records);
    if (v->malformed_records) fprintf(o, ", %" PRIu64 " malformed skipped", v->malformed_records);
    if (v->late_records) fprintf(o, ", %" PRIu64 " out of watermark order", v->late_records);
    if (v->duplicate_chunks)
        fprintf(o, ", %" PRIu64 " repeated chunk%s skipped", v->duplicate_chunks,
                v->duplicate_chunks == 1 ? "" : "s");
    fputc('\n', o);
    if (v->truncated) fprintf(o, "  TRUNCATED %s\n", v->stop_reason);
}

static void devices(const struct ga_vrun *v, FILE *o)
{
    char b[32];
    if (v->have_driver)
        fprintf(o, "  driver    CUDA %d.%d, %d device%s\n", v->driver_version / 1000,
                v->driver_version % 1000 / 10, v->device_count, v->device_count == 1 ? "" : "s");
    for (size_t i = 0; i < v->n_devices; i++) {
        const struct ga_vrun_device *d = &v->devices[i];
        fprintf(o, "  device %-2d ", d->ordinal);
        ga_put_trimmed(o, d->name, 60);
        fprintf(o, ", %s", ga_fmt_bytes(b, d->total_bytes));
        if (d->cc_major >= 0) fprintf(o, ", cc %d.%d", d->cc_major, d->cc_minor);
        fputc('\n', o);
    }
}

void ga_text_run_head(const struct ga_vrun *v, FILE *o)
{
    process(v, o);
    trace(v, o);
    devices(v, o);
}

static void launches(const struct ga_vrun *v, FILE *o)
{
    fprintf(o, "\nlaunches  %" PRIu64 " (%" PRIu64 " failed)", v->launch_count, v->launch_failed);
    for (size_t i = 0; i < v->n_launches; i++)
        if (v->launches[i].count)
            fprintf(o, ", %s %" PRIu64, v->launches[i].name, v->launches[i].count);
    fputc('\n', o);
    if (v->gpu_kernel_count) return; /* kernels by GPU time follow in the GPU timeline */
    for (size_t i = 0; i < v->n_kernels_kept; i++) {
        fprintf(o, "  %10" PRIu64 "  ", v->kernels[i].count);
        ga_put_trimmed(o, v->kernels[i].name, 100);
        fputc('\n', o);
    }
    if (v->n_kernel_names > v->n_kernels_kept)
        fprintf(o, "  ... %zu more kernel names (see --json)\n",
                v->n_kernel_names - v->n_kernels_kept);
}

static void spans(const struct ga_vrun *v, FILE *o)
{
    char t[32];
    if (!v->span_count) return;
    fprintf(o, "\nblocking calls\n");
    for (size_t i = 0; i < v->n_spans; i++) {
        const struct ga_vrun_api *c = &v->spans[i];
        fprintf(o, "  %-30s %8" PRIu64 " calls %14s", c->name, c->count + c->failed,
                ga_fmt_ms(t, (int64_t)c->total_ns));
        if (c->failed) fprintf(o, " (%" PRIu64 " failed)", c->failed);
        fputc('\n', o);
    }
}

void ga_text_run_calls(const struct ga_vrun *v, FILE *o)
{
    launches(v, o);
    spans(v, o);
}

void ga_text_run_tail(const struct ga_vrun *v, FILE *o)
{
    char t[32];
    fprintf(o,
            "\nresolver  %" PRIu64 " entry-point lookups: %" PRIu64 " wrapped, %" PRIu64
            " passed through",
            v->resolve_total.lookups, v->resolve_total.wrapped, v->resolve_total.passed_through);
    for (size_t i = 0; i < v->n_resolve; i++)
        if (!v->resolve[i].other)
            fprintf(o, "; %s %" PRIu64, v->resolve[i].how, v->resolve[i].lookups);
    fputc('\n', o);
    if (v->lost_records)
        fprintf(o, "LOST      %" PRIu64 " records were dropped by the tracer\n", v->lost_records);
    for (size_t i = 0; i < v->n_notes; i++) {
        fprintf(o, "%-9s %s ", v->notes[i].warning ? "WARNING" : "note",
                ga_fmt_ms(t, v->notes[i].ns));
        ga_put_escaped(o, v->notes[i].text, strlen(v->notes[i].text));
        fputc('\n', o);
    }
    if (v->notes_dropped) fprintf(o, "          ... %" PRIu64 " more notes\n", v->notes_dropped);
}
