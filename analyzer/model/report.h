/* The report model as renderers see it: struct ga_model, the views every renderer reads, built
 * once at the end of the pass. struct ga_report, the pass's state (every analysis's, then these
 * views as its member m), is model/state.h's and opaque here. Includes no analysis or input
 * header (tests/cases/layers.sh). */
#ifndef GA_REPORT_H
#define GA_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/read_notes.h"
#include "model/view_folded.h"
#include "model/view_gpu.h"
#include "model/view_mem.h"
#include "model/view_nvml.h"
#include "model/view_pools.h"
#include "model/view_run.h"
#include "model/view_sites.h"
#include "model/view_torch.h"

struct ga_model {
    const char *path;
    int show_stacks;            /* renderers: the full stack of each listed site (--stacks) */
    struct ga_vrun run;         /* the process, the trace as read, calls, notes */
    struct ga_vmem memview;     /* device memory, its peak and failures */
    struct ga_vpools poolview;  /* the pools and their fragmentation */
    struct ga_vtorch torchview; /* PyTorch's allocator per device */
    struct ga_vsites siteview;  /* events by call site and library */
    struct ga_vgpu gpuview;     /* the GPU timeline and its idle gaps */
    struct ga_vnvml nvmlview;   /* the device state from NVML */
    struct ga_vfolded folded;   /* --folded's lines, built on demand (ga_report_folded) */
};

struct ga_report;
struct ga_event;

void ga_report_init(struct ga_report *r, const char *path);
/* For front ends (main.c), which hold reports only through a pointer: a report made by
 * ga_report_init on the heap (ga_report_delete frees both), its model, the JSON report's
 * --all-gaps (every gap listed, not only the longest), what the reader said (after
 * ga_report_run: notes->error when it failed, the warnings when it did not), and the reader's
 * progress hook (bytes read, records delivered; all reports). */
struct ga_report *ga_report_new(const char *path);
void ga_report_delete(struct ga_report *r);
struct ga_model *ga_report_model(struct ga_report *r);
void ga_report_keep_all_gaps(struct ga_report *r);
void ga_report_read_notes(const struct ga_report *r, struct ga_read_notes *notes);
void ga_report_set_progress(void (*fn)(void *ctx, uint64_t bytes, uint64_t records), void *ctx);
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

/* Renderers of the whole report (render/text.c, json.c). */
void ga_render_text(const struct ga_model *m, FILE *out);
int ga_render_json(const struct ga_model *m, FILE *out);

#endif
