/* Memory analysis per DESIGN §6: live bytes, exact peaks, leaks, OOM verdicts. Conventions of
 * the shim: an ALLOC's addr is a device pointer, a host pointer or a handle, so live allocations
 * are keyed by (namespace of the memory kind, addr); only FREE records with result 0 change
 * state; context teardown (OBJECT records) releases what the context owned. */
#include "analyses/memory.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define NONE UINT32_MAX

/* Address namespaces: device, managed and async memory share the unified virtual address space
 * (cuMemFree may release any of them); the other kinds are distinct spaces or handles. */
enum { NS_NONE, NS_DEVPTR, NS_VA, NS_PHYS, NS_ARRAY, NS_HOST };

static unsigned ns_of(unsigned kind)
{
    switch (kind) {
    case GT_MEM_DEVICE:
    case GT_MEM_MANAGED:
    case GT_MEM_ASYNC:
        return NS_DEVPTR;
    case GT_MEM_VIRTUAL:
        return NS_VA;
    case GT_MEM_PHYSICAL:
        return NS_PHYS;
    case GT_MEM_ARRAY:
        return NS_ARRAY;
    case GT_MEM_HOST:
        return NS_HOST;
    default:
        return NS_NONE;
    }
}

static const struct gt_api_info *api_info(unsigned api)
{
    static const struct gt_api_info none = {NULL, GT_FAM_NONE, GT_MEM_NONE};
    return api < GT_API_MAX ? &gt_api_table[api] : &none;
}

static struct ga_api_mem *api_mem(struct ga_memory *m, unsigned api)
{
    static struct ga_api_mem sink; /* ids past the table: counted nowhere */
    return api < GT_API_MAX ? &m->api[api] : &sink;
}

const char *ga_verdict_name(enum ga_verdict v)
{
    switch (v) {
    case GA_VERDICT_FRAGMENTATION:
        return "fragmentation";
    case GA_VERDICT_OTHER_PROCESSES:
        return "other_processes";
    case GA_VERDICT_EXHAUSTED:
        return "exhausted";
    case GA_VERDICT_UNKNOWN:
        return "unknown";
    case GA_VERDICT_OTHER_ERROR:
        return "other_error";
    case GA_VERDICT_CACHED:
        return "cached";
    }
    return "unknown";
}

const char *ga_verdict_advice(enum ga_verdict v)
{
    switch (v) {
    case GA_VERDICT_FRAGMENTATION:
        return "free memory is split into holes smaller than the request: with PyTorch set "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb); "
               "allocate large long-lived buffers first";
    case GA_VERDICT_CACHED:
        return "an allocator's cache held the memory: release it before the peak "
               "(torch.cuda.empty_cache(), cuMemPoolTrimTo) or let it grow in place "
               "(expandable_segments:True, garbage_collection_threshold)";
    case GA_VERDICT_OTHER_PROCESSES:
        return "other processes hold memory on this device: check nvidia-smi, give the job its "
               "own GPU (CUDA_VISIBLE_DEVICES) or cap the others (MPS memory limits)";
    case GA_VERDICT_EXHAUSTED:
        return "this process needs more than the device has: smaller batch, activation "
               "checkpointing, lower precision, or shard the model; start with the top holders";
    case GA_VERDICT_UNKNOWN:
        return "the driver's free/total figures are missing, so the cause cannot be told";
    case GA_VERDICT_OTHER_ERROR:
        return "the call failed for another reason than out of memory (see its result code)";
    }
    return "";
}

void ga_memory_init(struct ga_memory *m)
{
    memset(m, 0, sizeof(*m));
    m->free_slot = NONE;
    m->recent_group = NONE;
}

/* The slow path of dev_of: a device other than the last one. */
static __attribute__((noinline)) struct ga_dev_mem *dev_lookup(struct ga_memory *m, int32_t device)
{
    int added = 0;
    uint64_t *idx = ga_map_upsert(&m->dev_idx, (uint32_t)device, 0, m->ndev, &added);
    m->dev_recent = (size_t)*idx;
    if (!added) return &m->dev[*idx];
    m->dev = ga_xgrow(m->dev, &m->dev_cap, m->ndev, sizeof(*m->dev));
    struct ga_dev_mem *d = &m->dev[m->ndev++];
    memset(d, 0, sizeof(*d));
    d->device = device;
    return d;
}

