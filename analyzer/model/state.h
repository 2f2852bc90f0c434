/* The report model's own state: the reader's statistics and every analysis's, filled by one pass
 * over the trace (model/report.c), and the views built from them at its end (member m, the
 * struct ga_model of model/report.h that renderers are handed). Included by model/ (the only
 * code that reads the analyses' structs), by main.c (which holds reports and reads the reader's
 * statistics) and by the tests and tools that drive the pass by hand; never by a renderer
 * (tests/cases/layers.sh). */
#ifndef GA_STATE_H
#define GA_STATE_H

#include "model/report.h"
#include "analyses/facts.h"
#include "analyses/gaps.h"
#include "analyses/gpu.h"
#include "analyses/memory.h"
#include "analyses/nvml.h"
#include "analyses/hostidle.h"
#include "model/idle_host.h"
#include "analyses/pools.h"
#include "input/reader.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "analyses/timeline.h"
#include "analyses/tiers.h"
#include "analyses/torch_alloc.h"
#include "model/views.h"
#include "model/view_tiers.h"
#include "model/view_cats.h"
#include "model/view_pools.h"
#include "model/view_nvml.h"
#include "model/view_gpu.h"
#include "model/view_sites.h"
#include "model/view_stack.h"
#include "model/view_torchmap.h"
#include "model/view_mem.h"
#include "model/view_torch.h"
#include "model/view_run.h"
#include "model/view_folded.h"

struct ga_report {
    struct ga_model m; /* what the renderers are handed (model/report.h) */
    struct ga_read_stats read;
    struct ga_facts facts;
    struct ga_memory mem;
    struct ga_pools pools; /* pools and fragmentation (second level of memory) */
    struct ga_timeline tl;
    struct ga_gpu gpu;
    struct ga_gaps gaps; /* GPU idle gaps and their causes; gaps.top = 0 keeps all (--all-gaps) */
    struct ga_stacks stacks; /* host call stacks as the trace defines them */
    struct ga_sites sites;   /* events by call site and library */
    struct ga_torch torch;   /* PyTorch's caching allocator (the bridge's records) */
    struct ga_tiers tiers;   /* PyTorch's memory by category (weights, gradients, ...) */
    struct ga_nvml nvml;     /* device state from NVML samples */
    struct ga_hostidle hostidle; /* host stack samples joined with the gaps */
    struct ga_idle_host idle_host; /* idle time by host site and class (model/idle_host.h) */
    struct ga_views views;   /* what every renderer shows alike (model/views.h) */
    struct ga_vstacks stackview; /* stacks and sites resolved for the views (model/view_stack.h) */
    struct ga_tmv torchmap;  /* PyTorch's address maps at its OOMs and fullest snapshot */
    struct ga_tv tierview;   /* memory by category per device, ordered, with advice */
    struct ga_vcats peakcats; /* device memory at the process peak by category */
    int started;             /* the first event has been seen (the time base is set) */
    /* set before reading, or NULL: handed every record after the analyses took it (views that
     * the page renderers need, exports) */
    ga_sink_fn tap;
    void *tap_ctx;
    uint8_t routes[64];      /* per record type, the analyses that take it (report.c) */
};

/* The reader's statistics as the notes front ends read (model/view_records.c). */
void ga_read_notes_of(const struct ga_read_stats *s, struct ga_read_notes *n);

#endif
