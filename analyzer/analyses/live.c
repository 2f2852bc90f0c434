/* The live-allocation table: a slab of entries with a free list, a hash map from
 * (namespace, address) to slab index, and per (context, device) doubly linked lists so that a
 * context teardown touches only its own allocations. */
#include <stdlib.h>
#include <string.h>

#include "analyses/memory.h"
#include "base/util.h"

#define NONE UINT32_MAX

uint32_t ga_live_grow_(struct ga_memory *m)
{
    if (m->slab_n >= NONE) {
        fprintf(stderr, "%s: too many live allocations\n", GA_PROG);
        exit(2);
    }
    m->slab = ga_xgrow(m->slab, &m->slab_cap, m->slab_n, sizeof(*m->slab));
    return (uint32_t)m->slab_n++;
}

/* The slow path of group_get: a (ctx, device) other than the last one. */
static __attribute__((noinline)) uint32_t group_lookup(struct ga_memory *m, uint64_t ctx,
                                                       int32_t device)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&m->group_of, ctx, (uint64_t)(uint32_t)device, m->n_groups, &added);
    if (added) {
        m->groups = ga_xgrow(m->groups, &m->group_cap, m->n_groups, sizeof(*m->groups));
        m->groups[m->n_groups++] = (struct ga_group){.ctx = ctx,
                                                     .device = device,
                                                     .head = NONE,
                                                     .ctx_prev = NONE,
                                                     .ctx_next = NONE,
                                                     .dev_prev = NONE,
                                                     .dev_next = NONE};
    }
    m->recent_ctx = ctx;
    m->recent_device = device;
    m->recent_group = (uint32_t)*v;
    return (uint32_t)*v;
}

static inline uint32_t group_get(struct ga_memory *m, uint64_t ctx, int32_t device)
{
    /* groups are never removed, so the one used last stays valid */
    if (m->recent_group != NONE && m->recent_ctx == ctx && m->recent_device == device)
        return m->recent_group;
    return group_lookup(m, ctx, device);
}

uint32_t ga_group_find(const struct ga_memory *m, uint64_t ctx, int32_t device)
{
    const uint64_t *v = ga_map_find(&m->group_of, ctx, (uint64_t)(uint32_t)device);
    return v ? (uint32_t)*v : NONE;
}

/* ---- the per-context and per-device lists of non-empty groups (heads in a map) ------------- */

static uint32_t list_head(const struct ga_map *heads, uint64_t key)
{
    const uint64_t *v = ga_map_find(heads, key, 0);
    return v ? (uint32_t)*v : NONE;
}

static void set_head(struct ga_map *heads, uint64_t key, uint32_t g)
{
    if (g == NONE)
        ga_map_remove(heads, key, 0, NULL);
    else
        *ga_map_upsert(heads, key, 0, g, NULL) = g;
}

static uint64_t dev_key(int32_t device)
{
    return (uint64_t)(uint32_t)device;
}

static void ctx_link(struct ga_memory *m, uint32_t g)
{
    struct ga_group *gr = &m->groups[g];
    gr->ctx_prev = NONE;
    gr->ctx_next = list_head(&m->ctx_groups, gr->ctx);
    if (gr->ctx_next != NONE) m->groups[gr->ctx_next].ctx_prev = g;
    set_head(&m->ctx_groups, gr->ctx, g);
}

static void ctx_unlink(struct ga_memory *m, uint32_t g)
{
    struct ga_group *gr = &m->groups[g];
    if (gr->ctx_prev != NONE)
        m->groups[gr->ctx_prev].ctx_next = gr->ctx_next;
    else
        set_head(&m->ctx_groups, gr->ctx, gr->ctx_next);
    if (gr->ctx_next != NONE) m->groups[gr->ctx_next].ctx_prev = gr->ctx_prev;
}

static void dev_link(struct ga_memory *m, uint32_t g)
{
    struct ga_group *gr = &m->groups[g];
    gr->dev_prev = NONE;
    gr->dev_next = list_head(&m->dev_groups, dev_key(gr->device));
    if (gr->dev_next != NONE) m->groups[gr->dev_next].dev_prev = g;
    set_head(&m->dev_groups, dev_key(gr->device), g);
    gr->on_dev_list = 1;
}

