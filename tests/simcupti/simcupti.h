/* Internal header of the simulated CUPTI (tests/simcupti, libcupti.so.13). See README.md. */
#ifndef SIMCUPTI_H
#define SIMCUPTI_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cupti.h>

#include "../sim/gtsim.h"

#pragma GCC visibility push(hidden)

/* ---- generated tables (gen_tables.c) ---- */
struct sc_cbid {
    const char *name;
    unsigned cbid;
};
struct sc_result {
    int code;
    const char *name;
    const char *message;
};
extern const struct sc_cbid sc_driver_cbids[];
extern const size_t sc_ndriver_cbids;
extern const char *const sc_driver_cbid_name[];
extern const unsigned sc_driver_cbid_size;
extern const char *const sc_runtime_cbid_name[];
extern const unsigned sc_runtime_cbid_size;
extern const struct sc_result sc_results[];
extern const size_t sc_nresults;

/* ---- the simulated driver's test API, looked up at run time ---- */
struct sc_driver {
    size_t (*drain)(struct gtsim_activity *out, size_t max);
    unsigned long long (*dropped)(void);
    size_t (*pending)(void); /* optional: work queued, complete or not */
    void (*set_api_callback_ex)(void (*fn)(const struct gtsim_api_info *, void *), void *arg);
    unsigned long long (*now_ns)(void);
    void *lib;
};
extern struct sc_driver sc_drv;

/* ---- core.c ---- */
CUptiResult sc_ret(CUptiResult r); /* notes r as this thread's last error (cuptiGetLastError) */
int sc_fail(const char *fn);       /* 1 if GTSIM_CUPTI_FAIL names fn */
int sc_attach(void);               /* 1 if the simulated driver is there (attaches on first call) */
void *sc_driver_sym(const char *name);

#define R(x) return sc_ret(x)
/* Every exported function starts with one of these: failure injection, then lazy attach. */
#define SC_ENTER()                                                                                 \
    do {                                                                                           \
        if (sc_fail(__func__)) R(CUPTI_ERROR_UNKNOWN);                                             \
    } while (0)
#define SC_ENTER_DRIVER()                                                                          \
    do {                                                                                           \
        if (sc_fail(__func__)) R(CUPTI_ERROR_UNKNOWN);                                             \
        if (!sc_attach()) R(CUPTI_ERROR_NOT_INITIALIZED);                                          \
    } while (0)

uint64_t sc_mono_ns(void);
uint64_t sc_realtime_ns(void);
uint64_t sc_cpu_timestamp(void);     /* CUPTI's clock now: the timestamp callback, else REALTIME */
uint64_t sc_gpu_time(uint64_t mono); /* a simulated GPU time (CLOCK_MONOTONIC) on CUPTI's clock */
void sc_clock_refine(void);          /* at deliveries: refine a non-ns timestamp callback's rate */
unsigned sc_driver_cbid(const char *export_name, int export_index); /* 0 if not traced */
uint32_t sc_thread_id(void);         /* per cuptiSetThreadIdType */
void sc_core_finalize(void);         /* cuptiFinalize: subscriber, clock, thread-id type */
extern __thread int sc_internal;     /* >0 while we call the driver ourselves: not traced */

/* ---- activity.c ---- */
void sc_activity_attach(void);   /* once, from sc_attach, with the driver found */
void sc_activity_finalize(void); /* cuptiFinalize: forced flush, then reset */
void sc_api_callback(const struct gtsim_api_info *info, void *arg);

#pragma GCC visibility pop

#endif
