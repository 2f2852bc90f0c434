/* Device memory as every renderer shows it: the counts, the peaks per device and kind, the
 * allocation APIs, the live-bytes series, what was live at the peak (by site, library, API, size
 * class, device, category; the largest allocations), leaks and temporaries by site, and each
 * failed allocation with its evidence, its holders, its advice already decided and PyTorch's
 * figures when its allocator raised it. Copied from the memory, sites, stacks, PyTorch and NVML
 * analyses once, at the end of the pass (ga_vmem_build), with times from the trace start and
 * names resolved. A renderer reads this and includes no analysis header. */
#ifndef GA_VIEW_MEM_H
#define GA_VIEW_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "model/view_stack.h"
#include "model/view_torch.h"

/* Bounds (docs/REPORT_JSON.md, "Bounds"): a site list keeps at most GA_VMEM_SITES sites (the
 * rest counted) whose stacks list GA_VMEM_LIST_FRAMES frames together; the sites outside lists
 * (failed allocations, their holders, the largest allocations) list GA_VMEM_LOOSE_FRAMES
 * together, spent in the JSON report's order. */
#define GA_VMEM_SITES        1000
#define GA_VMEM_LIST_FRAMES  16384
#define GA_VMEM_LOOSE_FRAMES 16384
#define GA_VMEM_NAME         64 /* an API's name: "api#N" for ids this reader does not know */
#define GA_VMEM_SPARK_COLS   60 /* columns of a device's sparkline in the text report */
#define GA_VMEM_KINDS        8  /* memory kinds (gt_mem_kind), slot 0 unused */
#define GA_VMEM_CLASSES      7  /* size classes (GA_SIZE_CLASSES) */
#define GA_VMEM_CATS         16 /* categories of the peak's chart (GA_VC_KINDS at most) */
#define GA_VMEM_OOM_HOLDERS  5  /* call sites listed per failed allocation */
#define GA_VMEM_OOM_DETAILS  3  /* failed allocations the text report explains in full */
#define GA_VMEM_ADVICE_PROCS 3  /* other processes named in the advice */

/* A call site as the memory view shows it. */
struct ga_vmem_site {
    const struct ga_vsite *site;   /* NULL: the stack has no site (only `text` then) */
    const struct ga_vstack *stack; /* its stack, NULL none */
    uint32_t frames;               /* of the stack's frames, those listed (the budget's share) */
    const char *text; /* the text report's label: the site's frame, or "<unknown stack>",
                       * "<no stack recorded>" */
};

/* One site with a weight. */
struct ga_vmem_site_amount {
    struct ga_vmem_site site;
    uint64_t bytes, count;
};

/* Sites in a ranking: at most GA_VMEM_SITES, `omitted` left out. */
struct ga_vmem_sites {
    struct ga_vmem_site_amount *v;
    size_t n;
    uint64_t omitted;
};

struct ga_vmem_peak {
    uint64_t peak;
    int64_t peak_ns; /* meaningful when peak is not 0 */
    uint64_t live;   /* at the end */
};

struct ga_vmem_kind {
    const char *name; /* "device", "async", ...; NULL: nothing of that kind */
    struct ga_vmem_peak p;
    uint64_t live_count;
};

struct ga_vmem_dev {
    int32_t device; /* -1 host memory or unknown */
    uint64_t peak_total, live_total;
    int64_t peak_total_ns;
    struct ga_vmem_kind kinds[GA_VMEM_KINDS]; /* by kind, name NULL where its peak is 0 */
    int listed; /* JSON's peak_by_device lists it (a device, or host memory with a peak) */
    /* its live device bytes over the trace in n_spark columns (the most in each), when it has a
     * peak and a series */
    uint64_t spark[GA_VMEM_SPARK_COLS];
    size_t n_spark;
};

/* An allocation or free API that was called. */
struct ga_vmem_api {
    char api[GA_VMEM_NAME];
    const char *kind, *family; /* "device", ...; "alloc", "free", "other" */
    uint64_t calls, count, bytes, failed, frees, live_count, live_bytes;
};

struct ga_vmem_series {
    int32_t device;
    const char *kind;          /* "total" or a memory kind */
    const uint64_t *max, *min; /* buckets of them (min UINT64_MAX: not reached) */
};

struct ga_vmem_amount {
    char name[GA_VMEM_NAME]; /* an API's name, a size class */
    int32_t device;
    uint64_t bytes, count;
};

struct ga_vmem_lib {
    const char *path, *name; /* NULL: an unknown library */
    uint64_t bytes, count;
};

/* One allocation live at the peak. */
struct ga_vmem_alloc {
    uint64_t addr, size;
    char api[GA_VMEM_NAME];
    int32_t device;
    int64_t ns;
    int freed;
    int64_t free_ns; /* when freed */
    struct ga_vmem_site site;
};

/* A line of the peak by category (model/view_cats.h), largest first. */
struct ga_vmem_cat {
    const char *name, *source; /* "weights", ...; "library", "snapshot", "replay" */
    int from_snapshot; /* PyTorch's segments as a snapshot or the replay split them (no count) */
    uint64_t bytes, count;
};
/* One device's PyTorch segments at the peak and what split them. */
struct ga_vmem_catsplit {
    int32_t device;
    const char *source; /* "replay", "snapshot", "library" (left whole) */
    int have_time;
    int64_t ns;                   /* the replayed moment or the snapshot */
    uint64_t reserved, allocated; /* allocated: the replay's */
};
struct ga_vmem_catpoint {
    int64_t ns;
    const char *at; /* "snapshot", "peak" */
    uint64_t total;
    uint64_t bytes[GA_VMEM_CATS]; /* by cat_names[] */
};

