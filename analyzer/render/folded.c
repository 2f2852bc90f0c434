/* --folded WHAT: Brendan Gregg's folded-stack lines, `root;...;leaf weight`, one per host stack,
 * for flamegraph.pl, inferno and speedscope. The weights are the report model's per-stack
 * figures (peak breakdown, sites, idle gaps); frames are labelled here, nothing is summed but
 * what the model gives: the weights of `peak` add up to the peak exactly, those without a stack
 * under one "[no stack]" frame. */
#include "render/folded.h"

#include <inttypes.h>
#include <string.h>

#define FOLDED_DEPTH 256 /* frames printed per stack, the outermost dropped beyond */

static const char *const whats[] = {"peak", "alloc", "leak", "launch", "sync", "idle"};

int ga_folded_what(const char *what)
{
    for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++)
        if (strcmp(what, whats[i]) == 0) return (int)i;
    return -1;
}

const char *ga_flame_label(const struct ga_stacks *st, const struct ga_frame *f, char *buf,
                           size_t n, int lines)
{
    if (f->source == GA_SYM_PYTHON) {
        const char *file = f->file ? f->file : "?", *slash = strrchr(file, '/');
        snprintf(buf, n, "%s:%u %s", slash ? slash + 1 : file, f->line, f->func ? f->func : "?");
    } else if (f->func && !(lines && f->file)) {
        snprintf(buf, n, "%s", f->func);
    } else {
        ga_frame_label(st, f, buf, n, 0);
    }
    for (char *p = buf; *p; p++)
        if (*p == ';' || *p == '\n' || *p == '\r') *p = '_';
    return buf;
}

static void put_frame(const struct ga_stacks *st, const struct ga_frame *f, FILE *out)
{
    char buf[1024];
    fputs(ga_flame_label(st, f, buf, sizeof(buf), 0), out);
}

/* One line: the stack's frames from the outermost, then `leaf` when given, then the weight. */
static void put_line(struct ga_report *r, uint32_t stack, const char *leaf, uint64_t w, FILE *out)
{
    const struct ga_frame *fr[FOLDED_DEPTH];
    size_t n = stack ? ga_sites_stack_frames(&r->stacks, stack, fr, FOLDED_DEPTH) : 0;
    if (!w) return;
    if (!n) fputs("[no stack]", out);
    for (size_t i = n; i-- > 0;) {
        put_frame(&r->stacks, fr[i], out);
        if (i) fputc(';', out);
    }
    if (leaf) fprintf(out, ";%s", leaf);
    fprintf(out, " %" PRIu64 "\n", w);
}

static uint64_t stat_of(const struct ga_site_stats *s, int what)
{
    switch (what) {
    case 1:
        return s->alloc_bytes;
    case 2:
        return s->leaked_bytes;
    case 3:
        return s->launches;
    case 4:
        return s->sync_ns;
    default:
        return 0;
    }
}

static void put_peak(struct ga_report *r, FILE *out)
{
    const struct ga_peak_breakdown *p = &r->mem.peak;
    for (size_t i = 0; i < p->n_by_stack; i++)
        put_line(r, p->by_stack[i].stack, NULL, p->by_stack[i].bytes, out);
    put_line(r, 0, NULL, p->no_stack.bytes, out);
}

static void put_idle(struct ga_report *r, FILE *out)
{
    char leaf[64];
    for (size_t d = 0; d < r->gaps.n_devices; d++) {
        const struct ga_gaps_device *x = &r->gaps.devices[d];
        for (size_t i = 0; i < x->n_sites; i++) {
            snprintf(leaf, sizeof(leaf), "[GPU %u idle: %s]", x->device,
                     ga_cause_name(x->sites[i].cause));
            put_line(r, x->sites[i].stack, leaf, x->sites[i].idle_ns, out);
        }
    }
}

int ga_render_folded(struct ga_report *r, int what, FILE *out)
{
    if (what == 0) {
        put_peak(r, out);
    } else if (what == 5) {
        put_idle(r, out);
    } else {
        const struct ga_sites *s = &r->sites;
        for (size_t i = 0; i < s->n_stacks; i++)
            put_line(r, s->stack_ids[i], NULL, stat_of(&s->per_stack[i], what), out);
    }
    return ferror(out) ? -1 : 0;
}
