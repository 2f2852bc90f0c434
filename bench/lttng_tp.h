/* The peer: an LTTng-UST tracepoint with the integer payload of a gputrace launch record
 * (function, stream, correlation id, grid x/y, block x, shared memory, result: 8 fields). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER gtbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(GTBENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define GTBENCH_LTTNG_TP_H

#include <stdint.h>

#include <lttng/tracepoint.h>

/* clang-format off */
LTTNG_UST_TRACEPOINT_EVENT(
    gtbench, launch,
    LTTNG_UST_TP_ARGS(uint64_t, func, uint64_t, stream, uint64_t, corr,
                      uint32_t, grid_x, uint32_t, grid_y, uint32_t, block_x,
                      uint32_t, shmem, int32_t, result),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, func, func)
        lttng_ust_field_integer_hex(uint64_t, stream, stream)
        lttng_ust_field_integer(uint64_t, corr, corr)
        lttng_ust_field_integer(uint32_t, grid_x, grid_x)
        lttng_ust_field_integer(uint32_t, grid_y, grid_y)
        lttng_ust_field_integer(uint32_t, block_x, block_x)
        lttng_ust_field_integer(uint32_t, shmem, shmem)
        lttng_ust_field_integer(int32_t, result, result)))
/* clang-format on */

#endif /* GTBENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
