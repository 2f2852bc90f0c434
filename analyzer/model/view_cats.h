/* Device memory at the process peak by what it holds (docs/ANALYSES.md, "Memory by category",
 * "At the process peak"): every byte live at the driver-level peak in one category line. Driver
 * allocations go by the library that made the call (the sites analysis' library at the peak):
 * a known GPU library (NCCL, cuBLAS(Lt), cuDNN, cuFFT, ...) -> workspace; PyTorch's caching
 * allocator (libc10_cuda) -> its reserved segments; anything else -> other. Temporary
 * allocations (memory.temporaries: freed by their thread right after they were made) live at the
 * peak leave their library's line for `temporary`. On each device,
 * PyTorch's segments are then split into categories: by the replay of its block events at its
 * own peak there when its segments then held exactly the bytes they held at the driver-level
 * peak, else by the device's snapshot nearest the peak among those that reserved exactly those
 * bytes; else they stay in one `pytorch_reserved` line. The lines add up to the peak exactly. Over
 * time: the same at the peak and, at every whole snapshot, its blocks' categories (tiers.h) with
 * the rest of the process's device memory as `other` (the libraries' share is known at the peak
 * only). */
#ifndef GA_VIEW_CATS_H
#define GA_VIEW_CATS_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/memory.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "analyses/tiers.h"

enum ga_vc_source {
    GA_VC_LIBRARY,  /* driver allocations live at the peak, by the calling library: exact */
    GA_VC_SNAPSHOT, /* blocks of PyTorch's snapshot nearest the peak: inferred for the peak */
    GA_VC_REPLAY,   /* PyTorch's blocks replayed at its own peak in the same segments */
};

#define GA_VC_PYTORCH GA_CATS             /* category index of PyTorch's segments left whole */
#define GA_VC_LINES   (3 * (GA_CATS + 1)) /* per source: library, replay, snapshot */
#define GA_VC_KINDS   (GA_VC_PYTORCH + 1)

/* One point of the process's device memory by category over time (the stacked memory chart):
 * at a whole snapshot, its blocks by category plus the memory outside PyTorch's segments as
 * `other`; at the peak, the peak's lines. The bytes add up to the process's live device memory
 * at that moment (at the peak: the peak). */
enum ga_vc_at { GA_VC_AT_SNAPSHOT, GA_VC_AT_PEAK };
struct ga_vc_point {
    uint64_t ts;
    enum ga_vc_at at;
    uint64_t total;
    uint64_t bytes[GA_VC_KINDS]; /* by category, GA_VC_PYTORCH: segments left whole */
};

struct ga_vc_line {
    unsigned cat; /* enum ga_cat, or GA_VC_PYTORCH */
    enum ga_vc_source source;
    uint64_t bytes, count; /* count: allocations (library); 0 for a snapshot line */
};

/* One device's PyTorch segments live at the process peak, and what split them. */
#define GA_VC_SPLITS 64
struct ga_vc_split {
    int32_t device;
    enum ga_vc_source source; /* replay, snapshot, or library: left whole */
    uint64_t reserved, count; /* PyTorch's segments there at the peak */
    uint64_t ts;              /* the replayed moment or the snapshot (0: left whole) */
    uint64_t allocated;       /* replay: PyTorch's allocated bytes on the device then */
};

struct ga_vcats {
    int valid;                            /* a peak, and the libraries' figures fit in it */
    struct ga_vc_line lines[GA_VC_LINES]; /* largest first, no empty line */
    size_t n;
    uint64_t total;             /* = the peak: the check that the lines add up */
    uint64_t pytorch_bytes;     /* PyTorch's segments live at the peak */
    uint64_t temps_left;        /* temporaries live at the peak left in their library's line */
    int expanded;               /* they were split by the replay or a snapshot */
    /* by device (none when nothing was split); per source: the latest moment of its devices,
     * their bytes summed */
    struct ga_vc_split splits[GA_VC_SPLITS];
    size_t n_splits;
    uint64_t replay_ts;         /* the replayed moment that split them, 0 none */
    uint64_t replay_allocated;  /* PyTorch's allocated bytes then (its peak) */
    uint64_t replay_reserved;   /* its reserved bytes then (= its segments at the peak) */
    uint64_t snapshot_ts;       /* the snapshot that split them, 0 none */
    uint64_t snapshot_reserved; /* its reserved bytes (= its segments at the peak) */
    /* over time, in time order (the peak after a snapshot of the same time); none without the
     * bridge's optimizer records (no categories beyond PyTorch's remainder to show) */
    struct ga_vc_point *points;
    size_t n_points;
};

const char *ga_vc_cat_name(unsigned cat); /* ga_cat_name, or "pytorch_reserved" */
const char *ga_vc_source_name(enum ga_vc_source s);
const char *ga_vc_at_name(enum ga_vc_at at); /* "snapshot", "peak" */
/* Which category a library's allocations go to by its file name: GA_CAT_WORKSPACE,
 * GA_VC_PYTORCH or GA_CAT_OTHER (NULL name: other). */
unsigned ga_vc_library_cat(const char *name);
void ga_vcats_build(struct ga_vcats *v, const struct ga_memory *m, const struct ga_stacks *st,
                    const struct ga_sites *sites, const struct ga_library *libs, size_t n_libs,
                    const struct ga_tiers *t);
void ga_vcats_free(struct ga_vcats *v);

#endif
