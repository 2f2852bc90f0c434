/* The GPU timeline as every renderer shows it (the text report's GPU sections, JSON's timeline
 * GPU fields and top_kernels): per device span, busy and idle time, streams; kernels by GPU time
 * (or, without GPU activity, by launches), copies, memsets, launch linking; the idle gaps with
 * their causes, phases, call sites, host calls and host samples; idle time by cause, call site,
 * host site and class; HTA's idle categories; utilization windows. The analyses' results (gpu,
 * gaps, hostidle, model/idle_host) copied into the model's structs once, at the end of the pass:
 * times from the trace start, names resolved (kernels demangled, APIs named), stacks and sites
 * resolved (model/view_stack.h). A renderer reads this and includes no analysis header. Memory:
 * the analyses' kept results again (devices, kernel names, streams, threads, the kept gaps). */
#ifndef GA_VIEW_GPU_H
#define GA_VIEW_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "model/view_stack.h"

#define GA_VGPU_COPY_KINDS  11 /* the analysis's GA_COPY_KINDS */
#define GA_VGPU_CAUSES      6  /* GA_CAUSES */
#define GA_VGPU_BUCKETS     6  /* GA_GAP_BUCKETS */
#define GA_VGPU_HI_CLASSES  8  /* GA_HI_CLASSES */
#define GA_VGPU_GAP_SAMPLES 3  /* host sample rows kept per listed gap */
#define GA_VGPU_IDLE_SITES  20 /* idle-by-site rows kept per device (GA_GAPS_TOP) */
#define GA_VGPU_GAPS_KEPT   20 /* gaps kept per device without --all-gaps (GA_GAPS_TOP) */

/* Gap causes, as the analysis numbers them (docs/ANALYSES.md, "GPU idle gaps"). */
enum ga_vgpu_cause {
    GA_VGPU_HOST_BUSY,
    GA_VGPU_SYNC,
    GA_VGPU_ALLOC,
    GA_VGPU_DEPENDENCY,
    GA_VGPU_LAUNCH_LATENCY,
    GA_VGPU_UNKNOWN,
};

/* Classes of host activity during idle time (docs/ANALYSES.md, "Idle time by host activity"). */
enum ga_vgpu_hi_class {
    GA_VGPU_HI_DATA_LOADING,
    GA_VGPU_HI_IO_WAIT,
    GA_VGPU_HI_CPU,
    GA_VGPU_HI_COMM,
    GA_VGPU_HI_SYNC,
    GA_VGPU_HI_ALLOC,
    GA_VGPU_HI_LAUNCH,
    GA_VGPU_HI_UNSAMPLED,
};

struct ga_vkernel {
    const char *name;      /* as recorded (mangled); "<unknown>" when no record named it */
    const char *demangled; /* or the name */
    uint64_t count, total_ns, max_ns; /* GPU times 0 in the by-launches list */
};

struct ga_vstream {
    uint32_t stream;
    uint64_t kernels, busy_ns;
};

struct ga_vhta {
    uint32_t stream;
    uint64_t host_wait_ns, kernel_wait_ns, other_ns;
    uint64_t host_wait_n, kernel_wait_n, other_n;
};

struct ga_vwindow {
    int64_t start_ns;
    uint64_t len, busy;
    int low; /* busy less than GA_VGPU_WINDOW_LOW of len */
};

/* An activity next to a gap. */
struct ga_vact {
    const char *name;      /* kernel name (mangled), "memcpy HtoD", "memset" */
    const char *demangled; /* kernels: demangled (or the name); others: the name */
    const char *kind;      /* "kernel", "memcpy", "memset" */
    uint32_t stream;
    int64_t start_ns, end_ns;
};

