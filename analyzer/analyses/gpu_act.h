/* What the GPU timeline analysis (gpu.h) hands the idle-gap analysis (gaps.h) for each activity
 * as it leaves in time order: the activity and the launch linked to it. Below both, so that the
 * timeline calls into the gap analysis and the gap analysis needs nothing of the timeline. */
#ifndef GA_GPU_ACT_H
#define GA_GPU_ACT_H

#include <stdint.h>

#define GA_COPY_KINDS 11 /* CUpti_ActivityMemcpyKind 0..10 (PtoP); other values count as 0 */

enum ga_gpu_kind { GA_GPU_KERNEL = 0, GA_GPU_MEMCPY = 1, GA_GPU_MEMSET = 2 };

/* One interval of GPU activity, as recorded; kernels carry what their launch tells about them. */
struct ga_gpu_act {
    uint64_t start, end;
    union {
        uint64_t bytes; /* copies and memsets */
        uint64_t func;  /* kernels: the linked launch's function handle */
    };
    uint32_t corr, device, stream;
    uint32_t name_id;  /* kernels: gt_rec_gpu_name id */
    uint32_t graph_id; /* kernels: 0 unless launched from a graph */
    uint16_t api;      /* kernels: the linked launch's api */
    uint8_t kind;      /* enum ga_gpu_kind */
    uint8_t copy_kind; /* copies: CUpti_ActivityMemcpyKind, clamped below GA_COPY_KINDS */
    uint8_t linked;    /* kernels: 1 when linked to a launch */
    uint32_t slot;     /* kernels while held: 1 + the slab entry of its launch, 0 none yet */
};

struct ga_gpu_launch {
    uint64_t ts, func;
    uint64_t corr;     /* the launch record's tracer correlation id */
    uint32_t dur_ns;   /* time inside the launch call (gt_rec_launch.dur_ns) */
    uint64_t prev_end; /* end of the launching thread's previous CUDA call, 0 none */
    uint32_t tid;
    uint32_t stack; /* host call stack (gt_rec_stack node id), 0 none */
    uint16_t api;
    uint16_t prev_api; /* that previous call's api, 0 none */
};

#endif
