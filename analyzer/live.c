/* The live-allocation table: a slab of entries with a free list, a hash map from
 * (namespace, address) to slab index, and per (context, device) doubly linked lists so that a
 * context teardown touches only its own allocations. */
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "util.h"

#define NONE UINT32_MAX

static uint32_t slab_take(struct ga_memory *m)
{
    if (m->free_slot != NONE) {
        uint32_t i = m->free_slot;
        m->free_slot = m->slab[i].next;
        return i;
    }
    if (m->slab_n >= NONE) {
        fprintf(stderr, "%s: too many live allocations\n", GA_PROG);
        exit(2);
    }
    m->slab = ga_xgrow(m->slab, &m->slab_cap, m->slab_n, sizeof(*m->slab));
    return (uint32_t)m->slab_n++;
}

static uint32_t group_get(struct ga_memory *m, uint64_t ctx, int32_t device)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&m->group_of, ctx, (uint64_t)(uint32_t)device, m->n_groups, &added);
    if (added) {
        m->groups = ga_xgrow(m->groups, &m->group_cap, m->n_groups, sizeof(*m->groups));
        m->groups[m->n_groups++] = (struct ga_group){ctx, device, NONE, 0};
    }
    return (uint32_t)*v;
}

uint32_t ga_group_find(const struct ga_memory *m, uint64_t ctx, int32_t device)
{
    const uint64_t *v = ga_map_find(&m->group_of, ctx, (uint64_t)(uint32_t)device);
    return v ? (uint32_t)*v : NONE;
}

uint32_t ga_live_add(struct ga_memory *m, const struct ga_live *a)
{
    uint32_t i = slab_take(m), g = group_get(m, a->ctx, a->device);
    struct ga_live *e = &m->slab[i];
    *e = *a;
    e->group = g;
    e->prev = NONE;
    e->next = m->groups[g].head;
    if (e->next != NONE) m->slab[e->next].prev = i;
    m->groups[g].head = i;
    m->groups[g].count++;
    *ga_map_upsert(&m->live, a->ns, a->addr, i, NULL) = i;
    return i;
}

uint32_t ga_live_find(const struct ga_memory *m, unsigned ns, uint64_t addr)
{
    const uint64_t *v = ga_map_find(&m->live, ns, addr);
    return v ? (uint32_t)*v : NONE;
}

void ga_live_remove(struct ga_memory *m, uint32_t i)
{
    struct ga_live *e = &m->slab[i];
    struct ga_group *g = &m->groups[e->group];
    if (e->prev != NONE)
        m->slab[e->prev].next = e->next;
    else
        g->head = e->next;
    if (e->next != NONE) m->slab[e->next].prev = e->prev;
    g->count--;
    ga_map_remove(&m->live, e->ns, e->addr, NULL);
    e->next = m->free_slot;
    m->free_slot = i;
}

void ga_live_free(struct ga_memory *m)
{
    free(m->slab);
    free(m->groups);
    ga_map_free(&m->live);
    ga_map_free(&m->group_of);
    ga_map_free(&m->created_ctx);
    m->slab = NULL;
    m->groups = NULL;
    m->slab_n = m->slab_cap = m->n_groups = m->group_cap = 0;
}
