/* The PyTorch allocator view (view_torch.h): copies of the PyTorch analysis's devices and of the
 * tiers view, in the model's structs. Linear in what it copies (the analysis bounds the series,
 * the snapshots and the OOMs it keeps). */
#include "model/view_torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/state.h"
#include "base/util.h"

_Static_assert(GA_VTORCH_CATS >= GA_CATS, "a slot per category");
_Static_assert(GA_VTORCH_TOP == GA_TIERS_TOP_SITES, "the top sites the tiers keep");
_Static_assert(GA_VTORCH_ADVICE == GA_TV_ADVICE, "the advice lines the tiers view keeps");

static int64_t rel(const struct ga_report *r, uint64_t ts)
{
    return (int64_t)(ts - r->read.header.start_monotonic_ns);
}

void ga_vtorch_sites_make(struct ga_vtorch_sites *o, const struct ga_report *r,
                          const struct ga_torch_sites *s)
{
    char buf[1024];
    o->v = ga_xcalloc(s->n + 1, sizeof(*o->v));
    o->n = s->n;
    o->other_bytes = s->other_bytes;
    o->other_count = s->other_count;
    for (size_t i = 0; i < s->n; i++) {
        const char *l = ga_torch_entry_label(&r->torch, &r->stacks, &s->s[i], buf, sizeof(buf));
        o->v[i] = (struct ga_vtorch_site){
            .label = l ? ga_xstrdup(l) : NULL,
            .source = ga_torch_site_source_name(l ? s->s[i].source : GA_TORCH_SITE_NONE),
            .in_segments = l && s->s[i].source == GA_TORCH_SITE_SEGMENT,
            .bytes = s->s[i].bytes,
            .count = s->s[i].count};
    }
}

void ga_vtorch_sites_free(struct ga_vtorch_sites *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].label);
    free(s->v);
    memset(s, 0, sizeof(*s));
}

static struct ga_vtorch_frag frag(const struct ga_report *r, const struct ga_torch_frag *f)
{
    return (struct ga_vtorch_frag){.ns = rel(r, f->ts),
                                   .reserved = f->reserved,
                                   .allocated = f->allocated,
                                   .free_in_segments = f->free_in_segments,
                                   .largest_free = f->largest_free,
                                   .partly_used = f->partly_used,
                                   .inactive_split = f->inactive_split};
}

static void cat(struct ga_vtorch_cat *o, const struct ga_tv_cat *c)
{
    o->name = ga_cat_name(c->cat);
    o->label = ga_cat_label(c->cat);
    o->basis = ga_cat_basis_name(c->basis);
    o->optimizer_state = c->cat == GA_CAT_OPTIMIZER_STATE;
    o->remainder = c->basis == GA_BASIS_REMAINDER;
    o->bytes = c->bytes;
    o->requested = c->requested;
    o->count = c->count;
    o->n_top = c->n_top;
    for (size_t k = 0; k < c->n_top; k++) {
        o->top[k] = c->top[k][0] ? c->top[k] : NULL;
        o->top_bytes[k] = c->top_bytes[k];
    }
}

/* An element size's dtype name ("fp32", ...), "" for 0 (unknown). */
static void dtype(char out[16], uint16_t elem)
{
    char buf[16];
    snprintf(out, 16, "%s", elem ? ga_tv_elem_name(elem, buf, sizeof(buf)) : "");
}

static void opts(struct ga_vtorch_tiers *o, const struct ga_tv_dev *v)
{
    o->opts = ga_xcalloc(v->n_opts + 1, sizeof(*o->opts));
    o->n_opts = v->n_opts;
    for (size_t i = 0; i < v->n_opts; i++) {
        const struct ga_tv_opt *x = &v->opts[i];
        struct ga_vtorch_opt *p = &o->opts[i];
        *p = (struct ga_vtorch_opt){.num = x->num,
                                    .name = x->name,
                                    .steps = x->steps,
                                    .weights = x->weights,
                                    .gradients = x->gradients,
                                    .optimizer_state = x->optimizer_state,
                                    .weight_tensors = x->weight_tensors,
                                    .gradient_tensors = x->gradient_tensors,
                                    .state_tensors = x->state_tensors,
                                    .have_ratio = x->weights != 0,
                                    .state_ratio = x->state_ratio,
                                    .meaning = x->meaning};
        dtype(p->weight_dtype, x->weight_elem);
        dtype(p->state_dtype, x->state_elem);
    }
}

