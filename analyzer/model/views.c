/* The report's views (see views.h). Each is made once, after every analysis has finished (the
 * call sites need the stacks symbolized), in time linear in what it looks at. */
#include "model/views.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

/* Groups the holders of x by call site (a stack without a site stands alone) and keeps the
 * largest GA_VIEW_OOM_HOLDERS, largest first (ties: the one seen first). */
static void oom_holders(struct ga_oom_view *out, const struct ga_oom *x, const struct ga_sites *s)
{
    struct ga_holder_view *v = ga_xcalloc(x->n_holders + 1, sizeof(*v));
    size_t n = 0;
    struct ga_map of_site = {0}; /* site index -> index into v */
    for (size_t i = 0; i < x->n_holders; i++) {
        const struct ga_holder *h = &x->holders[i];
        const struct ga_site *site = ga_sites_of_stack(s, h->stack);
        int added = 1;
        size_t j = site ? (size_t)*ga_map_upsert(&of_site, (uint64_t)(site - s->sites), 0, n, &added)
                        : n;
        if (added) v[n++] = (struct ga_holder_view){.site = site, .stack = h->stack};
        v[j].bytes += h->bytes;
        v[j].count += h->count;
    }
    ga_map_free(&of_site);
    /* selection of the top few (n is at most GA_OOM_HOLDERS_MAX) */
    for (size_t k = 0; k < GA_VIEW_OOM_HOLDERS && k < n; k++) {
        size_t best = k;
        for (size_t j = k + 1; j < n; j++)
            if (v[j].bytes > v[best].bytes) best = j;
        struct ga_holder_view t = v[k];
        v[k] = v[best];
        v[best] = t;
        out->holders[out->n_holders++] = v[k];
    }
    free(v);
}

static void ooms(struct ga_views *v, const struct ga_memory *m, const struct ga_sites *s)
{
    v->n_ooms = m->n_ooms;
    v->ooms = ga_xcalloc(m->n_ooms + 1, sizeof(*v->ooms));
    for (size_t i = 0; i < m->n_ooms; i++) {
        const struct ga_oom *x = &m->ooms[i], *prev = i ? &m->ooms[i - 1] : NULL;
        struct ga_oom_view *o = &v->ooms[i];
        o->repeat_of = prev && prev->retry == GA_RETRY_FAILED &&
                               prev->requested == x->requested && prev->verdict == x->verdict
                           ? (int64_t)i - 1
                           : -1;
        o->have_holders = x->holders != NULL;
        if (x->holders) oom_holders(o, x, s);
    }
}

static int by_peak_bytes(const void *a, const void *b)
{
    const struct ga_library *x = a, *y = b;
    if (x->st.peak_bytes != y->st.peak_bytes) return x->st.peak_bytes < y->st.peak_bytes ? 1 : -1;
    return x->module < y->module ? -1 : x->module > y->module;
}

static void libs_at_peak(struct ga_views *v, const struct ga_sites *s)
{
    size_t n, k = 0;
    struct ga_library *l = ga_libraries_sorted(s, &n);
    if (n > 1) qsort(l, n, sizeof(*l), by_peak_bytes);
    for (size_t i = 0; i < n; i++)
        if (l[i].st.peak_bytes || l[i].st.peak_count) l[k++] = l[i];
    v->libs_at_peak = l;
    v->n_libs_at_peak = k;
}

void ga_views_build(struct ga_views *v, const struct ga_memory *m, const struct ga_sites *s)
{
    memset(v, 0, sizeof(*v));
    ooms(v, m, s);
    libs_at_peak(v, s);
}

void ga_views_free(struct ga_views *v)
{
    free(v->ooms);
    free(v->libs_at_peak);
    memset(v, 0, sizeof(*v));
}
