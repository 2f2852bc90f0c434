/* The driver's own pools: CUDA stream-ordered pools (cuMemPoolCreate, stream-ordered
 * allocations and frees, GT_REC_POOL_USAGE samples) and VMM (a pool per cuMemAddressReserve
 * range, cuMemCreate handles per device, cuMemMap / cuMemUnmap). */
#include <string.h>

#include "gputrace/trace_api.h"
#include "analyses/pools_int.h"

/* ---- stream-ordered pools ------------------------------------------------------------------- */

/* The pool of a stream-ordered allocation or sample: by handle; handle 0 (cuMemAllocAsync: the
 * device's current pool) is the device's current pool once a sample named it, else a pool of
 * its own ("current pool of device N") until then. */
static uint32_t stream_pool(struct ga_pools *p, uint64_t handle, int32_t device, uint64_t ts)
{
    const uint64_t *cur = handle ? NULL : ga_map_find(&p->current, (uint32_t)device, 0);
    if (cur && p->pools[*cur].live) return (uint32_t)*cur;
    uint32_t i = pool_find(p, GA_POOL_STREAM, handle, device);
    if (i == NONE) i = pool_new(p, GA_POOL_STREAM, handle, device, NULL, ts);
    if (i != NONE) pool_set_device(&p->pools[i], device);
    return i;
}

void pool_on_usage(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_pool_usage *r = &ev->r->pool_usage;
    uint32_t i = pool_find(p, GA_POOL_STREAM, r->pool, r->device);
    uint32_t cur = r->pool ? pool_find(p, GA_POOL_STREAM, 0, r->device) : NONE;
    if (i == NONE && cur != NONE) {
        /* A pool we never saw allocate on a device whose cuMemAllocAsync calls went to its
         * current pool: the shim samples that pool for them, so this is it. */
        pool_rekey(p, cur, r->pool);
        *ga_map_upsert(&p->current, (uint32_t)r->device, 0, cur, NULL) = cur;
        i = cur;
    }
    if (i == NONE) i = stream_pool(p, r->pool, r->device, r->ts);
    if (i == NONE) return;
    pool_touch(p, i);
    struct ga_pool *q = &p->pools[i];
    q->samples++;
    q->sample_reserved = r->reserved_current;
    q->sample_used = r->used_current;
    q->sample_live = q->live_bytes;
    q->reserved_high = max64(q->reserved_high, r->reserved_high);
    q->used_high = max64(q->used_high, r->used_high);
    pool_change(p, i, r->ts);
}

/* The stream-ordered allocation at addr is gone (freed, or replaced by a new one). */
void pool_async_gone(struct ga_pools *p, uint64_t addr, uint64_t ts)
{
    uint32_t it = pool_item_find(p, ITEM_ASYNC, addr);
    if (it == NONE) return;
    uint32_t i = p->items[it].pool;
    struct ga_pool *q = &p->pools[i];
    if (q->live) {
        pool_touch(p, i);
        q->live_bytes -= min64(q->live_bytes, p->items[it].size);
        q->live_count -= q->live_count > 0;
        pool_change(p, i, ts);
    }
    pool_item_del(p, ITEM_ASYNC, addr, it);
}

void pool_on_async_alloc(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_alloc *r = &ev->r->alloc;
    pool_async_gone(p, r->addr, r->ts);
    uint32_t i = stream_pool(p, r->aux, r->device, r->ts); /* aux: the pool, 0 unknown */
    if (i == NONE) return;
    pool_touch(p, i);
    struct ga_pool *q = &p->pools[i];
    q->live_bytes += r->size;
    q->live_count++;
    pool_item_add(p, ITEM_ASYNC, r->addr, &(struct ga_pool_item){.size = r->size, .pool = i});
    pool_change(p, i, r->ts);
}

void pool_on_object(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_object *r = &ev->r->object;
    if (r->result != 0 || !r->handle) return;
    if (ev->sub == GT_API_cuMemPoolCreate) {
        uint32_t i = pool_find(p, GA_POOL_STREAM, r->handle, r->device);
        if (i != NONE) pool_end(p, i, r->ts); /* a handle reused: its destroy was not seen */
        stream_pool(p, r->handle, r->device, r->ts);
    } else if (ev->sub == GT_API_cuMemPoolDestroy) {
        uint32_t i = pool_find(p, GA_POOL_STREAM, r->handle, 0);
        if (i != NONE) pool_end(p, i, r->ts);
    }
}

/* ---- VMM ------------------------------------------------------------------------------------ */

static struct ga_pool_dev *handle_dev(struct ga_pools *p, const struct ga_pool_item *h)
{
    return pool_dev(p, h->device);
}

static uint64_t handle_unused(const struct ga_pool_item *h)
{
    return h->size - min64(h->size, h->other);
}

