/* The pools view (view_pools.h): a copy of the pools analysis's results in the model's structs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view_pools.h"
#include "analyses/pools.h"
#include "base/util.h"

_Static_assert(GA_VPOOL_ERRORS == GA_PERR_COUNT, "one error count per annotation error kind");
_Static_assert(GA_VPOOL_FAIL_POOLS == GA_FAIL_POOLS_MAX, "the pools of a failure, all of them");
_Static_assert((int)GA_VPOOL_ANNOTATED == (int)GA_POOL_ANNOTATED &&
                   (int)GA_VPOOL_STREAM == (int)GA_POOL_STREAM &&
                   (int)GA_VPOOL_VMM == (int)GA_POOL_VMM,
               "the same pool kinds, same values");

static struct ga_vfrag frag(const struct ga_frag *f)
{
    return (struct ga_vfrag){.reserved = f->reserved,
                             .used = f->used,
                             .free = f->free,
                             .extents = f->extents,
                             .largest = f->largest,
                             .layout_known = f->layout_known,
                             .ratio = ga_frag_ratio(f)};
}

static struct ga_vmap map(const struct ga_pool_map *m)
{
    struct ga_vmap o = {.n = m->ext ? m->n : 0, .truncated = m->truncated};
    if (!m->ext) return o;
    o.ext = ga_xmalloc(o.n * sizeof(*o.ext) + 1);
    for (uint32_t i = 0; i < o.n; i++)
        o.ext[i] = (struct ga_vext){m->ext[i].addr, m->ext[i].size, m->ext[i].used};
    return o;
}

static const struct ga_vbucket *series(const struct ga_fseries *s, size_t buckets)
{
    if (!s) return NULL;
    struct ga_vbucket *b = ga_xmalloc(buckets * sizeof(*b) + 1);
    for (size_t i = 0; i < buckets; i++)
        b[i] = (struct ga_vbucket){s->b[i].reserved_max, s->b[i].used_max, s->b[i].free,
                                   s->b[i].largest, s->b[i].extents};
    return b;
}

static void pool(struct ga_vpool *o, const struct ga_pool *q, const struct ga_fseries *s,
                 size_t buckets, uint64_t t0)
{
    *o = (struct ga_vpool){
        .kind = q->kind,
        .kind_name = ga_pool_kind_name(q->kind),
        .id = q->id,
        .name = q->name,
        .device = q->device,
        .created_ns = (int64_t)(q->created_ts - t0),
        .destroyed_ns = (int64_t)(q->destroyed_ts - t0),
        .live = q->live,
        .now = frag(&q->now),
        .peak_reserved = q->peak_reserved,
        .peak_used = q->peak_used,
        .peak_reserved_ns = (int64_t)(q->peak_reserved_ts - t0),
        .peak_used_ns = (int64_t)(q->peak_used_ts - t0),
        .at_peak = frag(&q->at_peak),
        .have_at_peak = q->have_at_peak,
        .worst = frag(&q->worst),
        .have_worst = q->have_worst,
        .worst_ns = (int64_t)(q->worst_ts - t0),
        .block_allocs = q->block_allocs,
        .block_frees = q->block_frees,
        .block_fails = q->block_fails,
        .live_blocks = q->live_blocks,
        .samples = q->samples,
        .live_bytes = q->live_bytes,
        .live_count = q->live_count,
        .reserved_high = q->reserved_high,
        .used_high = q->used_high,
        .series = series(s, buckets),
    };
    if (q->have_at_peak) o->map_at_peak = map(&q->map_at_peak);
    memcpy(o->errors, q->errors, sizeof(o->errors));
}

static void device(struct ga_vpool_dev *o, const struct ga_pool_dev *d, size_t buckets,
                   uint64_t t0)
{
    *o = (struct ga_vpool_dev){
        .device = d->device,
        .now = frag(&d->now),
        .at_peak = frag(&d->at_peak),
        .have_at_peak = d->have_at_peak,
        .stream_reserved_at_peak = d->stream_reserved_at_peak,
        .stream_used_at_peak = d->stream_used_at_peak,
        .phys_unused_at_peak = d->phys_unused_at_peak,
        .worst = frag(&d->worst),
        .have_worst = d->have_worst,
        .worst_ns = (int64_t)(d->worst_ts - t0),
        .stream_reserved = d->stream_reserved,
        .stream_used = d->stream_used,
        .phys_created = d->phys_created,
        .phys_unused = d->phys_unused,
        .series = series(&d->series, buckets),
    };
}

static void failure(struct ga_vpool_failure *o, const struct ga_pool_failure *f, uint64_t t0)
{
    *o = (struct ga_vpool_failure){
        .ns = (int64_t)(f->ts - t0),
        .device = f->device,
        .request = f->request,
        .reserved_unused = f->ev.reserved_unused,
        .largest_free = f->ev.largest_free,
        .unused_layout_unknown = f->ev.unused_layout_unknown,
        .n_pools = f->n_pools,
        .map_pool = f->ev.pool_index,
        .map = map(&f->map),
    };
    char buf[16];
    snprintf(o->api, sizeof(o->api), "%s", ga_api_label(f->api, buf));
    for (uint32_t k = 0; k < f->n_pools; k++) {
        o->pool[k] = f->pool_idx[k];
        o->pool_f[k] = frag(&f->pool_f[k]);
    }
}

static int by_peak_reserved(const void *a, const void *b, void *pools)
{
    const struct ga_vpool *p = pools;
    uint64_t x = p[*(const uint32_t *)a].peak_reserved, y = p[*(const uint32_t *)b].peak_reserved;
    if (x != y) return x < y ? 1 : -1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

void ga_vpools_build(struct ga_vpools *v, const struct ga_pools *p, uint64_t t0)
{
    memset(v, 0, sizeof(*v));
    v->buckets = p->buckets < GA_FRAG_BUCKETS ? p->buckets : GA_FRAG_BUCKETS;
    v->bucket_ns = p->width;
    v->n = p->n;
    v->pools = ga_xmalloc(p->n * sizeof(*v->pools) + 1);
    v->order = ga_xmalloc(p->n * sizeof(*v->order) + 1);
    for (size_t i = 0; i < p->n; i++) {
        pool(&v->pools[i], &p->pools[i], ga_pools_series(p, i), v->buckets, t0);
        v->order[i] = (uint32_t)i;
    }
    qsort_r(v->order, p->n, sizeof(*v->order), by_peak_reserved, v->pools);
    v->pools_untracked = p->pools_untracked;
    v->ndev = p->ndev;
    v->devs = ga_xmalloc(p->ndev * sizeof(*v->devs) + 1);
    for (size_t i = 0; i < p->ndev; i++)
        device(&v->devs[i], &p->devs[i], v->buckets, t0);
    v->n_ooms = p->n_ooms;
    v->ooms = ga_xmalloc(p->n_ooms * sizeof(*v->ooms) + 1);
    for (size_t i = 0; i < p->n_ooms; i++) {
        const struct ga_pool_oom *x = &p->ooms[i];
        v->ooms[i] = (struct ga_vpool_oom){.ns = (int64_t)(x->ts - t0),
                                           .pool = x->pool,
                                           .request = x->request,
                                           .f = frag(&x->f),
                                           .verdict = ga_pool_verdict_name(x->verdict),
                                           .map = map(&x->map)};
    }
    v->ooms_omitted = p->ooms_dropped;
    v->n_fails = p->n_fails;
    v->fails = ga_xmalloc(p->n_fails * sizeof(*v->fails) + 1);
    for (size_t i = 0; i < p->n_fails; i++)
        failure(&v->fails[i], &p->fails[i], t0);
    v->fails_omitted = p->fails_dropped;
    for (unsigned e = 0; e < GA_VPOOL_ERRORS; e++) {
        v->errors[e] = p->errors[e];
        v->error_names[e] = ga_pool_err_name(e);
    }
    v->vmm_unmatched = p->vmm_unmatched;
}

void ga_vpools_free(struct ga_vpools *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->pools[i].map_at_peak.ext);
        free((void *)v->pools[i].series);
    }
    for (size_t i = 0; i < v->ndev; i++)
        free((void *)v->devs[i].series);
    for (size_t i = 0; i < v->n_ooms; i++)
        free(v->ooms[i].map.ext);
    for (size_t i = 0; i < v->n_fails; i++)
        free(v->fails[i].map.ext);
    free(v->pools);
    free(v->order);
    free(v->devs);
    free(v->ooms);
    free(v->fails);
    memset(v, 0, sizeof(*v));
}