/* ga_memory_dev, inline here: most records name the device of the one before. */
static inline struct ga_dev_mem *dev_of(struct ga_memory *m, int32_t device)
{
    if (m->dev_recent < m->ndev && m->dev[m->dev_recent].device == device)
        return &m->dev[m->dev_recent];
    return dev_lookup(m, device);
}

struct ga_dev_mem *ga_memory_dev(struct ga_memory *m, int32_t device)
{
    return dev_of(m, device);
}

static int64_t rel(const struct ga_memory *m, uint64_t ts)
{
    return (int64_t)(ts - m->t0);
}

/* ---- accounting ------------------------------------------------------------------------------ */

/* Series `slot` of the device (a kind, or GA_SERIES_TOTAL): its index + 1 in m->series, made
 * on first use; 0 when GA_SERIES_MAX series exist. */
_Static_assert(GA_SERIES_TOTAL == GT_MEM_NONE, "the total's slot is that of a kind never placed");
static __attribute__((noinline)) int32_t series_slot(struct ga_memory *m, struct ga_dev_mem *d,
                                                     unsigned slot)
{
    int32_t i = ga_series_index(&m->series, d->device, slot);
    if (i >= 0) d->series[slot] = i + 1;
    return i + 1;
}

static inline void series_put(struct ga_memory *m, struct ga_dev_mem *d, unsigned slot, int64_t t,
                              uint64_t live)
{
    int32_t i = d->series[slot];
    if (!i && !(i = series_slot(m, d, slot))) return;
    ga_series_put(&m->series, i - 1, t, live);
}

static inline __attribute__((always_inline)) void
note_series(struct ga_memory *m, struct ga_dev_mem *d, unsigned kind, uint64_t ts)
{
    int64_t t = rel(m, ts);
    series_put(m, d, kind, t, d->live[kind]);
    if (ga_kind_is_device(kind)) series_put(m, d, GA_SERIES_TOTAL, t, d->live_total);
}

static void account_add(struct ga_memory *m, struct ga_live *e)
{
    struct ga_dev_mem *d = dev_of(m, e->device);
    struct ga_api_mem *a = api_mem(m, e->api);
    d->live[e->kind] += e->size;
    d->live_count[e->kind]++;
    if (d->live[e->kind] > d->peak[e->kind]) {
        d->peak[e->kind] = d->live[e->kind];
        d->peak_ts[e->kind] = e->ts;
    }
    a->live_count++;
    a->live_bytes += e->size;
    if (ga_kind_is_device(e->kind)) {
        ga_peak_add(m, e);
        d->live_total += e->size;
        m->live_total += e->size;
        if (d->live_total > d->peak_total) {
            d->peak_total = d->live_total;
            d->peak_total_ts = e->ts;
        }
        if (m->live_total > m->peak_total) {
            m->peak_total = m->live_total;
            m->peak_ts = e->ts;
            ga_peak_new(m, e);
        }
    } else if (e->kind == GT_MEM_HOST) {
        m->pinned_live += e->size;
        if (m->pinned_live > m->pinned_peak) {
            m->pinned_peak = m->pinned_live;
            m->pinned_peak_ts = e->ts;
        }
    } else if (e->kind == GT_MEM_VIRTUAL) {
        m->va_live += e->size;
        if (m->va_live > m->va_peak) {
            m->va_peak = m->va_live;
            m->va_peak_ts = e->ts;
        }
    }
    note_series(m, d, e->kind, e->ts);
}

/* Forgets live allocation i; counted_as_freed is 0 when a double allocation replaced it. `at`:
 * its value slot in m->live, or NULL. */