static void dev_unlink(struct ga_memory *m, uint32_t g)
{
    struct ga_group *gr = &m->groups[g];
    if (!gr->on_dev_list) return;
    if (gr->dev_prev != NONE)
        m->groups[gr->dev_prev].dev_next = gr->dev_next;
    else
        set_head(&m->dev_groups, dev_key(gr->device), gr->dev_next);
    if (gr->dev_next != NONE) m->groups[gr->dev_next].dev_prev = gr->dev_prev;
    gr->on_dev_list = 0;
}

uint32_t ga_group_of_ctx(const struct ga_memory *m, uint64_t ctx)
{
    return list_head(&m->ctx_groups, ctx);
}

uint32_t ga_group_of_primary(const struct ga_memory *m, int32_t device)
{
    return list_head(&m->dev_groups, dev_key(device));
}

void ga_group_ctx_created(struct ga_memory *m, uint64_t ctx)
{
    int added = 0;
    ga_map_upsert(&m->created_ctx, ctx, 0, 1, &added);
    if (!added) return;
    for (uint32_t g = ga_group_of_ctx(m, ctx); g != NONE; g = m->groups[g].ctx_next)
        dev_unlink(m, g);
}

/* Group g got its first allocation: it joins its context's list and, unless cuCtxCreate_* made
 * that context, its device's. */
static __attribute__((noinline)) void group_filled(struct ga_memory *m, uint32_t g)
{
    ctx_link(m, g);
    if (!ga_map_find(&m->created_ctx, m->groups[g].ctx, 0)) dev_link(m, g);
}

/* Group g lost its last allocation: it leaves its lists. */
static __attribute__((noinline)) void group_emptied(struct ga_memory *m, uint32_t g)
{
    ctx_unlink(m, g);
    dev_unlink(m, g);
}

static __attribute__((noinline)) void live_insert(struct ga_memory *m, unsigned ns, uint64_t addr,
                                                  uint32_t i)
{
    *ga_map_upsert(&m->live, ns, addr, i, NULL) = i;
}

void ga_live_link(struct ga_memory *m, uint32_t i, uint64_t *at)
{
    struct ga_live *e = &m->slab[i];
    uint32_t g = group_get(m, e->ctx, e->device);
    e->group = g;
    e->prev = NONE;
    e->next = m->groups[g].head;
    if (e->next != NONE) m->slab[e->next].prev = i;
    m->groups[g].head = i;
    if (m->groups[g].count++ == 0) group_filled(m, g);
    if (at) /* nothing above touched m->live: the slot is still the caller's */
        *at = i;
    else
        live_insert(m, e->ns, e->addr, i);
}

uint32_t ga_live_find(const struct ga_memory *m, unsigned ns, uint64_t addr)
{
    const uint64_t *v = ga_map_find(&m->live, ns, addr);
    return v ? (uint32_t)*v : NONE;
}

void ga_live_remove(struct ga_memory *m, uint32_t i, uint64_t *at)
{
    struct ga_live *e = &m->slab[i];
    struct ga_group *g = &m->groups[e->group];
    if (e->prev != NONE)
        m->slab[e->prev].next = e->next;
    else
        g->head = e->next;
    if (e->next != NONE) m->slab[e->next].prev = e->prev;
    if (--g->count == 0) group_emptied(m, e->group);
    e->next = m->free_slot; /* the key (ns, addr) stays for the removal below */
    m->free_slot = i;
    if (at)
        ga_map_remove_at(&m->live, at);
    else
        ga_map_remove(&m->live, e->ns, e->addr, NULL);
}

void ga_live_free(struct ga_memory *m)
{
    free(m->slab);
    free(m->groups);
    ga_map_free(&m->live);
    ga_map_free(&m->group_of);
    ga_map_free(&m->ctx_groups);
    ga_map_free(&m->dev_groups);
    ga_map_free(&m->created_ctx);
    m->slab = NULL;
    m->groups = NULL;
    m->slab_n = m->slab_cap = m->n_groups = m->group_cap = 0;
}
