/* The second level of memory: pools and their fragmentation (docs/ANALYSES.md, "Pools and
 * fragmentation"). Three sources make pools:
 *   - annotated pools (GT_REC_POOL / GT_REC_BLOCK from include/gputrace/annotate.h): ranges
 *     owned, blocks in use, exact free extents; every record is validated, never trusted;
 *   - CUDA stream-ordered pools (cuMemPoolCreate, cuMemAllocAsync / cuMemAllocFromPoolAsync,
 *     GT_REC_POOL_USAGE samples): reserved and used bytes, layout unknown;
 *   - VMM (cuMemAddressReserve / cuMemCreate / cuMemMap / cuMemUnmap): each reserved VA range is
 *     a pool whose "used" bytes are the mapped ones; physical handles are counted per device.
 * Per pool and per device: reserved, used, free = reserved - used, free extents, largest free
 * extent, external fragmentation = 1 - largest / free; as a bounded time series, at the process
 * peak and at every failed allocation, with the address map of a pool at those moments.
 * Memory is bounded by live state: pools past GA_POOLS_MAX, series past GA_FRAG_SERIES_MAX and
 * failures past GA_POOL_FAILURES_MAX are counted, not kept. */
#ifndef GA_POOLS_H
#define GA_POOLS_H

#include <stdint.h>

#include "analyses/extents.h"
#include "base/hashmap.h"
#include "input/records.h"

struct ga_memory;

#define GA_POOLS_MAX         4096 /* pools kept (live or gone); later ones are counted only */
#define GA_POOL_DEVICES_MAX  64   /* devices with per-device pool figures */
#define GA_FRAG_BUCKETS      256
#define GA_FRAG_SERIES_MAX   128  /* per-pool series kept (the first pools); devices always */
#define GA_POOL_MAP_MAX      64   /* extents in one address map; longer maps are cut and say so */
#define GA_POOL_FAILURES_MAX 1000 /* failed allocations / block fails kept in detail */
#define GA_FAIL_POOLS_MAX    8    /* pools listed per failed allocation */

enum ga_pool_kind { GA_POOL_ANNOTATED = 1, GA_POOL_STREAM = 2, GA_POOL_VMM = 3 };
const char *ga_pool_kind_name(unsigned kind); /* "annotated", "stream_ordered", "vmm" */

/* Annotation errors: records that contradict the pool's state (counted, then handled as the
 * rule in ANALYSES.md says). */
enum ga_pool_err {
    GA_PERR_UNKNOWN_POOL,   /* a record for a pool id never created (the pool is made) */
    GA_PERR_DUP_CREATE,     /* create of a live pool id (the old pool ends) */
    GA_PERR_BAD_RANGE,      /* size 0, or the range wraps past 2^64 (ignored) */
    GA_PERR_RANGE_OVERLAP,  /* add_range overlapping memory the pool owns (ignored) */
    GA_PERR_RANGE_UNKNOWN,  /* remove_range of memory the pool does not own (the owned part goes) */
    GA_PERR_BLOCK_OUTSIDE,  /* block not inside one range of its pool (ignored) */
    GA_PERR_BLOCK_OVERLAP,  /* block overlapping a live block (ignored) */
    GA_PERR_DOUBLE_FREE,    /* free of an address with no live block (ignored) */
    GA_PERR_SIZE_MISMATCH,  /* free with a size other than the block's (the block is freed) */
    GA_PERR_BLOCK_IN_RANGE, /* remove_range / destroy with blocks still live (they go with it) */
    GA_PERR_COUNT
};
const char *ga_pool_err_name(unsigned e); /* "unknown_pool", ... */

/* A pool's (or a device's) figures at one moment. */
struct ga_frag {
    uint64_t reserved, used, free; /* free = reserved - used */
    uint64_t extents;              /* free extents (0 with free > 0: layout unknown) */
    uint64_t largest;              /* largest free extent = largest request that still fits */
    uint8_t layout_known;          /* extents and largest are exact */
};
/* 1 - largest / free; 0 when nothing is free; -1 when the layout is unknown. */
double ga_frag_ratio(const struct ga_frag *f);

struct ga_map_ext {
    uint64_t addr, size;
    uint8_t used; /* 1 used (blocks / mapped), 0 free (free / unmapped) */
};
/* A pool's address map at one moment, in address order, at most GA_POOL_MAP_MAX extents. */
struct ga_pool_map {
    struct ga_map_ext *ext;
    uint32_t n;
    uint8_t truncated; /* the pool had more extents than kept */
};