/* Changes the bytes mapped from handle item h by +add / -sub, keeping its device's sums. */
static void handle_mapped(struct ga_pools *p, uint32_t h, uint64_t handle, uint64_t add,
                          uint64_t sub)
{
    struct ga_pool_item *it = &p->items[h];
    struct ga_pool_dev *d = handle_dev(p, it);
    uint64_t before = handle_unused(it);
    if (d) pool_dev_touch(p, d);
    it->other = it->other + add - min64(it->other + add, sub);
    if (d) d->phys_unused = d->phys_unused - before + handle_unused(it);
    if (it->released && !it->other) { /* released and no longer mapped: the memory is gone */
        if (d) {
            d->phys_created -= min64(d->phys_created, it->size);
            d->phys_unused -= min64(d->phys_unused, handle_unused(it));
        }
        pool_item_del(p, ITEM_HANDLE, handle, h);
    }
}

void pool_on_reserve(struct ga_pools *p, const struct gt_rec_alloc *r)
{
    uint32_t old = pool_find(p, GA_POOL_VMM, r->addr, 0);
    if (old != NONE) pool_end(p, old, r->ts); /* its free was not seen */
    if (ga_ext_insert(&p->vmm_ranges, r->addr, r->size) != 0) {
        p->vmm_unmatched++;
        return;
    }
    uint32_t i = pool_new(p, GA_POOL_VMM, r->addr, r->device, NULL, r->ts);
    if (i == NONE) {
        ga_ext_take(&p->vmm_ranges, r->addr);
        return;
    }
    ga_ext_add(&p->pools[i].ranges, r->addr, r->size);
    ga_ext_add(&p->pools[i].freex, r->addr, r->size);
    pool_change(p, i, r->ts);
}

void pool_on_create(struct ga_pools *p, const struct gt_rec_alloc *r)
{
    uint32_t h = pool_item_find(p, ITEM_HANDLE, r->addr);
    if (h != NONE) { /* a handle value reused: the old one's release was not seen */
        p->items[h].released = 1;
        handle_mapped(p, h, r->addr, 0, UINT64_MAX);
    }
    struct ga_pool_item it = {.size = r->size, .device = r->device};
    struct ga_pool_dev *d = pool_dev(p, r->device);
    pool_item_add(p, ITEM_HANDLE, r->addr, &it);
    if (d) {
        pool_dev_touch(p, d);
        d->phys_created += r->size;
        d->phys_unused += r->size;
    }
}

/* The live VMM pool whose reservation holds [addr, addr + size), or NONE. */
static uint32_t vmm_pool_of(const struct ga_pools *p, uint64_t addr, uint64_t size)
{
    uint64_t s, l;
    if (!ga_ext_next(&p->vmm_ranges, addr, &s, &l) || s > addr || addr - s + size > l ||
        addr + size < addr)
        return NONE;
    return pool_find(p, GA_POOL_VMM, s, 0);
}

/* Forgets the mapping that starts at addr (if any), giving its bytes back to its handle. */
static uint64_t mapping_gone(struct ga_pools *p, uint64_t addr)
{
    uint32_t m = pool_item_find(p, ITEM_MAPPING, addr);
    if (m == NONE) return 0;
    struct ga_pool_item it = p->items[m];
    pool_item_del(p, ITEM_MAPPING, addr, m);
    uint32_t h = pool_item_find(p, ITEM_HANDLE, it.other);
    if (h != NONE) handle_mapped(p, h, it.other, 0, it.size);
    return it.size;
}

void pool_on_map(struct ga_pools *p, const struct gt_rec_vmm_map *r)
{
    if (mapping_gone(p, r->addr)) p->vmm_unmatched++; /* mapped twice: its unmap was not seen */
    uint32_t i = vmm_pool_of(p, r->addr, r->size), h = pool_item_find(p, ITEM_HANDLE, r->handle);
    if (i == NONE || h == NONE) p->vmm_unmatched++;
    if (h != NONE) handle_mapped(p, h, r->handle, r->size, 0);
    pool_item_add(p, ITEM_MAPPING, r->addr,
                 &(struct ga_pool_item){.size = r->size, .other = r->handle, .pool = i});
    if (i == NONE) return;
    pool_touch(p, i);
    struct ga_pool *q = &p->pools[i];
    if (h != NONE) pool_set_device(q, p->items[h].device);
    ga_ext_remove(&q->freex, r->addr, r->size);
    pool_change(p, i, r->ts);
}

/* cuMemUnmap releases whole mappings: walk them from addr. */
void pool_on_unmap(struct ga_pools *p, const struct gt_rec_vmm_map *r)
{
    uint64_t a = r->addr, end = r->addr + r->size;
    if (bad_range(r->addr, r->size)) return;
    while (a < end) {
        uint64_t size = mapping_gone(p, a);
        if (size == 0 || a + size < a) break;
        a += size;
    }
    if (a == r->addr) p->vmm_unmatched++;
    uint32_t i = vmm_pool_of(p, r->addr, r->size);
    if (i == NONE) return;
    pool_touch(p, i);
    ga_ext_add(&p->pools[i].freex, r->addr, r->size);
    pool_change(p, i, r->ts);
}

void pool_on_release(struct ga_pools *p, uint64_t handle)
{
    uint32_t h = pool_item_find(p, ITEM_HANDLE, handle);
    if (h == NONE) return;
    p->items[h].released = 1;
    handle_mapped(p, h, handle, 0, 0);
}
