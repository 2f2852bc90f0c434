/* The report model as renderers and main.c see it: struct ga_report is opaque here (its state,
 * the analyses', is model/state.h's); renderers read the views a report hands them (model/view_*.h)
 * and the few facts below. Includes no analysis or input header (tests/cases/layers.sh). */
#ifndef GA_REPORT_H
#define GA_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ga_report;
struct ga_event;
struct ga_vfolded;

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