static inline __attribute__((always_inline)) void
release(struct ga_memory *m, uint32_t i, uint64_t ts, int counted_as_freed, uint64_t *at)
{
    const struct ga_live *e = &m->slab[i]; /* unchanged until ga_live_remove */
    struct ga_dev_mem *d = dev_of(m, e->device);
    struct ga_api_mem *a = api_mem(m, e->api);
    d->live[e->kind] -= e->size;
    d->live_count[e->kind]--;
    a->live_count--;
    a->live_bytes -= e->size;
    if (counted_as_freed) a->frees++;
    if (ga_kind_is_device(e->kind)) {
        ga_peak_sub(m, e, ts);
        d->live_total -= e->size;
        m->live_total -= e->size;
    } else if (e->kind == GT_MEM_HOST) {
        m->pinned_live -= e->size;
    } else if (e->kind == GT_MEM_VIRTUAL) {
        m->va_live -= e->size;
    }
    note_series(m, d, e->kind, ts);
    ga_live_remove(m, i, at);
}

/* ---- records --------------------------------------------------------------------------------- */

/* ---- the caching-allocator pattern: fail, free, retry ---------------------------------------- */

/* The slow path of thread_of; `slot`: the thread's place in the cache. */
static __attribute__((noinline)) struct ga_thread_mem *thread_lookup(struct ga_memory *m,
                                                                     uint32_t tid, uint32_t *slot)
{
    int added = 0;
    uint64_t *v = ga_map_upsert(&m->thread_idx, tid, 0, m->n_threads, &added);
    if (added) {
        m->threads = ga_xgrow(m->threads, &m->threads_cap, m->n_threads, sizeof(*m->threads));
        m->threads[m->n_threads++] = (struct ga_thread_mem){.tid = tid};
    }
    if (*v < UINT32_MAX) *slot = (uint32_t)*v + 1;
    return &m->threads[*v];
}

/* The thread's state, made on first use; valid until the next thread_of call. */
static inline struct ga_thread_mem *thread_of(struct ga_memory *m, uint32_t tid)
{
    uint32_t *slot = &m->thread_cache[(uint32_t)(tid * 0x9e3779b1u) >> (32 - GA_THREAD_CACHE_BITS)];
    if (*slot && m->threads[*slot - 1].tid == tid) return &m->threads[*slot - 1];
    return thread_lookup(m, tid, slot);
}

static struct ga_oom *pending_oom(struct ga_memory *m, const struct ga_thread_mem *t,
                                  int32_t device)
{
    if (t->pending == 0 || t->pending > m->n_ooms) return NULL;
    struct ga_oom *o = &m->ooms[t->pending - 1];
    return o->device == device ? o : NULL;
}

/* An allocation of the thread on the device after a failure there, at least as large: maybe
 * its retry (kept; ga_memory_judge compares call sites). Smaller ones are other requests. */
static void retry_try(struct ga_memory *m, struct ga_thread_mem *t, int32_t device, uint64_t ts,
                      uint64_t size, uint32_t stack, int ok)
{
    struct ga_oom *o = pending_oom(m, t, device);
    if (!o || size < o->requested) return;
    o->tries[o->n_tries++] = (struct ga_retry_try){.ts = ts,
                                                   .size = size,
                                                   .freed_bytes = o->freed_pending,
                                                   .freed_count = o->freed_pending_count,
                                                   .stack = stack,
                                                   .ok = (uint8_t)ok};
    if (o->n_tries == GA_RETRY_TRIES) t->pending = 0;
}

