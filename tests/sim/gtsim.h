/*
 * gtsim.h — test-only introspection API of the simulated CUDA driver (tests/sim, libcuda.so.1).
 * None of this exists in the real driver: look the functions up with dlsym(RTLD_DEFAULT, ...)
 * (or link against the simulated libcuda) only in tests. See tests/sim/README.md.
 */
#ifndef GTSIM_H
#define GTSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUfunc_st; /* CUfunction is struct CUfunc_st * in cuda.h */

/* ---- activity log (GPU work as a simulated CUPTI would report it) ------------------------- */
enum gtsim_activity_kind {
    GTSIM_ACT_KERNEL = 1,
    GTSIM_ACT_MEMCPY = 2,
    GTSIM_ACT_MEMSET = 3,
};

/* Copy kinds use CUPTI's CUpti_ActivityMemcpyKind numbering. */
enum gtsim_copy_kind {
    GTSIM_COPY_UNKNOWN = 0,
    GTSIM_COPY_HTOD = 1,
    GTSIM_COPY_DTOH = 2,
    GTSIM_COPY_HTOA = 3,
    GTSIM_COPY_ATOH = 4,
    GTSIM_COPY_ATOA = 5,
    GTSIM_COPY_ATOD = 6,
    GTSIM_COPY_DTOA = 7,
    GTSIM_COPY_DTOD = 8,
    GTSIM_COPY_HTOH = 9,
    GTSIM_COPY_PTOP = 10,
};

/* Memory kinds use CUPTI's CUpti_ActivityMemoryKind numbering. */
enum gtsim_mem_kind {
    GTSIM_MEM_UNKNOWN = 0,
    GTSIM_MEM_PAGEABLE = 1,
    GTSIM_MEM_PINNED = 2,
    GTSIM_MEM_DEVICE = 3,
    GTSIM_MEM_ARRAY = 4,
    GTSIM_MEM_MANAGED = 5,
};

struct gtsim_activity {
    uint32_t kind;           /* GTSIM_ACT_* */
    uint32_t correlation_id; /* of the enqueuing API call (the same id the API callback saw) */
    uint64_t queued_ns;      /* host time of the enqueuing call (CLOCK_MONOTONIC ns) */
    uint64_t start_ns;       /* simulated GPU start/end, same clock */
    uint64_t end_ns;
    uint32_t device;         /* ordinal */
    uint32_t context_id;     /* cuCtxGetId value */
    uint32_t stream_id;      /* cuStreamGetId value */
    uint32_t launch_type;    /* kernels: 0 regular, 1 cooperative */
    const char *name;        /* kernel name; interned, valid for the life of the process */
    const char *api;         /* export that enqueued the work, e.g. "cuLaunchKernel_ptsz" */
    uint64_t bytes;          /* memcpy/memset */
    uint32_t copy_kind;      /* GTSIM_COPY_* */
    uint32_t src_kind;       /* GTSIM_MEM_* (memcpy) */
    uint32_t dst_kind;       /* GTSIM_MEM_* (memcpy, memset) */
    uint32_t memset_value;
    uint32_t is_async;       /* memcpy/memset issued through an *Async API */
    uint32_t grid[3];        /* kernels */
    uint32_t block[3];
    uint32_t shared_mem_bytes;
    uint32_t graph_id;       /* id of the CUgraph the kernel came from, 0 if not from a graph */
    uint32_t graph_exec_id;  /* id of the CUgraphExec, 0 if not from a graph */
    uint64_t graph_node_id;  /* id of the CUgraphNode, 0 if not from a graph */
    void *context;           /* CUcontext */
    void *stream;            /* CUstream as passed (may be NULL / CU_STREAM_LEGACY / CU_STREAM_PER_THREAD) */
};

/* Moves up to max *completed* records (end_ns <= now), oldest first, into out; records of work
 * still running stay queued. Synchronize first to get everything. */
size_t gtsim_activity_drain(struct gtsim_activity *out, size_t max);
/* Records lost because the ring (GTSIM_ACTIVITY_CAPACITY) was full; reading resets it. */
unsigned long long gtsim_activity_dropped(void);
/* Records queued, completed or not. */
size_t gtsim_activity_pending(void);

/* ---- API observation ---------------------------------------------------------------------- */
/* fn(1, export, corr, arg) on entry to every driver export (implemented or stub), fn(0, ...) on
 * exit. corr is unique per call. Calls are made on the calling thread, outside driver locks.
 * Pass fn=NULL to remove. */
void gtsim_set_api_callback(void (*fn)(int enter, const char *api, unsigned corr_id, void *arg), void *arg);

struct gtsim_api_info {
    int enter;          /* 1 on entry, 0 on exit */
    const char *api;    /* export name */
    int export_index;   /* index into the sorted export list (gtsim_export_name) */
    unsigned corr_id;
    int result;         /* CUresult on exit, 0 on entry */
    unsigned thread;    /* small per-thread serial number */
};
void gtsim_set_api_callback_ex(void (*fn)(const struct gtsim_api_info *info, void *arg), void *arg);

/* Calls of one export by name (e.g. "cuLaunchKernel_ptsz"); 0 for unknown names. */
unsigned long gtsim_call_count(const char *export_name);
void gtsim_reset_call_counts(void);
/* i-th export name in sorted order, NULL past the end. */
const char *gtsim_export_name(int i);
/* 1 if the export has a real implementation, 0 if it is a NOT_SUPPORTED stub, -1 if unknown. */
int gtsim_export_implemented(const char *export_name);
/* The pointer cuGetProcAddress hands out for an export (depends on GTSIM_DISTINCT_POINTERS). */
void *gtsim_internal_pointer(const char *export_name);

/* ---- knobs ------------------------------------------------------------------------------- */
void gtsim_func_set_duration(struct CUfunc_st *f, unsigned long long ns); /* CUfunction or CUkernel */
int gtsim_set_mem_capacity(int dev, size_t bytes);  /* 0 ok, -1 bad device */
int gtsim_set_other_bytes(int dev, size_t bytes);
size_t gtsim_used_bytes(int dev);                   /* device bytes charged to allocations */
int gtsim_device_memory(int dev, size_t *free_bytes, size_t *total, size_t *other); /* device-wide: free as cuMemGetInfo computes it, capacity, other processes' bytes; 0 ok, -1 bad device */
unsigned long long gtsim_now_ns(void);              /* the simulated GPU clock (CLOCK_MONOTONIC) */
/* The SM clock in permille of its maximum at GPU time t (tests/simnvml registers its schedule's):
 * a kernel that starts at t runs its duration at the maximum clock times 1000 / permille(t), as a
 * compute-bound kernel does on a throttled GPU. NULL (the default): every kernel at full clock. */
void gtsim_set_sm_clock(unsigned (*permille)(unsigned long long t_ns));

#ifdef __cplusplus
}
#endif
#endif
