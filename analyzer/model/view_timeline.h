/* The page's timeline (a report-model view for --html): the whole run within a fixed budget,
 * whatever the trace's size.
 *
 * - Busy time per lane (a device's stream) in GA_TLV_COLS columns over the whole run: the overview
 *   and the first 16 zoom steps are drawn from them, exact to the nanosecond per column.
 * - Exact detail in GA_TLV_SLOTS windows spread evenly over the run, GA_TLV_DETAIL activities in
 *   all: a window keeps the activities that start in it while it holds fewer than `cap`, and says
 *   from when on it lost some (`cut`: every activity starting in [window start, cut) is kept).
 *   `cap` starts at the whole budget, so a trace of at most GA_TLV_DETAIL activities is kept
 *   whole; when the budget is spent, cap halves (down to GA_TLV_SLOT_ACTS, the budget shared
 *   evenly) and the windows over it drop their latest activities: the budget goes to the windows
 *   with the fewest, as water fills. When windows merge, the cap doubles.
 * - The GA_TLV_LONGEST longest activities, the GA_TLV_GAPS longest idle gaps (all gaps at least as
 *   long as the shortest kept) and the GA_TLV_HOST longest host blocking and allocation calls.
 *
 * Columns and windows share one time grid from the trace start: a column is GA_TLV_BASE_NS << shift
 * long, a window GA_TLV_SLOT_COLS columns; when time runs past the grid, neighbours merge and the
 * width doubles (as the memory series do). A lane's busy time is kept as partial columns plus a
 * difference array of whole columns, so a long activity costs two updates, not one per column.
 * Cost per activity: a lane lookup (the last lane is cached), the busy update, a window append or
 * a drop, a heap comparison (and, each time the budget is spent, one pass over the kept ones).
 * Memory: 256 KiB per lane (at most GA_TLV_LANES), the windows' activities (at most 3 MiB), the
 * heaps. */
#ifndef GA_VIEW_TIMELINE_H
#define GA_VIEW_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/gaps.h"
#include "analyses/gpu.h"
#include "base/hashmap.h"
#include "input/records.h"
#include "analyses/timeline.h"
#include "model/view_tlv.h"


struct ga_tlv {
    uint64_t origin;      /* CLOCK_MONOTONIC ns of the trace start */
    const uint64_t *hdr0; /* the header's start_monotonic_ns, read at the first activity */
    int started;
    uint32_t shift;   /* column width: GA_TLV_BASE_NS << shift */
    uint64_t end;     /* the latest end seen (ns from the start) */
    uint64_t outside; /* activities left out: beyond the grid's reach (a corrupt time) */
    struct ga_tlv_lane *lanes;
    size_t n_lanes, lanes_cap, last_lane;
    uint64_t lanes_dropped; /* activities on streams past GA_TLV_LANES */
    struct ga_map lane_idx; /* (device, stream) -> lane */
    struct ga_tlv_slot *slots;
    uint32_t cap;   /* activities a window may keep now */
    size_t n_kept;  /* in all windows */
    struct ga_tlv_act *longest;   /* min-heap by length */
    size_t n_longest;
    struct ga_tlv_gap *gaps; /* min-heap by length */
    size_t n_gaps;
    uint64_t gaps_total;
    struct ga_tlv_host *host; /* min-heap by length */
    size_t n_host;
    uint64_t acts_total; /* activities seen, kept or not */
    uint64_t host_total; /* host calls of the kinds kept, seen */
    char **names;        /* after ga_tlv_finish: demangled kernel names ("memcpy HtoD"...) */
    struct ga_gpu_act *name_act; /* while reading: one activity per name key */
    size_t n_names, names_cap;
    struct ga_map name_idx; /* (name_id, function) -> index */
    /* the gap hook this view sits in front of (the report's: host-idle join) */
    void (*next_gap_hook)(void *ctx, uint32_t device, const struct ga_gap *gp);
    void *next_gap_ctx;
};

/* start_monotonic_ns: the trace header's field, read when the first record arrives. */
void ga_tlv_init(struct ga_tlv *v, const uint64_t *start_monotonic_ns);
/* The GPU analysis' act_sink (ctx: the view). */
void ga_tlv_act(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la);
/* The gap analysis' gap_hook (ctx: the view): keeps the longest, then calls next_gap_hook. */
void ga_tlv_gap(void *ctx, uint32_t device, const struct ga_gap *gp);
/* Every host record (in time order): keeps the longest blocking, allocation and free calls. */
void ga_tlv_host_event(struct ga_tlv *v, const struct ga_event *ev);
/* After ga_gpu_finish: folds the busy columns, names the kernels, sorts the kept lists. */
void ga_tlv_finish(struct ga_tlv *v, const struct ga_gpu *g, const struct ga_timeline *tl);
/* After ga_tlv_finish: columns in use (the run's end rounded up), and column width. */
size_t ga_tlv_cols(const struct ga_tlv *v);
uint64_t ga_tlv_col_ns(const struct ga_tlv *v);
void ga_tlv_free(struct ga_tlv *v);

#endif
