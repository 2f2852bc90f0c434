/* The text report of several traces: each process's report under a banner, then one screen
 * across processes (multi.h). */
#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "model/multi.h"
#include "base/util.h"

void ga_text_multi_banner(size_t i, size_t n, const char *path, FILE *o)
{
    fprintf(o, "%s==== process %zu of %zu: ", i ? "\n" : "", i + 1, n);
    ga_put_escaped(o, path, strlen(path));
    fputs(" ====\n", o);
}

static void put_realtime(FILE *o, uint64_t ns)
{
    time_t s = (time_t)(ns / 1000000000u);
    struct tm tm;
    char buf[64];
    if (!gmtime_r(&s, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm)) {
        fprintf(o, "%" PRIu64 " ns since the epoch", ns);
        return;
    }
    fprintf(o, "%s.%09" PRIu64 " UTC", buf, ns % 1000000000u);
}

static void text_clocks(const struct ga_multi *m, FILE *o)
{
    fputs("  clocks    aligned through each trace's realtime/monotonic pair; origin ", o);
    put_realtime(o, m->origin_realtime_ns);
    fputs(" (earliest start)\n            ", o);
    if (m->same_host) {
        fputs("all on host ", o);
        ga_put_trimmed(o, m->ranks[0].host, 60);
        fputs(": exact up to the two clock reads of each header\n", o);
    } else {
        fputs("several hosts (or unknown): as good as their clocks' synchronization (NTP/PTP)\n",
              o);
    }
}

static void text_rank(const struct ga_multi *m, size_t i, FILE *o)
{
    const struct ga_rank *k = &m->ranks[i];
    char a[32], b[32], c[32], d[32], e[32], f[32], idle[16];
    double share = ga_rank_idle_share(k);
    if (share < 0)
        snprintf(idle, sizeof(idle), "-");
    else
        snprintf(idle, sizeof(idle), "%.1f%%", 100.0 * share);
    snprintf(a, sizeof(a), "%+.3f ms", (double)ga_multi_at(m, k, k->start_monotonic_ns) / 1e6);
    fprintf(o, "  %-4zu  %-8u %-13s %-13s %-13s %-6s %-13s %-13s %-10s ", i, k->pid, a,
            ga_fmt_ms(b, (int64_t)k->duration_ns),
            k->have_gpu ? ga_fmt_ms(c, (int64_t)k->gpu_busy_ns) : "-", idle,
            ga_fmt_ms(d, (int64_t)k->wait_ns), ga_fmt_ms(e, (int64_t)k->sync_ns),
            ga_fmt_bytes(f, k->peak_bytes));
    ga_put_trimmed(o, k->path, 60);
    if (k->gpu_dropped) fputs("  [incomplete GPU figures: CUPTI dropped records]", o);
    fputc('\n', o);
}

static void text_straggler(const struct ga_multi *m, FILE *o)
{
    char a[32], b[32];
    if (m->straggler < 0) {
        fputs("  straggler none: no rank waited at least 1 ms less and half as long as every "
              "other\n",
              o);
        return;
    }
    const struct ga_rank *k = &m->ranks[m->straggler];
    fprintf(o, "  straggler rank %ld (", m->straggler);
    ga_put_trimmed(o, k->path, 60);
    fprintf(o,
            "): the others wait for it. It waited %s, every other rank at least %s "
            "longer\n",
            ga_fmt_ms(a, (int64_t)k->wait_ns), ga_fmt_ms(b, (int64_t)m->straggler_margin_ns));
}

static void text_idle_causes(const struct ga_multi *m, FILE *o)
{
    char a[32], b[32];
    int header = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct ga_rank *k = &m->ranks[i];
        if (k->idle_cause < 0) continue;
        if (!header++) fputs("  top idle cause per rank (GPU idle gaps)\n", o);
        fprintf(o, "  %-4zu  %-15s %s, %.1f%% of its idle gaps", i,
                k->idle_cause_name, ga_fmt_ms(a, (int64_t)k->idle_cause_ns),
                100.0 * (double)k->idle_cause_ns / (double)k->gaps_idle_ns);
        if (k->idle_site) {
            fputs("; most at ", o);
            ga_put_trimmed(o, k->idle_site, 60);
            fprintf(o, " (%s)", ga_fmt_ms(b, (int64_t)k->idle_site_ns));
        }
        fputc('\n', o);
    }
}

void ga_text_multi(const struct ga_multi *m, FILE *o)
{
    fprintf(o, "\n==== across %zu processes ====\n", m->n);
    if (!m->n) return;
    text_clocks(m, o);
    fprintf(o, "  %-4s  %-8s %-13s %-13s %-13s %-6s %-13s %-13s %-10s %s\n", "rank", "pid", "start",
            "duration", "GPU busy", "idle", "waiting", "in sync", "peak", "trace");
    for (size_t i = 0; i < m->n; i++)
        text_rank(m, i, o);
    text_straggler(m, o);
    text_idle_causes(m, o);
    fputs("  (start: on the common timeline; idle: share of the GPU's active span with nothing "
          "running;\n"
          "   in sync: host time blocked in synchronizations and blocking copies; waiting: the "
          "part of it\n"
          "   while none of the rank's own GPU work ran, collective kernels (NCCL/RCCL) not "
          "counted as own work)\n",
          o);
}
