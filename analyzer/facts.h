/* Facts about the run that need no analysis: process, driver, devices, threads, notes, losses,
 * the clean end, and the entry-point resolver. */
#ifndef GA_FACTS_H
#define GA_FACTS_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace_api.h"
#include "hashmap.h"
#include "records.h"

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
    /* range of host record times, with have_ts (before the first: UINT64_MAX, 0) */
    uint64_t first_ts, last_ts;
    int have_ts;
    struct ga_resolve_how resolve[4]; /* index: enum gt_resolve_how; 0 = other */
    struct ga_resolve_how resolve_total;
    int have_cupti; /* the last GT_REC_CUPTI record says whether the GPU timeline was recorded */
    struct gt_rec_cupti cupti;
    char *cupti_path, *cupti_reason;
    /* OBJECT calls (contexts, streams, pools) per api: [api][0] ok, [api][1] failed */
    uint64_t objects[GT_API_MAX][2];
};

void ga_facts_init(struct ga_facts *f);
/* The record types ga_facts_event looks at (bit t: type t); report.c hands it no others: every
 * host type but the watermark, whose time is a barrier's (first/last times are the host
 * records'), no GPU type (their times are gpu.c's). */
#define GA_FACTS_TYPES                                                                             \
    (~((1ull << GT_REC_WATERMARK) | (1ull << GT_REC_GPU_KERNEL) | (1ull << GT_REC_GPU_MEMCPY) |    \
       (1ull << GT_REC_GPU_MEMSET) | (1ull << GT_REC_GPU_EXTCORR) | (1ull << GT_REC_GPU_API) |     \
       (1ull << GT_REC_GPU_NAME) | (1ull << GT_REC_GPU_DROPPED)))
void ga_facts_event(struct ga_facts *f, const struct ga_event *ev);
void ga_facts_free(struct ga_facts *f);
/* "dlsym", "cuGetProcAddress", "cuGetProcAddress_v2", "other" */
const char *ga_resolve_how_name(unsigned how);
/* "on", "off_by_user", "not_found", "owned", "failed", "unknown" */
const char *ga_cupti_status_name(unsigned status);

#endif
