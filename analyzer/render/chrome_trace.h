/* --chrome-trace: the Chrome trace-event JSON of one trace, in the dialect PyTorch's profiler
 * (Kineto) writes, so that Perfetto UI, chrome://tracing and Holistic Trace Analysis read it.
 * docs/CHROME_TRACE.md describes what goes where. */
#ifndef GA_CHROME_TRACE_H
#define GA_CHROME_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "model/export.h"

/* Reads r->path through the model's export pass (model/export.h; r prepared by ga_report_init
 * and its options) and writes its events to out as they come: host calls in time order, GPU
 * activities as the GPU analysis lets them leave, so memory is the analyses' (bounded by live
 * state), not the file's. Times are microseconds from origin_realtime_ns (CLOCK_REALTIME; the
 * earliest start of the ranks written together); `rank` goes into distributedInfo. Runs the
 * analyses too: r is a complete report model after. 0, or -1 when the trace cannot be read
 * (r->read.error says why; out may hold a partial document). */
int ga_chrome_trace(struct ga_report *r, int rank, uint64_t origin_realtime_ns, FILE *out);

#endif
