/* The page's view (view_page.h): the timeline view finished and its causes and APIs named, the
 * peak's stacks capped and labelled, PyTorch's maps resolved. Linear in what it copies (each
 * part is bounded: GA_TLV_*, GA_VPAGE_PEAK_STACKS, GA_TMV_*). */
#include "model/view_page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/report.h"
#include "model/view_folded.h"
#include "model/view_timeline.h"
#include "base/util.h"

static void tap(void *ctx, const struct ga_event *ev)
{
    if (!ga_rec_is_gpu(ev->type)) ga_tlv_host_event(ctx, ev);
}

void ga_vpage_attach(struct ga_vpage *v, struct ga_report *r)
{
    memset(v, 0, sizeof(*v));
    v->tlv = ga_xcalloc(1, sizeof(*v->tlv));
    ga_tlv_init(v->tlv, &r->read.header.start_monotonic_ns);
    r->gpu.act_sink = ga_tlv_act;
    r->gpu.act_ctx = v->tlv;
    r->tap = tap;
    r->tap_ctx = v->tlv;
    v->tlv->next_gap_hook = r->gaps.gap_hook;
    v->tlv->next_gap_ctx = r->gaps.gap_ctx;
    r->gaps.gap_hook = ga_tlv_gap;
    r->gaps.gap_ctx = v->tlv;
}

static void timeline(struct ga_vpage_timeline *o, struct ga_tlv *v)
{
    char lb[16];
    o->acts_total = v->acts_total;
    o->host_total = v->host_total;
    o->gaps_total = v->gaps_total;
    o->outside = v->outside;
    o->lanes_dropped = v->lanes_dropped;
    o->col_ns = ga_tlv_col_ns(v);
    o->cols = ga_tlv_cols(v);
    o->cap = v->cap;
    o->names = v->names;
    o->n_names = v->n_names;
    o->lanes = v->lanes;
    o->n_lanes = v->n_lanes;
    o->slots = v->slots;
    o->n_slots = (o->cols + GA_TLV_SLOT_COLS - 1) / GA_TLV_SLOT_COLS;
    o->longest = v->longest;
    o->n_longest = v->n_longest;
    o->gaps = v->gaps;
    o->n_gaps = v->n_gaps;
    o->gap_cause = ga_xcalloc(v->n_gaps + 1, sizeof(*o->gap_cause));
    for (size_t i = 0; i < v->n_gaps; i++)
        o->gap_cause[i] = ga_cause_name(v->gaps[i].cause);
    o->host = v->host;
    o->n_host = v->n_host;
    o->host_api = ga_xcalloc(v->n_host + 1, sizeof(*o->host_api));
    for (size_t i = 0; i < v->n_host; i++)
        snprintf(o->host_api[i], sizeof(o->host_api[i]), "%s", ga_api_label(v->host[i].api, lb));
}

/* The bytes live at the peak per stack, largest first: the first GA_VPAGE_PEAK_STACKS with
 * frames listed, the rest summed; stacks the trace does not define and bytes without a stack
 * apart. They add up to the peak. */
static void peak_stacks(struct ga_vpage *v, struct ga_report *r)
{
    const struct ga_peak_breakdown *p = &r->mem.peak;
    char buf[1024];
    v->peak = ga_xcalloc(p->n_by_stack + 1, sizeof(*v->peak));
    for (size_t i = 0; i < p->n_by_stack; i++) {
        const struct ga_holder *x = &p->by_stack[i];
        const struct ga_vstack *s = x->stack ? ga_vstacks_stack(&r->stackview, x->stack) : NULL;
        if (i >= GA_VPAGE_PEAK_STACKS || !s || !s->n) {
            *(s && s->n ? &v->peak_other : &v->peak_unknown) += x->bytes;
            continue;
        }
        struct ga_vpage_stack *o = &v->peak[v->n_peak++];
        o->bytes = x->bytes;
        o->stack = s;
        o->labels = ga_xcalloc(s->n, sizeof(*o->labels));
        for (uint32_t k = 0; k < s->n; k++)
            o->labels[k] = ga_xstrdup(ga_vframe_flame_label(s->frames[k], buf, sizeof(buf), 1));
    }
    v->peak_no_stack = p->no_stack.bytes;
}

