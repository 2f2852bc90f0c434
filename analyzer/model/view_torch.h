/* PyTorch's caching allocator as every renderer shows it (the allocator lines of the text
 * report, JSON's memory.allocators[]): per device its peaks, the fullest snapshot and the Python
 * sites holding it, its fragmentation over time and at its OOMs, and its memory by category
 * (model/view_tiers.h: ordered, with the optimizers' meaning and the advice decided), copied
 * from the PyTorch analysis and the tiers view once, at the end of the pass, with times from the
 * trace start and names resolved. A renderer reads this and includes no analysis header. */
#ifndef GA_VIEW_TORCH_H
#define GA_VIEW_TORCH_H

#include <stddef.h>
#include <stdint.h>

#define GA_VTORCH_CATS    16         /* categories (GA_CATS at most) */
#define GA_VTORCH_TOP     3          /* top sites per category (GA_TIERS_TOP_SITES) */
#define GA_VTORCH_ADVICE  3          /* advice lines per device (GA_TV_ADVICE) */
#define GA_VTORCH_BRIEF   3          /* sites the text report lists per breakdown */
#define GA_VTORCH_UNKNOWN UINT64_MAX /* a figure the sample did not have */

/* A Python site (or a segment's call site) holding PyTorch's blocks. */
struct ga_vtorch_site {
    char *label;        /* NULL: neither known */
    const char *source; /* "block", "segment", "none" */
    int in_segments;    /* attributed to its segments' call site */
    uint64_t bytes, count;
};
struct ga_vtorch_sites {
    struct ga_vtorch_site *v;
    size_t n;
    uint64_t other_bytes, other_count; /* sites past those kept */
};

/* Fragmentation of a device's segments at one moment; GA_VTORCH_UNKNOWN where not known. */
struct ga_vtorch_frag {
    int64_t ns;
    uint64_t reserved, allocated, free_in_segments, largest_free, partly_used, inactive_split;
};

struct ga_vtorch_cat {
    const char *name, *label, *basis; /* "optimizer_state", "optimizer state", "exact" */
    int optimizer_state, remainder;   /* the category / basis the text report explains */
    uint64_t bytes, requested, count;
    const char *top[GA_VTORCH_TOP]; /* "file:line (function)"; NULL without frames */
    uint64_t top_bytes[GA_VTORCH_TOP];
    size_t n_top;
};

struct ga_vtorch_opt {
    uint32_t num;
    const char *name;
    uint64_t steps, weights, gradients, optimizer_state;
    uint32_t weight_tensors, gradient_tensors, state_tensors;
    char weight_dtype[16], state_dtype[16]; /* "" unknown */
    int have_ratio;                         /* weights known: state_ratio means something */
    double state_ratio;
    const char *meaning;
};

/* An optimizer step: its bytes by role and memory_stats then. */
struct ga_vtorch_point {
    int64_t ns;
    uint64_t step, weights, gradients, optimizer_state, allocated, reserved, cache;
    int have_other; /* allocated covers the roles: other_allocated means something */
    uint64_t other_allocated;
};

/* A whole snapshot by category (bytes in cat_names order). */
struct ga_vtorch_snap {
    int64_t ns;
    const char *why;
    int roles_known;
    uint64_t bytes[GA_VTORCH_CATS];
    uint64_t allocated, reserved;
};

/* A device's memory by category. */
struct ga_vtorch_tiers {
    int have_peak; /* a whole snapshot (or the replay's peak) to break down */
    int64_t peak_ns;
    int replayed; /* the peak is the replay's (block events), not a snapshot */
    uint64_t allocated, reserved, roles_unmatched_bytes, optimizer_state_bytes;
    int roles_known;
    int have_replay;
    uint64_t batches, batches_replayed, batches_inconsistent;
    struct ga_vtorch_cat cats[GA_VTORCH_CATS]; /* largest first */
    size_t n_cats;
    struct ga_vtorch_opt *opts;
    size_t n_opts;
    struct ga_vtorch_point *points;
    size_t n_points;
    struct ga_vtorch_snap *snaps;
    size_t n_snaps;
    const char *advice[GA_VTORCH_ADVICE];
    size_t n_advice;
};

struct ga_vtorch_dev {
    int32_t device;
    uint64_t peak_allocated, peak_reserved;
    int have_at_peak; /* the fullest snapshot: at_peak, peak_sites */
    struct ga_vtorch_frag at_peak;
    struct ga_vtorch_sites peak_sites;
    struct ga_vtorch_frag *series, *at_ooms; /* samples and snapshots; its OOMs' snapshots */
    size_t n_series, n_at_ooms;
    int have_exit;
    uint64_t cached_at_exit, allocated_at_exit;
    int have_tiers; /* the tiers view has the device */
    struct ga_vtorch_tiers tiers;
};

struct ga_vtorch {
    int expandable_segments;
    struct ga_vtorch_dev *devs;
    size_t n_devs;
    const char *cat_names[GA_VTORCH_CATS];
    size_t n_cat_names;
};

struct ga_report;
/* After ga_tv_build. */
void ga_vtorch_build(struct ga_vtorch *v, const struct ga_report *r);
void ga_vtorch_free(struct ga_vtorch *v);
struct ga_torch_sites;
/* A breakdown's sites, labelled. */
void ga_vtorch_sites_make(struct ga_vtorch_sites *o, const struct ga_report *r,
                          const struct ga_torch_sites *s);
void ga_vtorch_sites_free(struct ga_vtorch_sites *s);

#endif
