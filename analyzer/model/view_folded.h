/* The folded stacks of one report (--folded WHAT): per host stack its weight for WHAT, the
 * stacks resolved by the model's table (model/view_stack.h), frames labelled for flame graphs.
 * Built on demand (ga_report_folded), not at the end of every pass: it resolves every stack with
 * a weight, which only --folded needs. */
#ifndef GA_VIEW_FOLDED_H
#define GA_VIEW_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "model/view_stack.h"

/* WHAT: what the weights are. */
enum ga_folded_what {
    GA_FOLDED_PEAK,   /* bytes live at the peak */
    GA_FOLDED_ALLOC,  /* bytes allocated */
    GA_FOLDED_LEAK,   /* bytes live at the end */
    GA_FOLDED_LAUNCH, /* launches */
    GA_FOLDED_SYNC,   /* ns blocked */
    GA_FOLDED_IDLE,   /* GPU idle ns by the host stack it is attributed to */
    GA_FOLDED_KINDS
};

/* One line: the stack's frames, then the leaf when not "", then the weight (never 0). */
struct ga_vfolded_line {
    const struct ga_vstack *stack; /* NULL: no stack ("[no stack]") */
    char leaf[64];                 /* "[GPU 0 idle: host busy]" for idle; else "" */
    uint64_t weight;
};

struct ga_vfolded {
    struct ga_vfolded_line *v;
    size_t n, cap;
    int what; /* the weights' WHAT */
    int built;
};

/* WHAT's index for its word ("peak", "alloc", "leak", "launch", "sync", "idle"); -1 for another. */
int ga_folded_what(const char *what);
/* A frame's label in flame graphs: Python frames `file.py:line function`, native ones their
 * demangled name (with `lines`: and " (file:line)" where known; else module+offset), without
 * ';' or newlines (the folded format's separators). */
const char *ga_vframe_flame_label(const struct ga_vframe *f, char *buf, size_t n, int lines);

struct ga_memory;
struct ga_sites;
struct ga_gaps;
void ga_vfolded_build(struct ga_vfolded *v, int what, const struct ga_memory *m,
                      const struct ga_sites *s, const struct ga_gaps *g, struct ga_vstacks *t);
void ga_vfolded_free(struct ga_vfolded *v);

#endif