struct ga_fbucket {
    uint64_t reserved_max, used_max;
    /* the bucket's worst moment: most free bytes outside the largest free extent */
    uint64_t free, largest, extents;
};
struct ga_fseries {
    uint64_t width;   /* ns per bucket */
    int64_t last_idx; /* -1 before the first update */
    struct ga_frag last;
    struct ga_fbucket b[GA_FRAG_BUCKETS];
};

struct ga_pool {
    uint8_t kind; /* enum ga_pool_kind */
    uint8_t live;
    int32_t device; /* -1 unknown */
    uint64_t id;    /* annotation pool id, CUmemoryPool (0: a device's current pool), VA base */
    char *name;
    uint64_t created_ts, destroyed_ts; /* destroyed_ts 0: live at the end */
    struct ga_frag now;
    uint64_t peak_reserved, peak_reserved_ts, peak_used, peak_used_ts;
    struct ga_frag worst; /* most free bytes outside the largest extent (first such moment) */
    uint64_t worst_ts;
    int have_worst;
    struct ga_frag at_peak; /* at the process peak (valid when have_at_peak) */
    int have_at_peak;
    struct ga_pool_map map_at_peak;
    uint64_t snap_ver; /* the peak version at_peak belongs to (see ga_pools.peak_ver) */
    /* annotated: ranges owned, free extents (live blocks are in ga_pools.blocks). VMM:
     * ranges = the reservation, freex = unmapped parts. Freed when the pool ends. */
    struct ga_extents ranges, freex;
    uint64_t live_blocks;
    uint64_t block_allocs, block_frees, block_fails;
    uint64_t errors[GA_PERR_COUNT];
    /* stream-ordered: live allocations from records, the last driver sample */
    uint64_t live_bytes, live_count, samples;
    uint64_t sample_used, sample_live, reserved_high, used_high;
    uint64_t sample_reserved; /* the last sample's, raised to `used` when that passes it */
    int32_t series;           /* index into ga_pools.pool_series, -1 none */
    int32_t heap_pos;         /* annotated: its place in its device's heap, -1 none */
};

/* A GT_BLOCK_FAIL: a pool could not serve a request. */
enum ga_pool_verdict {
    GA_PV_FRAGMENTATION, /* free >= request > largest free extent */
    GA_PV_EXHAUSTED,     /* free < request */
    GA_PV_UNEXPLAINED,   /* a free extent >= request existed (alignment, size classes, or
                          * blocks the annotations did not describe) */
};
const char *ga_pool_verdict_name(unsigned v);

struct ga_pool_oom {
    uint64_t ts;
    uint32_t pool; /* index into ga_pools.pools */
    uint32_t stack;
    uint64_t request;
    struct ga_frag f;
    uint8_t verdict; /* enum ga_pool_verdict */
    struct ga_pool_map map;
};

/* What the pools of one device held at a failed allocation (the OOM verdict's evidence). */
struct ga_pool_evidence {
    uint64_t reserved_unused; /* U: reserved but unused bytes in this process's pools on the
                               * device: annotated and stream-ordered free bytes, plus VMM
                               * physical memory created but not mapped */
    uint64_t largest_free;    /* F: largest free extent of an annotated pool there; memory of
                               * unknown layout (a stream-ordered pool's free bytes, the
                               * unmapped VMM handles) counts as one extent per stream-ordered
                               * pool and one for the device's VMM handles: the driver can
                               * trim / release it and hand it out whole; 0 none */
    uint32_t pools;           /* live pools on the device (VMM ranges included) */
    uint64_t unused_annotated, unused_stream, unused_vmm; /* U by source */
    uint64_t unused_layout_unknown; /* part of U whose extents are unknown (stream, VMM) */
    /* the pool with the largest unused bytes (ties: the first), none when pool_index < 0 */
    int32_t pool_index;
    uint64_t pool_id;
    const char *pool_name; /* owned by the pools analysis */
    uint8_t pool_kind;
    uint64_t pool_unused;
};

/* A failed allocation of device memory, with the pools of its device at that moment. */
struct ga_pool_failure {
    uint64_t ts;
    int32_t device;
    uint16_t api;
    uint64_t request;
    struct ga_pool_evidence ev;
    uint32_t pool_idx[GA_FAIL_POOLS_MAX]; /* pools of the device, largest unused first */
    struct ga_frag pool_f[GA_FAIL_POOLS_MAX];
    uint32_t n_pools;
    struct ga_pool_map map; /* of the pool with the most unused bytes (layout known) */
};

