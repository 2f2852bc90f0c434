/* GPU timeline analysis (DESIGN §6) from CUPTI activity records: per device span, busy time
 * (the exact union of kernel, memcpy and memset intervals over all streams), idle time and
 * utilization; per stream kernels and busy time; GPU time per kernel name; copies by direction;
 * memsets; and the link of every kernel to its host launch (kernel corr -> GT_REC_GPU_EXTCORR ->
 * gt_rec_launch.corr; graph kernels carry their cuGraphLaunch's corr).
 *
 * It streams (docs/ANALYSES.md, "Streaming"): GPU records reach it in CUPTI's delivery order, host
 * records in time order, so activities wait (see GA_REORDER_NS below: in sorted queues as they
 * mostly arrive in sorted runs, the rest in a reorder heap), leave in time order (per device:
 * ga_gpu_act_cmp's), are added to every figure and handed to the
 * idle-gap analysis (g->gaps), and are forgotten. A kernel takes its launch along when both its
 * external correlation and the launch are known as it arrives (else it is linked as it leaves);
 * the table entries go then. Entries no kernel takes wait in two generations of tables until
 * GA_LINK_HORIZON_NS of GPU time has passed (evicted, counted). Memory: the activities and
 * launches of about GA_REORDER_NS of trace (at least GA_REORDER_MIN activities; while a launch's
 * kernel has not arrived, every activity started since the launch, up to GA_LINK_HORIZON_NS and
 * GA_REORDER_MAX), what waits for its other half, one entry per kernel name, device, stream and
 * thread, and the latency sketch. */
#ifndef GA_GPU_H
#define GA_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "input/records.h"
#include "analyses/gaps.h"
#include "analyses/gpu_act.h"
#include "analyses/timeline.h"

/* How long an activity waits for earlier ones that CUPTI delivers later: the shim's traces of the
 * test suite arrive up to 26 ms out of start order (cupti_exit, 100,000 launches on 4 threads),
 * gen_trace --timeline up to 8 ms; CUPTI writes a record when the work completes, so a long kernel
 * arrives after the shorter ones that started later on other streams. An activity leaves when it
 * started GA_REORDER_NS before the newest GPU start and the newest host record (so its launch has
 * been delivered), GA_REORDER_MIN newer ones wait behind it (a slow trace gets a longer bound) and
 * it started before every kernel or graph launch whose (first) kernel has not arrived (`pend`: a
 * long kernel holds what started after its launch until it arrives; a launch stops holding once
 * GA_LINK_HORIZON_NS of GPU starts have passed it); or when GA_REORDER_MAX wait. One that arrives
 * older than what already left is counted in `late` and left out of everything (like
 * `skipped`). */
#define GA_REORDER_NS  1000000000ull
#define GA_REORDER_MIN (1u << 15) /* activities always held (56 bytes, 72 with a queue entry) */
#define GA_REORDER_MAX (1u << 19) /* activities held at most */
/* Unresolved launches and external correlations are evicted this long (in GPU time: the start of
 * the activities leaving the heap) after they arrived, at most twice that. */
#define GA_LINK_HORIZON_NS 10000000000ull
#define GA_LINK_MAX        (1u << 20) /* unresolved launches (and correlations) held at most */
/* Against hostile traces (each is a per-entry cost of the report itself): devices analyzed (the
 * activities of others count as late), kernel name keys (others count under name id 0, no
 * function), launching threads listed (others are counted but not listed). */
#define GA_DEVICES_MAX    1024
#define GA_KACC_MAX       (1u << 18)
#define GA_TIDS_MAX       (1u << 16)
#define GA_LATENCY_VALUES (1u << 17) /* distinct launch latencies kept exactly (gpu_latency.c) */

/* A reorder heap entry: an activity's start and its index in ga_gpu.held. */
struct ga_gpu_held {
    uint64_t start;
    uint32_t idx;
};

/* A queue of waiting activities in leaving order (a ring of cap entries, a power of two). */
struct ga_gpu_run {
    struct ga_gpu_held *e;
    size_t head, n, cap;
};
#define GA_GPU_RUNS     8
#define GA_GPU_RUN_KEEP (1u << 14) /* a queue this large (256 KiB) is freed when it empties */

#define GA_GPU_CALL_CACHE 64 /* a power of two */

/* The end of each thread's latest CUDA call while reading (host records are in time order). */
struct ga_gpu_call {
    uint64_t end;
    uint16_t api;
};

struct ga_gpu_stream {
    uint32_t stream;
    uint64_t kernels, busy_ns;
    uint64_t s, e; /* while reading: the stream's open merged interval */
};

