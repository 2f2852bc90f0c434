/* The device state from NVML as every renderer shows it (the text report's gpu state section and
 * OOM process lines, JSON's device_state and memory.ooms[].processes): the NVML analysis's
 * results copied once, at the end of the pass, into the model's own structs, with times from the
 * trace start, kernel and reason names resolved, the slow kernels ranked, and the processes NVML
 * listed after each failed allocation found. A renderer reads this and includes no analysis
 * header. */
#ifndef GA_VIEW_NVML_H
#define GA_VIEW_NVML_H

#include <stddef.h>
#include <stdint.h>

#define GA_VNVML_REASONS 9       /* clock-event reason bits (the analysis's GA_NVML_REASONS) */
#define GA_VNVML_SLOW_KERNELS 20 /* slow kernels kept per device, the most time lost first */

enum ga_vnvml_status { GA_VNVML_NONE, GA_VNVML_AVAILABLE, GA_VNVML_ABSENT, GA_VNVML_FAILED };

/* One point of a device's series (it may stand for several samples: samples_per_point). */
struct ga_vnvml_point {
    int64_t ns;
    uint32_t sm_mhz;   /* UINT32_MAX: no sample of the point had it */
    uint64_t reasons;  /* bits into ga_vnvml.reason_names */
    uint64_t mem_used; /* UINT64_MAX: no sample of the point had it */
};

/* A kernel slower below the maximum SM clock. */
struct ga_vnvml_kernel {
    const char *name; /* NULL: never named */
    uint64_t slow_count, slow_mean_ns, full_count, full_mean_ns;
    uint64_t extra_ns; /* the slow runs' time beyond the full-clock mean */
};

struct ga_vnvml_device {
    int32_t device;
    int matched; /* an NVML device had its UUID (else never sampled) */
    uint32_t nvml_index, max_sm_mhz, max_mem_mhz;
    char uuid[48];
    uint64_t samples;
    uint32_t min_sm_mhz, max_temp_c, max_power_mw, power_limit_mw;
    uint64_t covered_ns, slow_ns, busy_ns, slow_busy_ns, busy_not_laid_ns;
    uint64_t busy_unsampled_ns; /* could not wait for the first record or sample: not laid over */
    uint64_t reason_ns[GA_VNVML_REASONS], reason_busy_ns[GA_VNVML_REASONS]; /* slow, reason set */
    uint64_t samples_per_point;
    struct ga_vnvml_point *points;
    size_t n_points;
    struct ga_vnvml_kernel kernels[GA_VNVML_SLOW_KERNELS];
    size_t n_kernels;
    uint64_t kernels_dropped;
};

/* A process NVML listed on a device after a failed allocation. */
struct ga_vnvml_proc {
    uint32_t pid;
    const char *name; /* NULL: NVML gave none */
    uint64_t bytes;   /* UINT64_MAX: NVML did not say */
    int this_process;
};
struct ga_vnvml_listing {
    struct ga_vnvml_proc *procs; /* NULL: no listing */
    size_t n;
};

struct ga_vnvml {
    unsigned status;         /* enum ga_vnvml_status */
    const char *status_name; /* "none", "available", "absent", "failed" */
    const char *why;         /* "" when NVML was available */
    struct ga_vnvml_device *devices; /* by CUDA ordinal */
    size_t n_devices;
    const char *reason_names[GA_VNVML_REASONS]; /* "gpu_idle", ... for bits 0..8 */
    struct ga_vnvml_listing *oom_procs; /* one per failed allocation (ga_memory.ooms[]) */
    /* kernels counted in no device's slow kernels because their device never got an NVML sample
     * (or past the 65,536 that wait for their device's first); UINT64_MAX unless NVML is
     * available (without samples every kernel would count) */
    uint64_t kernels_unsampled;
    /* the GPU timeline was recorded whole (CUPTI on): busy_ns is measured; else it is 0 or
     * partial, and says nothing about the GPU's work */
    int busy_known;
    size_t n_ooms;
};

struct ga_nvml;
struct ga_memory;
struct ga_facts;
struct ga_gpu;
/* After the analyses finished: the NVML analysis's results, the failed allocations (m), the
 * traced process (f), the kernels' names (g); t0: the trace start (the times' origin). */
void ga_vnvml_build(struct ga_vnvml *v, const struct ga_nvml *x, const struct ga_memory *m,
                    const struct ga_facts *f, const struct ga_gpu *g, uint64_t t0);
void ga_vnvml_free(struct ga_vnvml *v);

#endif
