/* Memory analysis: live allocations, per-API counts, exact peaks, leaks, failed allocations with
 * their OOM verdict, context teardown. State is linear in live allocations: hash maps only. */
#ifndef GA_MEMORY_H
#define GA_MEMORY_H

#include <stdint.h>

#include "gputrace/trace_api.h"
#include "base/hashmap.h"
#include "input/records.h"
#include "analyses/series.h"

struct ga_torch_oom;

#define GA_MAX_OOMS                 10000 /* failed allocations kept in detail; the rest are only counted */
#define GA_CUDA_ERROR_OUT_OF_MEMORY 2

/* The rules, in this order, are in docs/ANALYSES.md ("OOM verdicts"); keep them in step. */
enum ga_verdict {
    GA_VERDICT_FRAGMENTATION,   /* enough free (U >= R or D >= R) but no extent of R (F < R) */
    GA_VERDICT_OTHER_PROCESSES, /* others held more than we did and would have made room */
    GA_VERDICT_EXHAUSTED,       /* this process holds the memory */
    GA_VERDICT_UNKNOWN,         /* no cuMemGetInfo figures (total 0) */
    GA_VERDICT_OTHER_ERROR,     /* the call failed with something else than out-of-memory */
    GA_VERDICT_CACHED,          /* an allocator held >= R it was not using */
    GA_VERDICT_LIMIT,           /* an allocator's own limit (PyTorch's memory fraction) */
};
const char *ga_verdict_name(enum ga_verdict v);
/* One line of advice that fits the verdict. */
const char *ga_verdict_advice(enum ga_verdict v);

/* Driver overhead is estimated as the smallest unaccounted figure seen on the device, capped. */
#define GA_OVERHEAD_CAP (1ull << 30)

/* What one call stack held at a moment. */
struct ga_holder {
    uint32_t stack; /* 0: events without a stack */
    uint64_t bytes, count;
};
#define GA_OOM_SNAPSHOTS   64   /* failed allocations whose holders are kept (the first ones) */
#define GA_OOM_HOLDERS_MAX 4096 /* stacks kept per snapshot, the largest */

/* What the pools said at a failed allocation: the pass (model/report.c) fills it from the pool
 * analysis right after ga_memory_event added the failure; the verdict reads it at the end. */
struct ga_oom_pools {
    uint64_t reserved_unused; /* U: reserved but unused bytes in this process's pools */
    uint64_t largest_free;    /* F: largest free extent in them */
    uint32_t pools;           /* pools on the device */
    uint64_t pool;            /* the pool with the most unused bytes, 0 none */
    const char *pool_name;    /* its name (owned by the pool analysis), NULL none */
};

enum ga_retry { GA_RETRY_NONE = 0, GA_RETRY_OK = 1, GA_RETRY_FAILED = 2 };

/* An allocation that may retry a failed one: the same thread, the same device, at least the size
 * that failed. Whether it comes from the same call site is decided at the end (ga_memory_judge),
 * when stacks have call sites. */
struct ga_retry_try {
    uint64_t ts, size;
    uint64_t freed_bytes, freed_count; /* freed by the thread on the device before it */
    uint32_t stack;
    uint8_t ok; /* it succeeded */
};
#define GA_RETRY_TRIES 4 /* candidates kept per failure; the thread's later ones are not looked at */

struct ga_oom {
    uint64_t ts;
    uint32_t tid;
    uint16_t api;
    int32_t device;
    int32_t result;
    uint32_t stack; /* host call stack of the failed call, 0 none */
    uint64_t requested, free_bytes, total_bytes, held, unaccounted;
    uint64_t overhead, others; /* estimated driver overhead; others = unaccounted - overhead */
    struct ga_oom_pools pools;
    int have_pools; /* pools were consulted (some pool existed on the device) */
    /* The caching-allocator pattern: the same thread freed memory on the device, then asked
     * again for at least as much from the same call site (ga_memory_judge picks that try). */
    enum ga_retry retry;
    uint64_t freed_before_retry, freed_count, retry_ts, retry_size;
    /* Raised by a framework allocator (torch_alloc.c merged it with the driver failures it
     * retried): its own figures and evidence; NULL for a driver failure. */
    const struct ga_torch_oom *alloc;
    int allocator_cached; /* a driver failure PyTorch's allocator resolved from its cache */
    uint64_t freed_pending, freed_pending_count; /* freed by the thread there while it waited */
    struct ga_retry_try tries[GA_RETRY_TRIES];
    uint8_t n_tries;
    struct ga_holder *holders; /* the largest holders at that moment (first GA_OOM_SNAPSHOTS) */
    size_t n_holders;
    uint64_t holders_omitted_bytes; /* bytes of stacks past GA_OOM_HOLDERS_MAX */
    enum ga_verdict verdict;
};

