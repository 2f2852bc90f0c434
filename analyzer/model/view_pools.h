/* The pools and their fragmentation as every renderer shows them (the text report's pool lines,
 * JSON's memory.fragmentation): the pools analysis's results copied into the model's own structs
 * once, at the end of the pass, with times from the trace start, names resolved and the pools
 * ranked. A renderer reads this and includes no analysis header. Memory: the analysis's kept
 * results again (pools, maps, series and failures are bounded there). */
#ifndef GA_VIEW_POOLS_H
#define GA_VIEW_POOLS_H

#include <stddef.h>
#include <stdint.h>

#define GA_VPOOL_ERRORS     10  /* annotation error kinds (the analysis's GA_PERR_COUNT) */
#define GA_VPOOL_FAIL_POOLS 8   /* pools listed per failed allocation (GA_FAIL_POOLS_MAX) */

enum ga_vpool_kind { GA_VPOOL_ANNOTATED = 1, GA_VPOOL_STREAM = 2, GA_VPOOL_VMM = 3 };

/* A pool's (or a device's) figures at one moment; extents, largest and ratio mean something
 * only when layout_known. ratio: 1 - largest / free (0 when nothing is free), -1 unknown. */
struct ga_vfrag {
    uint64_t reserved, used, free, extents, largest;
    int layout_known;
    double ratio;
};

/* An address map in address order; ext NULL: none. */
struct ga_vext {
    uint64_t addr, size;
    int used;
};
struct ga_vmap {
    struct ga_vext *ext;
    uint32_t n;
    int truncated; /* the pool had more extents than kept */
};

/* One bucket of a fragmentation series (its worst moment: most free bytes outside the largest
 * free extent). */
struct ga_vbucket {
    uint64_t reserved_max, used_max, free, largest, extents;
};

struct ga_vpool {
    unsigned kind;         /* enum ga_vpool_kind */
    const char *kind_name; /* "annotated", "stream_ordered", "vmm" */
    uint64_t id;
    const char *name;
    int32_t device; /* -1 unknown */
    int64_t created_ns, destroyed_ns; /* destroyed_ns: live 0 */
    int live;
    struct ga_vfrag now;
    uint64_t peak_reserved, peak_used;
    int64_t peak_reserved_ns, peak_used_ns; /* meaningful when the peak is not 0 */
    struct ga_vfrag at_peak; /* at the process peak, when have_at_peak */
    int have_at_peak;
    struct ga_vmap map_at_peak;
    struct ga_vfrag worst; /* most free bytes outside the largest extent, when have_worst */
    int have_worst;
    int64_t worst_ns;
    /* annotated */
    uint64_t block_allocs, block_frees, block_fails, live_blocks;
    uint64_t errors[GA_VPOOL_ERRORS];
    /* stream-ordered */
    uint64_t samples, live_bytes, live_count, reserved_high, used_high;
    const struct ga_vbucket *series; /* pools.buckets buckets; NULL: not kept */
};

struct ga_vpool_dev {
    int32_t device;
    struct ga_vfrag now; /* the sums of its annotated pools */
    struct ga_vfrag at_peak;
    int have_at_peak;
    uint64_t stream_reserved_at_peak, stream_used_at_peak, phys_unused_at_peak;
    struct ga_vfrag worst;
    int have_worst;
    int64_t worst_ns;
    uint64_t stream_reserved, stream_used, phys_created, phys_unused;
    const struct ga_vbucket *series; /* pools.buckets buckets */
};

/* A pool could not serve a request (an annotated block fail). */
struct ga_vpool_oom {
    int64_t ns;
    uint32_t pool; /* index into pools */
    uint64_t request;
    struct ga_vfrag f;
    const char *verdict; /* "fragmentation", "exhausted", "unexplained" */
    struct ga_vmap map;
};

/* A failed allocation of device memory, with the pools of its device at that moment. */
struct ga_vpool_failure {
    int64_t ns;
    int32_t device;
    char api[64]; /* the API's name, "api#N" for ids this reader does not know */
    uint64_t request, reserved_unused, largest_free, unused_layout_unknown;
    uint32_t pool[GA_VPOOL_FAIL_POOLS]; /* pools of the device, largest unused first */
    struct ga_vfrag pool_f[GA_VPOOL_FAIL_POOLS];
    uint32_t n_pools;
    int32_t map_pool; /* the pool of map, -1 none */
    struct ga_vmap map;
};

struct ga_vpools {
    struct ga_vpool *pools; /* in the analysis's order (JSON's indices) */
    size_t n;
    uint32_t *order; /* indices into pools, most peak reserved bytes first */
    uint64_t pools_untracked;
    struct ga_vpool_dev *devs;
    size_t ndev;
    uint64_t bucket_ns; /* the series' common bucket width and count */
    size_t buckets;
    struct ga_vpool_oom *ooms;
    size_t n_ooms;
    uint64_t ooms_omitted;
    struct ga_vpool_failure *fails;
    size_t n_fails;
    uint64_t fails_omitted;
    uint64_t errors[GA_VPOOL_ERRORS]; /* annotation errors of all pools */
    const char *error_names[GA_VPOOL_ERRORS]; /* "unknown_pool", ... */
    uint64_t vmm_unmatched;
};

struct ga_pools;
/* t0: the trace start (the times' origin). */
void ga_vpools_build(struct ga_vpools *v, const struct ga_pools *p, uint64_t t0);
void ga_vpools_free(struct ga_vpools *v);

#endif
