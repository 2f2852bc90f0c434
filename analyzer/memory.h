/* Memory analysis: live allocations, per-API counts, exact peaks, leaks, failed allocations with
 * their OOM verdict, context teardown. State is linear in live allocations: hash maps only. */
#ifndef GA_MEMORY_H
#define GA_MEMORY_H

#include <stdint.h>

#include "gputrace/trace_api.h"
#include "hashmap.h"
#include "records.h"
#include "series.h"

#define GA_MAX_OOMS                 10000 /* failed allocations kept in detail; the rest are only counted */
#define GA_CUDA_ERROR_OUT_OF_MEMORY 2

enum ga_verdict {
    GA_VERDICT_FRAGMENTATION,   /* free memory D >= request R, yet the allocation failed */
    GA_VERDICT_OTHER_PROCESSES, /* unaccounted >= R and unaccounted > this process's H */
    GA_VERDICT_EXHAUSTED,       /* neither: this process holds the memory */
    GA_VERDICT_UNKNOWN,         /* no cuMemGetInfo figures (total 0) */
    GA_VERDICT_OTHER_ERROR,     /* the call failed with something else than out-of-memory */
};
const char *ga_verdict_name(enum ga_verdict v);

struct ga_oom {
    uint64_t ts;
    uint32_t tid;
    uint16_t api;
    int32_t device;
    int32_t result;
    uint64_t requested, free_bytes, total_bytes, held, unaccounted;
    enum ga_verdict verdict;
};

struct ga_api_mem {
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
};

/* One live allocation; lives in a slab, chained into the list of its (ctx, device) group. */
struct ga_live {
    uint64_t addr, size, ctx, ts;
    int32_t device;
    uint16_t api;
    uint8_t kind, ns;
    uint32_t prev, next, group; /* slab indices; UINT32_MAX = none */
    uint32_t stack;             /* host call stack (trace node id), 0 none: leaks by site */
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
    uint64_t vmm_maps, vmm_unmaps, vmm_failed;
    uint64_t meminfo_samples;
    uint64_t ctx_created, ctx_destroyed, primary_resets;
    struct ga_oom *ooms;
    size_t n_ooms, oom_cap;
    uint64_t ooms_dropped;
    struct ga_series_set series;
    /* live state */
    struct ga_live *slab;
    size_t slab_n, slab_cap;
    uint32_t free_slot; /* head of the slab's free list */
    struct ga_map live; /* (namespace, addr) -> slab index */
    struct ga_group *groups;
    size_t n_groups, group_cap;
    struct ga_map group_of;    /* (ctx, device) -> group index */
    struct ga_map ctx_groups;  /* (ctx, 0) -> first non-empty group of the context */
    struct ga_map dev_groups;  /* (device, 0) -> first group of the device's list */
    struct ga_map created_ctx; /* (ctx, 0): contexts made by cuCtxCreate_* */
    struct ga_map dev_idx;     /* (device, 0) -> index into dev */
    size_t dev_recent;         /* index of the device used last */
};

/* Is this kind device memory (counted in peaks and leaks)? */
int ga_kind_is_device(unsigned kind);

void ga_memory_init(struct ga_memory *m);
void ga_memory_event(struct ga_memory *m, const struct ga_event *ev);
void ga_memory_finish(struct ga_memory *m, uint64_t end_ts);
void ga_memory_free(struct ga_memory *m);
struct ga_dev_mem *ga_memory_dev(struct ga_memory *m, int32_t device);

/* ---- live table (live.c) --------------------------------------------------------------------- */
/* Adds an allocation; returns its slab index. */
uint32_t ga_live_add(struct ga_memory *m, const struct ga_live *a);
/* Slab index of the live allocation (ns, addr), or UINT32_MAX. */
uint32_t ga_live_find(const struct ga_memory *m, unsigned ns, uint64_t addr);
/* Unlinks and forgets the allocation at slab index i (the caller did the accounting). */
void ga_live_remove(struct ga_memory *m, uint32_t i);
/* Group index of (ctx, device), or UINT32_MAX. */
uint32_t ga_group_find(const struct ga_memory *m, uint64_t ctx, int32_t device);
/* First non-empty group of the context, or UINT32_MAX. */
uint32_t ga_group_of_ctx(const struct ga_memory *m, uint64_t ctx);
/* First non-empty group on the device whose context cuCtxCreate_* did not make, or UINT32_MAX. */
uint32_t ga_group_of_primary(const struct ga_memory *m, int32_t device);
/* Records that cuCtxCreate_* made ctx (its groups leave their devices' lists). */
void ga_group_ctx_created(struct ga_memory *m, uint64_t ctx);
void ga_live_free(struct ga_memory *m);

#endif
