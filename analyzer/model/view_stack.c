/* The resolved stacks (view_stack.h): frames, stacks and sites symbolized into strings once, on
 * the first view that asks for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view_stack.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "base/util.h"

void ga_vstacks_init(struct ga_vstacks *t, struct ga_stacks *st, const struct ga_sites *sites)
{
    memset(t, 0, sizeof(*t));
    t->st = st;
    t->sites = sites;
}

static const char *module_path(const struct ga_stacks *st, uint32_t m)
{
    return m == GA_NO_MODULE ? NULL : st->mods[m].path;
}

static const char *module_name(const struct ga_stacks *st, uint32_t m)
{
    return m == GA_NO_MODULE ? NULL : st->mods[m].name;
}

static struct ga_vframe *resolve_frame(const struct ga_stacks *st, const struct ga_frame *f)
{
    char label[1024]; /* long demangled names are cut here, as the reports always cut them */
    struct ga_vframe *v = ga_xcalloc(1, sizeof(*v));
    v->label = ga_xstrdup(ga_frame_label(st, f, label, sizeof(label), 0));
    v->label_path = ga_xstrdup(ga_frame_label(st, f, label, sizeof(label), 1));
    v->func = f->func;
    v->file = f->file;
    v->line = f->line;
    v->module = module_name(st, f->module);
    v->module_path = module_path(st, f->module);
    v->ip = f->ip;
    v->offset = f->module == GA_NO_MODULE ? 0 : f->ip - st->mods[f->module].base;
    v->symbolized_by = ga_sym_source_name(f->source);
    v->python = f->source == GA_SYM_PYTHON;
    v->inlined = f->inlined;
    return v;
}

const struct ga_vframe *ga_vstacks_frame(struct ga_vstacks *t, const struct ga_frame *f)
{
    int added;
    if (!f) return NULL;
    uint64_t *slot = ga_map_upsert(&t->frame_of, (uint64_t)(uintptr_t)f, 0, 0, &added);
    if (!added) return t->frames[*slot - 1];
    t->frames = ga_xgrow(t->frames, &t->frames_cap, t->n_frames, sizeof(*t->frames));
    t->frames[t->n_frames++] = resolve_frame(t->st, f);
    *slot = t->n_frames;
    return t->frames[t->n_frames - 1];
}

const struct ga_vstack *ga_vstacks_stack(struct ga_vstacks *t, uint32_t id)
{
    static const struct ga_frame *fr[GA_VSTACK_COUNT];
    int added;
    if (!id) return NULL;
    uint64_t *slot = ga_map_upsert(&t->stack_of, id, 0, 0, &added);
    if (!added) return t->stacks[*slot - 1];
    *slot = t->n_stacks + 1;
    size_t total = ga_sites_stack_frames(t->st, id, fr, GA_VSTACK_COUNT);
    size_t n = total < GA_VSTACK_FRAMES ? total : GA_VSTACK_FRAMES;
    struct ga_vstack *s = ga_xcalloc(1, sizeof(*s));
    s->id = id;
    s->n = (uint32_t)n;
    s->total = (uint32_t)total;
    s->frames = ga_xmalloc((n ? n : 1) * sizeof(*s->frames));
    for (size_t i = 0; i < n; i++)
        s->frames[i] = ga_vstacks_frame(t, fr[i]);
    t->stacks = ga_xgrow(t->stacks, &t->stacks_cap, t->n_stacks, sizeof(*t->stacks));
    t->stacks[t->n_stacks++] = s;
    return s;
}

const struct ga_vsite *ga_vstacks_site(struct ga_vstacks *t, const struct ga_site *x)
{
    int added;
    if (!x) return NULL;
    uint64_t *slot = ga_map_upsert(&t->site_of, (uint64_t)(uintptr_t)x, 0, 0, &added);
    if (!added) return t->vsites[*slot - 1];
    *slot = t->n_sites + 1;
    struct ga_vsite *v = ga_xcalloc(1, sizeof(*v));
    v->frame = ga_vstacks_frame(t, x->frame);
    v->library = module_name(t->st, x->library);
    v->library_path = module_path(t->st, x->library);
    v->stacks = x->stacks;
    t->vsites = ga_xgrow(t->vsites, &t->sites_cap, t->n_sites, sizeof(*t->vsites));
    t->vsites[t->n_sites++] = v;
    return v;
}

const struct ga_vsite *ga_vstacks_site_of(struct ga_vstacks *t, uint32_t id)
{
    if (!id || !t->sites) return NULL;
    return ga_vstacks_site(t, ga_sites_of_stack(t->sites, id));
}

void ga_vstacks_free(struct ga_vstacks *t)
{
    for (size_t i = 0; i < t->n_frames; i++) {
        free((char *)t->frames[i]->label);
        free((char *)t->frames[i]->label_path);
        free(t->frames[i]);
    }
    for (size_t i = 0; i < t->n_stacks; i++) {
        free(t->stacks[i]->frames);
        free(t->stacks[i]);
    }
    for (size_t i = 0; i < t->n_sites; i++)
        free(t->vsites[i]);
    free(t->frames);
    free(t->stacks);
    free(t->vsites);
    ga_map_free(&t->frame_of);
    ga_map_free(&t->stack_of);
    ga_map_free(&t->site_of);
    memset(t, 0, sizeof(*t));
}
