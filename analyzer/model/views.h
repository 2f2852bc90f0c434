/* The views every renderer shows alike, computed once at the end of the pass (ga_report_finish)
 * from the analyses' results: the holders of each failed allocation grouped by call site and
 * capped, the failures that repeat the one before, the libraries ranked by bytes at the peak
 * (the pools, ranked: model/view_pools.h). A renderer takes these instead of grouping, ordering,
 * capping or de-duplicating on its own, so text and JSON cannot disagree. */
#ifndef GA_VIEWS_H
#define GA_VIEWS_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/memory.h"
#include "analyses/sites.h"

#define GA_VIEW_OOM_HOLDERS 5 /* call sites listed per failed allocation */

/* Memory held by one call site (or by one stack without a site) at a failed allocation. */
struct ga_holder_view {
    const struct ga_site *site; /* NULL: no site for the stack (stack 0: no stack recorded) */
    uint32_t stack;             /* the site's largest stack, or the stack itself */
    uint64_t bytes, count;
};

struct ga_oom_view {
    /* the holders grouped by call site, largest first, at most GA_VIEW_OOM_HOLDERS; have_holders
     * 0: no snapshot was kept for this failure (past the first GA_OOM_SNAPSHOTS) */
    struct ga_holder_view holders[GA_VIEW_OOM_HOLDERS];
    size_t n_holders;
    int have_holders;
    /* index of the failure this one repeats (the one right before it, whose retry failed, with
     * the same request and verdict), -1 none: explained once */
    int64_t repeat_of;
};

struct ga_views {
    struct ga_oom_view *ooms; /* one per ga_memory.ooms[] */
    size_t n_ooms;
    struct ga_library *libs_at_peak; /* libraries holding memory at the peak, most bytes first */
    size_t n_libs_at_peak;
};

void ga_views_build(struct ga_views *v, const struct ga_memory *m, const struct ga_sites *s);
void ga_views_free(struct ga_views *v);

#endif
