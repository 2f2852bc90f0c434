/* The text report's host-code sections: allocations by call site and by library, launches and
 * blocking time by call site, top 10 each; --stacks adds each site's full stack. Printed only
 * when the trace has stacks. Reads the sites view alone (model/view_sites.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render/sites.h"
#include "base/util.h"

#define TOP_SITES   10
#define SITE_COLS   72 /* a site label is cut to this */
#define STACK_DEPTH 64 /* frames printed per stack with --stacks */

static void put_site(FILE *o, const struct ga_vsite *x)
{
    fputs("  ", o);
    ga_put_trimmed(o, x->frame ? x->frame->label : "<unknown stack>", SITE_COLS);
    fprintf(o, "  [%s]\n", x->library ? x->library : "?");
}

/* The site's heaviest stack, one frame a line, when --stacks was given. */
static void put_stack(FILE *o, const struct ga_vstack *s, int show)
{
    if (!show || !s) return;
    for (size_t i = 0; i < s->n && i < STACK_DEPTH; i++) {
        const struct ga_vframe *f = s->frames[i];
        fprintf(o, "%22s#%-2zu ", "", i);
        ga_put_trimmed(o, f->label_path, 100);
        fprintf(o, " [%s]%s\n",
                f->python   ? "python"
                : f->module ? f->module
                            : "?",
                f->inlined ? " (inlined)" : "");
    }
}

static void more(FILE *o, size_t n)
{
    if (n > TOP_SITES) fprintf(o, "  ... %zu more (see --json)\n", n - TOP_SITES);
}

static void text_alloc_sites(const struct ga_vsite_list *l, int show, FILE *o)
{
    char b[2][32];
    if (!l->n) return;
    fprintf(o, "\nallocations by call site\n  %8s %10s %6s %10s  site [library]\n", "count",
            "bytes", "failed", "leaked");
    for (size_t i = 0; i < l->n && i < TOP_SITES; i++) {
        const struct ga_vsite_stats *s = &l->rows[i].st;
        fprintf(o, "  %8" PRIu64 " %10s %6" PRIu64 " %10s", s->allocs,
                ga_fmt_bytes(b[0], s->alloc_bytes), s->alloc_failed,
                ga_fmt_bytes(b[1], s->leaked_bytes));
        put_site(o, l->rows[i].site);
        put_stack(o, l->rows[i].stack, show);
    }
    more(o, l->n + l->omitted);
}

static void text_libraries(const struct ga_vsites *v, FILE *o)
{
    char b[2][32];
    if (!v->n_libs) return;
    fprintf(o, "\nallocations by library\n  %8s %10s %6s %10s  library\n", "count", "bytes",
            "failed", "leaked");
    for (size_t i = 0; i < v->n_libs && i < TOP_SITES; i++) {
        const struct ga_vlibrary *l = &v->libs[i];
        fprintf(o, "  %8" PRIu64 " %10s %6" PRIu64 " %10s  ", l->st.allocs,
                ga_fmt_bytes(b[0], l->st.alloc_bytes), l->st.alloc_failed,
                ga_fmt_bytes(b[1], l->st.leaked_bytes));
        ga_put_trimmed(o, l->path ? l->path : "?", 90);
        fputc('\n', o);
    }
    more(o, v->n_libs + v->libs_omitted);
}

static void text_launch_sites(const struct ga_vsite_list *l, int show, FILE *o)
{
    if (!l->n) return;
    fprintf(o, "\nlaunches by call site\n  %8s %6s  site [library]\n", "launches", "failed");
    for (size_t i = 0; i < l->n && i < TOP_SITES; i++) {
        fprintf(o, "  %8" PRIu64 " %6" PRIu64, l->rows[i].st.launches, l->rows[i].st.launch_failed);
        put_site(o, l->rows[i].site);
        put_stack(o, l->rows[i].stack, show);
    }
    more(o, l->n + l->omitted);
}

static void text_sync_sites(const struct ga_vsite_list *l, int show, FILE *o)
{
    char t[32];
    if (!l->n) return;
    fprintf(o,
            "\nblocking time by call site (synchronizations, blocking copies, waits)\n"
            "  %8s %17s  site [library]\n",
            "calls", "time");
    for (size_t i = 0; i < l->n && i < TOP_SITES; i++) {
        fprintf(o, "  %8" PRIu64 " %17s", l->rows[i].st.syncs,
                ga_fmt_ms(t, (int64_t)l->rows[i].st.sync_ns));
        put_site(o, l->rows[i].site);
        put_stack(o, l->rows[i].stack, show);
    }
    more(o, l->n + l->omitted);
}

void ga_text_sites(const struct ga_vsites *v, int show_stacks, FILE *o)
{
    if (!v->have_stacks) return;
    text_alloc_sites(&v->by_bytes, show_stacks, o);
    text_libraries(v, o);
    text_launch_sites(&v->by_launches, show_stacks, o);
    text_sync_sites(&v->by_sync, show_stacks, o);
}
