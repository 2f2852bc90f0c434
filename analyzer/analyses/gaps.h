/* GPU idle gaps (DESIGN §6; exact rules in docs/ANALYSES.md, "GPU idle gaps"): per device the
 * maximal empty intervals inside the active span, each with a cause taken from what the host
 * threads were doing (host busy, synchronize, allocation, dependency, launch latency), the call
 * site that explains it, totals per cause and per call site, a histogram of gap lengths,
 * utilization over fixed windows, and Holistic Trace Analysis' per-stream idle categories.
 *
 * It streams (docs/ANALYSES.md, "Streaming"): the GPU analysis hands it every activity in time
 * order with its launch (ga_gaps_act); per device a sweep keeps the open busy interval and, while
 * the activities that start where a gap ends arrive, that one gap; the host calls that can explain
 * a gap (synchronizations, blocking copies, allocation and free calls of known duration) are kept
 * per thread, 32 bytes each, only while a future gap can still reach them (they end after the
 * start of the earliest gap still possible) and only when the trace's CUPTI status lets GPU
 * records follow; at most GA_HOST_CALLS_MAX at once (a thread over it loses its oldest, counted in
 * calls_dropped). Memory: the top gaps per device (--all-gaps writes every gap to a temporary
 * file as well, read back one at a time by ga_gaps_each), GA_FINE_WINDOWS busy
 * counters per device (utilization windows at most GA_WINDOWS_MAX per device are made of them at
 * the end), one entry per stream, and one per (cause, stack) that idled the GPU. */
#ifndef GA_GAPS_H
#define GA_GAPS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyses/gpu_act.h"
#include "base/hashmap.h"
#include "input/records.h"
#include "analyses/sites.h"
#include "analyses/timeline.h"

enum ga_cause {
    GA_CAUSE_HOST_BUSY,      /* the work that ended the gap was launched after it began */
    GA_CAUSE_SYNC,           /* the launching thread sat in a synchronize / blocking copy */
    GA_CAUSE_ALLOC,          /* the launching thread sat in an allocation or free call */
    GA_CAUSE_DEPENDENCY,     /* the work was queued before the gap but started late */
    GA_CAUSE_LAUNCH_LATENCY, /* a gap shorter than GA_LAUNCH_LATENCY_NS between back-to-back work */
    GA_CAUSE_UNKNOWN,        /* the work is not linked to a launch and no host call explains it */
    GA_CAUSES
};

#define GA_GAP_BUCKETS        6     /* <10us, 10-100us, 100us-1ms, 1-10ms, 10-100ms, >=100ms */
#define GA_GAPS_TOP           20    /* gaps kept per device by default (longest first) */
#define GA_LAUNCH_LATENCY_NS  10000 /* gaps shorter than this are launch latency */
#define GA_HTA_KERNEL_WAIT_NS 30    /* HTA's default consecutive_kernel_delay */
#define GA_WINDOWS_MAX        100   /* utilization windows per device at most */
#define GA_WINDOW_LOW         0.5   /* windows busy less than this are flagged (as nsys does) */
#define GA_THREADS_SCANNED    256   /* threads looked at for a gap whose work has no launch */
#define GA_HOST_CALLS_MAX     (1u << 18) /* host calls held at once */
#define GA_CALL_THREADS_MAX   4096       /* threads with host calls held at most */
#define GA_FINE_WINDOWS       1000       /* busy counters per device while reading */
#define GA_ENDING_LOOK        64 /* activities starting at a gap's end looked at for a launch */

enum ga_host_kind { GA_HOST_NONE = 0, GA_HOST_SYNC = 1, GA_HOST_ALLOC = 2 };

/* A host call that blocks the calling thread: [start, end] in CLOCK_MONOTONIC ns. */
struct ga_host_call {
    uint64_t start, end;
    uint32_t tid, stack;
    uint16_t api;
    uint8_t kind; /* enum ga_host_kind */
};

struct ga_gap {
    uint64_t start, dur;                /* CLOCK_MONOTONIC ns */
    struct ga_gpu_act before, after;    /* the activities around it */
    const struct ga_gpu_launch *launch; /* the launch of `after` (&launch_copy), NULL when none */
    struct ga_gpu_launch launch_copy;
    struct ga_host_call call; /* the blocking call of the sync/allocation phase, kind 0 none */
    uint64_t call_ns;         /* time of that call inside the window looked at */
    uint64_t phase_ns[GA_CAUSES];    /* the gap's time by phase; they add up to dur */
    uint32_t phase_stack[GA_CAUSES]; /* the stack each phase is attributed to, 0 none */
    uint32_t stack;                  /* the stack of the largest phase (the cause), 0 none */
    uint8_t cause;                   /* enum ga_cause: the largest phase */
    uint8_t has_launch;
};

