/* Internal header of the simulated CUDA driver. */
#ifndef GTSIM_SIM_H
#define GTSIM_SIM_H

/* Compile like the driver itself: cuda.h then declares every exported ABI name (legacy, _v2,
 * _ptsz, _ptds) with its real prototype and leaves no renaming macros behind. */
#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_VERSION_INTERNAL_ODR 1
#include <cuda.h>

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

#include "gtsim.h"

/* Everything declared from here on is internal to the library. */
#pragma GCC visibility push(hidden)

#include "gen_tables.h"

#define SIM_MAX_DEV 16
#define SIM_VA_BASE 0x680000000000ull /* device d owns [BASE + d*SPAN, BASE + (d+1)*SPAN) */
#define SIM_VA_SPAN 0x010000000000ull /* 1 TiB */
#define SIM_VMM_GRAN (2ull << 20)

struct sim_config {
    int driver_version;
    int ndev;
    uint64_t mem_bytes, other_bytes, ctx_overhead, alloc_gran;
    uint64_t alloc_latency_ns, launch_latency_ns, kernel_ns, sync_wake_ns;
    double copy_bps;
    int distinct;
    size_t activity_cap;
    int log_fd;
    int log_all;
    int fork_keeps; /* GTSIM_FORK_KEEPS_DRIVER=1: a forked child goes on using the driver */
};
extern struct sim_config g_cfg;
extern pthread_mutex_t g_lock; /* one lock for all driver state */
extern pthread_cond_t g_cond;  /* CLOCK_MONOTONIC; broadcast when host functions finish */

void sim_init_once(void);
int sim_is_initialized(void);

/* ---- API entry/exit ---- */
struct sim_call {
    int idx, prev_idx;
    unsigned corr;
    unsigned prev_corr;
    CUresult rc;
};
void sim_enter(struct sim_call *c, int idx, int need_init);
CUresult sim_exit(struct sim_call *c, CUresult rc);
unsigned sim_corr(void);      /* correlation id of the innermost API call on this thread */
const char *sim_api(void);    /* its export name */
unsigned sim_thread(void);    /* per-thread serial, never reused */

