/* The text report's host-code sections: allocations by call site and by library, launches and
 * blocking time by call site, top 10 each; --stacks adds each site's full stack. Printed only
 * when the trace has stacks. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/report.h"
#include "render/text.h"
#include "base/util.h"

#define TOP_SITES   10
#define SITE_COLS   72 /* a site label is cut to this */
#define STACK_DEPTH 64 /* frames printed per stack with --stacks */

static const char *module_name(const struct ga_report *r, uint32_t m)
{
    return m == GA_NO_MODULE ? "?" : r->stacks.mods[m].name;
}

static void put_site(const struct ga_report *r, FILE *o, const struct ga_site *x)
{
    char label[1024];
    if (x->frame)
        ga_frame_label(&r->stacks, x->frame, label, sizeof(label), 0);
    else
        snprintf(label, sizeof(label), "<unknown stack>");
    fputs("  ", o);
    ga_put_trimmed(o, label, SITE_COLS);
    fprintf(o, "  [%s]\n", module_name(r, x->library));
}

/* The site's heaviest stack, one frame a line, when --stacks was given. */
static void put_stack(const struct ga_report *r, FILE *o, uint32_t stack)
{
    static const struct ga_frame *fr[STACK_DEPTH];
    char label[1024];
    if (!r->show_stacks || !stack) return;
    /* symbolization caches were filled by ga_sites_finish: this only reads them */
    size_t n = ga_sites_stack_frames((struct ga_stacks *)&r->stacks, stack, fr, STACK_DEPTH);
    for (size_t i = 0; i < n; i++) {
        fprintf(o, "%22s#%-2zu ", "", i);
        ga_put_trimmed(o, ga_frame_label(&r->stacks, fr[i], label, sizeof(label), 1), 100);
        fprintf(o, " [%s]%s\n",
                fr[i]->source == GA_SYM_PYTHON ? "python" : module_name(r, fr[i]->module),
                fr[i]->inlined ? " (inlined)" : "");
    }
}

static void more(FILE *o, size_t n)
{
    if (n > TOP_SITES) fprintf(o, "  ... %zu more (see --json)\n", n - TOP_SITES);
}

static void text_alloc_sites(const struct ga_report *r, FILE *o)
{
    size_t n;
    char b[2][32];
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_BYTES, &n);
    if (n) {
        fprintf(o, "\nallocations by call site\n  %8s %10s %6s %10s  site [library]\n", "count",
                "bytes", "failed", "leaked");
        for (size_t i = 0; i < n && i < TOP_SITES; i++) {
            const struct ga_site_stats *s = &v[i]->st;
            fprintf(o, "  %8" PRIu64 " %10s %6" PRIu64 " %10s", s->allocs,
                    ga_fmt_bytes(b[0], s->alloc_bytes), s->alloc_failed,
                    ga_fmt_bytes(b[1], s->leaked_bytes));
            put_site(r, o, v[i]);
            put_stack(r, o, v[i]->top_alloc);
        }
        more(o, n);
    }
    free(v);
}

static void text_libraries(const struct ga_report *r, FILE *o)
{
    size_t n;
    char b[2][32];
    struct ga_library *v = ga_libraries_sorted(&r->sites, &n);
    if (n) {
        fprintf(o, "\nallocations by library\n  %8s %10s %6s %10s  library\n", "count", "bytes",
                "failed", "leaked");
        for (size_t i = 0; i < n && i < TOP_SITES; i++) {
            const char *path = v[i].module == GA_NO_MODULE ? "?" : r->stacks.mods[v[i].module].path;
            fprintf(o, "  %8" PRIu64 " %10s %6" PRIu64 " %10s  ", v[i].st.allocs,
                    ga_fmt_bytes(b[0], v[i].st.alloc_bytes), v[i].st.alloc_failed,
                    ga_fmt_bytes(b[1], v[i].st.leaked_bytes));
            ga_put_trimmed(o, path, 90);
            fputc('\n', o);
        }
        more(o, n);
    }
    free(v);
}

static void text_launch_sites(const struct ga_report *r, FILE *o)
{
    size_t n;
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_LAUNCHES, &n);
    if (n) {
        fprintf(o, "\nlaunches by call site\n  %8s %6s  site [library]\n", "launches", "failed");
        for (size_t i = 0; i < n && i < TOP_SITES; i++) {
            fprintf(o, "  %8" PRIu64 " %6" PRIu64, v[i]->st.launches, v[i]->st.launch_failed);
            put_site(r, o, v[i]);
            put_stack(r, o, v[i]->top_launch);
        }
        more(o, n);
    }
    free(v);
}

static void text_sync_sites(const struct ga_report *r, FILE *o)
{
    size_t n;
    char t[32];
    const struct ga_site **v = ga_sites_sorted(&r->sites, GA_SITES_BY_SYNC, &n);
    if (n) {
        fprintf(o,
                "\nblocking time by call site (synchronizations, blocking copies, waits)\n"
                "  %8s %17s  site [library]\n",
                "calls", "time");
        for (size_t i = 0; i < n && i < TOP_SITES; i++) {
            fprintf(o, "  %8" PRIu64 " %17s", v[i]->st.syncs,
                    ga_fmt_ms(t, (int64_t)v[i]->st.sync_ns));
            put_site(r, o, v[i]);
            put_stack(r, o, v[i]->top_sync);
        }
        more(o, n);
    }
    free(v);
}

void ga_text_sites(const struct ga_report *r, FILE *o)
{
    if (!r->sites.have_stacks) return;
    text_alloc_sites(r, o);
    text_libraries(r, o);
    text_launch_sites(r, o);
    text_sync_sites(r, o);
}