/* The launch of the work that ended a gap. */
struct ga_vlaunch {
    char api[64]; /* the API's name, "api#N" for ids this reader does not know */
    uint32_t tid;
    int64_t time_ns;
    int before_gap;              /* launched before the gap began */
    int have_prev;               /* the thread made a CUDA call before it */
    char prev_api[64];           /* that call's API */
    int have_since;              /* the launch came after that call ended */
    uint64_t since_prev_ns;      /* from its end to the launch */
    const struct ga_vsite *site; /* NULL: no stack, or no site for it */
};

/* The blocking host call of a gap's sync or allocation phase. */
struct ga_vcall {
    int kind; /* 0: none; 1 synchronize or blocking copy; 2 allocation or free */
    char api[64];
    uint32_t tid;
    int64_t enter_ns, exit_ns;
    uint64_t overlap_ns;
    const struct ga_vsite *site; /* NULL: no stack, or no site for it */
};

/* Host samples inside a gap, grouped by (site, class). */
struct ga_vgap_sample {
    const struct ga_vframe *site; /* NULL: unknown */
    unsigned cls;                 /* enum ga_vgpu_hi_class */
    uint64_t samples, on_cpu;     /* on_cpu: samples taken on CPU */
};

struct ga_vgap {
    int64_t start_ns;
    uint64_t dur;
    unsigned cause; /* enum ga_vgpu_cause: the largest phase */
    uint64_t phase_ns[GA_VGPU_CAUSES];
    const struct ga_vsite *site;   /* of the cause's stack; NULL: none */
    const struct ga_vstack *stack; /* the cause's stack; NULL: none */
    struct ga_vact before, after;
    int have_launch;
    struct ga_vlaunch launch;
    struct ga_vcall call;
    /* most samples first; the thread that ended the gap, else any (kept gaps only) */
    struct ga_vgap_sample samples[GA_VGPU_GAP_SAMPLES];
    size_t n_samples;
};

struct ga_vidle_site {
    unsigned cause;              /* enum ga_vgpu_cause */
    const struct ga_vsite *site; /* NULL: no stack, or one the trace does not define */
    uint64_t idle_ns, gaps;
};

struct ga_vhost_site {
    const struct ga_vframe *site;  /* innermost frame of the program's; NULL: none */
    unsigned cls;                  /* enum ga_vgpu_hi_class */
    const struct ga_vstack *stack; /* the stack that weighs most here; NULL: none */
    uint64_t idle_ns, on_cpu_ns, off_cpu_ns, samples;
};

/* One device's idle gaps. */
struct ga_vidle {
    uint32_t device;
    uint64_t span, idle_ns, n_gaps;
    uint64_t cause_ns[GA_VGPU_CAUSES], cause_n[GA_VGPU_CAUSES];
    uint64_t bucket_n[GA_VGPU_BUCKETS], bucket_ns[GA_VGPU_BUCKETS];
    struct ga_vgap *gaps; /* the kept gaps, longest first (ties: earlier first) */
    size_t n_kept;
    struct ga_vidle_site *sites; /* by idle time, at most GA_VGPU_IDLE_SITES */
    size_t n_sites, sites_total;
    int have_host; /* host samples say where the host was (host_sites, class_ns) */
    struct ga_vhost_site *host_sites; /* by idle time */
    size_t n_host_sites;
    uint64_t class_ns[GA_VGPU_HI_CLASSES];
    uint64_t window_ns, low_windows;
    struct ga_vwindow *windows;
    size_t n_windows;
    struct ga_vhta *hta; /* by stream */
    size_t n_hta;
};

struct ga_vgpu_device {
    uint32_t device;
    uint64_t span, busy_ns, compute_ns, kernels;
    int64_t first_ns, last_ns;
    struct ga_vstream *streams; /* by stream id */
    size_t n_streams;
    const struct ga_vidle *idle; /* its idle gaps; NULL: none analyzed */
};

struct ga_vsum {
    uint64_t count, bytes, total_ns;
};

struct ga_vthread {
    uint32_t tid;
    uint64_t kernels;
};

/* Kernels linked to their launches (linked includes graph_kernels), and the latency from a direct
 * launch to its kernel's start (median: the lower middle value; not exact when latency_exact 0). */
