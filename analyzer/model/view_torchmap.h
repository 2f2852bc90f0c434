/* The page's PyTorch address maps (a report-model view for --html): the allocator's segments and
 * blocks of one device at each allocator OOM whose snapshot was read whole, and at the fullest
 * snapshot per device (the most allocated bytes). The torch analysis keeps only the snapshot
 * being read, so the view copies it when a snapshot ends (ga_tmv_snap_end, from the pass).
 * Bounded: the GA_TMV_SEGS largest segments are kept (then drawn by address); the rest, and any
 * segment whose blocks would pass GA_TMV_BLOCKS, are summed into `other`. At most GA_TMV_OOMS
 * OOM maps. */
#ifndef GA_VIEW_TORCHMAP_H
#define GA_VIEW_TORCHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/torch_alloc.h"

#define GA_TMV_SEGS   64   /* segments drawn per map */
#define GA_TMV_BLOCKS 8192 /* blocks drawn per map */
#define GA_TMV_OOMS   16   /* OOM maps kept */

struct ga_tmv_map {
    int32_t device;
    uint64_t ts;
    int64_t oom;               /* index into ga_torch.ooms; -1: the fullest snapshot */
    struct ga_torch_seg *segs; /* kept, by address; first/n index blks */
    size_t n_segs;
    struct ga_torch_blk *blks;
    size_t n_blks;
    uint64_t segments, bytes; /* all the device's segments in the snapshot */
    uint64_t other_segs, other_bytes, other_live_bytes, other_free_bytes, other_blocks;
    uint64_t largest_free; /* the largest inactive block of the request's pool (OOM maps) */
};

struct ga_tmv {
    struct ga_tmv_map *maps; /* OOM maps in OOM order, then the fullest one per device */
    size_t n_maps, maps_cap;
    uint64_t ooms_not_drawn; /* OOM maps past GA_TMV_OOMS */
};

void ga_tmv_init(struct ga_tmv *v);
/* Every record, after the torch analysis took it: at a snapshot's end, copies the maps. */
void ga_tmv_event(struct ga_tmv *v, const struct ga_torch *t, const struct ga_event *ev);
void ga_tmv_free(struct ga_tmv *v);

#endif