static __attribute__((noinline)) void on_alloc(struct ga_memory *m, const struct ga_event *ev)
{
    const struct gt_rec_alloc *r = &ev->r->alloc;
    unsigned kind = api_info(ev->sub)->mem_kind;
    struct ga_api_mem *a = api_mem(m, ev->sub);
    a->calls++;
    a->count++;
    a->bytes += r->size;
    m->alloc_count++;
    m->alloc_bytes += r->size;
    if (ns_of(kind) == NS_NONE) return; /* an api this reader cannot place */
    /* One probe finds the address or reserves its slot (NONE until ga_live_link fills it). */
    int added = 0;
    uint64_t *at = ga_map_upsert(&m->live, ns_of(kind), r->addr, NONE, &added);
    if (!added) { /* the address is live already: a free we never saw */
        m->double_allocs++;
        release(m, (uint32_t)*at, r->ts, 0, at);
        at = NULL;
    }
    uint32_t i = ga_live_take(m);
    struct ga_live *e = &m->slab[i];
    *e = (struct ga_live){.addr = r->addr,
                          .size = r->size,
                          .ctx = r->ctx,
                          .ts = r->ts,
                          .device = r->device,
                          .api = ev->sub,
                          .kind = (uint8_t)kind,
                          .ns = (uint8_t)ns_of(kind),
                          .stack = r->stack,
                          .tid = ev->tid,
                          .bucket = NONE,
                          .seq = ++m->seq};
    ga_live_link(m, i, at);
    account_add(m, e);
    if (ga_kind_is_device(kind)) {
        struct ga_thread_mem *t = thread_of(m, ev->tid);
        t->last_alloc = e->seq;
        retry_try(m, t, r->device, r->ts, r->size, r->stack, 1);
    }
}

static __attribute__((noinline)) void on_free(struct ga_memory *m, const struct ga_event *ev)
{
    const struct gt_rec_free *r = &ev->r->free;
    unsigned kind = api_info(ev->sub)->mem_kind;
    struct ga_api_mem *a = api_mem(m, ev->sub);
    a->calls++;
    if (r->result != 0) { /* the driver refused: nothing changed */
        a->failed++;
        m->failed_frees++;
        return;
    }
    a->count++;
    if (r->addr == 0) {
        m->null_frees++;
        return;
    }
    uint64_t *at = ns_of(kind) == NS_NONE ? NULL : ga_map_find(&m->live, ns_of(kind), r->addr);
    if (!at) {
        m->unmatched_frees++;
        return;
    }
    uint32_t i = (uint32_t)*at; /* m->live is not changed before release() uses `at` */
    a->frees++;
    a->bytes += m->slab[i].size;
    m->free_count++;
    if (ga_kind_is_device(m->slab[i].kind)) {
        struct ga_thread_mem *t = thread_of(m, ev->tid);
        struct ga_oom *o = pending_oom(m, t, m->slab[i].device);
        if (m->slab[i].tid == ev->tid && t->last_alloc == m->slab[i].seq)
            ga_peak_temp(m, &m->slab[i]);
        t->last_alloc = 0; /* a free ends "directly" */
        if (o) {
            o->freed_pending += m->slab[i].size;
            o->freed_pending_count++;
        }
    }
    release(m, i, r->ts, 1, at);
}

/* Smallest unaccounted figure seen on the device (driver overhead + others), +1; 0 = none. */
static __attribute__((noinline)) void note_unaccounted(struct ga_memory *m, int32_t device,
                                                       uint64_t free_b, uint64_t total)
{
    uint64_t held = dev_of(m, device)->live_total;
    if (!total || free_b > total || held > total - free_b) return;
    uint64_t un = total - free_b - held;
    uint64_t *v = ga_map_upsert(&m->overhead, (uint32_t)device, 0, 0, NULL);
    if (*v == 0 || un + 1 < *v) *v = un + 1;
}

/* The rules, in this order, are in docs/ANALYSES.md ("OOM verdicts"); keep them in step. */
static enum ga_verdict judge(const struct ga_memory *m, struct ga_oom *o)
{
    uint64_t r = o->requested, d = o->free_bytes, t = o->total_bytes, h = o->held;
    uint64_t u = o->pools.reserved_unused, f = o->pools.largest_free;
    const uint64_t *ov = ga_map_find(&m->overhead, (uint32_t)o->device, 0);
    o->unaccounted = t > d && t - d > h ? t - d - h : 0;
    o->overhead = ov && *ov ? *ov - 1 : o->unaccounted;
    if (o->overhead > GA_OVERHEAD_CAP) o->overhead = GA_OVERHEAD_CAP;
    if (o->overhead > o->unaccounted) o->overhead = o->unaccounted;
    o->others = o->unaccounted - o->overhead;
    if (o->result != GA_CUDA_ERROR_OUT_OF_MEMORY) return GA_VERDICT_OTHER_ERROR;
    if (o->have_pools && u >= r && f < r) return GA_VERDICT_FRAGMENTATION;
    if (t && d >= r) return GA_VERDICT_FRAGMENTATION;
    if (o->have_pools && u >= r) return GA_VERDICT_CACHED;
    if (o->retry == GA_RETRY_OK && o->freed_count && o->retry_size >= r) return GA_VERDICT_CACHED;
    if (!t) return GA_VERDICT_UNKNOWN;
    if (o->others >= h && o->others > 0 && d + o->others >= r) return GA_VERDICT_OTHER_PROCESSES;
    return GA_VERDICT_EXHAUSTED;
}

