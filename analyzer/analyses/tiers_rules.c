/* The rules of memory by category shared by a snapshot's breakdown (tiers.c) and the replay of
 * block events (tiers_replay.c): a storage's role in the optimizers' sets, a block's category by
 * its Python frames, counting a block into a breakdown and its top sites. */
#include <stdlib.h>
#include <string.h>

#include "analyses/tiers.h"

int ga_tiers_entry_cmp(const void *a, const void *b)
{
    const struct gt_torch_role_entry *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    return (x->device > y->device) - (x->device < y->device);
}

/* The role of the storage starting at addr on device, -1 none. */
int ga_tiers_role_at(const struct ga_tiers *t, int32_t device, uint64_t addr, uint64_t *bytes)
{
    for (size_t i = 0; i < t->n_opts; i++) {
        const struct ga_tiers_opt *o = &t->opts[i];
        if (!o->whole || !o->n_set) continue;
        struct gt_torch_role_entry key = {.addr = addr, .device = device};
        const struct gt_torch_role_entry *e =
            bsearch(&key, o->set, o->n_set, sizeof(*o->set), ga_tiers_entry_cmp);
        if (e) {
            *bytes = e->bytes;
            return e->role;
        }
    }
    return -1;
}

static int has(const char *s, const char *part)
{
    return strstr(s, part) != NULL;
}

static int named(const char *name, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(name, *names) == 0) return 1;
    return 0;
}

/* Rule 4: the category of a block by its frames, innermost first; GA_CATS when unknown. */
enum ga_cat ga_tiers_by_frames(const struct ga_torch *torch, uint32_t stack)
{
    static const char *const weight_fns[] = {
        "_apply",           "to", "cuda", "load_state_dict", "_load_from_state_dict",
        "reset_parameters", NULL};
    static const char *const call_fns[] = {"_call_impl", "_wrapped_call_impl", NULL};
    const struct ga_torch_frame *f[32];
    size_t n = ga_torch_stack_frames(torch, stack, f, 32);
    if (!n) return GA_CATS;
    for (size_t i = 0; i < n; i++) {
        const char *file = f[i]->file, *name = f[i]->name;
        if (has(file, "/torch/optim/")) return GA_CAT_OPTIMIZER_STATE;
        if (has(file, "/torch/autograd/") ||
            (has(file, "/torch/_tensor.py") && strcmp(name, "backward") == 0))
            return GA_CAT_GRADIENTS;
        if (has(file, "/torch/nn/") && (named(name, weight_fns) || strcmp(name, "__init__") == 0))
            return GA_CAT_WEIGHTS;
        if (has(file, "/torch/utils/checkpoint.py")) return GA_CAT_ACTIVATIONS;
        if (has(file, "/torch/nn/modules/module.py") && named(name, call_fns))
            return GA_CAT_ACTIVATIONS;
    }
    return GA_CAT_OTHER;
}

void ga_tiers_count(struct ga_tiers_breakdown *b, struct ga_map *sites, enum ga_cat cat,
                    enum ga_cat_basis basis, const struct ga_torch_blk *k, uint64_t requested)
{
    struct ga_tiers_cat *x = &b->cat[cat];
    x->bytes += k->size;
    x->requested += requested;
    x->count++;
    if (basis > x->basis) x->basis = basis;
    if (cat == GA_CAT_CACHE || !k->stack) return; /* free blocks, blocks without frames */
    uint64_t *v = ga_map_upsert(sites, k->stack, cat, 0, NULL);
    *v += k->size;
}

void ga_tiers_top_sites(struct ga_tiers_breakdown *b, struct ga_map *sites)
{
    const struct ga_map_slot *s;
    for (size_t i = 0; ga_map_next(sites, &i, &s);) {
        struct ga_tiers_cat *x = &b->cat[s->b];
        struct ga_tiers_site site = {.stack = (uint32_t)s->a, .bytes = s->value};
        size_t at = x->n_top;
        while (at > 0 &&
               (x->top[at - 1].bytes < site.bytes ||
                (x->top[at - 1].bytes == site.bytes && x->top[at - 1].stack > site.stack)))
            at--;
        if (at >= GA_TIERS_TOP_SITES) continue;
        size_t last = x->n_top < GA_TIERS_TOP_SITES ? x->n_top : GA_TIERS_TOP_SITES - 1;
        memmove(&x->top[at + 1], &x->top[at], (last - at) * sizeof(site));
        x->top[at] = site;
        if (x->n_top < GA_TIERS_TOP_SITES) x->n_top++;
    }
}