/* The sweep of one device's activities in time order (ga_gaps_sweep's rules, one at a time). */
struct ga_sweep_item {
    struct ga_gpu_act a;
    struct ga_gpu_launch l;
    size_t i; /* index in the sequence */
    uint8_t has_l;
};

struct ga_sweep {
    int started, held; /* held: a zero-length activity in an empty stretch, not yet known last */
    uint64_t s, e, total;
    struct ga_sweep_item before, hold;
    size_t n; /* activities fed */
};

/* Idle time of one cause (phase) at one call site (after finish: stacks folded into sites);
 * gaps: those whose cause is this phase at this site. */
struct ga_idle_site {
    uint64_t idle_ns, gaps;
    uint32_t stack;             /* the stack that weighs most here */
    const struct ga_site *site; /* NULL: no stack, or one the trace does not define */
    uint8_t cause;
};

struct ga_window {
    uint64_t start, len, busy; /* CLOCK_MONOTONIC start; len < window_ns for the last one */
};

/* Holistic Trace Analysis' idle categories of one stream. */
struct ga_hta_stream {
    uint32_t stream;
    uint64_t host_wait_ns, kernel_wait_ns, other_ns;
    uint64_t host_wait_n, kernel_wait_n, other_n;
};

struct ga_gaps_device {
    uint32_t device;
    uint64_t first, last, busy_ns, idle_ns;
    uint64_t n_gaps;
    uint64_t cause_ns[GA_CAUSES], cause_n[GA_CAUSES]; /* phase time; gaps of that cause */
    uint64_t bucket_n[GA_GAP_BUCKETS], bucket_ns[GA_GAP_BUCKETS];
    struct ga_gap *gaps; /* longest first (ties: earlier first) */
    size_t n_kept, kept_cap;
    struct ga_idle_site *sites; /* by idle_ns descending */
    size_t n_sites, sites_cap;
    struct ga_map site_idx; /* (cause, stack) -> index into sites, while sweeping */
    uint64_t window_ns;
    struct ga_window *windows;
    size_t n_windows;
    uint64_t low_windows;      /* windows busy less than GA_WINDOW_LOW of their length */
    struct ga_hta_stream *hta; /* by stream id */
    size_t n_hta, hta_cap;
    /* while reading */
    struct ga_sweep sw;
    int pending;            /* a gap waits for the activities that start where it ends */
    struct ga_gap pend;     /* that gap, its `after` the first of them */
    size_t pend_looked;     /* of them, how many were looked at (GA_ENDING_LOOK at most) */
    uint64_t fine_ns;       /* busy time per fine window of fine_ns from `first` */
    uint64_t *fine;         /* GA_FINE_WINDOWS of them */
    struct ga_map hta_idx;  /* stream -> index into hta */
    uint64_t *hta_prev_end; /* per hta entry: end of the stream's previous activity */
    size_t hta_prev_cap, last_hta;
};

/* A host call as a thread's list keeps it: mx is the latest end of it and the thread's calls
 * before it (sorted by start), which both finds the first call that reaches a time and trims
 * overlapping calls as the analysis always has (docs/ANALYSES.md). */
struct ga_tcall {
    uint64_t start, end, mx;
    uint32_t stack;
    uint16_t api;
    uint8_t kind;
};

struct ga_thread_calls {
    uint32_t tid;
    struct ga_tcall *c; /* c[head, n): held, sorted by (start, end, kind) */
    size_t head, n, cap;
    int evicted; /* some calls were let go: `gone` is the last of them */
    struct ga_tcall gone;
};

