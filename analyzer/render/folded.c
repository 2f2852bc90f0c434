/* --folded WHAT: Brendan Gregg's folded-stack lines, `root;...;leaf weight`, one per host stack,
 * for flamegraph.pl, inferno and speedscope. Reads the folded view alone (model/view_folded.h):
 * the weights and stacks are the model's, frames are labelled there; this writes the lines,
 * outermost frame first, a line without a stack under one "[no stack]" frame. */
#include "render/folded.h"

#include <inttypes.h>

static void put_line(const struct ga_vfolded_line *l, FILE *out)
{
    char buf[1024];
    if (!l->stack) fputs("[no stack]", out);
    for (size_t i = l->stack ? l->stack->n : 0; i-- > 0;) {
        fputs(ga_vframe_flame_label(l->stack->frames[i], buf, sizeof(buf), 0), out);
        if (i) fputc(';', out);
    }
    if (l->leaf[0]) fprintf(out, ";%s", l->leaf);
    fprintf(out, " %" PRIu64 "\n", l->weight);
}

int ga_render_folded(const struct ga_vfolded *v, FILE *out)
{
    for (size_t i = 0; i < v->n; i++)
        put_line(&v->v[i], out);
    return ferror(out) ? -1 : 0;
}
