/* The pools' record handling: which source each record goes to (annotated, stream-ordered, VMM),
 * failed allocations with their pool evidence, and the saving of figures at the process peak
 * (see pools.h). The state these handlers change is pools.c's. */
#include <string.h>

#include "analyses/memory.h"
#include "analyses/pools_int.h"
#include "base/util.h"
#include "gputrace/trace_api.h"

/* ---- records -------------------------------------------------------------------------------- */

/* Most traces have no live stream-ordered allocation (no item at all): no call then. */
static void async_gone(struct ga_pools *p, uint64_t addr, uint64_t ts)
{
    if (p->item_idx.count) pool_async_gone(p, addr, ts);
}

static void on_alloc(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_alloc *r = &ev->r->alloc;
    unsigned kind = ev->sub < GT_API_MAX ? gt_api_table[ev->sub].mem_kind : GT_MEM_NONE;
    if (kind == GT_MEM_ASYNC)
        pool_on_async_alloc(p, ev);
    else if (ev->sub == GT_API_cuMemAddressReserve)
        pool_on_reserve(p, r);
    else if (ev->sub == GT_API_cuMemCreate)
        pool_on_create(p, r);
    else if (kind == GT_MEM_DEVICE || kind == GT_MEM_MANAGED)
        async_gone(p, r->addr, r->ts); /* the address is reused: an async free was missed */
}

static void on_free(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_free *r = &ev->r->free;
    if (r->result != 0 || !r->addr) return;
    if (ev->sub == GT_API_cuMemAddressFree) {
        uint32_t i = pool_find(p, GA_POOL_VMM, r->addr, 0);
        if (i != NONE) pool_end(p, i, r->ts);
    } else if (ev->sub == GT_API_cuMemRelease) {
        pool_on_release(p, r->addr);
    } else {
        async_gone(p, r->addr, r->ts); /* cuMemFree may free stream-ordered memory too */
    }
}

/* The pools of `device` that a failed allocation lists, the most unused first. */
static uint64_t pool_unused(const struct ga_pool *q)
{
    return q->kind == GA_POOL_VMM ? 0 : q->now.free;
}

void ga_pools_oom_evidence(const struct ga_pools *p, int32_t device, uint64_t request,
                           struct ga_pool_evidence *ev)
{
    (void)request;
    memset(ev, 0, sizeof(*ev));
    ev->pool_index = -1;
    for (size_t i = 0; p && i < p->n; i++) {
        const struct ga_pool *q = &p->pools[i];
        if (!q->live || q->device != device) continue;
        uint64_t u = pool_unused(q);
        ev->pools++;
        if (q->kind == GA_POOL_ANNOTATED) {
            ev->unused_annotated += u;
            ev->largest_free = max64(ev->largest_free, q->now.largest);
        } else if (q->kind == GA_POOL_STREAM) {
            ev->unused_stream += u;
            ev->largest_free = max64(ev->largest_free, u); /* layout unknown: one extent */
        }
        if (u > ev->pool_unused || (ev->pool_index < 0 && u)) {
            ev->pool_index = (int32_t)i;
            ev->pool_id = q->id;
            ev->pool_name = q->name;
            ev->pool_kind = q->kind;
            ev->pool_unused = u;
        }
    }
    const uint64_t *d = p ? ga_map_find(&p->dev_idx, (uint32_t)device, 0) : NULL;
    if (d) ev->unused_vmm = p->devs[*d].phys_unused;
    ev->unused_layout_unknown = ev->unused_stream + ev->unused_vmm;
    ev->largest_free = max64(ev->largest_free, ev->unused_vmm);
    ev->reserved_unused = ev->unused_annotated + ev->unused_layout_unknown;
}

