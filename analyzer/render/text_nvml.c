/* The text report's device state section (NVML samples; docs/ANALYSES.md, "Device state"). */
#include <inttypes.h>

#include "render/text.h"
#include "base/util.h"

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The reasons in the slow busy time, in bit order, those with any. */
static void reasons_line(const struct ga_nvml_device *d, FILE *o)
{
    int n = 0;
    for (unsigned b = 0; b < GA_NVML_REASONS; b++) {
        if (!d->reason_ns[b]) continue;
        fprintf(o, "%s %s %.1f%% of busy time (%.1f%% of the time)",
                n++ ? "," : "             reported by NVML:", ga_nvml_reason_name(b),
                share(d->reason_busy_ns[b], d->busy_ns), share(d->reason_ns[b], d->covered_ns));
    }
    if (n) fputc('\n', o);
}

/* Kernels slower below the maximum SM clock, the first three. */
static void slow_kernel_line(const struct ga_report *r, const struct ga_nvml_device *d, FILE *o)
{
    const struct ga_nvml_kname *v[3];
    size_t n = ga_nvml_slow_kernels(d, v, 3);
    for (size_t i = 0; i < n; i++) {
        const char *name = ga_report_kernel_name(r, v[i]->name_id);
        char a[32], b[32];
        fprintf(o, "%s %s %s below vs %s at full clock (%" PRIu64 " and %" PRIu64 " runs)",
                i ? ";" : "             slower below the maximum clock:", name ? name : "?",
                ga_fmt_ms(a, (int64_t)(v[i]->ns[1] / v[i]->n[1])),
                ga_fmt_ms(b, (int64_t)(v[i]->ns[0] / v[i]->n[0])), v[i]->n[1], v[i]->n[0]);
    }
    if (n) fputc('\n', o);
}

static void device_lines(const struct ga_report *r, const struct ga_nvml_device *d, FILE *o)
{
    char t[32];
    if (d->unmatched) {
        fprintf(o, "  device %-3d no NVML device has its UUID (%s): not sampled\n", d->device,
                d->uuid);
        return;
    }
    fprintf(o, "  device %-3d NVML %u, %" PRIu64 " samples over %s", d->device, d->nvml_index,
            d->samples, ga_fmt_ms(t, (int64_t)d->covered_ns));
    if (d->max_sm_mhz && d->covered_ns)
        fprintf(o,
                "; SM clock below its maximum (%u MHz) for %.1f%% of the time, %.1f%% of busy "
                "time",
                d->max_sm_mhz, share(d->slow_ns, d->covered_ns),
                share(d->slow_busy_ns, d->busy_ns));
    fputc('\n', o);
    reasons_line(d, o);
    if (d->samples)
        fprintf(o,
                "             SM clock down to %u MHz, temperature up to %u C, power up to %.1f W "
                "(limit %.1f W)\n",
                d->min_sm_mhz, d->max_temp_c, d->max_power_mw / 1000.0, d->power_limit_mw / 1000.0);
    slow_kernel_line(r, d, o);
}

void ga_text_nvml(const struct ga_report *r, FILE *o)
{
    const struct ga_nvml *x = &r->nvml;
    if (x->status == GA_NVML_NONE) return; /* NVML off, or a tracer without it */
    if (x->status != GA_NVML_AVAILABLE) {
        fprintf(o, "\ngpu state  NVML %s: %s\n", x->status == GA_NVML_ABSENT ? "absent" : "failed",
                x->why);
        return;
    }
    fputs("\ngpu state  (NVML samples; SM clock against its maximum over the time between them)\n",
          o);
    for (size_t i = 0; i < x->n_devices; i++)
        device_lines(r, &x->devices[i], o);
}

void ga_text_oom_processes(const struct ga_report *r, FILE *o, const struct ga_oom *x)
{
    char b[32];
    size_t n = 0;
    const struct ga_nvml_proc *p = ga_nvml_procs_after(&r->nvml, x->device, x->ts, &n);
    if (!p) return;
    fputs("      processes on the device (NVML):", o);
    for (size_t i = 0; i < n; i++) {
        int mine = r->facts.have_process && p[i].pid == r->facts.pid;
        fprintf(o, "%s pid %u", i ? "," : "", p[i].pid);
        if (p[i].name[0]) fprintf(o, " %s", p[i].name);
        fprintf(o, " %s%s", p[i].bytes == UINT64_MAX ? "?" : ga_fmt_bytes(b, p[i].bytes),
                mine ? " (this process)" : "");
    }
    fputc('\n', o);
}