/* ---- the peak breakdown (peak.c) --------------------------------------------------------------
 * Live device bytes are kept per bucket = (stack, api, size class, device). Each bucket also
 * remembers its value at the latest process peak: before a bucket changes after a new peak was
 * set, its current value (unchanged since that peak) is saved. O(1) per event, exact. */
#define GA_SIZE_CLASSES 7
unsigned ga_size_class(uint64_t size);
const char *ga_size_class_name(unsigned c); /* "<4KiB", "4KiB-64KiB", ... ">=4GiB" */

struct ga_bucket {
    uint64_t live_bytes, live_count;
    uint64_t peak_bytes, peak_count; /* valid when ver == the memory's peak_ver, else = live */
    uint64_t ver;
    uint32_t stack;
    int32_t device;
    uint16_t api;
    uint8_t size_class;
};

struct ga_amount {
    uint64_t bytes, count;
};

/* What bucket b (of m->buckets) held at the process peak (after ga_peak_finish). */
struct ga_memory;
void ga_peak_bucket_value(const struct ga_memory *m, const struct ga_bucket *b,
                          struct ga_amount *v);

/* One allocation live at the process peak. */
struct ga_peak_alloc {
    uint64_t addr, size, ts;
    uint64_t free_ts; /* 0: still live at the end */
    uint32_t stack;
    int32_t device;
    uint16_t api;
};
#define GA_TOP_PEAK_ALLOCS 10

/* Temporary allocations of one stack: freed by the allocating thread directly after it was made,
 * with no other allocation call (failed ones included) or free by that thread in between
 * (heaptrack's definition, per thread). */
struct ga_temp {
    uint32_t stack;
    uint64_t count, bytes;
};

#define GA_PEAK_TEMPS_MAX 16

struct ga_dev_amount {
    int32_t device;
    uint64_t bytes, count;
};
#define GA_PEAK_DEVICES_MAX 64

struct ga_peak_breakdown {
    int valid;
    struct ga_dev_amount by_device[GA_PEAK_DEVICES_MAX];
    size_t n_by_device;
    struct ga_amount by_api[GT_API_MAX];
    struct ga_amount by_class[GA_SIZE_CLASSES];
    struct ga_holder *by_stack; /* stacks with bytes live at the peak, largest first */
    size_t n_by_stack;
    struct ga_amount no_stack;                    /* live at the peak without a stack */
    struct ga_peak_alloc top[GA_TOP_PEAK_ALLOCS]; /* the largest live at the peak, largest first */
    size_t n_top;
    uint64_t total; /* = peak_total: the check that the breakdown adds up */
};

struct ga_api_mem {
    uint64_t calls;      /* calls, failed ones included */
    uint64_t count;      /* successful calls */
    uint64_t bytes;      /* alloc: bytes requested; free: bytes released by matched frees */
    uint64_t failed;     /* calls that returned an error */
    uint64_t frees;      /* alloc: its allocations released (any way); free: matched frees */
    uint64_t live_count; /* alloc: its allocations live at the end of the trace */
    uint64_t live_bytes;
};

struct ga_dev_mem {
    int32_t device; /* ordinal; -1 host memory or unknown */
    uint64_t live[GT_MEM_KIND_COUNT], peak[GT_MEM_KIND_COUNT];
    uint64_t live_count[GT_MEM_KIND_COUNT];
    uint64_t peak_ts[GT_MEM_KIND_COUNT];
    uint64_t live_total, peak_total, peak_total_ts; /* device-memory kinds only */
    /* its live-bytes series per kind (slot GA_SERIES_TOTAL: the total), index + 1 into
     * ga_memory.series.s; 0 not known yet (or not kept) */
    int32_t series[GT_MEM_KIND_COUNT];
};

/* One live allocation; lives in a slab, chained into the list of its (ctx, device) group. */
struct ga_live {
    uint64_t addr, size, ctx, ts;
    int32_t device;
    uint16_t api;
    uint8_t kind, ns;
    uint8_t cached; /* a framework allocator's cached segment at the end: not leaked */
    uint32_t prev, next, group; /* slab indices; UINT32_MAX = none */
    uint32_t stack;             /* host call stack (trace node id), 0 none: leaks by site */
    uint32_t tid;               /* allocating thread */
    uint32_t bucket;            /* peak-breakdown bucket (device kinds), UINT32_MAX none */
    uint64_t seq;               /* allocation sequence number (order of ALLOC records) */
};

/* A (ctx, device) group. While it holds allocations it is on its context's list and, unless
 * that context was made by cuCtxCreate_*, on its device's list: teardown walks only the groups
 * it releases, whatever the number of (mostly empty) groups. */