#define SIM_API(name, expr)                                   \
    do {                                                      \
        struct sim_call c_;                                   \
        sim_enter(&c_, GX_##name, 1);                         \
        return sim_exit(&c_, c_.rc ? c_.rc : (expr));         \
    } while (0)
#define SIM_API_NOINIT(name, expr)                            \
    do {                                                      \
        struct sim_call c_;                                   \
        sim_enter(&c_, GX_##name, 0);                         \
        return sim_exit(&c_, (expr));                         \
    } while (0)
/* After each implemented export: a hidden, non-interposable alias that the resolver hands out. */
#define SIM_EXPORT(name) \
    extern __typeof__(name) gtsim_impl_##name __attribute__((alias(#name), visibility("hidden")));

/* ---- logging, time ---- */
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *sim_caller_name(void *ra);
uint64_t sim_now(void);
void sim_sleep_until(uint64_t t);
void sim_sleep_ns(uint64_t ns);

/* ---- small containers ---- */
struct hmap {
    uint64_t *keys; /* 0 empty, 1 tombstone */
    void **vals;
    size_t cap, n, used;
};
void *hmap_get(struct hmap *m, uint64_t k);
void hmap_put(struct hmap *m, uint64_t k, void *v);
void *hmap_del(struct hmap *m, uint64_t k);
/* iterate: for (size_t i = 0; hmap_next(m, &i, &k, &v); ) — do not modify m while iterating */
int hmap_next(struct hmap *m, size_t *i, uint64_t *k, void **v);

const char *sim_intern(const char *s); /* strings that live forever (kernel names) */

/* ---- handles ---- */
enum {
    OBJ_CTX = 1, OBJ_STREAM, OBJ_EVENT, OBJ_MODULE, OBJ_FUNC, OBJ_LIBRARY, OBJ_KERNEL, OBJ_POOL,
    OBJ_ARRAY, OBJ_MIPARRAY, OBJ_GRAPH, OBJ_GRAPHNODE, OBJ_GRAPHEXEC, OBJ_VMM,
};
void handle_add(const void *h, int type, void *obj);
void *handle_get(const void *h, int type); /* NULL if not a live handle of that type */
int handle_type(const void *h);
void handle_del(const void *h);
/* collect live handles of a type (caller frees *out) */
size_t handle_list(int type, void ***out);

/* ---- devices, contexts ---- */
struct sim_stream;
struct sim_pool;
struct sim_ctx {
    uint32_t id;
    int dev;
    unsigned flags;
    int primary;
    int alive;
    int refcount; /* primary: retain count */
    struct sim_stream *legacy;
    struct sim_stream *streams; /* user and per-thread streams */
    struct sim_ctx *next;
};
struct sim_dev {
    uint64_t capacity, other, used;
    unsigned nctx;
    struct sim_ctx *primary;
    struct sim_pool *default_pool, *current_pool;
    uint64_t va_base, va_end, va_next;
};
extern struct sim_dev g_dev[SIM_MAX_DEV];
extern int g_va_reserved;

CUresult dev_check(CUdevice d);
int64_t dev_free_bytes(int dev);
uint32_t sim_next_ctx_id(void);
uint32_t sim_next_stream_id(void);
CUresult ctx_current(struct sim_ctx **out);  /* under g_lock */
CUresult ctx_check(CUcontext h, struct sim_ctx **out); /* NULL -> current */
void ctx_release_resources(struct sim_ctx *c); /* under g_lock: frees everything in c */
void ctx_activate(struct sim_ctx *c);          /* under g_lock: alive, streams, overhead */

/* ---- memory ---- */
enum { AL_DEVICE = 1, AL_MANAGED, AL_POOL, AL_RESERVE, AL_GLOBAL };
struct sim_alloc;
CUresult mem_device_alloc(struct sim_ctx *c, size_t size, int kind, CUdeviceptr *out);
void mem_free_alloc(struct sim_alloc *a); /* under g_lock */
void mem_ctx_destroyed(struct sim_ctx *c);
void mem_pools_release(int dev); /* trim all pools of dev to their thresholds (sync point) */
CUresult mem_check_device_range(CUdeviceptr p, size_t n, int *host_ok);
int mem_kind_of(uint64_t p, int *host_ok); /* GTSIM_MEM_* for an address */
void mem_init_devices(void);
uint64_t mem_array_bytes(void *h); /* 0 if h is not a live CUarray */
CUresult mem_global_alloc(struct sim_ctx *c, size_t size, void **handle, CUdeviceptr *out);

/* ---- streams, events, timing, activity ---- */
struct sim_stream {
    struct sim_ctx *ctx;
    uint32_t id;
    unsigned flags;
    int priority;
    int kind; /* STREAM_USER / STREAM_LEGACY / STREAM_PTDS */
    unsigned owner;
    int alive;
    uint64_t tail;
    uint64_t last_hostfn; /* global sequence number of the last host function enqueued here */
    struct sim_stream *next;
};
enum { STREAM_USER = 0, STREAM_LEGACY = 1, STREAM_PTDS = 2 };
struct sim_stream *stream_new(struct sim_ctx *c, int kind, unsigned flags, int prio);
void stream_free(struct sim_stream *s); /* under g_lock; deferred while host functions pend */
CUresult stream_resolve(CUstream h, int ptsz, struct sim_stream **out); /* under g_lock */
uint64_t stream_schedule(struct sim_stream *s, uint64_t now, uint64_t dur, uint64_t *start);
void ctx_sync(struct sim_ctx *c); /* not under g_lock: blocks until c's work is done */
/* under g_lock: host functions of ctx (stream 0 = any) with sequence <= max_seq still pending */
int hostfn_pending(uint32_t ctx_id, uint32_t stream_id, uint64_t max_seq);
uint64_t hostfn_seq_now(void);
void streams_ctx_destroyed(struct sim_ctx *c);

struct sim_work {
    int kind;
    uint64_t dur;
    const char *name;
    uint64_t bytes;
    int copy_kind, src_kind, dst_kind;
    unsigned memset_value;
    int is_async;
    unsigned grid[3], block[3], smem;
    int launch_type;
    uint32_t graph_id, graph_exec_id;
    uint64_t node_id;
};
/* under g_lock: schedule work on s, record activity; returns end time */
uint64_t work_enqueue(struct sim_stream *s, CUstream as_passed, const struct sim_work *w);
uint64_t copy_duration(uint64_t bytes);

/* ---- modules, launches ---- */
void modules_ctx_destroyed(struct sim_ctx *c);

/* ---- misc ---- */
void *sim_export_pointer(int idx);
void sim_stream_atfork_child(void);
void mem_array_free(void *arr);
int mem_array_ctx_is(void *arr, struct sim_ctx *c);

#pragma GCC visibility pop
#endif
