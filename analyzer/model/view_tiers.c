/* Memory by category, ordered and explained once for every renderer (view_tiers.h). */
#include "model/view_tiers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void ga_tv_init(struct ga_tv *v)
{
    memset(v, 0, sizeof(*v));
}

const char *ga_tv_elem_name(uint16_t elem, char *buf, size_t n)
{
    switch (elem) {
    case 4:
        return "fp32";
    case 2:
        return "16-bit";
    case 1:
        return "8-bit";
    case 8:
        return "fp64";
    }
    snprintf(buf, n, "%u-byte", elem);
    return buf;
}

static int by_bytes(const void *a, const void *b)
{
    const struct ga_tv_cat *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return (x->cat > y->cat) - (x->cat < y->cat);
}

static void cats(struct ga_tv_dev *d, const struct ga_torch *torch)
{
    for (int c = 0; c < GA_CATS; c++) {
        struct ga_tv_cat *x = &d->cats[c];
        memset(x, 0, sizeof(*x));
        x->cat = (enum ga_cat)c;
        if (!d->peak) continue;
        const struct ga_tiers_cat *k = &d->peak->cat[c];
        x->bytes = k->bytes, x->requested = k->requested, x->count = k->count;
        x->basis = k->basis;
        for (size_t i = 0; i < k->n_top; i++) {
            const char *l = k->top[i].stack
                                ? ga_torch_site_label(torch, k->top[i].stack, x->top[x->n_top],
                                                      sizeof(x->top[0]))
                                : NULL;
            if (!l) x->top[x->n_top][0] = 0;
            x->top_bytes[x->n_top++] = k->top[i].bytes;
        }
    }
    qsort(d->cats, GA_CATS, sizeof(d->cats[0]), by_bytes);
}

static void opt_meaning(struct ga_tv_opt *o)
{
    char eb[16];
    if (!o->weight_tensors || !o->state_tensors) {
        snprintf(o->meaning, sizeof(o->meaning), "%s keeps no state on the GPU", o->name);
        return;
    }
    double per = (double)o->state_tensors / o->weight_tensors;
    snprintf(o->meaning, sizeof(o->meaning), "%s keeps %.3g %s tensor%s per parameter", o->name,
             per, ga_tv_elem_name(o->state_elem, eb, sizeof(eb)), per == 1.0 ? "" : "s");
}

static void opts(struct ga_tv_dev *d, const struct ga_tiers *t)
{
    for (size_t i = 0; i < t->n_opts; i++)
        for (size_t k = 0; k < t->opts[i].n_devs; k++)
            if (t->opts[i].devs[k].device == d->device) d->n_opts++;
    d->opts = d->n_opts ? ga_xcalloc(d->n_opts, sizeof(*d->opts)) : NULL;
    size_t n = 0;
    for (size_t i = 0; i < t->n_opts; i++) {
        const struct ga_tiers_opt *o = &t->opts[i];
        for (size_t k = 0; k < o->n_devs; k++) {
            const struct ga_tiers_role_dev *r = &o->devs[k];
            if (r->device != d->device) continue;
            struct ga_tv_opt *x = &d->opts[n++];
            *x = (struct ga_tv_opt){.num = o->num,
                                    .name = o->name,
                                    .steps = o->steps,
                                    .device = r->device,
                                    .weights = r->bytes[0],
                                    .gradients = r->bytes[1],
                                    .optimizer_state = r->bytes[2],
                                    .weight_tensors = r->tensors[0],
                                    .gradient_tensors = r->tensors[1],
                                    .state_tensors = r->tensors[2],
                                    .weight_elem = o->weight_elem,
                                    .state_elem = o->state_elem};
            x->state_ratio = x->weights ? (double)x->optimizer_state / x->weights : 0;
            opt_meaning(x);
        }
    }
}

static const char *advice_of(enum ga_cat c)
{
    switch (c) {
    case GA_CAT_OPTIMIZER_STATE:
        return "optimizer state: shard it over ranks (ZeRO-1/FSDP), or use a smaller optimizer "
               "(8-bit Adam from bitsandbytes, Adafactor, SGD with momentum keeps half of "
               "AdamW's)";
    case GA_CAT_ACTIVATIONS:
        return "activations: activation checkpointing (torch.utils.checkpoint) trades compute "
               "for them; gradient accumulation over smaller micro-batches and mixed precision "
               "(torch.autocast) shrink them";
    case GA_CAT_WEIGHTS:
        return "weights: bf16/fp16 weights halve them; FSDP/ZeRO-3 shards them over ranks";
    case GA_CAT_GRADIENTS:
        return "gradients: ZeRO-2/FSDP shards them; zero_grad(set_to_none=True) frees them "
               "between steps; lower-precision parameters shrink them too";
    default: /* cache and fragmentation have their own section; the rest no general advice */
        return NULL;
    }
}

static void advise(struct ga_tv_dev *d)
{
    for (int i = 0; i < GA_CATS && d->n_advice < GA_TV_ADVICE; i++) {
        const char *a = d->cats[i].bytes ? advice_of(d->cats[i].cat) : NULL;
        if (a) d->advice[d->n_advice++] = a;
    }
}

void ga_tv_build(struct ga_tv *v, const struct ga_tiers *t, const struct ga_torch *torch)
{
    if (!t->present) return; /* no role records: PyTorch's breakdown by category is unknown */
    v->devs = t->n_devs ? ga_xcalloc(t->n_devs, sizeof(*v->devs)) : NULL;
    for (size_t i = 0; i < t->n_devs; i++) {
        const struct ga_tiers_dev *s = &t->devs[i];
        struct ga_tv_dev *d = &v->devs[v->n_devs++];
        d->device = s->device;
        d->peak = s->peak.have ? &s->peak : NULL;
        /* the replay of the block events reached a higher point between two snapshots: its
         * breakdown is the one at the peak */
        d->replay = ga_tiers_replay_of(t, s->device);
        if (d->replay && d->replay->peak.have &&
            (!d->peak || d->replay->peak.allocated > d->peak->allocated))
            d->peak = &d->replay->peak, d->replayed = 1;
        const struct ga_torch_dev *td = ga_torch_dev_of(torch, s->device);
        d->peak_allocated = td ? td->peak_allocated : 0;
        d->series = s->series;
        d->n_series = s->n_series;
        d->snaps = s->snaps;
        d->n_snaps = s->n_snaps;
        cats(d, torch);
        opts(d, t);
        advise(d);
    }
}

void ga_tv_free(struct ga_tv *v)
{
    for (size_t i = 0; i < v->n_devs; i++)
        free(v->devs[i].opts);
    free(v->devs);
    memset(v, 0, sizeof(*v));
}
