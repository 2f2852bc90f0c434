/* Internal to the pool analysis: the state's primitives (pools.c, prefix pool_), used by the
 * handlers of each source (pools_annotated.c, pools_driver.c), which pools_records.c calls.
 * Calls go one way only: records -> sources -> state. Not for other analyzer files. */
#ifndef GA_POOLS_INT_H
#define GA_POOLS_INT_H

#include "analyses/pools.h"

#define NONE UINT32_MAX

/* Keys of ga_pools.item_idx (first word). */
enum { ITEM_ASYNC = 1, ITEM_MAPPING = 2, ITEM_HANDLE = 3 };

static inline uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static inline uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Empty, or running past 2^64. */
static inline int bad_range(uint64_t addr, uint64_t size)
{
    return size == 0 || addr + size < addr;
}

/* pools.c: pools, devices, address maps, items. */
uint32_t pool_find(const struct ga_pools *p, unsigned kind, uint64_t id, int32_t device);
/* A new live pool; NONE past GA_POOLS_MAX (counted). `name` is taken over (may be NULL). */
uint32_t pool_new(struct ga_pools *p, unsigned kind, uint64_t id, int32_t device, char *name,
                 uint64_t ts);
void pool_end(struct ga_pools *p, uint32_t i, uint64_t ts);
/* After pool i changed: its figures, peaks, worst moment, series and device. */
void pool_change(struct ga_pools *p, uint32_t i, uint64_t ts);
void pool_set_device(struct ga_pool *q, int32_t device);
/* Live pool i takes the id `id` (and the default name that goes with it). */
void pool_rekey(struct ga_pools *p, uint32_t i, uint64_t id);
/* Before pool i or device d changes: saves its figures at the latest process peak if it has not
 * since that peak. */
void pool_touch(struct ga_pools *p, uint32_t i);
void pool_dev_touch(struct ga_pools *p, struct ga_pool_dev *d);
struct ga_pool_dev *pool_dev(struct ga_pools *p, int32_t device); /* NULL past the cap */
void pool_map_fill(const struct ga_pool *q, struct ga_pool_map *m);
uint32_t pool_item_find(const struct ga_pools *p, unsigned key, uint64_t addr);
uint32_t pool_item_add(struct ga_pools *p, unsigned key, uint64_t addr,
                      const struct ga_pool_item *it);
void pool_item_del(struct ga_pools *p, unsigned key, uint64_t addr, uint32_t i);

/* Frees the part of [a, b) that pool q still owns (a block's remains). */
void pool_free_owned(struct ga_pool *q, uint64_t a, uint64_t b);
/* Forgets pool i's blocks reaching into [a, b); 1 if there were any. */
int pool_drop_blocks(struct ga_pools *p, uint32_t i, uint64_t a, uint64_t b);

/* pools_annotated.c: GT_REC_POOL, GT_REC_BLOCK. */
void pool_on_pool(struct ga_pools *p, const struct ga_event *ev);
void pool_on_block(struct ga_pools *p, const struct ga_event *ev);

/* pools_driver.c: stream-ordered pools and VMM. */
void pool_on_usage(struct ga_pools *p, const struct ga_event *ev);
void pool_on_async_alloc(struct ga_pools *p, const struct ga_event *ev);
void pool_async_gone(struct ga_pools *p, uint64_t addr, uint64_t ts);
void pool_on_object(struct ga_pools *p, const struct ga_event *ev);
void pool_on_reserve(struct ga_pools *p, const struct gt_rec_alloc *r);
void pool_on_create(struct ga_pools *p, const struct gt_rec_alloc *r);
void pool_on_map(struct ga_pools *p, const struct gt_rec_vmm_map *r);
void pool_on_unmap(struct ga_pools *p, const struct gt_rec_vmm_map *r);
void pool_on_release(struct ga_pools *p, uint64_t handle);

#endif