struct ga_group {
    uint64_t ctx;
    int32_t device;
    uint32_t head;
    uint64_t count;
    uint32_t ctx_prev, ctx_next; /* non-empty groups of the context */
    uint32_t dev_prev, dev_next; /* non-empty groups of the device in non-created contexts */
    uint8_t on_dev_list;
};

/* What the memory analysis keeps per thread. */
struct ga_thread_mem {
    uint32_t tid;
    uint64_t last_alloc; /* seq of its last allocation, 0: none, or an allocation call or free
                          * of the thread came after it */
    uint64_t pending;    /* index + 1 into ooms of its failed allocation awaiting a retry, 0 none */
};
#define GA_THREAD_CACHE_BITS 6
#define GA_BUCKET_CACHE_BITS 10

struct ga_memory {
    uint64_t t0; /* trace start (monotonic ns), set before the first event */
    /* results */
    struct ga_api_mem api[GT_API_MAX];
    struct ga_dev_mem *dev;
    size_t ndev, dev_cap;
    uint64_t alloc_count, alloc_bytes, failed_count;
    uint64_t free_count;        /* allocations released by a matched free call */
    uint64_t ctx_release_count; /* allocations released by context destroy or primary reset */
    uint64_t ctx_release_bytes;
    uint64_t unmatched_frees, failed_frees, null_frees, double_allocs;
    uint64_t live_total, peak_total, peak_ts; /* device-memory kinds, whole process */
    uint64_t pinned_live, pinned_peak, pinned_peak_ts;
    uint64_t va_live, va_peak, va_peak_ts;
    uint64_t leaked_bytes, leaked_count; /* device-memory kinds live at the end */
    uint64_t cached_bytes, cached_count; /* of those, segments a framework allocator held as its
                                          * cache (not counted in leaked_*: torch_alloc.c) */
    uint64_t vmm_maps, vmm_unmaps, vmm_failed;
    uint64_t meminfo_samples;
    uint64_t ctx_created, ctx_destroyed, primary_resets;
    struct ga_oom *ooms;
    size_t n_ooms, oom_cap;
    uint64_t ooms_dropped;
    struct ga_series_set series;
    /* peak breakdown, temporaries, OOM evidence (peak.c) */
    struct ga_peak_breakdown peak;
    struct ga_temp *temps; /* by stack, after finish sorted by bytes */
    size_t n_temps, temps_cap;
    struct ga_map temp_idx; /* stack -> index into temps */
    uint64_t temp_count, temp_bytes;
    struct ga_bucket *buckets;
    size_t n_buckets, buckets_cap;
    struct ga_map bucket_idx; /* (stack | api << 32, class | device << 8) -> index */
    /* by a hash of that key: index + 1 into buckets, 0 none */
    uint32_t bucket_cache[1u << GA_BUCKET_CACHE_BITS];
    uint64_t peak_ver, peak_seq, seq;
    struct ga_peak_alloc freed_top[GA_TOP_PEAK_ALLOCS]; /* freed since the peak, largest */
    /* temporary allocations (struct ga_temp) live at the latest peak, by stack: at most one per
     * thread can be (the thread's latest allocation); past GA_PEAK_TEMPS_MAX stacks they are
     * counted in peak_temps_dropped and not as temporaries */
    struct ga_temp peak_temps[GA_PEAK_TEMPS_MAX];
    size_t n_peak_temps;
    uint64_t peak_temps_dropped;
    size_t n_freed_top;
    struct ga_map overhead; /* device -> smallest unaccounted bytes seen (+1; 0 = none) */
    /* per thread (tid -> index in thread_idx; most records find it in thread_cache, indexed by
     * a hash of the tid: index + 1, 0 none) */
    struct ga_thread_mem *threads;
    size_t n_threads, threads_cap;
    struct ga_map thread_idx;
    uint32_t thread_cache[1u << GA_THREAD_CACHE_BITS];
    /* live state */
    struct ga_live *slab;
    size_t slab_n, slab_cap;
    uint32_t free_slot; /* head of the slab's free list */
    struct ga_map live; /* (namespace, addr) -> slab index */
    struct ga_group *groups;
    size_t n_groups, group_cap;
    struct ga_map group_of; /* (ctx, device) -> group index */
    uint64_t recent_ctx;    /* the (ctx, device) group used last, when recent_group != NONE */
    int32_t recent_device;
    uint32_t recent_group;
    struct ga_map ctx_groups;  /* (ctx, 0) -> first non-empty group of the context */
    struct ga_map dev_groups;  /* (device, 0) -> first group of the device's list */
    struct ga_map created_ctx; /* (ctx, 0): contexts made by cuCtxCreate_* */
    struct ga_map dev_idx;     /* (device, 0) -> index into dev */
    size_t dev_recent;         /* index of the device used last */
};

