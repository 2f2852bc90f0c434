/* Attribution of events to host code: per stack while reading, then (at the end) per call site
 * and per library. Call site = the first frame from the top outside the CUDA driver/runtime and
 * the tracer (libcuda, libcudart, libgputrace, static cudart's functions) and outside framework
 * allocator internals (a built-in pattern list, or --ignore-frames REGEX instead). Library = the
 * object of the first frame outside the driver/runtime and the tracer: the one that made the
 * CUDA call. */
#ifndef GA_SITES_H
#define GA_SITES_H

#include <regex.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "analyses/memory.h"
#include "input/records.h"
#include "analyses/stacks.h"

/* Frames matched by this (against the function name and against the object's file name) are
 * framework allocator internals, skipped when choosing a call site. */
extern const char ga_default_ignore_frames[];

/* What happened at one stack, one site or one library. */
struct ga_site_stats {
    uint64_t allocs, alloc_bytes, alloc_failed, leaked_bytes, leaked_count;
    uint64_t launches, launch_failed;
    uint64_t syncs, sync_ns;
    uint64_t peak_bytes, peak_count; /* device memory live at the process peak */
    uint64_t temp_count, temp_bytes; /* temporary allocations (docs/ANALYSES.md) */
};

struct ga_site {
    const struct ga_frame *frame; /* the call-site frame; NULL: the stack is unknown */
    uint32_t library;             /* module index, GA_NO_MODULE unknown */
    struct ga_site_stats st;
    uint32_t top_alloc, top_launch, top_sync; /* the stack that weighs most in each, 0 none */
    uint64_t top_alloc_w, top_launch_w, top_sync_w;
    uint32_t stacks; /* distinct stacks that lead here */
};

struct ga_library {
    uint32_t module; /* GA_NO_MODULE: unknown */
    struct ga_site_stats st;
};

#define GA_SITES_STACK_CACHE 64 /* a power of two */

struct ga_sites {
    int have_stacks;        /* some event carried a stack */
    struct ga_map by_stack; /* stack id -> index into per_stack */
    /* a direct-mapped cache of stack id -> index in front of by_stack (id 0, never looked up:
     * an empty slot) */
    uint32_t recent_stack[GA_SITES_STACK_CACHE], recent_idx[GA_SITES_STACK_CACHE];
    struct ga_site_stats *per_stack;
    uint32_t *stack_ids;
    size_t n_stacks, cap, ids_cap;
    uint64_t no_stack_allocs, no_stack_launches, no_stack_syncs; /* events without a stack */
    /* after ga_sites_finish */
    struct ga_site *sites;
    size_t n_sites;
    struct ga_map site_of; /* (hash of the site, probe) -> index into sites */
    struct ga_library *libs;
    size_t n_libs, libs_cap, sites_cap;
    struct ga_map lib_of;      /* (module, 0) -> index into libs */
    struct ga_map frame_class; /* (frame address, 0) -> FRAME_* bits, each frame matched once */
    struct ga_map site_of_stack; /* (stack id, 0) -> index into sites, after finish */
    regex_t ignore;
    int ignore_ok;
    char ignore_error[160];
};

/* ignore_frames: a POSIX extended regex replacing the built-in list, NULL for the built-in one.
 * Returns -1 (error text in s->ignore_error) when it does not compile. */
int ga_sites_init(struct ga_sites *s, const char *ignore_frames);
/* The record types ga_sites_event looks at (bit t: type t); report.c hands it no others. */
#define GA_SITES_TYPES                                                                             \
    ((1ull << GT_REC_ALLOC) | (1ull << GT_REC_ALLOC_FAIL) | (1ull << GT_REC_LAUNCH) |              \
     (1ull << GT_REC_SPAN))
void ga_sites_event(struct ga_sites *s, const struct ga_event *ev);
/* Leaks from the memory analysis' live allocations; sites from the stacks. */
void ga_sites_finish(struct ga_sites *s, struct ga_stacks *st, const struct ga_memory *m);
void ga_sites_free(struct ga_sites *s);

enum ga_site_order {
    GA_SITES_BY_BYTES,
    GA_SITES_BY_LAUNCHES,
    GA_SITES_BY_SYNC,
    GA_SITES_BY_PEAK, /* bytes live at the process peak */
    GA_SITES_BY_TEMP, /* temporary allocations (count) */
    GA_SITES_BY_LEAK, /* bytes leaked */
};
/* The site a stack leads to (after ga_sites_finish), NULL when unknown. */
const struct ga_site *ga_sites_of_stack(const struct ga_sites *s, uint32_t stack);
/* Sites with allocations (failed ones too) / launches / blocking calls, heaviest first (bytes,
 * launches, time); *n of them, in an array the caller frees. */
const struct ga_site **ga_sites_sorted(const struct ga_sites *s, enum ga_site_order k, size_t *n);
/* Libraries with allocations, by bytes; *n of them, in an array the caller frees. */
struct ga_library *ga_libraries_sorted(const struct ga_sites *s, size_t *n);

/* A frame's class: bit 1 the CUDA driver/runtime or the tracer, bit 2 framework internals (the
 * ignore list). */
unsigned ga_sites_frame_class(struct ga_sites *s, const struct ga_stacks *st,
                              const struct ga_frame *f);
/* The frames of a stack, innermost first, as symbolized (at most max). */
size_t ga_sites_stack_frames(struct ga_stacks *st, uint32_t stack, const struct ga_frame **out,
                             size_t max);

#endif
