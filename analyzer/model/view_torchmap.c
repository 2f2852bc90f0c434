/* The page's PyTorch address maps (view_torchmap.h). A copy per kept map: O(segments log
 * segments + blocks kept) at each OOM snapshot and each new fullest snapshot. */
#include "model/view_torchmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* the request's pool as the torch analysis judges it (its largest_fit): small up to 2 MiB */
#define SMALL_REQUEST (2ull << 20)

void ga_tmv_init(struct ga_tmv *v)
{
    memset(v, 0, sizeof(*v));
}

static void map_free(struct ga_tmv_map *m)
{
    free(m->segs);
    free(m->blks);
    memset(m, 0, sizeof(*m));
}

struct seg_ref {
    uint64_t size, addr;
    size_t i;
};

static int by_size(const void *a, const void *b)
{
    const struct seg_ref *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_addr(const void *a, const void *b)
{
    const struct seg_ref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Device `dev` of the snapshot just read into m: the largest segments (and the one holding the
 * largest free block of the request's pool when `requested`), the rest summed. */
static void capture(struct ga_tmv_map *m, const struct ga_torch *t, int32_t dev, uint64_t requested,
                    int small_pool)
{
    struct seg_ref *refs = ga_xmalloc((t->n_segs ? t->n_segs : 1) * sizeof(*refs));
    size_t n = 0, hole_seg = SIZE_MAX;
    uint64_t hole = 0;
    for (size_t i = 0; i < t->n_segs; i++) {
        const struct ga_torch_seg *g = &t->segs[i];
        if (g->device != dev) continue;
        refs[n++] = (struct seg_ref){.size = g->size, .addr = g->addr, .i = i};
        m->segments++;
        m->bytes += g->size;
        if (!requested || g->small != small_pool) continue;
        for (uint32_t k = 0; k < g->n; k++) {
            const struct ga_torch_blk *b = &t->blks[g->first + k];
            if (b->state == GT_TORCH_INACTIVE && b->size > hole) hole = b->size, hole_seg = i;
        }
    }
    m->largest_free = hole;
    qsort(refs, n, sizeof(*refs), by_size);
    size_t keep = n < GA_TMV_SEGS ? n : GA_TMV_SEGS;
    if (hole_seg != SIZE_MAX) { /* the largest hole is always drawn */
        size_t k = 0;
        while (k < n && refs[k].i != hole_seg)
            k++;
        if (k >= keep) {
            struct seg_ref x = refs[k];
            refs[k] = refs[keep - 1];
            refs[keep - 1] = x;
        }
    }
    qsort(refs, keep, sizeof(*refs), by_addr);
    m->segs = ga_xmalloc((keep ? keep : 1) * sizeof(*m->segs));
    for (size_t j = 0; j < n; j++) {
        const struct ga_torch_seg *g = &t->segs[refs[j].i];
        if (j < keep && m->n_blks + g->n <= GA_TMV_BLOCKS) {
            struct ga_torch_seg *s = &m->segs[m->n_segs++];
            *s = *g;
            s->first = (uint32_t)m->n_blks;
            m->blks = ga_xrealloc(m->blks, (m->n_blks + g->n + 1) * sizeof(*m->blks));
            memcpy(m->blks + m->n_blks, t->blks + g->first, g->n * sizeof(*m->blks));
            m->n_blks += g->n;
            continue;
        }
        m->other_segs++;
        m->other_bytes += g->size;
        m->other_blocks += g->n;
        for (uint32_t k = 0; k < g->n; k++) {
            const struct ga_torch_blk *b = &t->blks[g->first + k];
            *(b->state == GT_TORCH_INACTIVE ? &m->other_free_bytes : &m->other_live_bytes) +=
                b->size;
        }
    }
    free(refs);
}

static struct ga_tmv_map *add_map(struct ga_tmv *v)
{
    v->maps = ga_xgrow(v->maps, &v->maps_cap, v->n_maps, sizeof(*v->maps));
    struct ga_tmv_map *m = &v->maps[v->n_maps++];
    memset(m, 0, sizeof(*m));
    return m;
}

void ga_tmv_event(struct ga_tmv *v, const struct ga_torch *t, const struct ga_event *ev)
{
    if (ev->type != GT_REC_TORCH_SNAP || ev->sub != GT_SNAP_END) return;
    const struct gt_rec_torch_snap *r = &ev->r->torch_snap;
    /* the analysis read it whole: its segments and blocks are still held */
    if (t->in_snap || t->cur_snap != r->id || t->n_segs != r->segments || t->n_blks != r->blocks)
        return;
    if (r->why == GT_TORCH_OOM) {
        for (size_t i = t->n_ooms; i-- > 0;) {
            const struct ga_torch_oom *o = &t->ooms[i];
            if (o->snap != r->id) continue;
            if (!o->have_snap) break;
            size_t n_oom_maps = 0;
            for (size_t k = 0; k < v->n_maps; k++)
                n_oom_maps += v->maps[k].oom >= 0;
            if (n_oom_maps >= GA_TMV_OOMS) {
                v->ooms_not_drawn++;
                break;
            }
            struct ga_tmv_map *m = add_map(v);
            m->device = o->device;
            m->ts = r->ts;
            m->oom = (int64_t)i;
            capture(m, t, o->device, o->requested ? o->requested : 1,
                    o->requested <= SMALL_REQUEST);
            break;
        }
    }
    for (size_t i = 0; i < t->n_devs; i++) {
        const struct ga_torch_dev *d = &t->devs[i];
        if (!d->have_at_peak || d->at_peak.ts != r->ts) continue;
        struct ga_tmv_map *m = NULL;
        for (size_t k = 0; k < v->n_maps && !m; k++)
            if (v->maps[k].oom < 0 && v->maps[k].device == d->device) m = &v->maps[k];
        if (m)
            map_free(m);
        else
            m = add_map(v);
        m->device = d->device;
        m->ts = r->ts;
        m->oom = -1;
        capture(m, t, d->device, 0, 0);
    }
}

void ga_tmv_free(struct ga_tmv *v)
{
    for (size_t i = 0; i < v->n_maps; i++)
        map_free(&v->maps[i]);
    free(v->maps);
    memset(v, 0, sizeof(*v));
}