struct ga_gaps {
    size_t top;                      /* gaps kept per device, 0 = all */
    FILE *spill;                     /* ga_gaps_keep_all: every gap, as found; NULL: not asked */
    int spill_errno;                 /* writing it failed (a full disk): ga_gaps_each fails */
    int cupti_off;                   /* the last CUPTI status says no GPU records follow */
    uint64_t n_calls, calls_dropped; /* host calls kept (ever), and those dropped or let go early */
    size_t live_calls;               /* held now */
    struct ga_thread_calls *threads; /* by tid */
    size_t n_threads, threads_cap, last_thread;
    size_t n_acts;                  /* GPU activities swept */
    uint64_t visits_left;           /* host calls the cause rules may still look at (a bound) */
    uint64_t frontier;              /* start of the latest activity */
    struct ga_gaps_device *devices; /* by device id after ga_gaps_finish */
    size_t n_devices, devices_cap, last_device;
    struct ga_map device_idx;
    /* Each maximal busy interval of a device, in time order per device (the device state
     * analysis lays them over its NVML samples); NULL: none. */
    void (*busy_hook)(void *ctx, uint32_t device, uint64_t s, uint64_t e);
    void *busy_ctx;
    /* Each gap once classified (the host-activity join, hostidle.c); NULL: none. */
    void (*gap_hook)(void *ctx, uint32_t device, const struct ga_gap *gp);
    void *gap_ctx;
};

/* No gap still to come starts before this: the earliest open one, the end of a device's busy
 * interval, or the latest activity's start (a device yet to be seen). */
uint64_t ga_gaps_floor(const struct ga_gaps *x);
/* top: gaps to keep per device (GA_GAPS_TOP by default), 0 keeps all. */
void ga_gaps_init(struct ga_gaps *x, size_t top);
/* --all-gaps with memory bounded by the live state: every gap also goes to a temporary file (the
 * top ones stay in memory for everything else). Without a temporary file (no TMPDIR space) every
 * gap is kept in memory instead. */
void ga_gaps_keep_all(struct ga_gaps *x);
/* After ga_gaps_finish, with ga_gaps_keep_all: fn for each gap of the device, in time order
 * (the gap's memory is valid during the call). 0, or -1 after a read error. */
int ga_gaps_each(const struct ga_gaps *x, uint32_t device,
                 int (*fn)(void *ctx, const struct ga_gap *gap), void *ctx);
/* The record types ga_gaps_event looks at (bit t: type t); report.c hands it no others. */
#define GA_GAPS_TYPES                                                                              \
    ((1ull << GT_REC_CUPTI) | (1ull << GT_REC_SPAN) | (1ull << GT_REC_ALLOC) |                     \
     (1ull << GT_REC_ALLOC_FAIL) | (1ull << GT_REC_FREE))
void ga_gaps_event(struct ga_gaps *x, const struct ga_event *ev);
/* ga_gaps_event for a record the caller knows to be an ALLOC, a FREE or a SPAN. */
void ga_gaps_alloc_event(struct ga_gaps *x, const struct ga_event *ev);
void ga_gaps_free_event(struct ga_gaps *x, const struct ga_event *ev);
void ga_gaps_span_event(struct ga_gaps *x, const struct ga_event *ev);
/* One GPU activity, in time order (ga_gpu's reorder heap), with its launch or NULL. */
void ga_gaps_act(struct ga_gaps *x, const struct ga_gpu_act *a, const struct ga_gpu_launch *l);
/* After ga_gpu_finish (which hands over the last activities) and ga_sites_finish. */
void ga_gaps_finish(struct ga_gaps *x, const struct ga_sites *sites);
void ga_gaps_free(struct ga_gaps *x);

const struct ga_gaps_device *ga_gaps_device_of(const struct ga_gaps *x, uint32_t device);
/* "host_busy", "synchronize", "allocation", "dependency", "launch_latency", "unknown" */
const char *ga_cause_name(unsigned cause);
/* "<10us", "10-100us", "100us-1ms", "1-10ms", "10-100ms", ">=100ms" */
const char *ga_gap_bucket_name(unsigned bucket);
unsigned ga_gap_bucket(uint64_t dur_ns);

/* The sweep the analysis runs per device (one activity at a time), exposed for tests: a[0..n)
 * sorted by start; calls
 * gap(ctx, start, end, before, after) for every maximal empty interval between them (before: the
 * activity whose end began it, after: the first one starting at its end) and busy(ctx, s, e) for
 * every maximal busy interval, in time order; either may be NULL. Returns the busy total. */
uint64_t ga_gaps_sweep(const struct ga_gpu_act *a, size_t n,
                       void (*gap)(void *ctx, uint64_t s, uint64_t e, size_t before, size_t after),
                       void (*busy)(void *ctx, uint64_t s, uint64_t e), void *ctx);
/* The width of the utilization windows of a span: the smallest 1, 2 or 5 times a power of ten,
 * at least 1 us, that cuts it into at most GA_WINDOWS_MAX windows. */
uint64_t ga_window_width(uint64_t span_ns);

#endif
