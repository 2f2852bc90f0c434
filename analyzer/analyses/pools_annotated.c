/* Annotated pools (GT_REC_POOL / GT_REC_BLOCK from include/gputrace/annotate.h): every record
 * is checked against the pool's state; one that contradicts it is counted as an annotation error
 * and handled by the rules of docs/ANALYSES.md ("Pools and fragmentation"). A block is valid
 * exactly when one free extent holds it; live blocks are in ga_pools.blocks by (pool, addr). */
#include <stdlib.h>
#include <string.h>

#include "analyses/pools_int.h"
#include "base/util.h"

static void perr(struct ga_pools *p, struct ga_pool *q, unsigned e)
{
    p->errors[e]++;
    if (q) q->errors[e]++;
}

/* The live annotated pool `id`, made (and counted as an error) when no create was seen. */
static uint32_t annotated(struct ga_pools *p, uint64_t id, int32_t device, uint64_t ts)
{
    uint32_t i = pool_find(p, GA_POOL_ANNOTATED, id, 0);
    if (i != NONE) return i;
    i = pool_new(p, GA_POOL_ANNOTATED, id, device, NULL, ts);
    if (i == NONE) {
        p->records_untracked++;
        return NONE;
    }
    perr(p, &p->pools[i], GA_PERR_UNKNOWN_POOL);
    return i;
}

static void on_pool_create(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_pool *r = &ev->r->pool;
    uint32_t old = pool_find(p, GA_POOL_ANNOTATED, r->pool, 0);
    if (old != NONE) {
        perr(p, &p->pools[old], GA_PERR_DUP_CREATE);
        pool_end(p, old, r->ts);
    }
    char *name = ev->str_len[0] ? ga_utf8_clean(ev->str[0], ev->str_len[0]) : NULL;
    if (pool_new(p, GA_POOL_ANNOTATED, r->pool, r->device, name, r->ts) == NONE)
        p->records_untracked++;
}

static void on_add_range(struct ga_pools *p, struct ga_pool *q, uint32_t i,
                         const struct gt_rec_pool *r)
{
    if (bad_range(r->addr, r->size)) return perr(p, q, GA_PERR_BAD_RANGE);
    if (ga_ext_overlaps(&q->ranges, r->addr, r->size)) return perr(p, q, GA_PERR_RANGE_OVERLAP);
    pool_set_device(q, r->device);
    ga_ext_add(&q->ranges, r->addr, r->size);
    ga_ext_add(&q->freex, r->addr, r->size);
    pool_change(p, i, r->ts);
}

/* Bytes of the set inside [a, b). */
static uint64_t bytes_in(const struct ga_extents *x, uint64_t a, uint64_t b)
{
    uint64_t s, l, n = 0;
    for (uint64_t pos = a; pos < b && ga_ext_next(x, pos, &s, &l) && s < b; pos = s + l)
        n += min64(s + l, b) - max64(s, a);
    return n;
}

static void on_remove_range(struct ga_pools *p, struct ga_pool *q, uint32_t i,
                            const struct gt_rec_pool *r)
{
    if (bad_range(r->addr, r->size)) return perr(p, q, GA_PERR_BAD_RANGE);
    uint64_t a = r->addr, b = r->addr + r->size;
    if (!ga_ext_covers(&q->ranges, a, r->size)) perr(p, q, GA_PERR_RANGE_UNKNOWN);
    /* blocks live in the range when it has owned bytes that are not free */
    if (q->live_blocks && bytes_in(&q->ranges, a, b) != bytes_in(&q->freex, a, b) &&
        pool_drop_blocks(p, i, a, b))
        perr(p, q, GA_PERR_BLOCK_IN_RANGE);
    ga_ext_remove(&q->ranges, a, r->size);
    ga_ext_remove(&q->freex, a, r->size);
    pool_change(p, i, r->ts);
}