/* Is this kind device memory (counted in peaks and leaks)? */
static inline int ga_kind_is_device(unsigned kind)
{
    return kind < 32 && ((1u << GT_MEM_DEVICE | 1u << GT_MEM_MANAGED | 1u << GT_MEM_ASYNC |
                          1u << GT_MEM_PHYSICAL | 1u << GT_MEM_ARRAY) >>
                             kind &
                         1u);
}

void ga_memory_init(struct ga_memory *m);
/* The record types ga_memory_event looks at (bit t: type t); ga_report_event hands it no others
 * (unit_report checks that memory.c ignores the rest). */
#define GA_MEMORY_TYPES                                                                            \
    ((1ull << GT_REC_ALLOC) | (1ull << GT_REC_FREE) | (1ull << GT_REC_ALLOC_FAIL) |                \
     (1ull << GT_REC_OBJECT) | (1ull << GT_REC_VMM_MAP) | (1ull << GT_REC_MEMINFO))
void ga_memory_event(struct ga_memory *m, const struct ga_event *ev);
/* Judges every failure (ga_memory_judge with stack ids compared as call sites). */
void ga_memory_finish(struct ga_memory *m, uint64_t end_ts);
/* Picks each failure's retry among its tries (the first from the same call site: same_site(ctx,
 * stack of the failure, stack of the try) != 0; NULL: the same stack id) and gives its verdict
 * (docs/ANALYSES.md, "OOM verdicts"). Can run again once call sites are known. */
typedef int (*ga_same_site_fn)(void *ctx, uint32_t stack_a, uint32_t stack_b);
void ga_memory_judge(struct ga_memory *m, ga_same_site_fn same_site, void *ctx);
void ga_memory_free(struct ga_memory *m);
struct ga_dev_mem *ga_memory_dev(struct ga_memory *m, int32_t device);

/* ---- live table (live.c) --------------------------------------------------------------------- */
/* Adds an allocation in two steps: a free slab entry (the slab may move), which the caller
 * fills in (all but prev, next, group), then its links: its group's list and m->live. `at`: its
 * value slot in m->live, already inserted by the caller (ga_map_upsert), or NULL. */
static inline uint32_t ga_live_take(struct ga_memory *m);
void ga_live_link(struct ga_memory *m, uint32_t i, uint64_t *at);
/* Slab index of the live allocation (ns, addr), or UINT32_MAX. */
uint32_t ga_live_find(const struct ga_memory *m, unsigned ns, uint64_t addr);
/* Unlinks and forgets the allocation at slab index i (the caller did the accounting). `at`:
 * its value slot in m->live when the caller holds it, or NULL. */
void ga_live_remove(struct ga_memory *m, uint32_t i, uint64_t *at);
/* Group index of (ctx, device), or UINT32_MAX. */
uint32_t ga_group_find(const struct ga_memory *m, uint64_t ctx, int32_t device);
/* First non-empty group of the context, or UINT32_MAX. */
uint32_t ga_group_of_ctx(const struct ga_memory *m, uint64_t ctx);
/* First non-empty group on the device whose context cuCtxCreate_* did not make, or UINT32_MAX. */
uint32_t ga_group_of_primary(const struct ga_memory *m, int32_t device);
/* Records that cuCtxCreate_* made ctx (its groups leave their devices' lists). */
void ga_group_ctx_created(struct ga_memory *m, uint64_t ctx);
void ga_live_free(struct ga_memory *m);

uint32_t ga_live_grow_(struct ga_memory *m); /* ga_live_take's slow path: a new entry */
static inline uint32_t ga_live_take(struct ga_memory *m)
{
    uint32_t i = m->free_slot;
    if (i == UINT32_MAX) return ga_live_grow_(m);
    m->free_slot = m->slab[i].next;
    return i;
}

/* ---- peak.c ---------------------------------------------------------------------------------- */
/* Adds (+1) or removes (-1) a live device-memory allocation from its bucket; returns the bucket. */
void ga_peak_add(struct ga_memory *m, struct ga_live *e);
void ga_peak_sub(struct ga_memory *m, const struct ga_live *e, uint64_t free_ts);
/* The process peak just rose (e made it). */
void ga_peak_new(struct ga_memory *m, const struct ga_live *e);
/* A temporary allocation was freed (memory.c tells: the allocating thread freed it with no
 * allocation call or free of its own in between). */
void ga_peak_temp(struct ga_memory *m, const struct ga_live *e);
/* Snapshot of the holders on a device for a failed allocation. */
void ga_peak_snapshot(struct ga_memory *m, struct ga_oom *o);
void ga_peak_finish(struct ga_memory *m);
void ga_peak_free(struct ga_memory *m);

#endif
