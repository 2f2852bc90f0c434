/* The sites view (view_sites.h): the sites analysis's rankings, capped, with their stacks
 * resolved once. */
#include <stdlib.h>
#include <string.h>

#include "model/view_sites.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "base/util.h"

_Static_assert(GA_VSYM_SOURCES == GA_SYM_UNKNOWN + 1, "one count per symbolization source");

static struct ga_vsite_stats stats(const struct ga_site_stats *s)
{
    return (struct ga_vsite_stats){.allocs = s->allocs,
                                   .alloc_bytes = s->alloc_bytes,
                                   .alloc_failed = s->alloc_failed,
                                   .leaked_bytes = s->leaked_bytes,
                                   .leaked_count = s->leaked_count,
                                   .launches = s->launches,
                                   .launch_failed = s->launch_failed,
                                   .syncs = s->syncs,
                                   .sync_ns = s->sync_ns};
}

static uint32_t top_stack(const struct ga_site *x, enum ga_site_order k)
{
    return k == GA_SITES_BY_BYTES      ? x->top_alloc
           : k == GA_SITES_BY_LAUNCHES ? x->top_launch
                                       : x->top_sync;
}

/* The list's stacks share one frame budget, spent in the list's order. */
static void site_list(struct ga_vsite_list *l, const struct ga_sites *s, struct ga_vstacks *t,
                      enum ga_site_order k)
{
    size_t n, budget = GA_VSITES_LIST_FRAMES;
    const struct ga_site **v = ga_sites_sorted(s, k, &n);
    l->n = n < GA_VSITES_MAX ? n : GA_VSITES_MAX;
    l->omitted = n - l->n;
    l->rows = ga_xcalloc(l->n ? l->n : 1, sizeof(*l->rows));
    for (size_t i = 0; i < l->n; i++) {
        struct ga_vsite_row *row = &l->rows[i];
        row->site = ga_vstacks_site(t, v[i]);
        row->stack = ga_vstacks_stack(t, top_stack(v[i], k));
        row->frames = row->stack ? row->stack->n : 0;
        if (row->frames > budget) row->frames = (uint32_t)budget;
        budget -= row->frames;
        row->st = stats(&v[i]->st);
    }
    free(v);
}

static void libraries(struct ga_vsites *v, const struct ga_sites *s, const struct ga_stacks *st)
{
    size_t n;
    struct ga_library *l = ga_libraries_sorted(s, &n);
    v->n_libs = n < GA_VSITES_MAX ? n : GA_VSITES_MAX;
    v->libs_omitted = n - v->n_libs;
    v->libs = ga_xcalloc(v->n_libs ? v->n_libs : 1, sizeof(*v->libs));
    for (size_t i = 0; i < v->n_libs; i++) {
        int known = l[i].module != GA_NO_MODULE;
        v->libs[i].name = known ? st->mods[l[i].module].name : NULL;
        v->libs[i].path = known ? st->mods[l[i].module].path : NULL;
        v->libs[i].st = stats(&l[i].st);
    }
    free(l);
}

void ga_vsites_build(struct ga_vsites *v, const struct ga_sites *s, struct ga_vstacks *t)
{
    const struct ga_stacks *st = t->st;
    memset(v, 0, sizeof(*v));
    v->have_stacks = s->have_stacks;
    site_list(&v->by_bytes, s, t, GA_SITES_BY_BYTES);
    libraries(v, s, st);
    site_list(&v->by_launches, s, t, GA_SITES_BY_LAUNCHES);
    site_list(&v->by_sync, s, t, GA_SITES_BY_SYNC);
    v->unique_stacks = s->n_stacks;
    v->nodes = st->defined;
    v->modules = st->n_mods;
    v->dladdr_symbols = st->n_syms;
    for (unsigned k = 0; k < GA_VSYM_SOURCES; k++) {
        v->frames_by_source[k] = st->frames_by_source[k];
        v->source_names[k] = ga_sym_source_name(k);
    }
    v->allocs_without_stack = s->no_stack_allocs;
    v->launches_without_stack = s->no_stack_launches;
    v->syncs_without_stack = s->no_stack_syncs;
}

void ga_vsites_free(struct ga_vsites *v)
{
    free(v->by_bytes.rows);
    free(v->by_launches.rows);
    free(v->by_sync.rows);
    free(v->libs);
    memset(v, 0, sizeof(*v));
}
