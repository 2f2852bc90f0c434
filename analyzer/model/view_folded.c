/* The folded stacks' view (view_folded.h): the report's per-stack figures for one WHAT, as the
 * analyses keep them (peak breakdown, sites, idle gaps by site), nothing summed here: the weights
 * of `peak` add up to the peak exactly, those without a stack on one line without a stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view_folded.h"
#include "analyses/gaps.h"
#include "analyses/memory.h"
#include "analyses/sites.h"
#include "base/util.h"

static const char *const whats[] = {"peak", "alloc", "leak", "launch", "sync", "idle"};
_Static_assert(sizeof(whats) / sizeof(whats[0]) == GA_FOLDED_KINDS, "one word per WHAT");

int ga_folded_what(const char *what)
{
    for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++)
        if (strcmp(what, whats[i]) == 0) return (int)i;
    return -1;
}

static const char *separators_out(char *buf)
{
    for (char *p = buf; *p; p++)
        if (*p == ';' || *p == '\n' || *p == '\r') *p = '_';
    return buf;
}

const char *ga_vframe_flame_label(const struct ga_vframe *f, char *buf, size_t n, int lines)
{
    if (f->python) {
        const char *file = f->file ? f->file : "?", *slash = strrchr(file, '/');
        snprintf(buf, n, "%s:%u %s", slash ? slash + 1 : file, f->line, f->func ? f->func : "?");
    } else if (f->func && !(lines && f->file)) {
        snprintf(buf, n, "%s", f->func);
    } else {
        snprintf(buf, n, "%s", f->label);
    }
    return separators_out(buf);
}

static void add(struct ga_vfolded *v, struct ga_vstacks *t, uint32_t stack, const char *leaf,
                uint64_t w)
{
    if (!w) return;
    v->v = ga_xgrow(v->v, &v->cap, v->n, sizeof(*v->v));
    struct ga_vfolded_line *l = &v->v[v->n++];
    l->stack = ga_vstacks_stack(t, stack);
    if (l->stack && !l->stack->n) l->stack = NULL; /* a stack the trace does not define */
    snprintf(l->leaf, sizeof(l->leaf), "%s", leaf ? leaf : "");
    l->weight = w;
}

static uint64_t stat_of(const struct ga_site_stats *s, int what)
{
    switch (what) {
    case GA_FOLDED_ALLOC:
        return s->alloc_bytes;
    case GA_FOLDED_LEAK:
        return s->leaked_bytes;
    case GA_FOLDED_LAUNCH:
        return s->launches;
    case GA_FOLDED_SYNC:
        return s->sync_ns;
    default:
        return 0;
    }
}

static void idle(struct ga_vfolded *v, const struct ga_gaps *g, struct ga_vstacks *t)
{
    char leaf[64];
    for (size_t d = 0; d < g->n_devices; d++) {
        const struct ga_gaps_device *x = &g->devices[d];
        for (size_t i = 0; i < x->n_sites; i++) {
            snprintf(leaf, sizeof(leaf), "[GPU %u idle: %s]", x->device,
                     ga_cause_name(x->sites[i].cause));
            add(v, t, x->sites[i].stack, leaf, x->sites[i].idle_ns);
        }
    }
}

void ga_vfolded_build(struct ga_vfolded *v, int what, const struct ga_memory *m,
                      const struct ga_sites *s, const struct ga_gaps *g, struct ga_vstacks *t)
{
    memset(v, 0, sizeof(*v));
    v->what = what;
    v->built = 1;
    if (what == GA_FOLDED_PEAK) {
        const struct ga_peak_breakdown *p = &m->peak;
        for (size_t i = 0; i < p->n_by_stack; i++)
            add(v, t, p->by_stack[i].stack, NULL, p->by_stack[i].bytes);
        add(v, t, 0, NULL, p->no_stack.bytes);
    } else if (what == GA_FOLDED_IDLE) {
        idle(v, g, t);
    } else {
        for (size_t i = 0; i < s->n_stacks; i++)
            add(v, t, s->stack_ids[i], NULL, stat_of(&s->per_stack[i], what));
    }
}

void ga_vfolded_free(struct ga_vfolded *v)
{
    free(v->v);
    memset(v, 0, sizeof(*v));
}
