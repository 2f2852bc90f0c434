/* The run as every report opens and closes with it: the process, the trace as read, the driver
 * and devices, threads, launches and blocking calls by API, the entry-point resolver, objects,
 * the tracer's notes. Copied from the facts, the reader's statistics and the timeline once, at
 * the end of the pass, with times from the trace start and every name (API labels, statuses,
 * kernel names demangled) resolved. A renderer reads this and includes no analysis header. */
#ifndef GA_VIEW_RUN_H
#define GA_VIEW_RUN_H

#include <stddef.h>
#include <stdint.h>

#define GA_VRUN_KERNELS 10 /* kernel names by launches kept (the text report's list) */

struct ga_vrun_device {
    int32_t ordinal, cc_major, cc_minor; /* cc_major -1: unknown */
    const char *name;
    uint64_t total_bytes;
    char uuid[33]; /* hex; "" when the trace has none (all zero) */
};

struct ga_vrun_thread {
    uint32_t tid;
    const char *name;
};

struct ga_vrun_note {
    int64_t ns; /* from the trace start */
    uint32_t tid;
    int warning;
    const char *text;
};

/* One API's calls: launches, blocking spans or objects made. */
struct ga_vrun_api {
    char name[64];      /* "cuLaunchKernel", "api#N" for ids this reader does not know */
    const char *family; /* spans: "sync", "copy", "wait", "other" */
    uint64_t count, failed, total_ns, bytes; /* bytes: copies' */
};

struct ga_vrun_resolve {
    const char *how; /* "dlsym", ...; the total's NULL */
    int other;       /* none of the three named ways (the terminal report leaves it to the total) */
    uint64_t lookups, wrapped, passed_through, not_found;
};

struct ga_vrun_kernel {
    char *name; /* demangled where it demangles */
    uint64_t count;
};

struct ga_vrun {
    const char *path;
    /* process */
    uint32_t pid, ppid; /* the process record's, else the file header's */
    const char *const *argv;
    size_t argc;
    const char *host, *exe; /* NULL without a process record */
    uint64_t duration_ns;
    int clean_end;
    const char *end_reason; /* "exit", "disabled", "unknown"; NULL without a clean end */
    uint64_t records_written;
    int have_driver;
    int32_t driver_version, device_count;
    /* the trace as read */
    uint32_t format_version, header_pid;
    uint64_t start_realtime_ns;
    uint64_t records, chunks, gpu_chunks, gpu_records, unknown_records, malformed_records,
        late_records, duplicate_chunks, lost_records;
    int truncated, concatenated;
    const char *stop_reason;
    /* the GPU timeline: "available" or why not; caveat: CUPTI's drops said in words, or NULL */
    char gpu_timeline[300];
    char caveat_buf[400];
    const char *caveat;
    int have_cupti;
    const char *cupti_status; /* "on", "owned", ... */
    int64_t cupti_version, cupti_result, cupti_clock_offset_ns;
    const char *cupti_path, *cupti_reason;
    uint64_t cupti_dropped;
    struct ga_vrun_device *devices;
    size_t n_devices;
    struct ga_vrun_thread *threads;
    size_t n_threads;
    /* launches and blocking calls, by API in the API table's order (those with calls) */
    uint64_t launch_count, launch_failed, span_count;
    struct ga_vrun_api *launches, *spans;
    size_t n_launches, n_spans;
    uint64_t gpu_kernel_count; /* kernels seen executing on the GPU (the GPU timeline lists
                                * them by GPU time) */
    struct ga_vrun_kernel kernels[GA_VRUN_KERNELS]; /* by launches, most first */
    size_t n_kernels_kept, n_kernel_names;
    /* the entry-point resolver: the total, then each way of lookup with lookups */
    struct ga_vrun_resolve resolve_total, resolve[4];
    size_t n_resolve;
    struct ga_vrun_api *objects; /* contexts, streams, pools made (count ok, failed) */
    size_t n_objects;
    struct ga_vrun_note *notes;
    size_t n_notes;
    uint64_t notes_dropped;
};

struct ga_read_stats;
struct ga_facts;
struct ga_timeline;
struct ga_gpu;
/* t0: the trace start; duration_ns: from it to the last record time. */
void ga_vrun_build(struct ga_vrun *v, const char *path, const struct ga_read_stats *rs,
                   const struct ga_facts *f, const struct ga_timeline *tl, const struct ga_gpu *g,
                   uint64_t t0, uint64_t duration_ns);
void ga_vrun_free(struct ga_vrun *v);

#endif