/* Per device: the sums of its pools, VMM physical memory, and a series. */
struct ga_pool_dev {
    int32_t device;
    struct ga_frag now; /* the sums of its annotated pools (layout known; largest: the max) */
    uint64_t stream_reserved, stream_used; /* the sums of its stream-ordered pools */
    uint64_t phys_created, phys_unused;    /* VMM: live cuMemCreate bytes; of them not mapped */
    uint32_t *heap; /* its live annotated pools, a max-heap by largest free extent */
    size_t heap_n, heap_cap;
    struct ga_frag at_peak;
    uint64_t stream_reserved_at_peak, stream_used_at_peak, phys_unused_at_peak;
    int have_at_peak;
    uint64_t snap_ver;
    struct ga_frag worst;
    uint64_t worst_ts;
    int have_worst;
    struct ga_fseries series;
};

/* A live stream-ordered allocation, VMM mapping or VMM physical handle. */
struct ga_pool_item {
    uint64_t size;
    uint64_t other; /* mapping: its handle; handle: bytes mapped from it */
    uint32_t pool;  /* async allocation / mapping: the pool index */
    int32_t device; /* handle: its device */
    uint8_t released;
};

struct ga_pools {
    const struct ga_memory *mem; /* the driver-level analysis (process peak), may be NULL */
    uint64_t t0;                 /* trace start; set by the caller before the first event */
    struct ga_pool *pools;
    size_t n, cap;
    struct ga_map live_idx; /* (kind key, id) -> index of the live pool */
    struct ga_pool_dev *devs;
    size_t ndev, dev_cap;
    struct ga_map dev_idx;
    struct ga_fseries *pool_series;
    size_t n_series, series_cap;
    struct ga_extents vmm_ranges; /* reserved VA ranges of live VMM pools (map use) */
    struct ga_pool_item *items;
    size_t n_items, items_cap;
    uint32_t free_item;
    struct ga_map item_idx; /* (item key, addr or handle) -> item index */
    struct ga_map blocks;   /* live blocks of annotated pools: (pool index, addr) -> size */
    struct ga_map current;  /* device -> index of its current stream-ordered pool, once known */
    /* results */
    uint64_t pools_untracked;   /* pools past GA_POOLS_MAX (their records are ignored) */
    uint64_t records_untracked; /* records of those pools */
    uint64_t errors[GA_PERR_COUNT];
    uint64_t vmm_unmatched;   /* maps/unmaps outside any known reservation, unknown handles */
    struct ga_pool_oom *ooms; /* block fails, first GA_POOL_FAILURES_MAX */
    size_t n_ooms, oom_cap;
    uint64_t ooms_dropped;
    struct ga_pool_failure *fails; /* failed device allocations, first GA_POOL_FAILURES_MAX */
    size_t n_fails, fail_cap;
    uint64_t fails_dropped;
    uint64_t peak_seen, peak_ts; /* the process peak the at_peak figures belong to */
    /* Counts new process peaks. A pool or device about to change saves its figures as at_peak
     * unless it did so since the latest peak (snap_ver == peak_ver): what it saves is unchanged
     * since that peak. ga_pools_finish fills in the ones untouched since. O(1) per change. */
    uint64_t peak_ver;
    /* after finish: a common series width and bucket count */
    uint64_t width;
    size_t buckets;
};

void ga_pools_init(struct ga_pools *p);
/* The records pools follow; every other one (launches, most of a trace) only reaches the
 * peak check. */
#define GA_POOLS_TYPES                                                                             \
    (1ull << GT_REC_POOL | 1ull << GT_REC_BLOCK | 1ull << GT_REC_POOL_USAGE |                      \
     1ull << GT_REC_ALLOC | 1ull << GT_REC_FREE | 1ull << GT_REC_VMM_MAP | 1ull << GT_REC_OBJECT | \
     1ull << GT_REC_ALLOC_FAIL)
void ga_pools_event(struct ga_pools *p, const struct ga_event *ev);
/* ga_pools_event for a record known to be an ALLOC, a FREE, or of a type outside GA_POOLS_TYPES
 * (only the check for a new process peak): no test of the type. */
void ga_pools_alloc_event(struct ga_pools *p, const struct ga_event *ev);
void ga_pools_free_event(struct ga_pools *p, const struct ga_event *ev);
void ga_pools_tick(struct ga_pools *p);
void ga_pools_finish(struct ga_pools *p, uint64_t end_ts);
void ga_pools_free(struct ga_pools *p);

/* The pools' evidence for a failed allocation of `request` bytes on `device`, as they stand
 * (call it while handling the failure's record). */
void ga_pools_oom_evidence(const struct ga_pools *p, int32_t device, uint64_t request,
                           struct ga_pool_evidence *ev);

/* The series of pool index i, or NULL (not kept). */
const struct ga_fseries *ga_pools_series(const struct ga_pools *p, size_t i);

#endif