struct ga_vlink {
    uint64_t kernels, linked, graph_kernels, unlinked;
    uint64_t latency_n;
    int64_t latency_min, latency_median, latency_max;
    int latency_exact;
    struct ga_vthread *threads; /* launching threads, most kernels first */
    size_t n_threads;
};

struct ga_gaps;
struct ga_gpu;
struct ga_timeline;
struct ga_hostidle;
struct ga_sites;

struct ga_vgpu {
    char status[300]; /* "available", or "unavailable: <reason>" */
    int have_caveat;  /* CUPTI dropped records: caveat says what that does to the figures */
    char caveat[300];
    int have_activity; /* kernels, copies or memsets to analyze */
    int have_stacks;   /* the trace has host stacks (sites are printed) */
    uint64_t dropped, late, skipped, launches_evicted, correlations_evicted, calls_dropped;
    uint64_t host_gaps_early, host_samples_dropped; /* hostidle.h: gaps_early, samples_dropped */
    uint64_t kernel_count;          /* kernels seen executing */
    struct ga_vgpu_device *devices; /* by device id */
    size_t n_devices;
    struct ga_vkernel *kernels; /* by GPU time descending, then name */
    size_t n_kernels;
    /* top_kernels: kernels by GPU time, or without GPU kernels every kernel name launched, by
     * launch count (then top_by "launch_count") */
    const struct ga_vkernel *top_kernels;
    size_t n_top_kernels;
    const char *top_by; /* "gpu_time" or "launch_count" */
    struct ga_vsum copies[GA_VGPU_COPY_KINDS];
    const char *copy_kind_names[GA_VGPU_COPY_KINDS]; /* "unknown", "HtoD", ... */
    struct ga_vsum memsets;
    struct ga_vlink link;
    struct ga_vidle *idle; /* by device id */
    size_t n_idle;
    const char *cause_names[GA_VGPU_CAUSES];     /* "host_busy", ... */
    const char *bucket_names[GA_VGPU_BUCKETS];   /* "<10us", ... */
    const char *class_names[GA_VGPU_HI_CLASSES]; /* "data_loading", ... */
    uint64_t hta_kernel_wait_ns;                 /* HTA's consecutive_kernel_delay */
    double window_low;                           /* windows busy less than this are low */
    int have_host_samples;
    /* --all-gaps: every gap went to a file, streamed by ga_vgpu_each_gap */
    int all_gaps_streamed;
    /* the builder's and ga_vgpu_each_gap's: the analyses' own (opaque here), the stack table,
     * the trace start, kernel names demangled once (name -> 1 + index) */
    const struct ga_gaps *gaps_src;
    const struct ga_gpu *gpu_src;
    const struct ga_timeline *tl_src;
    const struct ga_hostidle *hostidle_src;
    struct ga_sites *sites_src;
    struct ga_vstacks *stacks;
    uint64_t t0;
    struct ga_vkernel *launched;
    struct ga_map demangled_of;
    char **demangled;
    size_t n_demangled, demangled_cap;
};

struct ga_idle_host;
/* After the analyses finished; stacks and sites resolved into t (which must outlive v); t0: the
 * trace start (the times' origin). status and caveat are the report's to fill. */
void ga_vgpu_build(struct ga_vgpu *v, const struct ga_gpu *g, const struct ga_timeline *tl,
                   const struct ga_gaps *x, const struct ga_hostidle *h,
                   const struct ga_idle_host *ih, struct ga_sites *s, struct ga_vstacks *t,
                   uint64_t t0);
/* With all_gaps_streamed: fn for each gap of the device, in time order (the gap valid during the
 * call; no host samples). 0, or the errno of a failure to read them back. */
int ga_vgpu_each_gap(const struct ga_vgpu *v, uint32_t device,
                     int (*fn)(void *ctx, const struct ga_vgap *gap), void *ctx);
void ga_vgpu_free(struct ga_vgpu *v);

#endif
