/* PyTorch's caching allocator from inside (the bridge's records, trace_format.h "framework
 * allocators"): the second level of memory (blocks inside the driver segments), its
 * fragmentation over time, the allocator-level peak, and out-of-memory errors raised by the
 * allocator, judged on the block level and merged with the driver failures PyTorch retried.
 * State: the snapshot being read (its segments and blocks), one summary per snapshot kept in the
 * series (bounded), interned frames and stacks. */
#ifndef GA_TORCH_ALLOC_H
#define GA_TORCH_ALLOC_H

#include <stdint.h>

#include "base/hashmap.h"
#include "analyses/memory.h"
#include "input/records.h"

#define GA_TORCH_SERIES_MAX 2048 /* points per device; past it every other one is dropped */
#define GA_TORCH_SITES_MAX  16   /* Python sites kept per breakdown */
#define GA_TORCH_OOMS_MAX   1000 /* allocator OOMs kept in detail */

const char *ga_torch_why_name(unsigned why);
const char *ga_torch_state_name(unsigned state);

/* Fragmentation of one device's segments at one moment (a stats sample or a snapshot). Fields a
 * stats sample cannot know (largest_free, partly_used) are UINT64_MAX then. */
struct ga_torch_frag {
    uint64_t ts;
    uint64_t reserved, allocated, free_in_segments, inactive_split;
    uint64_t largest_free;                  /* the largest inactive block, any pool */
    uint64_t largest_free_large;            /* ... of large-pool segments */
    uint64_t largest_free_small;            /* ... of small-pool segments (2 MiB segments) */
    uint64_t partly_used;                   /* segments holding both live and free blocks */
    uint64_t partly_used_bytes;             /* their total size */
    uint64_t pinning_blocks, pinning_bytes; /* the live blocks in those segments */
    uint64_t segments;
};

/* Where a site comes from. Blocks carry Python frames only when history is recorded
 * (GPUTRACE_TORCH=history or the program's own); without them a block is attributed to the code
 * that allocated its segment: the driver allocation at the segment's address (the first block
 * of a segment caused it; later blocks split from it may come from other lines). */
enum ga_torch_site_source {
    GA_TORCH_SITE_NONE,    /* neither: no frames, no driver allocation found for the segment */
    GA_TORCH_SITE_BLOCK,   /* the block's own Python stack (history) */
    GA_TORCH_SITE_SEGMENT, /* the call site of its segment's driver allocation */
};
const char *ga_torch_site_source_name(enum ga_torch_site_source s);

struct ga_site;
struct ga_sites;
struct ga_stacks;

/* Bytes held by one Python site (the innermost frame outside torch, or the stack's innermost),
 * or, for blocks without frames, by the call site that allocated their segments. */
struct ga_torch_site {
    uint32_t stack;     /* gt_rec_torch_stack id; 0: blocks without frames */
    uint32_t seg_stack; /* when stack is 0: host stack of the segment's driver allocation, 0 none */
    const struct ga_site *seg_site; /* its call site (ga_torch_attribute), NULL unknown */
    uint64_t bytes, count;
    enum ga_torch_site_source source;
};

struct ga_torch_sites {
    struct ga_torch_site s[GA_TORCH_SITES_MAX];
    size_t n;
    uint64_t other_bytes, other_count; /* sites past the first GA_TORCH_SITES_MAX */
    uint64_t total;                    /* bytes of all live blocks counted */
};

enum ga_torch_verdict {
    GA_TORCH_FRAGMENTATION,   /* free memory inside segments (and device) >= R, no block of R */
    GA_TORCH_CACHED,          /* a driver failure PyTorch resolved by releasing its cache */
    GA_TORCH_EXHAUSTED,       /* live tensors hold the memory */
    GA_TORCH_LIMIT,           /* a memory fraction (set_per_process_memory_fraction) refused it */
    GA_TORCH_OTHER_PROCESSES, /* other processes hold what would have made room */
};
const char *ga_torch_verdict_name(enum ga_torch_verdict v);
const char *ga_torch_verdict_advice(enum ga_torch_verdict v);

struct ga_torch_oom {
    uint64_t ts;
    uint32_t tid;
    int32_t device;
    uint64_t requested, limit, device_free, device_total, allocated, reserved;
    int fraction_set;
    uint32_t stack;                /* Python stack of the allocation (torch stack id), 0 none */
    uint32_t snap;                 /* its snapshot's id, 0 none */
    int have_snap;                 /* the snapshot was read whole */
    struct ga_torch_frag frag;     /* at the OOM (from the snapshot when have_snap) */
    uint64_t largest_fit;          /* the largest free block of the request's pool */
    struct ga_torch_sites pinning; /* Python sites of the live blocks in partly used segments */
    uint32_t driver_failures;      /* driver failures merged into it */
    enum ga_torch_verdict verdict;
};

