/* A trace export's pass (--chrome-trace): the report's pass over the trace, handing a writer each
 * event as the analyses see it, in the model's terms: host CUDA calls with their API names and
 * arguments, thread names (once per thread), the live device bytes after each allocation and
 * free, the pools' reserved and used bytes when they change, GPU activities as the GPU analysis
 * lets them leave (kernel names demangled, copies and memsets named, the launch each kernel is
 * linked to), then, after the pass, the run (model/view_run.h) and every idle gap per device.
 * Memory: the analyses' (bounded by live state) and one demangled name per (kernel name,
 * launch function); the writer writes as it is handed, so nothing is kept for it. */
#ifndef GA_EXPORT_H
#define GA_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "model/view_run.h"

/* Times are the trace's monotonic nanoseconds; start says how they map onto the wall clock. */
struct ga_xstart {
    uint32_t pid;
    uint64_t start_realtime_ns, start_monotonic_ns; /* the file header's */
};

enum ga_xcall_kind { GA_XCALL_LAUNCH, GA_XCALL_SPAN, GA_XCALL_ALLOC, GA_XCALL_FREE, GA_XCALL_FAIL };

/* A host CUDA call: [ts, ts + dur) on thread tid. */
struct ga_xcall {
    unsigned kind; /* enum ga_xcall_kind */
    const char *api;
    uint32_t tid;
    uint64_t ts, dur;
    int32_t result;
    uint64_t corr;       /* launch: the tracer's correlation id (meaningful when result is 0) */
    uint64_t bytes;      /* alloc, fail: the size asked */
    uint64_t addr;       /* alloc, free */
    int32_t device;      /* alloc */
    uint64_t free_bytes; /* fail: the device's free bytes then */
};

enum ga_xact_kind { GA_XACT_KERNEL, GA_XACT_COPY, GA_XACT_SET };

/* A GPU activity: [start, end) on (device, stream). */
struct ga_xact {
    unsigned kind;    /* enum ga_xact_kind */
    const char *name; /* a kernel's demangled name; "Memcpy HtoD", "Memset (Device)" */
    uint32_t device, stream, graph_id;
    uint64_t start, end, bytes;
    int linked; /* a kernel linked to its launch: */
    uint64_t corr;
    uint32_t launch_tid;
    uint64_t launch_ts;
};

/* An NVML sample of a device (GT_REC_NVML_SAMPLE): only what its valid bits say it has. */
struct ga_xnvml {
    int32_t device;
    uint64_t ts;
    int has_sm, has_temp, has_power, has_mem_used;
    uint32_t sm_mhz, temp_c, power_mw;
    uint64_t mem_used; /* bytes used by all processes on the device */
};

struct ga_xsink {
    void (*start)(void *ctx, const struct ga_xstart *s); /* before the first event */
    void (*call)(void *ctx, const struct ga_xcall *c);
    void (*thread)(void *ctx, uint32_t tid, const char *name, size_t len);
    void (*live)(void *ctx, uint64_t ts, uint64_t live_bytes);
    void (*pools)(void *ctx, uint64_t ts, uint64_t reserved, uint64_t used);
    void (*act)(void *ctx, const struct ga_xact *a);
    void (*nvml)(void *ctx, const struct ga_xnvml *n); /* may be NULL */
    /* after the pass: the run, then per device with gaps its track, then each gap in time order
     * (gap returns -1 to stop on a write error) */
    void (*run)(void *ctx, const struct ga_vrun *run);
    void (*gap_track)(void *ctx, uint32_t device);
    int (*gap)(void *ctx, uint32_t device, uint64_t start, uint64_t dur, const char *cause);
};

struct ga_report;
/* Runs the report's pass over r->path (r prepared by ga_report_init and its options) with s's
 * calls; r is a complete report model after. 0, or -1 when the trace cannot be read or the gaps
 * cannot be read back (r->read.error says why). */
int ga_report_export(struct ga_report *r, const struct ga_xsink *s, void *ctx);

#endif