static __attribute__((cold, noinline)) void on_fail(struct ga_memory *m, const struct ga_event *ev)
{
    const struct gt_rec_alloc_fail *r = &ev->r->alloc_fail;
    api_mem(m, ev->sub)->calls++;
    api_mem(m, ev->sub)->failed++;
    m->failed_count++;
    if (!ga_kind_is_device(api_info(ev->sub)->mem_kind)) return;
    if (m->n_ooms >= GA_MAX_OOMS) {
        m->ooms_dropped++;
        return;
    }
    struct ga_thread_mem *t = thread_of(m, ev->tid);
    retry_try(m, t, r->device, r->ts, r->size, r->stack, 0);
    t->last_alloc = 0; /* an allocation call, too */
    note_unaccounted(m, r->device, r->free_bytes, r->total_bytes);
    m->ooms = ga_xgrow(m->ooms, &m->oom_cap, m->n_ooms, sizeof(*m->ooms));
    struct ga_oom *o = &m->ooms[m->n_ooms++];
    *o = (struct ga_oom){.ts = r->ts,
                         .tid = ev->tid,
                         .api = ev->sub,
                         .device = r->device,
                         .result = r->result,
                         .stack = r->stack,
                         .requested = r->size,
                         .free_bytes = r->free_bytes,
                         .total_bytes = r->total_bytes,
                         .held = dev_of(m, r->device)->live_total};
    if (m->n_ooms <= GA_OOM_SNAPSHOTS) ga_peak_snapshot(m, o);
    if (r->result == GA_CUDA_ERROR_OUT_OF_MEMORY) t->pending = m->n_ooms;
}

/* Releases every allocation of group g (a context's allocations on one device). */
static void release_group(struct ga_memory *m, uint32_t g, uint64_t ts)
{
    while (m->groups[g].head != NONE) {
        uint32_t i = m->groups[g].head;
        m->ctx_release_count++;
        m->ctx_release_bytes += m->slab[i].size;
        release(m, i, ts, 1, NULL);
    }
}

static void destroy_ctx(struct ga_memory *m, uint64_t ctx, uint64_t ts)
{
    for (uint32_t g; (g = ga_group_of_ctx(m, ctx)) != NONE;) /* emptied groups leave the list */
        release_group(m, g, ts);
    ga_map_remove(&m->created_ctx, ctx, 0, NULL);
    m->ctx_destroyed++;
}

/* The primary context of `device` is gone: what was allocated there in a context that no
 * cuCtxCreate_* made (the primary one, or no context known) goes with it. */
static void reset_primary(struct ga_memory *m, int32_t device, uint64_t ts)
{
    for (uint32_t g; (g = ga_group_of_primary(m, device)) != NONE;)
        release_group(m, g, ts);
    m->primary_resets++;
}

static __attribute__((cold, noinline)) void on_object(struct ga_memory *m,
                                                      const struct ga_event *ev)
{
    const struct gt_rec_object *r = &ev->r->object;
    if (r->result != 0) return;
    switch (ev->sub) {
    case GT_API_cuCtxCreate_v2:
    case GT_API_cuCtxCreate_v3:
    case GT_API_cuCtxCreate_v4:
        ga_group_ctx_created(m, r->handle);
        m->ctx_created++;
        break;
    case GT_API_cuCtxDestroy_v2:
        destroy_ctx(m, r->handle, r->ts);
        break;
    case GT_API_cuDevicePrimaryCtxReset_v2:
        reset_primary(m, r->device, r->ts);
        break;
    case GT_API_cuDevicePrimaryCtxRelease_v2:
        if (r->aux == 1) reset_primary(m, r->device, r->ts);
        break;
    default:
        break;
    }
}