struct ga_torch_dev {
    int32_t device;
    uint64_t peak_allocated, peak_reserved; /* max_memory_allocated / max_memory_reserved */
    uint64_t peak_allocated_ts;             /* the sample that first showed that peak */
    struct ga_torch_frag *series;           /* stats samples and snapshots, in time order */
    size_t n_series, series_cap;
    uint32_t series_stride; /* keep one point in stride (doubles when the series is full) */
    uint64_t series_seen;
    struct ga_torch_frag at_peak; /* the snapshot with the most allocated bytes */
    int have_at_peak;
    struct ga_torch_sites peak_sites; /* the live blocks of that snapshot, by Python site */
    uint64_t cached_at_exit;          /* reserved at the exit sample */
    uint64_t allocated_at_exit;
    int have_exit;
};

struct ga_torch_blk {
    uint64_t addr, size, requested; /* requested: before rounding, 0 unknown */
    uint32_t stack;
    uint8_t state;
};
struct ga_torch_seg {
    uint64_t addr, size;
    int32_t device;
    uint8_t small, expandable;
    uint32_t first, n; /* its blocks in the snapshot's block array */
};

struct ga_torch_frame {
    char *file, *name;
    uint32_t line;
};

struct ga_torch {
    int present; /* the trace has bridge records */
    /* The memory analysis, read at each snapshot for its segments' driver allocations (set by
     * the report; NULL: blocks without frames stay unattributed). */
    const struct ga_memory *mem;
    uint32_t history_flags, snapshot_flags;
    uint64_t snapshots, incomplete_snapshots;
    struct ga_torch_dev *devs;
    size_t n_devs, devs_cap;
    struct ga_torch_oom *ooms;
    size_t n_ooms, ooms_cap;
    uint64_t ooms_dropped;
    /* the snapshot being read */
    uint32_t cur_snap, cur_why;
    int in_snap;
    struct ga_torch_seg *segs;
    size_t n_segs, segs_cap;
    struct ga_torch_blk *blks;
    size_t n_blks, blks_cap;
    /* interning */
    struct ga_map frame_idx; /* id -> index + 1 into frames */
    struct ga_torch_frame *frames;
    size_t n_frames, frames_cap;
    struct ga_map stack_idx; /* id -> index + 1 into stack_frames (first) | count << 32 */
    uint32_t *stack_frames;
    size_t n_stack_frames, stack_frames_cap;
    struct ga_map vmm; /* mapped VA -> physical handle (cuMemMap until cuMemUnmap) */
    /* the segments of the latest exit snapshot (device, addr) */
    struct ga_torch_seg *exit_segs;
    size_t n_exit_segs, exit_segs_cap;
};

void ga_torch_init(struct ga_torch *t);
void ga_torch_event_(struct ga_torch *t, const struct ga_event *ev);
/* Takes the bridge's records and the VMM maps (expandable segments' physical memory). */
static inline void ga_torch_event(struct ga_torch *t, const struct ga_event *ev)
{
    if ((unsigned)(ev->type - GT_REC_TORCH_STATS) <= GT_REC_TORCH_OOM - GT_REC_TORCH_STATS ||
        ev->type == GT_REC_VMM_MAP)
        ga_torch_event_(t, ev);
}
/* The driver allocations PyTorch's exit snapshot names as its segments: marked cached and taken
 * out of m->leaked_* (after ga_memory_finish, before the leaks are grouped by site). */
void ga_torch_cached_at_exit(const struct ga_torch *t, struct ga_memory *m);
/* After the driver failures' verdicts (ga_memory_judge): judges the allocator OOMs and folds
 * them into m->ooms: the driver failures PyTorch retried
 * are merged into the allocator's OOM (one OOM, not two or more); a driver failure PyTorch
 * resolved by releasing its cache becomes verdict cached. */
void ga_torch_finish(struct ga_torch *t, struct ga_memory *m);
void ga_torch_free(struct ga_torch *t);
/* After ga_sites_finish: the segments' driver stacks become call sites, and the sites of blocks
 * without frames whose segments share a call site are merged (largest first again). */
void ga_torch_attribute(struct ga_torch *t, const struct ga_sites *sites);
/* The label of one entry of a breakdown: "file:line (function)" of the block's stack, the
 * segment call site's "function (file:line)", or NULL when neither is known. */
const char *ga_torch_entry_label(const struct ga_torch *t, const struct ga_stacks *st,
                                 const struct ga_torch_site *s, char *buf, size_t n);

/* "file:line" of the stack's site (innermost frame outside torch's own files); NULL when the
 * stack is unknown. Written into buf. */
const char *ga_torch_site_label(const struct ga_torch *t, uint32_t stack, char *buf, size_t n);
/* The stack's frames as recorded (innermost first), at most max; 0 when the stack is unknown. */
size_t ga_torch_stack_frames(const struct ga_torch *t, uint32_t stack,
                             const struct ga_torch_frame **out, size_t max);
const struct ga_torch_dev *ga_torch_dev_of(const struct ga_torch *t, int32_t device);

#endif