void pool_on_pool(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_pool *r = &ev->r->pool;
    if (ev->sub == GT_POOL_CREATE) return on_pool_create(p, ev);
    if (ev->sub == GT_POOL_DESTROY) {
        uint32_t i = pool_find(p, GA_POOL_ANNOTATED, r->pool, 0);
        if (i == NONE) return perr(p, NULL, GA_PERR_UNKNOWN_POOL);
        if (p->pools[i].live_blocks) perr(p, &p->pools[i], GA_PERR_BLOCK_IN_RANGE);
        return pool_end(p, i, r->ts);
    }
    if (ev->sub != GT_POOL_ADD_RANGE && ev->sub != GT_POOL_REMOVE_RANGE) return;
    uint32_t i = annotated(p, r->pool, r->device, r->ts);
    if (i == NONE) return;
    pool_touch(p, i);
    if (ev->sub == GT_POOL_ADD_RANGE)
        on_add_range(p, &p->pools[i], i, r);
    else
        on_remove_range(p, &p->pools[i], i, r);
}

static void pool_oom(struct ga_pools *p, uint32_t i, const struct gt_rec_block *r)
{
    struct ga_pool *q = &p->pools[i];
    q->block_fails++;
    if (p->n_ooms >= GA_POOL_FAILURES_MAX) {
        p->ooms_dropped++;
        return;
    }
    p->ooms = ga_xgrow(p->ooms, &p->oom_cap, p->n_ooms, sizeof(*p->ooms));
    struct ga_pool_oom *o = &p->ooms[p->n_ooms++];
    memset(o, 0, sizeof(*o));
    o->ts = r->ts;
    o->pool = i;
    o->stack = r->stack;
    o->request = r->size;
    o->f = q->now;
    if (q->now.free < r->size)
        o->verdict = GA_PV_EXHAUSTED;
    else if (q->now.largest < r->size)
        o->verdict = GA_PV_FRAGMENTATION;
    else
        o->verdict = GA_PV_UNEXPLAINED;
    pool_map_fill(q, &o->map);
}

/* A block must lie in free memory of its pool: inside one free extent (so owned and not
 * overlapping a live block). Only a refused block costs the second look, at the ranges. */
static void on_block_alloc(struct ga_pools *p, struct ga_pool *q, uint32_t i,
                           const struct gt_rec_block *r)
{
    if (bad_range(r->addr, r->size)) return perr(p, q, GA_PERR_BAD_RANGE);
    if (ga_ext_carve(&q->freex, r->addr, r->size) != 0)
        return perr(p, q,
                    ga_ext_covers(&q->ranges, r->addr, r->size) ? GA_PERR_BLOCK_OVERLAP
                                                                : GA_PERR_BLOCK_OUTSIDE);
    *ga_map_upsert(&p->blocks, i, r->addr, r->size, NULL) = r->size;
    q->live_blocks++;
    q->block_allocs++;
    pool_change(p, i, r->ts);
}

static void on_block_free(struct ga_pools *p, struct ga_pool *q, uint32_t i,
                          const struct gt_rec_block *r)
{
    uint64_t size;
    if (!ga_map_remove(&p->blocks, i, r->addr, &size)) return perr(p, q, GA_PERR_DOUBLE_FREE);
    if (r->size && r->size != size) perr(p, q, GA_PERR_SIZE_MISMATCH);
    pool_free_owned(q, r->addr, r->addr + size);
    q->live_blocks--;
    q->block_frees++;
    pool_change(p, i, r->ts);
}

void pool_on_block(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_block *r = &ev->r->block;
    uint32_t i = annotated(p, r->pool, -1, r->ts);
    if (i == NONE) return;
    pool_touch(p, i);
    struct ga_pool *q = &p->pools[i];
    switch (ev->sub) {
    case GT_BLOCK_ALLOC:
        on_block_alloc(p, q, i, r);
        break;
    case GT_BLOCK_FREE:
        on_block_free(p, q, i, r);
        break;
    case GT_BLOCK_FAIL:
        pool_oom(p, i, r);
        break;
    default:
        break;
    }
}
