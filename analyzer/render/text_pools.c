/* The memory section's pool lines: per pool its figures at the process peak and its worst
 * moment, per device the VMM physical memory, and each pool OOM with its verdict. Reads the pools
 * view alone (model/view_pools.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/pools.h"
#include "base/util.h"

#define TOP_POOLS     8
#define TOP_POOL_OOMS 5
#define NAME_COLS     24

static const char *kind_short(unsigned kind)
{
    return kind == GA_VPOOL_ANNOTATED ? "annotated" : kind == GA_VPOOL_STREAM ? "stream" : "vmm";
}

static const char *fmt_frag(char buf[16], const struct ga_vfrag *f)
{
    double x = f->ratio;
    if (x < 0)
        snprintf(buf, 16, "-");
    else
        snprintf(buf, 16, "%.0f%%", 100 * x);
    return buf;
}

/* reserved used free extents largest frag, as one row's columns. */
static void frag_cols(FILE *o, const struct ga_vfrag *f)
{
    char b[5][32], fr[16], ext[24];
    if (f->layout_known)
        snprintf(ext, sizeof(ext), "%" PRIu64, f->extents);
    else
        snprintf(ext, sizeof(ext), "-");
    fprintf(o, " %10s %10s %10s %7s %10s %5s", ga_fmt_bytes(b[0], f->reserved),
            ga_fmt_bytes(b[1], f->used), ga_fmt_bytes(b[2], f->free), ext,
            f->layout_known ? ga_fmt_bytes(b[3], f->largest) : "-", fmt_frag(fr, f));
}

static void pool_row(FILE *o, const struct ga_vpool *q)
{
    char t[32], b[2][32], fr[16];
    size_t n = strlen(q->name);
    fputs("    ", o);
    ga_put_trimmed(o, q->name, NAME_COLS - 1); /* longer names end in "..." */
    fprintf(o, "%*s %-9s %3d", n < NAME_COLS - 1 ? (int)(NAME_COLS - 1 - n) : 0, "",
            kind_short(q->kind), q->device);
    /* at the process peak; a pool that did not live then: at its worst moment */
    int at_worst = !q->have_at_peak && q->have_worst;
    frag_cols(o, q->have_at_peak ? &q->at_peak : at_worst ? &q->worst : &q->now);
    if (at_worst) {
        fprintf(o, "  worst, at %s\n", ga_fmt_ms(t, q->worst_ns));
        return;
    }
    fprintf(o, "  %s\n", q->have_at_peak ? "at peak" : "at end");
    if (q->have_worst && q->worst.free > q->worst.largest && q->worst.layout_known)
        fprintf(o, "      worst at %s: %s free in %" PRIu64 " extents, largest %s (%s)\n",
                ga_fmt_ms(t, q->worst_ns), ga_fmt_bytes(b[0], q->worst.free),
                q->worst.extents, ga_fmt_bytes(b[1], q->worst.largest), fmt_frag(fr, &q->worst));
    else if (q->have_worst && !q->worst.layout_known && q->worst.free)
        fprintf(o, "      most reserved but unused: %s at %s\n", ga_fmt_bytes(b[0], q->worst.free),
                ga_fmt_ms(t, q->worst_ns));
}

static void errors_line(const struct ga_vpools *p, FILE *o)
{
    uint64_t total = 0;
    for (unsigned e = 0; e < GA_VPOOL_ERRORS; e++)
        total += p->errors[e];
    if (!total) return;
    fprintf(o, "    annotation errors %" PRIu64 ":", total);
    for (unsigned e = 0; e < GA_VPOOL_ERRORS; e++)
        if (p->errors[e]) fprintf(o, " %s %" PRIu64, p->error_names[e], p->errors[e]);
    fputc('\n', o);
}

static void vmm_lines(const struct ga_vpools *p, FILE *o)
{
    char b[3][32];
    for (size_t i = 0; i < p->ndev; i++) {
        const struct ga_vpool_dev *d = &p->devs[i];
        if (!d->have_at_peak || (!d->phys_unused_at_peak && !d->stream_reserved_at_peak)) continue;
        fprintf(o,
                "    dev %-3d at peak: %s reserved by stream-ordered pools (%s used), %s of VMM "
                "handles not mapped\n",
                d->device, ga_fmt_bytes(b[0], d->stream_reserved_at_peak),
                ga_fmt_bytes(b[1], d->stream_used_at_peak),
                ga_fmt_bytes(b[2], d->phys_unused_at_peak));
    }
}

static void ooms_lines(const struct ga_vpools *p, FILE *o)
{
    char t[32], b[3][32];
    for (size_t i = 0; i < p->n_ooms && i < TOP_POOL_OOMS; i++) {
        const struct ga_vpool_oom *x = &p->ooms[i];
        fprintf(o, "    pool OOM %s ", ga_fmt_ms(t, x->ns));
        ga_put_trimmed(o, p->pools[x->pool].name, 40);
        fprintf(o, ": request %s, free %s in %" PRIu64 " extents, largest %s -> %s\n",
                ga_fmt_bytes(b[0], x->request), ga_fmt_bytes(b[1], x->f.free), x->f.extents,
                ga_fmt_bytes(b[2], x->f.largest), x->verdict);
    }
    if (p->n_ooms + p->ooms_omitted > TOP_POOL_OOMS)
        fprintf(o, "    ... and %" PRIu64 " more pool OOMs (see --json)\n",
                p->n_ooms + p->ooms_omitted - TOP_POOL_OOMS);
}

void ga_text_pools(const struct ga_vpools *p, FILE *o)
{
    unsigned kinds[4] = {0};
    if (!p->n && !p->pools_untracked) return;
    const uint32_t *order = p->order;
    for (size_t i = 0; i < p->n; i++)
        kinds[p->pools[i].kind & 3]++;
    fprintf(o, "  pools     %zu (%u annotated, %u stream-ordered, %u VMM ranges)", p->n,
            kinds[GA_VPOOL_ANNOTATED], kinds[GA_VPOOL_STREAM], kinds[GA_VPOOL_VMM]);
    if (p->pools_untracked) fprintf(o, ", %" PRIu64 " more not tracked", p->pools_untracked);
    fprintf(o, "; fragmentation = 1 - largest free / free\n");
    fprintf(o, "    %-*s %-9s %3s %10s %10s %10s %7s %10s %5s\n", NAME_COLS - 1, "pool", "kind",
            "dev", "reserved", "used", "free", "extents", "largest", "frag");
    for (size_t i = 0; i < p->n && i < TOP_POOLS; i++)
        pool_row(o, &p->pools[order[i]]);
    if (p->n > TOP_POOLS) fprintf(o, "    ... %zu more pools (see --json)\n", p->n - TOP_POOLS);
    vmm_lines(p, o);
    ooms_lines(p, o);
    errors_line(p, o);
}
