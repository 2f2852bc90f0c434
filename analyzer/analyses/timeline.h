/* Timeline analysis (host side for now): launches per API and per kernel name, blocking spans
 * per API. Kernel names arrive in GT_REC_FUNC records, possibly after the launches that use
 * them, so launches are counted per handle and named at the end. */
#ifndef GA_TIMELINE_H
#define GA_TIMELINE_H

#include <stdint.h>

#include "gputrace/trace_api.h"
#include "base/hashmap.h"
#include "input/records.h"

struct ga_api_calls {
    uint64_t count;    /* successful calls */
    uint64_t failed;   /* calls that returned an error */
    uint64_t total_ns; /* launches: time inside the call; spans: ts_exit - ts_enter */
    uint64_t bytes;    /* copies: bytes moved */
};

struct ga_kernel {
    char *name; /* resolved at the end; "<unknown 0x...>" for handles never named */
    uint64_t count;
    uint64_t total_ns; /* GPU time: 0 until GPU activity records are read */
};

#define GA_TL_HANDLE_CACHE 64 /* a power of two */

struct ga_timeline {
    struct ga_api_calls launch[GT_API_MAX];
    struct ga_api_calls span[GT_API_MAX];
    uint64_t launch_count, launch_failed, span_count;
    /* per handle while reading */
    struct ga_map handle_launches; /* handle -> successful kernel launches */
    /* launches not yet added to handle_launches: a direct-mapped cache of handles in front of
     * it (programs launch a few kernels many times); count 0: an empty slot */
    uint64_t recent_handle[GA_TL_HANDLE_CACHE], recent_count[GA_TL_HANDLE_CACHE];
    struct ga_map handle_name;     /* handle -> index into names */
    char **names;
    size_t n_names, names_cap;
    /* after ga_timeline_finish: one entry per kernel name, by count descending */
    struct ga_kernel *kernels;
    size_t n_kernels;
};

void ga_timeline_init(struct ga_timeline *t);
/* The record types ga_timeline_event looks at (bit t: type t); report.c hands it no others. */
#define GA_TIMELINE_TYPES ((1ull << GT_REC_LAUNCH) | (1ull << GT_REC_SPAN) | (1ull << GT_REC_FUNC))
void ga_timeline_event(struct ga_timeline *t, const struct ga_event *ev);
void ga_timeline_finish(struct ga_timeline *t);
void ga_timeline_free(struct ga_timeline *t);

#endif