/* The index of torch stack `stack` in the page's sites, made on first use. */
static uint32_t torch_site(struct ga_vpage *v, const struct ga_torch *t, struct ga_map *idx,
                           size_t *cap, uint32_t stack)
{
    const struct ga_torch_frame *fr[64];
    char buf[1024];
    int added;
    uint64_t *slot = ga_map_upsert(idx, stack, 0, 0, &added);
    if (!added) return (uint32_t)*slot;
    *slot = v->n_torch_sites;
    v->torch_sites = ga_xgrow(v->torch_sites, cap, v->n_torch_sites, sizeof(*v->torch_sites));
    struct ga_vpage_tsite *o = &v->torch_sites[v->n_torch_sites++];
    const char *l = ga_torch_site_label(t, stack, buf, sizeof(buf));
    o->label = ga_xstrdup(l ? l : stack ? "(unknown stack)" : "(no Python frames: history off)");
    o->n_frames = ga_torch_stack_frames(t, stack, fr, 64);
    o->frames = ga_xcalloc(o->n_frames + 1, sizeof(*o->frames));
    for (size_t k = 0; k < o->n_frames; k++) {
        snprintf(buf, sizeof(buf), "%s:%u %s", fr[k]->file, fr[k]->line, fr[k]->name);
        o->frames[k] = ga_xstrdup(buf);
    }
    return (uint32_t)*slot;
}

static void torch_map(struct ga_vpage *v, struct ga_vpage_map *o, const struct ga_report *r,
                      const struct ga_tmv_map *m, struct ga_map *idx, size_t *cap)
{
    const struct ga_torch_oom *to = m->oom >= 0 ? &r->torch.ooms[m->oom] : NULL;
    o->device = m->device;
    o->ns = (int64_t)(m->ts - r->read.header.start_monotonic_ns);
    o->oom = -1;
    for (size_t k = 0; to && k < r->mem.n_ooms && o->oom < 0; k++)
        if (r->mem.ooms[k].alloc == to) o->oom = (int64_t)k;
    o->requested = to ? to->requested : 0;
    for (size_t k = 0; k < m->n_blks; k++)
        if (m->blks[k].state == GT_TORCH_ACTIVE) o->drawn_allocated += m->blks[k].size;
    o->largest_free = m->largest_free;
    o->segments = m->segments;
    o->bytes = m->bytes;
    o->other_segs = m->other_segs;
    o->other_bytes = m->other_bytes;
    o->other_live_bytes = m->other_live_bytes;
    o->other_free_bytes = m->other_free_bytes;
    o->other_blocks = m->other_blocks;
    o->segs = ga_xcalloc(m->n_segs + 1, sizeof(*o->segs));
    o->n_segs = m->n_segs;
    for (size_t k = 0; k < m->n_segs; k++) {
        const struct ga_torch_seg *g = &m->segs[k];
        struct ga_vpage_seg *s = &o->segs[k];
        *s = (struct ga_vpage_seg){.addr = g->addr,
                                   .size = g->size,
                                   .small = g->small,
                                   .expandable = g->expandable,
                                   .n = g->n};
        s->blks = ga_xcalloc(g->n + 1, sizeof(*s->blks));
        for (uint32_t j = 0; j < g->n; j++) {
            const struct ga_torch_blk *b = &m->blks[g->first + j];
            s->blks[j] =
                (struct ga_vpage_blk){.offset = b->addr - g->addr,
                                      .size = b->size,
                                      .requested = b->requested,
                                      .state = b->state,
                                      .site = torch_site(v, &r->torch, idx, cap, b->stack)};
        }
    }
}

static void torch_maps(struct ga_vpage *v, const struct ga_report *r)
{
    struct ga_map idx = {0}; /* torch stack -> index into torch_sites */
    size_t cap = 0;
    v->maps = ga_xcalloc(r->torchmap.n_maps + 1, sizeof(*v->maps));
    v->n_maps = r->torchmap.n_maps;
    for (size_t i = 0; i < r->torchmap.n_maps; i++)
        torch_map(v, &v->maps[i], r, &r->torchmap.maps[i], &idx, &cap);
    v->torch_ooms_not_drawn = r->torchmap.ooms_not_drawn;
    ga_map_free(&idx);
}

void ga_vpage_build(struct ga_vpage *v, struct ga_report *r)
{
    ga_tlv_finish(v->tlv, &r->gpu, &r->tl);
    timeline(&v->tl, v->tlv);
    peak_stacks(v, r);
    torch_maps(v, r);
}

void ga_vpage_free(struct ga_vpage *v)
{
    if (v->tlv) ga_tlv_free(v->tlv);
    free(v->tlv);
    free(v->tl.gap_cause);
    free(v->tl.host_api);
    for (size_t i = 0; i < v->n_peak; i++) {
        for (uint32_t k = 0; k < v->peak[i].stack->n; k++)
            free(v->peak[i].labels[k]);
        free(v->peak[i].labels);
    }
    free(v->peak);
    for (size_t i = 0; i < v->n_maps; i++) {
        for (size_t k = 0; k < v->maps[i].n_segs; k++)
            free(v->maps[i].segs[k].blks);
        free(v->maps[i].segs);
    }
    free(v->maps);
    for (size_t i = 0; i < v->n_torch_sites; i++) {
        free(v->torch_sites[i].label);
        for (size_t k = 0; k < v->torch_sites[i].n_frames; k++)
            free(v->torch_sites[i].frames[k]);
        free(v->torch_sites[i].frames);
    }
    free(v->torch_sites);
    memset(v, 0, sizeof(*v));
}
