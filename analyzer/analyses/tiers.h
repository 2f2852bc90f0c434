/* Memory by what it holds (docs/ANALYSES.md, "Memory by category"): PyTorch's blocks put in the
 * categories ML engineers think in (weights, gradients, optimizer state, activations, temporary,
 * workspace, cache, other) from the bridge's role records (what every optimizer holds, read
 * after each step and before each snapshot), the snapshots' block states and, where history is
 * recorded, the blocks' Python frames. Results per device: the breakdown of the fullest
 * snapshot (the one ga_torch keeps as at_peak), the exact bytes per role at every optimizer
 * step (a series, bounded like ga_torch's), and per optimizer what it holds.
 * State: each optimizer's latest set of storages (sorted by address), the series. */
#ifndef GA_TIERS_H
#define GA_TIERS_H

#include <stdint.h>

#include "analyses/torch_alloc.h"
#include "base/hashmap.h"
#include "input/records.h"

#define GA_TIERS_SERIES_MAX 2048 /* points per device; past it every other one is dropped */
#define GA_TIERS_TOP_SITES  3    /* sites kept per category */
#define GA_TIERS_DEVS_MAX   16   /* devices one optimizer's totals are kept for */

enum ga_cat {
    GA_CAT_WEIGHTS,
    GA_CAT_GRADIENTS,
    GA_CAT_OPTIMIZER_STATE,
    GA_CAT_ACTIVATIONS,
    GA_CAT_TEMPORARY,
    GA_CAT_WORKSPACE,
    GA_CAT_CACHE,
    GA_CAT_OTHER,
    GA_CATS
};
const char *ga_cat_name(enum ga_cat c);        /* as JSON names it: "optimizer_state" */
const char *ga_cat_label(enum ga_cat c);       /* as text says it: "optimizer state" */
const char *ga_tiers_role_name(unsigned role); /* gt_torch_role, as the category name */

/* How a category's bytes were told apart (the strongest evidence any of its blocks had). */
enum ga_cat_basis {
    GA_BASIS_NONE,      /* no block in the category */
    GA_BASIS_REMAINDER, /* live blocks no other rule claimed, without frames to tell them apart */
    GA_BASIS_FRAMES,    /* the block's Python frames (allocator history), by rule */
    GA_BASIS_EXACT,     /* PyTorch's own objects (an optimizer's tensors) or block state */
};
const char *ga_cat_basis_name(enum ga_cat_basis b);

struct ga_tiers_site {
    uint32_t stack; /* torch stack id (history); 0: blocks without frames */
    uint64_t bytes, count;
};

struct ga_tiers_cat {
    uint64_t bytes;     /* block sizes (the allocator's rounding included) */
    uint64_t requested; /* requested sizes (storage nbytes where PyTorch said) */
    uint64_t count;
    enum ga_cat_basis basis;
    struct ga_tiers_site top[GA_TIERS_TOP_SITES];
    size_t n_top;
};

struct ga_tiers_breakdown {
    int have;
    uint64_t ts;
    uint32_t snap, why;               /* the snapshot's id and gt_torch_why */
    uint64_t allocated, reserved;     /* of the device in that snapshot */
    struct ga_tiers_cat cat[GA_CATS]; /* their bytes sum to reserved */
    uint64_t roles_unmatched_bytes;   /* optimizer storages on the device no block starts at */
    uint32_t roles_unmatched;
    int roles_known; /* some optimizer's whole set was in effect */
};

/* Exact at one optimizer step: every optimizer's bytes on the device as of its latest step. */
struct ga_tiers_point {
    uint64_t ts, step; /* the step of the optimizer that wrote it */
    uint64_t weights, gradients, optimizer_state;
    uint64_t allocated, reserved; /* memory_stats in the step hook */
};

/* One whole snapshot's bytes by category. */
struct ga_tiers_snappoint {
    uint64_t ts;
    uint32_t why; /* gt_torch_why */
    int roles_known;
    uint64_t allocated, reserved;
    uint64_t bytes[GA_CATS];
};

/* The whole process at one whole snapshot: its blocks by category summed over the devices, and
 * the device memory the process held outside PyTorch's segments then (live - reserved). */
struct ga_tiers_procpoint {
    uint64_t ts;
    uint64_t live;     /* device memory live in the process (the memory analysis) */
    uint64_t reserved; /* PyTorch's segments, all devices */
    uint64_t bytes[GA_CATS];
    int roles_known; /* on every device some optimizer's whole set was in effect */
};

/* The replay of PyTorch's block events on one device (tiers_replay.c; level history): the
 * state of the latest whole snapshot, the events received since, the highest allocated memory
 * any replay reached and its breakdown. */
struct ga_tiers_replay {
    int32_t device;
    struct gt_torch_trace_entry *ev; /* the batch being received */
    size_t n_ev, ev_cap;
    uint32_t snap;      /* the snapshot the batch leads to */
    int gap;            /* events before the batch were lost */
    int based;          /* live, allocated and reserved hold the state the batch starts from */
    struct ga_map live; /* (addr, 0) -> block size, (addr, 1) -> stack; the segments' starts
                         * and free blocks (tiers_replay.c) */
    uint64_t allocated, reserved;
    uint64_t max_split; /* PyTorch's max_split_size then (0: no limit) */
    uint32_t divisions[GT_TORCH_ROUNDUP_INTERVALS]; /* its roundup_power2_divisions then */
    int expandable;                                 /* some segment is expandable */
    struct ga_tiers_breakdown peak;                 /* have = 0: none */
    uint64_t batches, replayed, inconsistent; /* received; replayed to the snapshot's state; not */
};

