/* Periodic samples the shim takes on the application's own threads, inside its memory hooks:
 *  - gt_rec_meminfo: cuMemGetInfo of the calling thread's current device, at most once per
 *    device every GPUTRACE_SAMPLE_MS, at allocations and frees, and after every failed
 *    allocation (the figures gt_rec_alloc_fail measured).
 *  - gt_rec_pool_usage: cuMemPoolGetAttribute (reserved/used, current/high) of a stream-ordered
 *    pool: at its creation, after cuMemPoolTrimTo and a failed stream-ordered allocation, and at
 *    stream-ordered allocations and frees at most once per pool every GPUTRACE_SAMPLE_MS.
 * Every driver call here goes to libcuda's own entry points (dlsym on its handle), never to our
 * hooks, with the context the application made current: nothing is created or switched. A query
 * that fails writes nothing. Callers are inside a hook (re-entrancy guard on) and restore errno.
 *
 * Cost when no sample is due: a compare against a per-thread "next check" time (the time of the
 * record just written, no clock read); for pool allocations also one probe of the pool table. */
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "shim.h"

#define SAMPLE_MS_DEFAULT 100u
#define MAX_DEVS          64
#define POOL_BITS         12 /* pools tracked for rate limiting; beyond that, no periodic samples */

static uint64_t sample_ns = SAMPLE_MS_DEFAULT * 1000000ull;

__attribute__((constructor)) static void sample_configure(void)
{
    sample_ns = gt_env_num("GPUTRACE_SAMPLE_MS", 0, 24ul * 3600 * 1000, SAMPLE_MS_DEFAULT) *
                1000000ull;
}

/* ---- driver entry points (never our wrappers) --------------------------------------------------
 */

typedef CUresult (*mem_get_info_fn)(size_t *, size_t *);
typedef CUresult (*pool_get_attr_fn)(CUmemoryPool, CUmemPool_attribute, void *);
typedef CUresult (*dev_get_pool_fn)(CUmemoryPool *, CUdevice);
typedef CUresult (*ptr_get_attr_fn)(void *, CUpointer_attribute, CUdeviceptr);

enum { F_POOL_GET_ATTR, F_DEV_GET_POOL, F_PTR_GET_ATTR, F_COUNT };
static const char *const fn_names[F_COUNT] = {"cuMemPoolGetAttribute", "cuDeviceGetMemPool",
                                              "cuPointerGetAttribute"};

static void *drv(int which)
{
    static void *_Atomic fns[F_COUNT];
    void *p = atomic_load_explicit(&fns[which], memory_order_acquire);
    if (!p) {
        void *h = gt_libcuda();
        p = h ? gt_real_dlsym(h, fn_names[which]) : NULL;
        if (!p) p = (void *)1;
        atomic_store_explicit(&fns[which], p, memory_order_release);
    }
    return p == (void *)1 ? NULL : p;
}

/* 1 if a sample rate-limited by *last is due at `now` (and claims it); force: always. */
static int claim(_Atomic uint64_t *last, uint64_t now, int force)
{
    uint64_t old = atomic_load_explicit(last, memory_order_relaxed);
    if (force) {
        atomic_store_explicit(last, now, memory_order_relaxed);
        return 1;
    }
    if (old && (int64_t)(now - old) < (int64_t)sample_ns) return 0;
    return atomic_compare_exchange_strong_explicit(last, &old, now, memory_order_relaxed,
                                                   memory_order_relaxed);
}

/* ---- cuMemGetInfo -----------------------------------------------------------------------------
 */

static _Atomic uint64_t mi_last[MAX_DEVS];
static __thread uint64_t mi_next; /* this thread checks again at this record time */

static void meminfo_write(struct gt_thread *t, int dev, uint64_t fr, uint64_t total)
{
    struct gt_rec_meminfo *r = gt_reserve(t, sizeof(*r));
    if (!r) return;
    uint64_t ts = gt_now();
    *r = (struct gt_rec_meminfo){.ts = ts, .free_bytes = fr, .total_bytes = total, .device = dev};
    gt_commit(t, r, GT_REC_MEMINFO, 0, sizeof(*r), ts);
}

void gt_meminfo_after_fail(struct gt_thread *t, int dev, uint64_t fr, uint64_t total)
{
    if (dev < 0 || dev >= MAX_DEVS) return;
    gt_nvml_oom(dev);
    meminfo_write(t, dev, fr, total);
    atomic_store_explicit(&mi_last[dev], t->last_ts, memory_order_relaxed);
}

void gt_meminfo_tick(struct gt_thread *t, int dev)
{
    uint64_t now = t->last_ts;
    if (GT_LIKELY(now < mi_next)) return;
    mi_next = now + sample_ns;
    if (dev == GT_DEV_CURRENT) dev = gt_current_device();
    if (dev < 0 || dev >= MAX_DEVS) return;
    if (!claim(&mi_last[dev], now, 0)) {
        mi_next = atomic_load_explicit(&mi_last[dev], memory_order_relaxed) + sample_ns;
        return;
    }
    mem_get_info_fn mi = (mem_get_info_fn)gt_helper_fn(GT_H_MemGetInfo);
    size_t fr = 0, total = 0;
    if (mi && mi(&fr, &total) == CUDA_SUCCESS) meminfo_write(t, dev, fr, total);
}

