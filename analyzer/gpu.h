/* GPU timeline analysis (DESIGN §6) from CUPTI activity records: per device span, busy time
 * (the exact union of kernel, memcpy and memset intervals over all streams), idle time and
 * utilization; per stream kernels and busy time; GPU time per kernel name; copies by direction;
 * memsets; and the link of every kernel to its host launch (kernel corr -> GT_REC_GPU_EXTCORR ->
 * gt_rec_launch.corr; graph kernels carry their cuGraphLaunch's corr).
 *
 * GPU records reach the analysis in CUPTI's delivery order, not in time order, so it keeps what it
 * must sort until the end (a later version streams it):
 *   - 48 bytes per kernel, memcpy and memset record (struct ga_gpu_act),
 *   - per successful launch: 40 bytes plus a hash slot (kept unless the trace's CUPTI status,
 *     which precedes every launch, says the GPU timeline is not recorded),
 *   - a hash slot per external-correlation record, and the kernel names.
 * Memory is thus proportional to the GPU records (and launches), not to the rest of the file. */
#ifndef GA_GPU_H
#define GA_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "records.h"
#include "timeline.h"

#define GA_COPY_KINDS 11 /* CUpti_ActivityMemcpyKind 0..10 (PtoP); other values count as 0 */

enum ga_gpu_kind { GA_GPU_KERNEL = 0, GA_GPU_MEMCPY = 1, GA_GPU_MEMSET = 2 };

/* One interval of GPU activity, as recorded (times in the record's clock until finish). */
struct ga_gpu_act {
    uint64_t start, end;
    union {
        uint64_t bytes;  /* copies and memsets */
        uint64_t launch; /* kernels, after ga_gpu_finish: 1 + index into launches, 0 unlinked */
    };
    uint32_t corr, device, stream;
    uint32_t name_id;  /* kernels: gt_rec_gpu_name id */
    uint32_t graph_id; /* kernels: 0 unless launched from a graph */
    uint8_t kind;      /* enum ga_gpu_kind */
    uint8_t copy_kind; /* copies: CUpti_ActivityMemcpyKind, clamped below GA_COPY_KINDS */
};

struct ga_gpu_launch {
    uint64_t ts, func;
    uint64_t prev_end; /* end of the launching thread's previous CUDA call, 0 none */
    uint32_t tid;
    uint32_t stack; /* host call stack (gt_rec_stack node id), 0 none */
    uint16_t api;
    uint16_t prev_api; /* that previous call's api, 0 none */
};

/* The end of each thread's latest CUDA call while reading (host records are in time order). */
struct ga_gpu_call {
    uint64_t end;
    uint16_t api;
};

struct ga_gpu_stream {
    uint32_t stream;
    uint64_t kernels, busy_ns;
};

struct ga_gpu_device {
    uint32_t device;
    uint64_t first, last; /* CLOCK_MONOTONIC ns: first activity start, last activity end */
    uint64_t busy_ns, kernels;
    struct ga_gpu_stream *streams; /* by stream id */
    size_t n_streams, streams_cap;
};

struct ga_gpu_kstat {
    char *name;      /* as recorded (mangled), "<unknown>" when no record named it */
    char *demangled; /* __cxa_demangle of name, or a copy of it */
    uint64_t count, total_ns, max_ns;
};

struct ga_gpu_sum {
    uint64_t count, bytes, total_ns;
};

struct ga_gpu_thread {
    uint32_t tid;
    uint64_t kernels;
};

struct ga_gpu_link {
    uint64_t kernels, linked, graph_kernels, unlinked; /* linked includes graph_kernels */
    /* launch -> kernel start of linked kernels launched directly (not from a graph) */
    uint64_t latency_n;
    int64_t latency_min, latency_median, latency_max; /* median: the lower middle value */
    struct ga_gpu_thread *threads; /* launching threads of linked kernels, most kernels first */
    size_t n_threads;
};

struct ga_gpu {
    /* the last GT_REC_CUPTI record */
    int cupti_seen;
    unsigned cupti_status;
    int64_t clock_offset;
    /* kept while reading */
    struct ga_gpu_act *acts;
    size_t n_acts, acts_cap;
    struct ga_map name_idx; /* gpu name id -> index into names */
    char **names;
    size_t n_names, names_cap;
    struct ga_map extcorr;    /* CUPTI corr -> launch corr */
    struct ga_map launch_idx; /* launch corr -> index into launches */
    struct ga_gpu_launch *launches;
    size_t n_launches, launches_cap;
    struct ga_map last_call_idx; /* tid -> index into last_call */
    struct ga_gpu_call *last_call;
    size_t n_last_call, last_call_cap;
    uint32_t last_tid; /* the thread last looked up, and its index (valid when n_last_call) */
    size_t last_tid_idx;
    uint64_t dropped;     /* sum of GT_REC_GPU_DROPPED counts */
    uint64_t api_records; /* GT_REC_GPU_API records (counted only) */
    uint64_t records;     /* GPU records of every type delivered */
    uint64_t skipped;     /* activities with no or reversed times, left out of everything */
    /* after ga_gpu_finish */
    uint64_t kernel_count;
    struct ga_gpu_device *devices; /* by device id */
    size_t n_devices;
    struct ga_gpu_kstat *kernels; /* by total_ns descending, then name */
    size_t n_kernels;
    struct ga_gpu_sum copies[GA_COPY_KINDS];
    struct ga_gpu_sum memsets;
    struct ga_gpu_link link;
};

void ga_gpu_init(struct ga_gpu *g);
/* Takes GPU records, launches and the CUPTI status record; ignores the rest. */
void ga_gpu_event(struct ga_gpu *g, const struct ga_event *ev);
/* Applies the clock offset, sorts and computes everything; tl names kernels by their launch's
 * function handle when no GPU name record did. */
void ga_gpu_finish(struct ga_gpu *g, const struct ga_timeline *tl);
void ga_gpu_free(struct ga_gpu *g);

/* 1 when the trace had GPU activity (kernels, copies or memsets) to analyze. */
int ga_gpu_has_activity(const struct ga_gpu *g);
/* "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP", "unknown" */
const char *ga_copy_kind_name(unsigned kind);
/* The order of ga_gpu.acts after ga_gpu_finish: device, start, end, stream, kind, corr. */
int ga_gpu_act_cmp(const void *a, const void *b);
/* The host launch a GPU activity is linked to (see the top comment), NULL when none; valid after
 * ga_gpu_finish (only kernels are linked). */
const struct ga_gpu_launch *ga_gpu_launch_of(const struct ga_gpu *g, const struct ga_gpu_act *a);
/* A short name of an activity: its kernel name (as top_kernels names it, mangled), "memcpy HtoD"
 * style for copies, "memset". Valid until ga_gpu_free / ga_timeline_free. */
const char *ga_gpu_act_name(const struct ga_gpu *g, const struct ga_timeline *tl,
                            const struct ga_gpu_act *a);
/* Length of the union of the intervals [start, end) of a[0..n), which it sorts by start. */
uint64_t ga_gpu_union_ns(struct ga_gpu_act *a, size_t n);

/* demangle.c: a malloc'd demangled C++ name, or NULL when `name` is not a mangled one (or one
 * whose demangling would be too big or slow: those stay mangled). */
char *ga_demangle(const char *name);
/* Starts a new report's time budget for the names demangled in a child process. */
void ga_demangle_reset(void);

#endif