struct ga_gpu_device {
    uint32_t device;
    uint64_t first, last; /* CLOCK_MONOTONIC ns: first activity start, last activity end */
    uint64_t busy_ns, kernels;
    /* the union of its kernels' intervals, collectives (ga_gpu_is_collective) left out: the
     * "compute" time of Holistic Trace Analysis' temporal breakdown */
    uint64_t compute_ns;
    struct ga_gpu_stream *streams; /* by stream id after ga_gpu_finish */
    size_t n_streams, streams_cap;
    /* while reading */
    uint64_t s, e;   /* the open merged busy interval */
    uint64_t cs, ce; /* the open merged compute interval, when c_open */
    int c_open;
    struct ga_map stream_idx; /* stream -> index into streams */
    size_t last_stream;
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

/* Launch latencies: exact counts per log-linear bucket, and the exact values of the buckets near
 * the running median while they fit in GA_LATENCY_VALUES (gpu_latency.c). */
struct ga_latency {
    uint64_t n;
    int64_t min, max;
    uint64_t *count;      /* per bucket */
    uint32_t *distinct;   /* per bucket: values in `values` */
    uint8_t *dropped;     /* per bucket: its values were given up (the median there is not exact) */
    struct ga_map values; /* value -> count, for the buckets not dropped */
};

struct ga_gpu_link {
    uint64_t kernels, linked, graph_kernels, unlinked; /* linked includes graph_kernels */
    /* launch -> kernel start of linked kernels launched directly (not from a graph) */
    uint64_t latency_n;
    int64_t latency_min, latency_median, latency_max; /* median: the lower middle value */
    int latency_exact;             /* 0: the median's bucket outgrew GA_LATENCY_VALUES */
    struct ga_gpu_thread *threads; /* launching threads of linked kernels, most kernels first */
    size_t n_threads;
};

struct ga_launch_ent {
    struct ga_gpu_launch l;
    uint32_t next_free; /* free entries: 1 + index of the next free one, 0 none */
    uint32_t seq;       /* which launch holds the entry (its place in `pend`) */
    uint8_t used;       /* a kernel took it (graph launches stay for their other kernels) */
    uint8_t pending;    /* in `pend`: no kernel of it has arrived yet */
};

/* A launch whose kernel has not arrived: its kernel cannot start before `ts`. */
struct ga_pend {
    uint64_t ts;
    uint32_t idx, seq; /* its slab entry, valid while that entry is pending with this seq */
};

/* Two generations of a table: entries are looked up in both, added to `young`; when the GPU time
 * passes `since` + horizon, `old` is evicted and `young` becomes it. */
struct ga_gen_map {
    struct ga_map young, old;
    uint64_t since;
};

/* Per kernel name key while reading: (name_id, function handle of a kernel launch or ~0). */
struct ga_kacc {
    uint32_t name_id;
    uint64_t func;
    uint64_t count, total, max;
    int collective; /* its name, known when it was added, is a collective's */
};

struct ga_gpu {
    /* the last GT_REC_CUPTI record */
    int cupti_seen;
    unsigned cupti_status;
    int64_t clock_offset;
    struct ga_gaps *gaps; /* the idle-gap analysis fed in (device, time) order, or NULL */
    int keep_acts;        /* set before reading: keep every activity (several-process view) */
    /* set before reading, or NULL: called with each activity as it leaves, in time order per
     * device, with its linked launch (or NULL); for exports that stream every event */
    void (*act_sink)(void *ctx, const struct ga_gpu_act *a, const struct ga_gpu_launch *la);
    void *act_ctx;
    /* kept while reading */
    struct ga_gpu_act *acts; /* keep_acts only: every activity analyzed, in time order */
    size_t n_acts, acts_cap; /* n_acts: activities analyzed (kept or not) */
    /* the waiting activities (n_wait): start and held index of each (16 bytes to move, not the
     * activity's 56), leaving by start then ga_gpu_act_cmp; those that arrived in order in
     * GA_GPU_RUNS queues, the others in the reorder heap (gpu.c) */
    struct ga_gpu_run runs[GA_GPU_RUNS];
    struct ga_gpu_held *heap;
    size_t n_wait, n_heap, heap_cap;
    size_t max_wait;         /* most activities waiting at once */
    struct ga_gpu_act *held; /* the waiting activities; free slots listed in free_held */
    uint32_t *free_held;
    size_t n_held, held_cap, n_free_held, free_held_cap;
    uint64_t gpu_max, host_max; /* newest GPU start and host record time seen */
    uint64_t frontier;          /* start of the last activity that left the heap */
    int left;                   /* one has left */
    struct ga_map name_idx;     /* gpu name id -> index into names */
    char **names;
    size_t n_names, names_cap;
    struct ga_gen_map extcorr;      /* CUPTI corr -> launch corr */
    struct ga_gen_map launch_idx;   /* launch corr -> index into launches */
    struct ga_launch_ent *launches; /* the unresolved launches: a slab with a free list */
    size_t n_launches, launches_cap;
    uint32_t free_head;   /* 1 + index of a free slab entry, 0 none */
    struct ga_pend *pend; /* kernel and graph launches in time order, the taken ones lazily out */
    size_t pend_head, n_pend, pend_cap;
    size_t n_pending;    /* slab entries pending */
    uint32_t pend_seq;   /* the last launch's seq */
    struct ga_map early; /* launch corr -> held kernels that arrived before that launch record */
    struct ga_map last_call_idx; /* tid -> index into last_call */
    struct ga_gpu_call *last_call;
    size_t n_last_call, last_call_cap;
    /* a direct-mapped cache of tid -> 1 + index in front of last_call_idx (0: empty slot) */
    uint32_t call_cache_tid[GA_GPU_CALL_CACHE], call_cache_idx[GA_GPU_CALL_CACHE];
    struct ga_map seen_devices; /* devices let in (GA_DEVICES_MAX) */
    size_t n_seen_devices;
    uint32_t last_seen_device; /* with n_seen_devices: one of them, the last asked about */
    struct ga_map device_idx;  /* device -> index into devices */
    size_t devices_cap, last_device;
    struct ga_map kacc_idx; /* (name_id, func) -> index into kacc */
    struct ga_kacc *kacc;
    size_t n_kacc, kacc_cap;
    struct ga_map tid_kernels; /* tid -> linked kernels */
    struct ga_latency latency;
    uint64_t dropped;     /* sum of GT_REC_GPU_DROPPED counts */
    uint64_t api_records; /* GT_REC_GPU_API records (counted only) */
    uint64_t records;     /* GPU records of every type delivered */
    uint64_t skipped;     /* activities with no or reversed times, left out of everything */
    uint64_t late; /* arrived after later ones had left, or on a device past GA_DEVICES_MAX: out */
    uint64_t launches_evicted; /* launches no kernel took within the horizon (or over the cap) */
    uint64_t extcorr_evicted;  /* correlations no kernel took within the horizon (or over it) */
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
/* ga_gpu_event for a record the caller knows to be an ALLOC, a FREE, a LAUNCH or a SPAN (from a
 * host chunk): no test of the type. */
void ga_gpu_alloc_event(struct ga_gpu *g, const struct ga_event *ev);
void ga_gpu_free_event(struct ga_gpu *g, const struct ga_event *ev);
void ga_gpu_launch_event(struct ga_gpu *g, const struct ga_event *ev);
void ga_gpu_span_event(struct ga_gpu *g, const struct ga_event *ev);
/* Lets the held activities leave, then computes the rest; tl names kernels by their launch's
 * function handle when no GPU name record did. */
void ga_gpu_finish(struct ga_gpu *g, const struct ga_timeline *tl);
void ga_gpu_free(struct ga_gpu *g);

/* 1 when the trace had GPU activity (kernels, copies or memsets) to analyze. */
int ga_gpu_has_activity(const struct ga_gpu *g);
/* "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP", "unknown" */
const char *ga_copy_kind_name(unsigned kind);
/* The order activities leave in: device, start, end, stream, kind, corr. */
int ga_gpu_act_cmp(const void *a, const void *b);
/* A short name of an activity: its kernel name (as top_kernels names it, mangled), "memcpy HtoD"
 * style for copies, "memset". Valid until ga_gpu_free / ga_timeline_free; after ga_gpu_finish. */
const char *ga_gpu_act_name(const struct ga_gpu *g, const struct ga_timeline *tl,
                            const struct ga_gpu_act *a);
/* A kernel name of NCCL's or RCCL's (contains "nccl" or "rccl", any case): a collective, which
 * waits on the GPU for other ranks. */
int ga_gpu_is_collective(const char *name);
/* Length of the union of the intervals [start, end) of a[0..n), which it sorts by start. */
uint64_t ga_gpu_union_ns(struct ga_gpu_act *a, size_t n);

/* gpu_latency.c: the latency sketch. */
void ga_latency_add(struct ga_latency *l, int64_t v);
/* The lower middle value; *exact 0 when its bucket's values were given up (then the bucket's
 * lowest possible value). */
int64_t ga_latency_median(const struct ga_latency *l, int *exact);
void ga_latency_free(struct ga_latency *l);

#endif
