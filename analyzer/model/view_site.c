/* Call sites resolved for the renderers (view_site.h). */
#include "model/view_site.h"

#include <stdlib.h>
#include <string.h>

#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "base/util.h"

#define ALL_FRAMES 4096 /* frames looked at per stack to count what was left out */

static const char *module_path(const struct ga_stacks *st, uint32_t m)
{
    return m == GA_NO_MODULE ? NULL : st->mods[m].path;
}

static struct ga_vframe frame(const struct ga_stacks *st, const struct ga_frame *f)
{
    return (struct ga_vframe){
        .function = f->func,
        .file = f->file,
        .module = module_path(st, f->module),
        .symbolized_by = ga_sym_source_name(f->source),
        .line = f->line,
        .have_offset = f->module != GA_NO_MODULE,
        .offset = f->module == GA_NO_MODULE ? 0 : f->ip - st->mods[f->module].base,
        .inlined = f->inlined,
    };
}

/* o's frames: at most GA_VSITE_STACK_FRAMES and at most *budget (which it spends). */
static void frames(struct ga_vsite *o, struct ga_stacks *st, uint32_t stack, size_t *budget)
{
    static const struct ga_frame *fr[ALL_FRAMES];
    size_t n = stack ? ga_sites_stack_frames(st, stack, fr, ALL_FRAMES) : 0;
    size_t k = n < GA_VSITE_STACK_FRAMES ? n : GA_VSITE_STACK_FRAMES;
    if (k > *budget) k = *budget;
    *budget -= k;
    o->frames = ga_xcalloc(k + 1, sizeof(*o->frames));
    for (size_t i = 0; i < k; i++)
        o->frames[i] = frame(st, fr[i]);
    o->n_frames = k;
    o->frames_truncated = n - k;
}

void ga_vsite_make(struct ga_vsite *o, struct ga_stacks *st, const struct ga_sites *s,
                   const struct ga_site *x, uint32_t stack, size_t *budget, int in_list)
{
    char label[1024];
    const struct ga_frame *f;
    memset(o, 0, sizeof(*o));
    if (!x) x = ga_sites_of_stack(s, stack);
    f = x ? x->frame : NULL;
    o->text = ga_xstrdup(f                   ? ga_frame_label(st, f, label, sizeof(label), 0)
                         : in_list || stack ? "<unknown stack>"
                                            : "<no stack recorded>");
    if (!x) {
        o->label = ga_xstrdup(o->text);
        return;
    }
    o->have_site = 1;
    o->label = ga_xstrdup(f ? ga_frame_label(st, f, label, sizeof(label), 1) : "<unknown>");
    if (f) {
        o->function = f->func;
        o->file = f->file;
        o->line = f->line;
        o->module = module_path(st, f->module);
        o->symbolized_by = ga_sym_source_name(f->source);
    }
    o->library = module_path(st, x->library);
    o->stacks = x->stacks;
    frames(o, st, stack, budget);
}

void ga_vsite_free(struct ga_vsite *s)
{
    free(s->text);
    free(s->label);
    free(s->frames);
    memset(s, 0, sizeof(*s));
}

void ga_vsite_list_free(struct ga_vsite_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        ga_vsite_free(&l->v[i].site);
    free(l->v);
    memset(l, 0, sizeof(*l));
}