static void points(struct ga_vtorch_tiers *o, const struct ga_report *r, const struct ga_tv_dev *v)
{
    o->points = ga_xcalloc(v->n_series + 1, sizeof(*o->points));
    o->n_points = v->n_series;
    for (size_t i = 0; i < v->n_series; i++) {
        const struct ga_tiers_point *p = &v->series[i];
        uint64_t roles = p->weights + p->gradients + p->optimizer_state;
        o->points[i] = (struct ga_vtorch_point){
            .ns = rel(r, p->ts),
            .step = p->step,
            .weights = p->weights,
            .gradients = p->gradients,
            .optimizer_state = p->optimizer_state,
            .allocated = p->allocated,
            .reserved = p->reserved,
            .cache = p->reserved > p->allocated ? p->reserved - p->allocated : 0,
            .have_other = p->allocated >= roles,
            .other_allocated = p->allocated >= roles ? p->allocated - roles : 0};
    }
    o->snaps = ga_xcalloc(v->n_snaps + 1, sizeof(*o->snaps));
    o->n_snaps = v->n_snaps;
    for (size_t i = 0; i < v->n_snaps; i++) {
        const struct ga_tiers_snappoint *p = &v->snaps[i];
        struct ga_vtorch_snap *s = &o->snaps[i];
        s->ns = rel(r, p->ts);
        s->why = ga_torch_why_name(p->why);
        s->roles_known = p->roles_known;
        for (int c = 0; c < GA_CATS; c++)
            s->bytes[c] = p->bytes[c];
        s->allocated = p->allocated;
        s->reserved = p->reserved;
    }
}

static void tiers(struct ga_vtorch_tiers *o, const struct ga_report *r, const struct ga_tv_dev *v)
{
    o->have_peak = v->peak != NULL;
    if (v->peak) {
        o->peak_ns = rel(r, v->peak->ts);
        o->allocated = v->peak->allocated;
        o->reserved = v->peak->reserved;
        o->roles_unmatched_bytes = v->peak->roles_unmatched_bytes;
        o->roles_known = v->peak->roles_known;
        o->optimizer_state_bytes = v->peak->cat[GA_CAT_OPTIMIZER_STATE].bytes;
    }
    o->replayed = v->replayed;
    o->have_replay = v->replay != NULL;
    if (v->replay) {
        o->batches = v->replay->batches;
        o->batches_replayed = v->replay->replayed;
        o->batches_inconsistent = v->replay->inconsistent;
    }
    o->n_cats = GA_CATS;
    for (int i = 0; i < GA_CATS; i++)
        cat(&o->cats[i], &v->cats[i]);
    opts(o, v);
    points(o, r, v);
    o->n_advice = v->n_advice;
    for (size_t i = 0; i < v->n_advice; i++)
        o->advice[i] = v->advice[i];
}

static const struct ga_tv_dev *tv_dev(const struct ga_report *r, int32_t device)
{
    for (size_t i = 0; i < r->tierview.n_devs; i++)
        if (r->tierview.devs[i].device == device) return &r->tierview.devs[i];
    return NULL;
}

static void dev(struct ga_vtorch_dev *o, const struct ga_report *r, const struct ga_torch_dev *d)
{
    const struct ga_torch *t = &r->torch;
    const struct ga_tv_dev *v = tv_dev(r, d->device);
    o->device = d->device;
    o->peak_allocated = d->peak_allocated;
    o->peak_reserved = d->peak_reserved;
    o->have_at_peak = d->have_at_peak;
    o->at_peak = frag(r, &d->at_peak);
    ga_vtorch_sites_make(&o->peak_sites, r, &d->peak_sites);
    o->series = ga_xcalloc(d->n_series + 1, sizeof(*o->series));
    o->n_series = d->n_series;
    for (size_t i = 0; i < d->n_series; i++)
        o->series[i] = frag(r, &d->series[i]);
    o->at_ooms = ga_xcalloc(t->n_ooms + 1, sizeof(*o->at_ooms));
    for (size_t i = 0; i < t->n_ooms; i++)
        if (t->ooms[i].device == d->device && t->ooms[i].have_snap)
            o->at_ooms[o->n_at_ooms++] = frag(r, &t->ooms[i].frag);
    o->have_exit = d->have_exit;
    o->cached_at_exit = d->cached_at_exit;
    o->allocated_at_exit = d->allocated_at_exit;
    o->have_tiers = v != NULL;
    if (v) tiers(&o->tiers, r, v);
}

void ga_vtorch_build(struct ga_vtorch *v, const struct ga_report *r)
{
    memset(v, 0, sizeof(*v));
    v->expandable_segments = (r->torch.snapshot_flags & GT_TORCH_EXPANDABLE) != 0;
    v->devs = ga_xcalloc(r->torch.n_devs + 1, sizeof(*v->devs));
    v->n_devs = r->torch.n_devs;
    for (size_t i = 0; i < r->torch.n_devs; i++)
        dev(&v->devs[i], r, &r->torch.devs[i]);
    v->n_cat_names = GA_CATS;
    for (int c = 0; c < GA_CATS; c++)
        v->cat_names[c] = ga_cat_name((enum ga_cat)c);
}

void ga_vtorch_free(struct ga_vtorch *v)
{
    for (size_t i = 0; i < v->n_devs; i++) {
        struct ga_vtorch_dev *d = &v->devs[i];
        ga_vtorch_sites_free(&d->peak_sites);
        free(d->series);
        free(d->at_ooms);
        free(d->tiers.opts);
        free(d->tiers.points);
        free(d->tiers.snaps);
    }
    free(v->devs);
    memset(v, 0, sizeof(*v));
}
