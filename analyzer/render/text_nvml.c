/* The text report's device state section (NVML samples; docs/ANALYSES.md, "Device state"). Reads
 * the NVML view alone (model/view_nvml.h). */
#include <inttypes.h>

#include "render/nvml.h"
#include "base/util.h"

static double share(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The reasons in the slow busy time, in bit order, those with any. */
static void reasons_line(const struct ga_vnvml *v, const struct ga_vnvml_device *d, FILE *o)
{
    int n = 0;
    for (unsigned b = 0; b < GA_VNVML_REASONS; b++) {
        if (!d->reason_ns[b]) continue;
        fputs(n++ ? "," : "             reported by NVML:", o);
        if (v->busy_known && d->busy_ns) /* (else a share of it would read 0.0%) */
            fprintf(o, " %s %.1f%% of busy time (%.1f%% of the time)", v->reason_names[b],
                    share(d->reason_busy_ns[b], d->busy_ns), share(d->reason_ns[b], d->covered_ns));
        else
            fprintf(o, " %s %.1f%% of the time", v->reason_names[b],
                    share(d->reason_ns[b], d->covered_ns));
    }
    if (n) fputc('\n', o);
}

/* Kernels slower below the maximum SM clock, the first three. */
static void slow_kernel_line(const struct ga_vnvml_device *d, FILE *o)
{
    size_t n = d->n_kernels < 3 ? d->n_kernels : 3;
    for (size_t i = 0; i < n; i++) {
        const struct ga_vnvml_kernel *k = &d->kernels[i];
        char a[32], b[32];
        fprintf(o, "%s %s %s below vs %s at full clock (%" PRIu64 " and %" PRIu64 " runs)",
                i ? ";" : "             slower below the maximum clock:", k->name ? k->name : "?",
                ga_fmt_ms(a, (int64_t)k->slow_mean_ns), ga_fmt_ms(b, (int64_t)k->full_mean_ns),
                k->slow_count, k->full_count);
    }
    if (n) fputc('\n', o);
}

static void device_lines(const struct ga_vnvml *v, const struct ga_vnvml_device *d, FILE *o)
{
    char t[32];
    if (!d->matched) {
        fprintf(o, "  device %-3d no NVML device has its UUID (%s): not sampled\n", d->device,
                d->uuid);
        return;
    }
    fprintf(o, "  device %-3d NVML %u, %" PRIu64 " samples over %s", d->device, d->nvml_index,
            d->samples, ga_fmt_ms(t, (int64_t)d->covered_ns));
    if (d->max_sm_mhz && d->covered_ns) {
        fprintf(o, "; SM clock below its maximum (%u MHz) for %.1f%% of the time", d->max_sm_mhz,
                share(d->slow_ns, d->covered_ns));
        if (!v->busy_known)
            fputs(" (busy time unknown: no GPU timeline)", o);
        else if (d->busy_ns)
            fprintf(o, ", %.1f%% of busy time", share(d->slow_busy_ns, d->busy_ns));
        else if (d->busy_unsampled_ns) /* it may lie in that time (below) */
            fputs(", busy time in it unknown", o);
        else
            fputs(", no GPU work in it", o);
    }
    fputc('\n', o);
    if (d->busy_not_laid_ns) /* (samples stopped while the GPU went on) */
        fprintf(o, "             %s of busy time after the samples stopped: not counted above\n",
                ga_fmt_ms(t, (int64_t)d->busy_not_laid_ns));
    if (d->busy_unsampled_ns) /* (more busy intervals than wait for the first sample) */
        fprintf(o,
                "             up to %s of busy time could not wait for the first sample: not "
                "counted above\n",
                ga_fmt_ms(t, (int64_t)d->busy_unsampled_ns));
    reasons_line(v, d, o);
    if (d->samples)
        fprintf(o,
                "             SM clock down to %u MHz, temperature up to %u C, power up to %.1f W "
                "(limit %.1f W)\n",
                d->min_sm_mhz, d->max_temp_c, d->max_power_mw / 1000.0, d->power_limit_mw / 1000.0);
    slow_kernel_line(d, o);
}

void ga_text_nvml(const struct ga_vnvml *x, FILE *o)
{
    if (x->status == GA_VNVML_NONE) return; /* NVML off, or a tracer without it */
    if (x->status != GA_VNVML_AVAILABLE) {
        fprintf(o, "\ngpu state  NVML %s: %s\n", x->status == GA_VNVML_ABSENT ? "absent" : "failed",
                x->why);
        return;
    }
    fputs("\ngpu state  (NVML samples; SM clock against its maximum over the time between them)\n",
          o);
    for (size_t i = 0; i < x->n_devices; i++)
        device_lines(x, &x->devices[i], o);
}

void ga_text_oom_processes(const struct ga_vnvml *v, FILE *o, size_t oom)
{
    char b[32];
    const struct ga_vnvml_listing *l = &v->oom_procs[oom];
    const struct ga_vnvml_proc *p = l->procs;
    if (!p) return;
    fputs("      processes on the device (NVML):", o);
    for (size_t i = 0; i < l->n; i++) {
        fprintf(o, "%s pid %u", i ? "," : "", p[i].pid);
        if (p[i].name) fprintf(o, " %s", p[i].name);
        fprintf(o, " %s%s", p[i].bytes == UINT64_MAX ? "?" : ga_fmt_bytes(b, p[i].bytes),
                p[i].this_process ? " (this process)" : "");
    }
    fputc('\n', o);
}
