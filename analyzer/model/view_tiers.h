/* Memory by category as every renderer shows it (a report-model view): per device, the
 * categories of the fullest snapshot largest first with their top Python sites labelled, each
 * optimizer's holdings and what its state / weights ratio means, and the advice that fits the
 * largest categories. Built once from the tiers analysis after the pass. */
#ifndef GA_VIEW_TIERS_H
#define GA_VIEW_TIERS_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/tiers.h"
#include "analyses/torch_alloc.h"

#define GA_TV_ADVICE 3 /* advice lines per device */

struct ga_tv_cat {
    enum ga_cat cat;
    uint64_t bytes, requested, count;
    enum ga_cat_basis basis;
    char top[GA_TIERS_TOP_SITES][200]; /* "file:line (function)"; "" without frames */
    uint64_t top_bytes[GA_TIERS_TOP_SITES];
    size_t n_top;
};

struct ga_tv_opt {
    uint32_t num;
    const char *name; /* the analysis's */
    uint64_t steps;
    int32_t device;
    uint64_t weights, gradients, optimizer_state; /* at its latest step, on `device` */
    uint32_t weight_tensors, gradient_tensors, state_tensors;
    uint16_t weight_elem, state_elem;
    double state_ratio; /* optimizer_state / weights; 0 without weights */
    char meaning[256];  /* "AdamW keeps 2 fp32 tensors per parameter" */
};

struct ga_tv_dev {
    int32_t device;
    const struct ga_tiers_breakdown *peak; /* NULL: no whole snapshot */
    int replayed; /* peak is the replay's (block events, level history), not a snapshot */
    const struct ga_tiers_replay *replay; /* NULL: no block events on the device */
    uint64_t peak_allocated;               /* the allocator's own peak (max_memory_allocated) */
    struct ga_tv_cat cats[GA_CATS];        /* largest first; ties in category order */
    const struct ga_tiers_point *series;
    size_t n_series;
    const struct ga_tiers_snappoint *snaps;
    size_t n_snaps;
    struct ga_tv_opt *opts;
    size_t n_opts;
    const char *advice[GA_TV_ADVICE];
    size_t n_advice;
};

struct ga_tv {
    struct ga_tv_dev *devs;
    size_t n_devs;
};

void ga_tv_init(struct ga_tv *v);
void ga_tv_build(struct ga_tv *v, const struct ga_tiers *t, const struct ga_torch *torch);
/* "fp32", "bf16/fp16", "int8/fp8", or "N-byte". */
const char *ga_tv_elem_name(uint16_t elem, char *buf, size_t n);
void ga_tv_free(struct ga_tv *v);

#endif
