/* Facts about the run that need no analysis: process, driver, devices, threads, notes, losses,
 * the clean end, and the entry-point resolver. */
#ifndef GA_FACTS_H
#define GA_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace_api.h"
#include "base/hashmap.h"
#include "input/records.h"

#define GA_MAX_NOTES 1000 /* notes kept; the rest are counted */

struct ga_device_info {
    int32_t ordinal;
    int32_t cc_major, cc_minor;
    char *name;
    uint64_t total_bytes;
    uint8_t uuid[16];
};

struct ga_thread_info {
    uint32_t tid;
    char *name;
};

struct ga_note {
    uint64_t ts;
    uint32_t tid, level;
    char *text;
};

struct ga_resolve_how {
    uint64_t lookups, wrapped, passed_through, not_found;
};

struct ga_facts {
    int have_process;
    uint32_t pid, ppid;
    char **argv;
    size_t argc;
    char *host, *exe;
    int have_driver;
    int32_t driver_version, device_count;
    struct ga_device_info *devices;
    size_t n_devices, dev_cap;
    struct ga_map dev_idx; /* (ordinal, 0) -> index into devices */
    struct ga_thread_info *threads;
    size_t n_threads, thread_cap;
    struct ga_note *notes;
    size_t n_notes, note_cap;
    uint64_t notes_dropped;
    uint64_t lost_records;
    int have_end;
    struct gt_rec_end end;
    /* range of host record times (before the first: UINT64_MAX, 0; see ga_facts_have_ts) */
    uint64_t first_ts, last_ts;
    struct ga_resolve_how resolve[4]; /* index: enum gt_resolve_how; 0 = other */
    struct ga_resolve_how resolve_total;
    int have_cupti; /* the last GT_REC_CUPTI record says whether the GPU timeline was recorded */
    struct gt_rec_cupti cupti;
    char *cupti_path, *cupti_reason;
    /* OBJECT calls (contexts, streams, pools) per api: [api][0] ok, [api][1] failed */
    uint64_t objects[GT_API_MAX][2];
};

void ga_facts_init(struct ga_facts *f);
/* The record types ga_facts_event looks at (bit t: type t); report.c hands it no others. */
#define GA_FACTS_TYPES                                                                             \
    ((1ull << GT_REC_PROCESS) | (1ull << GT_REC_DRIVER) | (1ull << GT_REC_DEVICE) |                \
     (1ull << GT_REC_THREAD) | (1ull << GT_REC_NOTE) | (1ull << GT_REC_LOST) |                     \
     (1ull << GT_REC_END) | (1ull << GT_REC_RESOLVE) | (1ull << GT_REC_CUPTI) |                    \
     (1ull << GT_REC_OBJECT))
/* The records facts keep; every record's time goes through ga_facts_time. */
void ga_facts_event(struct ga_facts *f, const struct ga_event *ev);

/* The range of host record times: takes every record (inline: report.c calls it for each). Not
 * the watermark's time (a barrier, not an event: the last one is +inf), nor GPU ones (gpu.c). */
static inline void ga_facts_time(struct ga_facts *f, const struct ga_event *ev)
{
    if (ev->type == GT_REC_WATERMARK || ga_rec_is_gpu(ev->type)) return;
    if (ev->ts < f->first_ts) f->first_ts = ev->ts;
    if (ev->ts > f->last_ts) f->last_ts = ev->ts;
    if (ev->type == GT_REC_SPAN && ev->r->span.ts_exit > f->last_ts)
        f->last_ts = ev->r->span.ts_exit;
}
/* Whether a host record has had a time (first_ts, last_ts are then its range). */
static inline int ga_facts_have_ts(const struct ga_facts *f)
{
    return f->first_ts <= f->last_ts;
}
void ga_facts_free(struct ga_facts *f);
/* "dlsym", "cuGetProcAddress", "cuGetProcAddress_v2", "other" */
const char *ga_resolve_how_name(unsigned how);
/* "on", "off_by_user", "not_found", "owned", "failed", "taken", "unknown" */
const char *ga_cupti_status_name(unsigned status);

#endif
