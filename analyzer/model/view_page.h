/* What the HTML page draws of one trace besides its JSON report (docs/HTML.md): the bounded
 * timeline (model/view_timeline.h, with the gaps' causes and the host calls' APIs named), the
 * stacks live at the peak for the icicle (largest first, capped, the rest summed) and PyTorch's
 * address maps (model/view_torchmap.h, with each map's OOM as an index into memory.ooms, its
 * allocated bytes summed and the blocks' sites labelled once). Built after the pass
 * (ga_vpage_build); a renderer reads this and includes no analysis header. */
#ifndef GA_VIEW_PAGE_H
#define GA_VIEW_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "model/view_stack.h"
#include "model/view_tlv.h"

#define GA_VPAGE_PEAK_STACKS 2000 /* stacks of the peak drawn; the rest as one "other" */

struct ga_vpage_timeline {
    uint64_t acts_total, host_total, gaps_total, outside, lanes_dropped;
    uint64_t col_ns; /* column width */
    size_t cols;     /* columns in use */
    uint32_t cap;    /* activities a window may keep */
    char *const *names;
    size_t n_names;
    const struct ga_tlv_lane *lanes;
    size_t n_lanes;
    const struct ga_tlv_slot *slots; /* (cols + GA_TLV_SLOT_COLS - 1) / GA_TLV_SLOT_COLS */
    size_t n_slots;
    const struct ga_tlv_act *longest;
    size_t n_longest;
    const struct ga_tlv_gap *gaps;
    const char **gap_cause; /* per gap */
    size_t n_gaps;
    const struct ga_tlv_host *host;
    char (*host_api)[64]; /* per host call: its API's name */
    size_t n_host;
};

/* A stack live at the peak, with its bytes. */
struct ga_vpage_stack {
    uint64_t bytes;
    const struct ga_vstack *stack; /* frames innermost first, at least one */
    char **labels;                 /* its frames' flame-graph labels, innermost first */
};

struct ga_vpage_blk {
    uint64_t offset, size, requested; /* offset in its segment */
    unsigned state;
    uint32_t site; /* index into torch_sites */
};
struct ga_vpage_seg {
    uint64_t addr, size;
    int small, expandable;
    struct ga_vpage_blk *blks;
    uint32_t n;
};
struct ga_vpage_map {
    int32_t device;
    int64_t ns;
    int64_t oom; /* index into memory.ooms; -1: the fullest snapshot */
    uint64_t requested, drawn_allocated, largest_free, segments, bytes;
    uint64_t other_segs, other_bytes, other_live_bytes, other_free_bytes, other_blocks;
    struct ga_vpage_seg *segs;
    size_t n_segs;
};
/* A Python site of PyTorch's blocks: "file:line" and its frames, innermost first. */
struct ga_vpage_tsite {
    char *label;
    char **frames; /* "file:line name" */
    size_t n_frames;
};

struct ga_tlv;
struct ga_vpage {
    struct ga_tlv *tlv; /* the timeline being built while the trace is read */
    struct ga_vpage_timeline tl;
    struct ga_vpage_stack *peak; /* largest first */
    size_t n_peak;
    uint64_t peak_other, peak_unknown, peak_no_stack; /* bytes past the cap, of undefined
                                                       * stacks, without a stack */
    struct ga_vpage_map *maps;
    size_t n_maps;
    struct ga_vpage_tsite *torch_sites;
    size_t n_torch_sites;
    uint64_t torch_ooms_not_drawn;
};

struct ga_report;
/* Before reading: the report's run also fills the page's timeline (the GPU analysis'
 * activities, the idle gaps and the host records go to it). */
void ga_vpage_attach(struct ga_vpage *v, struct ga_report *r);
/* After the run. */
void ga_vpage_build(struct ga_vpage *v, struct ga_report *r);
void ga_vpage_free(struct ga_vpage *v);

#endif