static void on_map(struct ga_memory *m, const struct ga_event *ev)
{
    if (ev->r->vmm_map.result != 0)
        m->vmm_failed++;
    else if (ev->sub == GT_API_cuMemMap)
        m->vmm_maps++;
    else if (ev->sub == GT_API_cuMemUnmap)
        m->vmm_unmaps++;
}

/* The records other than ALLOC and FREE that change the memory state. */
#define OTHER_RECORDS                                                                              \
    (1ull << GT_REC_ALLOC_FAIL | 1ull << GT_REC_OBJECT | 1ull << GT_REC_VMM_MAP |                  \
     1ull << GT_REC_MEMINFO)

static __attribute__((noinline)) void on_other(struct ga_memory *m, const struct ga_event *ev)
{
    switch (ev->type) {
    case GT_REC_ALLOC_FAIL:
        on_fail(m, ev);
        break;
    case GT_REC_OBJECT:
        on_object(m, ev);
        break;
    case GT_REC_VMM_MAP:
        on_map(m, ev);
        break;
    case GT_REC_MEMINFO:
        m->meminfo_samples++;
        note_unaccounted(m, ev->r->meminfo.device, ev->r->meminfo.free_bytes,
                         ev->r->meminfo.total_bytes);
        break;
    default:
        break;
    }
}

void ga_memory_event(struct ga_memory *m, const struct ga_event *ev)
{
    if (ev->type == GT_REC_ALLOC)
        on_alloc(m, ev);
    else if (ev->type == GT_REC_FREE)
        on_free(m, ev);
    else if (ev->type < 64 && (OTHER_RECORDS >> ev->type & 1))
        on_other(m, ev);
}

void ga_memory_finish(struct ga_memory *m, uint64_t end_ts)
{
    m->leaked_bytes = m->live_total;
    m->leaked_count = 0;
    for (size_t i = 0; i < m->ndev; i++)
        for (unsigned k = 0; k < GT_MEM_KIND_COUNT; k++)
            if (ga_kind_is_device(k)) m->leaked_count += m->dev[i].live_count[k];
    ga_series_finish(&m->series, rel(m, end_ts));
    ga_memory_judge(m, NULL, NULL);
    ga_peak_finish(m);
}

/* The failure's retry: its first try from the same call site. The thread's frees until then
 * count as freed before it; without one, those before its first try (its next request of that
 * size), or all it freed while the failure waited. */
static void pick_retry(struct ga_oom *o, ga_same_site_fn same_site, void *ctx)
{
    o->retry = GA_RETRY_NONE;
    o->retry_ts = o->retry_size = 0;
    o->freed_before_retry = o->n_tries ? o->tries[0].freed_bytes : o->freed_pending;
    o->freed_count = o->n_tries ? o->tries[0].freed_count : o->freed_pending_count;
    for (uint8_t i = 0; i < o->n_tries; i++) {
        const struct ga_retry_try *x = &o->tries[i];
        if (same_site ? !same_site(ctx, o->stack, x->stack) : o->stack != x->stack) continue;
        o->retry = x->ok ? GA_RETRY_OK : GA_RETRY_FAILED;
        o->retry_ts = x->ts;
        o->retry_size = x->size;
        o->freed_before_retry = x->freed_bytes;
        o->freed_count = x->freed_count;
        return;
    }
}

void ga_memory_judge(struct ga_memory *m, ga_same_site_fn same_site, void *ctx)
{
    for (size_t i = 0; i < m->n_ooms; i++) {
        pick_retry(&m->ooms[i], same_site, ctx);
        m->ooms[i].verdict = judge(m, &m->ooms[i]);
    }
}

void ga_memory_free(struct ga_memory *m)
{
    ga_peak_free(m);
    ga_live_free(m);
    ga_series_free(&m->series);
    ga_map_free(&m->dev_idx);
    ga_map_free(&m->thread_idx);
    free(m->threads);
    free(m->dev);
    free(m->ooms);
    memset(m, 0, sizeof(*m));
}