/* ---- stream-ordered pools ---------------------------------------------------------------------
 */

struct pool_slot {
    _Atomic uintptr_t key; /* CUmemoryPool, 0 = empty; never removed */
    _Atomic int dev;
    _Atomic uint64_t last; /* time of its latest sample, 0 = none */
};
static struct pool_slot pools[1u << POOL_BITS];

static struct pool_slot *pool_slot(uint64_t pool)
{
    uint32_t mask = (1u << POOL_BITS) - 1;
    uint32_t i = (uint32_t)((pool * 0x9E3779B97F4A7C15ull) >> (64 - POOL_BITS));
    for (int probe = 0; probe < 32; probe++, i = (i + 1) & mask) {
        uintptr_t cur = atomic_load_explicit(&pools[i].key, memory_order_acquire);
        if (cur == pool) return &pools[i];
        if (cur == 0) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong(&pools[i].key, &expected, (uintptr_t)pool)) {
                atomic_store_explicit(&pools[i].dev, -1, memory_order_relaxed);
                return &pools[i];
            }
            if (expected == pool) return &pools[i];
        }
    }
    return NULL;
}

static void pool_write(struct gt_thread *t, uint64_t pool, int dev)
{
    pool_get_attr_fn get = (pool_get_attr_fn)drv(F_POOL_GET_ATTR);
    static const CUmemPool_attribute attrs[4] = {
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
        CU_MEMPOOL_ATTR_USED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_HIGH};
    cuuint64_t v[4];
    if (!get) return;
    for (int i = 0; i < 4; i++)
        if (get((CUmemoryPool)(uintptr_t)pool, attrs[i], &v[i]) != CUDA_SUCCESS) return;
    struct gt_rec_pool_usage *r = gt_reserve(t, sizeof(*r));
    if (!r) return;
    uint64_t ts = gt_now();
    *r = (struct gt_rec_pool_usage){.ts = ts,
                                    .pool = pool,
                                    .reserved_current = v[0],
                                    .reserved_high = v[1],
                                    .used_current = v[2],
                                    .used_high = v[3],
                                    .device = dev};
    gt_commit(t, r, GT_REC_POOL_USAGE, 0, sizeof(*r), ts);
}

void gt_pool_created(struct gt_thread *t, uint64_t pool, int dev)
{
    struct pool_slot *s = pool_slot(pool);
    if (s) {
        atomic_store_explicit(&s->dev, dev, memory_order_relaxed);
        atomic_store_explicit(&s->last, t->last_ts, memory_order_relaxed);
    }
    pool_write(t, pool, dev);
}

void gt_pool_destroyed(uint64_t pool)
{
    struct pool_slot *s = pool_slot(pool);
    if (s) { /* the handle may come back for another pool */
        atomic_store_explicit(&s->dev, -1, memory_order_relaxed);
        atomic_store_explicit(&s->last, 0, memory_order_relaxed);
    }
}

void gt_pool_tick(struct gt_thread *t, uint64_t pool, int force)
{
    if (!pool) return;
    struct pool_slot *s = pool_slot(pool);
    if (!s) {
        if (force) pool_write(t, pool, -1);
        return;
    }
    if (claim(&s->last, t->last_ts, force))
        pool_write(t, pool, atomic_load_explicit(&s->dev, memory_order_relaxed));
}

/* cuMemAllocAsync: the device's current pool, asked for only when a sample could be due. */
static _Atomic uint64_t cur_last[MAX_DEVS];

void gt_pool_tick_current(struct gt_thread *t, int dev, int force)
{
    if (dev < 0 || dev >= MAX_DEVS) return;
    if (!claim(&cur_last[dev], t->last_ts, force)) return;
    dev_get_pool_fn gp = (dev_get_pool_fn)drv(F_DEV_GET_POOL);
    CUmemoryPool p = NULL;
    if (!gp || gp(&p, (CUdevice)dev) != CUDA_SUCCESS || !p) return;
    struct pool_slot *s = pool_slot((uint64_t)(uintptr_t)p);
    if (s) {
        int none = -1;
        atomic_compare_exchange_strong(&s->dev, &none, dev);
    }
    gt_pool_tick(t, (uint64_t)(uintptr_t)p, force);
}

/* cuMemFreeAsync, before the free is forwarded: the pool of ptr if a sample of it could be due
 * (0 otherwise, and for memory of no pool). At most one query per thread per period. */
static __thread uint64_t fa_next;

uint64_t gt_pool_of_ptr_if_due(struct gt_thread *t, uint64_t ptr)
{
    uint64_t now = t->last_ts;
    if (GT_LIKELY(now < fa_next)) return 0;
    fa_next = now + sample_ns;
    ptr_get_attr_fn pa = (ptr_get_attr_fn)drv(F_PTR_GET_ATTR);
    CUmemoryPool p = NULL;
    if (!pa || pa(&p, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)ptr) != CUDA_SUCCESS)
        return 0;
    struct pool_slot *s = p ? pool_slot((uint64_t)(uintptr_t)p) : NULL;
    if (s) {
        uint64_t last = atomic_load_explicit(&s->last, memory_order_relaxed);
        if (last && (int64_t)(now - last) < (int64_t)sample_ns) {
            fa_next = last + sample_ns;
            return 0;
        }
    }
    return (uint64_t)(uintptr_t)p;
}