/* A storage of a whole role set seen since the latest snapshot, with the set's time. */
struct ga_tiers_seen {
    uint64_t addr, us; /* us: the set's time on PyTorch's clock (realtime microseconds) */
    int32_t device;
    uint8_t role;
};
#define GA_TIERS_SEEN_MAX    (1u << 20)
#define GA_TIERS_EVENTS_MAX  (1u << 22) /* events of one batch; PyTorch's ring holds 100,000 */
#define GA_TIERS_REPLAY_DEVS 64         /* devices replayed; past them a trace is damaged */

struct ga_tiers_dev {
    int32_t device;
    struct ga_tiers_breakdown peak;   /* the fullest snapshot */
    struct ga_tiers_snappoint *snaps; /* every whole snapshot, bounded like the series */
    size_t n_snaps, snaps_cap;
    uint32_t snaps_stride;
    uint64_t snaps_seen;
    struct ga_tiers_point *series;
    size_t n_series, series_cap;
    uint32_t series_stride;
    uint64_t series_seen;
};

struct ga_tiers_role_dev {
    int32_t device;
    uint64_t bytes[3]; /* by gt_torch_role, at its latest step */
    uint32_t tensors[3];
};

struct ga_tiers_opt {
    uint32_t num;
    char name[64];
    uint64_t steps, first_step_ts, last_step_ts;
    struct gt_torch_role_entry *set; /* the latest set, sorted by address once whole */
    size_t n_set, set_cap;
    uint32_t set_expected;
    int whole;
    struct ga_tiers_role_dev devs[GA_TIERS_DEVS_MAX];
    size_t n_devs;
    uint16_t weight_elem, state_elem; /* the element size holding most bytes, per role */
};

struct ga_tiers {
    int present; /* the trace has role records */
    struct ga_tiers_opt *opts;
    size_t n_opts, opts_cap;
    struct ga_tiers_dev *devs;
    size_t n_devs, devs_cap;
    uint64_t incomplete_sets;         /* sets whose records were not all there */
    struct ga_tiers_procpoint *procs; /* every whole snapshot, process-wide, bounded likewise */
    size_t n_procs, procs_cap;
    uint32_t procs_stride;
    uint64_t procs_seen;
    uint64_t procs_short;          /* snapshots whose segments exceeded the process's live memory */
    struct ga_tiers_replay *rdevs; /* per device, once a TORCH_TRACE record came */
    size_t n_rdevs, rdevs_cap;
    struct ga_tiers_seen *seen; /* role storages of the sets since the latest snapshot */
    size_t n_seen, seen_cap;
    uint64_t seen_dropped;
    uint64_t *steps_us; /* optimizer steps since the latest snapshot (PyTorch's clock, in order) */
    size_t n_steps, steps_cap;
    int64_t real_minus_mono; /* the trace header's realtime - monotonic start, ns */
};

void ga_tiers_init(struct ga_tiers *t);
/* The role and step records. */
void ga_tiers_event(struct ga_tiers *t, const struct ga_event *ev);
/* At a snapshot's end, after ga_torch took it (its segments and blocks are still there);
 * live: the device memory the process holds at that moment (all devices, all device kinds). */
void ga_tiers_snap_end(struct ga_tiers *t, const struct ga_torch *torch, const struct ga_event *ev,
                       uint64_t live);
const struct ga_tiers_dev *ga_tiers_dev_of(const struct ga_tiers *t, int32_t device);
const struct ga_tiers_replay *ga_tiers_replay_of(const struct ga_tiers *t, int32_t device);

/* tiers_replay.c: TORCH_TRACE records, the bridge's start sample (the state before the first
 * snapshot), and at a whole snapshot's end the replay of the batch that led to it, then its
 * state as the next base. */
void ga_tiers_trace(struct ga_tiers *t, const struct ga_event *ev);
void ga_tiers_start(struct ga_tiers *t, const struct ga_event *ev);
/* whole: the snapshot was whole (else the replay starts again at the next whole one);
 * history: its flags say history is recorded (only then is its state kept as a base);
 * settings: the snapshot's end record, whose max_split_size (which blocks PyTorch splits) and
 * roundup_divisions (how it rounds a request) the replay follows; NULL when not whole. */
void ga_tiers_replay_snap(struct ga_tiers *t, const struct ga_torch *torch, uint32_t snap,
                          int whole, int history, const struct gt_rec_torch_snap *settings);
void ga_tiers_replay_free(struct ga_tiers *t);
/* The block size PyTorch's round_size gives a request of `size` bytes under divisions, its
 * roundup_power2_divisions per interval (GT_TORCH_ROUNDUP_INTERVALS of them: gt_rec_torch_snap). */
uint64_t ga_tiers_round_size(const uint32_t *divisions, uint64_t size);

/* tiers_rules.c, shared by tiers.c and tiers_replay.c. The set's order (address, device). */
int ga_tiers_entry_cmp(const void *a, const void *b);
int ga_tiers_role_at(const struct ga_tiers *t, int32_t device, uint64_t addr, uint64_t *bytes);
enum ga_cat ga_tiers_by_frames(const struct ga_torch *torch, uint32_t stack);
/* One block counted in b (its site in sites, a (stack, category) -> bytes map). */
void ga_tiers_count(struct ga_tiers_breakdown *b, struct ga_map *sites, enum ga_cat cat,
                    enum ga_cat_basis basis, const struct ga_torch_blk *k, uint64_t requested);
void ga_tiers_top_sites(struct ga_tiers_breakdown *b, struct ga_map *sites);
void ga_tiers_free(struct ga_tiers *t);

#endif