static __attribute__((noinline)) void on_fail(struct ga_pools *p, const struct ga_event *ev)
{
    const struct gt_rec_alloc_fail *r = &ev->r->alloc_fail;
    unsigned kind = ev->sub < GT_API_MAX ? gt_api_table[ev->sub].mem_kind : GT_MEM_NONE;
    if (!ga_kind_is_device(kind)) return;
    if (p->n_fails >= GA_POOL_FAILURES_MAX) {
        p->fails_dropped++;
        return;
    }
    p->fails = ga_xgrow(p->fails, &p->fail_cap, p->n_fails, sizeof(*p->fails));
    struct ga_pool_failure *f = &p->fails[p->n_fails++];
    memset(f, 0, sizeof(*f));
    f->ts = r->ts;
    f->device = r->device;
    f->api = ev->sub;
    f->request = r->size;
    ga_pools_oom_evidence(p, r->device, r->size, &f->ev);
    uint64_t unused[GA_FAIL_POOLS_MAX];
    for (size_t i = 0; i < p->n; i++) { /* keep the GA_FAIL_POOLS_MAX with most unused */
        const struct ga_pool *q = &p->pools[i];
        uint64_t u = pool_unused(q);
        if (!q->live || q->device != r->device) continue;
        if (f->n_pools == GA_FAIL_POOLS_MAX && u <= unused[GA_FAIL_POOLS_MAX - 1]) continue;
        uint32_t k = f->n_pools < GA_FAIL_POOLS_MAX ? f->n_pools++ : GA_FAIL_POOLS_MAX - 1;
        for (; k > 0 && unused[k - 1] < u; k--) {
            unused[k] = unused[k - 1];
            f->pool_idx[k] = f->pool_idx[k - 1];
            f->pool_f[k] = f->pool_f[k - 1];
        }
        unused[k] = u;
        f->pool_idx[k] = (uint32_t)i;
        f->pool_f[k] = q->now;
    }
    if (f->ev.pool_index >= 0 && p->pools[f->ev.pool_index].kind != GA_POOL_STREAM)
        pool_map_fill(&p->pools[f->ev.pool_index], &f->map);
}

/* memory.c saw this record first: a new process peak means the state now is the peak's. */
static __attribute__((cold, noinline)) void new_peak(struct ga_pools *p)
{
    p->peak_seen = p->mem->peak_total;
    p->peak_ts = p->mem->peak_ts;
    p->peak_ver++;
}

static inline void check_peak(struct ga_pools *p)
{
    if (p->mem && p->mem->peak_total > p->peak_seen) new_peak(p);
}

/* Out of line, so that a record pools ignore costs no frame. */
static __attribute__((noinline)) void on_record(struct ga_pools *p, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_POOL:
        pool_on_pool(p, ev);
        break;
    case GT_REC_BLOCK:
        pool_on_block(p, ev);
        break;
    case GT_REC_POOL_USAGE:
        pool_on_usage(p, ev);
        break;
    case GT_REC_ALLOC:
        on_alloc(p, ev);
        break;
    case GT_REC_FREE:
        on_free(p, ev);
        break;
    case GT_REC_VMM_MAP:
        if (ev->r->vmm_map.result != 0) break;
        if (ev->sub == GT_API_cuMemMap)
            pool_on_map(p, &ev->r->vmm_map);
        else if (ev->sub == GT_API_cuMemUnmap)
            pool_on_unmap(p, &ev->r->vmm_map);
        break;
    case GT_REC_OBJECT:
        pool_on_object(p, ev);
        break;
    case GT_REC_ALLOC_FAIL:
        on_fail(p, ev);
        break;
    default:
        break;
    }
    check_peak(p);
}

void ga_pools_alloc_event(struct ga_pools *p, const struct ga_event *ev)
{
    on_alloc(p, ev);
    check_peak(p);
}

void ga_pools_free_event(struct ga_pools *p, const struct ga_event *ev)
{
    on_free(p, ev);
    check_peak(p);
}

void ga_pools_tick(struct ga_pools *p)
{
    check_peak(p);
}

void ga_pools_event(struct ga_pools *p, const struct ga_event *ev)
{
    if (ev->type < 64 && (GA_POOLS_TYPES >> ev->type & 1))
        on_record(p, ev);
    else
        check_peak(p);
}
