/* The report model: what the reader saw plus every analysis, filled by one pass over the trace.
 * Renderers (render/text.c, render/json.c, render/dump.c) only read it. */
#ifndef GA_REPORT_H
#define GA_REPORT_H

#include <stdint.h>
#include <stdio.h>

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
    const char *path;
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
    struct ga_vfolded folded; /* --folded's lines, built on demand (ga_report_folded) */
    struct ga_vrun run;      /* the process, the trace as read, calls, notes (model/view_run.h) */
    struct ga_views views;   /* what every renderer shows alike (model/views.h) */
    struct ga_vpools poolview; /* the pools and their fragmentation (model/view_pools.h) */
    struct ga_vnvml nvmlview;  /* the device state from NVML (model/view_nvml.h) */
    struct ga_vstacks stackview; /* stacks and sites resolved for the views (model/view_stack.h) */
    struct ga_vsites siteview;   /* events by call site and library (model/view_sites.h) */
    struct ga_vgpu gpuview;      /* the GPU timeline and its idle gaps (model/view_gpu.h) */
    struct ga_tmv torchmap;  /* PyTorch's address maps at its OOMs and fullest snapshot */
    struct ga_tv tierview;   /* memory by category per device, ordered, with advice */
    struct ga_vcats peakcats; /* device memory at the process peak by category */
    struct ga_vmem memview;  /* device memory, its peak and failures (model/view_mem.h) */
    struct ga_vtorch torchview; /* PyTorch's allocator per device (model/view_torch.h) */
    int show_stacks;         /* renderers: the full stack of each listed site (--stacks) */
    int started;             /* the first event has been seen (the time base is set) */
    /* set before reading, or NULL: handed every record after the analyses took it (views that
     * the page renderers need, exports) */
    ga_sink_fn tap;
    void *tap_ctx;
    uint8_t routes[64];      /* per record type, the analyses that take it (report.c) */
};

void ga_report_init(struct ga_report *r, const char *path);
/* Frames matching this POSIX extended regex (function or object file name) are framework
 * internals, never a call site; replaces the built-in list ("" ignores none). -1 with a
 * message in err when it does not compile. Call before ga_report_run. */
int ga_report_ignore_frames(struct ga_report *r, const char *regex, char *err, size_t n);
/* Reads the trace and runs the analyses. 0: the model is complete (maybe of a truncated
 * prefix); -1: unreadable, r->read.error says why. */
int ga_report_run(struct ga_report *r);
/* The sink the reader feeds (exposed for tests that drive events by hand). */
void ga_report_event(void *report, const struct ga_event *ev);
void ga_report_finish(struct ga_report *r);
void ga_report_free(struct ga_report *r);
/* The folded stacks for WHAT (enum ga_folded_what), built on the first call: after the pass. */
const struct ga_vfolded *ga_report_folded(struct ga_report *r, int what);

/* Nanoseconds from the trace start (file header's monotonic start time). */
int64_t ga_report_rel(const struct ga_report *r, uint64_t ts);
/* From the trace start to the last record time (0 without records). */
uint64_t ga_report_duration(const struct ga_report *r);
/* "available" when the trace's CUPTI status record says ON, else "unavailable: <reason>";
 * written into buf. */
const char *ga_report_gpu_timeline(const struct ga_report *r, char *buf, size_t n);
/* When CUPTI dropped GPU activity records: what that does to the GPU timeline's figures, written
 * into buf (said next to each figure, on stderr and in the JSON notes); NULL when none were. */
const char *ga_report_gpu_caveat(const struct ga_report *r, char *buf, size_t n);
/* A kernel's name from its gt_rec_gpu_name id (NULL: never named). */
const char *ga_report_kernel_name(const struct ga_report *r, uint32_t name_id);

/* Renderers. */
void ga_render_text(const struct ga_report *r, FILE *out);
int ga_render_json(const struct ga_report *r, FILE *out);

#endif