struct ga_vmem_peakview {
    int valid;
    int64_t ns;
    struct ga_vmem_sites by_site;
    struct ga_vmem_amount no_stack;
    struct ga_vmem_lib *libs;
    size_t n_libs;
    struct ga_vmem_amount *by_api; /* APIs with bytes or allocations live at the peak */
    size_t n_by_api;
    struct ga_vmem_amount by_class[GA_VMEM_CLASSES]; /* classes with allocations */
    size_t n_by_class;
    struct ga_vmem_amount *by_device;
    size_t n_by_device;
    struct ga_vmem_alloc *largest; /* largest first */
    size_t n_largest;
    /* by category */
    int cats_valid;
    struct ga_vmem_cat *cats;
    size_t n_cats;
    int cats_expanded; /* PyTorch's segments split by the replay or a snapshot */
    int have_cat_snapshot;
    int64_t cat_snapshot_ns;
    int have_cat_replay; /* split by the replay of its block events at its peak */
    int64_t cat_replay_ns;
    uint64_t cat_replay_allocated, cat_replay_reserved;
    uint64_t cat_snapshot_reserved, cat_pytorch_bytes, cat_temps_left;
    struct ga_vmem_catsplit *cat_splits; /* by device; none when nothing was split */
    size_t n_cat_splits;
    const char *cat_names[GA_VMEM_CATS];
    size_t n_cat_names;
    struct ga_vmem_catpoint *cat_points;
    size_t n_cat_points;
};

/* What PyTorch's caching allocator said of a failure it raised. */
struct ga_vtorch_oom {
    uint64_t requested, reserved, allocated, unallocated, device_free, device_total, limit;
    int fraction_set;
    uint32_t driver_failures;
    int have_stack;
    char *site;    /* "file:line" of the Python stack; NULL unknown */
    int have_snap; /* the snapshot was read whole: the figures below */
    uint64_t largest_fit, partly_used, partly_used_bytes, pinning_blocks, pinning_bytes;
    struct ga_vtorch_sites pinned_by;
    const char *advice;
};

struct ga_vmem_oom {
    int64_t ns;
    uint32_t tid;
    int have_api; /* 0: an allocator-level failure no driver call saw */
    char api[GA_VMEM_NAME];
    int32_t result, device;
    int out_of_memory; /* result is CUDA_ERROR_OUT_OF_MEMORY */
    uint64_t requested, free_bytes, total_bytes, held, unaccounted, overhead, others;
    const char *verdict;
    int have_pools;
    uint64_t pools, reserved_unused, largest_free, pool;
    const char *pool_name;
    int retry; /* 0 none, 1 succeeded, 2 failed */
    const char *retry_name;
    uint64_t freed_before_retry, freed_count, retry_size;
    int64_t retry_ns;
    char *advice;
    struct ga_vmem_site site;
    struct ga_vmem_site_amount holders[GA_VMEM_OOM_HOLDERS]; /* by site, largest first */
    size_t n_holders;
    int have_holders;     /* 0: no snapshot was kept for this failure */
    int64_t repeat_of;    /* the failure this one repeats, -1 none: explained once */
    int allocator_cached; /* a driver failure PyTorch's allocator resolved from its cache */
    const struct ga_vtorch_oom *torch; /* NULL: a driver failure */
};

struct ga_vmem {
    uint64_t alloc_count, alloc_bytes, free_count, failed_count;
    uint64_t ctx_release_count, ctx_release_bytes;
    uint64_t peak_total, leaked_bytes, leaked_count, cached_bytes, cached_count;
    int64_t peak_ns;
    struct ga_vmem_peak pinned, va;
    uint64_t unmatched_frees, failed_frees, null_frees, double_allocs, meminfo_samples;
    uint64_t vmm_maps, vmm_unmaps, vmm_failed, ctx_created, ctx_destroyed, primary_resets;
    struct ga_vmem_dev *devs;
    size_t n_devs;
    struct ga_vmem_api *apis;
    size_t n_apis;
    uint64_t series_bucket_ns;
    size_t series_buckets;
    struct ga_vmem_series *series;
    size_t n_series;
    struct ga_vmem_peakview peak;
    uint64_t temp_count, temp_bytes;
    const char *temps_most_from; /* the text label of the top temporaries' site, NULL none */
    struct ga_vmem_sites leaks, temporaries;
    struct ga_vmem_oom *ooms;
    size_t n_ooms;
    uint64_t ooms_omitted;
    size_t *explained; /* the failures the text report explains in full (indices into ooms) */
    size_t n_explained;
    struct ga_vtorch_oom *torch_ooms;
    size_t n_torch_ooms;
};

struct ga_report;
/* After every analysis finished and the views of model/views.h and view_cats.h were built. */
void ga_vmem_build(struct ga_vmem *v, struct ga_report *r);
void ga_vmem_free(struct ga_vmem *v);

#endif
