/* Instantiates the gtbench tracepoint provider (lttng_tp.h) inside bench_launch_lttng. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
