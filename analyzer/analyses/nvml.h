/* Device state from NVML (DESIGN §6, docs/ANALYSES.md "Device state"): per device, the time
 * between NVML samples split into intervals that take the state of the sample that begins them;
 * an interval is *slow* when its SM clock is below the device's maximum. The GPU's busy intervals
 * (from the idle-gap sweep, ga_gaps.busy_hook) are laid over them: time and busy time slow, and
 * by clock-event reason. Memory: one 40-byte interval per sample (10 a second at the default
 * rate), and the busy intervals that came before the sample that covers them (GPU records lag
 * the host's by about a second; at most GA_NVML_PENDING_MAX per device, the rest counted). */
#ifndef GA_NVML_H
#define GA_NVML_H

#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "input/records.h"

#define GA_NVML_REASONS     9          /* nvmlClocksEventReason bits 0..8 */
#define GA_NVML_PENDING_MAX (1u << 20) /* busy intervals waiting for their sample, per device */

/* Which NVML the trace says it had. */
enum ga_nvml_status { GA_NVML_NONE, GA_NVML_AVAILABLE, GA_NVML_ABSENT, GA_NVML_FAILED };

struct ga_nvml_interval {
    uint64_t start, end, busy;
    uint64_t reasons;
    uint8_t slow;  /* below the maximum SM clock */
    uint8_t known; /* the sample that begins it has an SM clock, and the maximum is known */
};

struct ga_nvml_span {
    uint64_t s, e;
};

/* The device-state series: one point per sample, while there is room; past GA_NVML_POINTS_MAX
 * neighbouring points merge (every point then stands for twice as many samples: the earliest
 * time, the lowest SM clock, the union of reasons, the most memory used), so its size is fixed
 * however long the trace. */
#define GA_NVML_POINTS_MAX 1024
struct ga_nvml_point {
    uint64_t ts;
    uint32_t sm_mhz; /* UINT32_MAX: no sample of the point had it */
    uint32_t pad;
    uint64_t reasons;  /* union of the samples' */
    uint64_t mem_used; /* UINT64_MAX: no sample of the point had it */
};

/* Kernels by name, at the SM clock's maximum ([0]) and below it ([1]): the state of the NVML
 * sample in effect at the kernel's start. A kernel whose start is past the last interval closed so
 * far waits (kpend) for the sample that closes the interval holding it: a sample read after the
 * kernel may still begin before its start. Those still waiting at the end, and those past
 * GA_NVML_PENDING_MAX waiting, take the last sample's state; a kernel that starts before the
 * device's first sample is not counted. At most GA_NVML_KNAMES_MAX names per device (the rest
 * counted in kernels_dropped). */
#define GA_NVML_KNAMES_MAX 4096
struct ga_nvml_kname {
    uint32_t name_id;
    uint64_t n[2], ns[2];
};

struct ga_nvml_kpend {
    uint64_t start, ns;
    uint32_t name_id, pad;
};

struct ga_nvml_device {
    int32_t device;
    uint32_t nvml_index, max_sm_mhz, max_mem_mhz;
    int unmatched; /* no NVML device had its UUID: never sampled */
    char uuid[48];
    uint64_t samples;
    uint32_t min_sm_mhz, max_temp_c, max_power_mw, power_limit_mw;
    /* after ga_nvml_finish */
    uint64_t covered_ns;   /* first to last sample */
    uint64_t slow_ns;      /* of it, SM clock below its maximum */
    uint64_t busy_ns;      /* busy time inside covered_ns */
    uint64_t slow_busy_ns; /* busy time while slow */
    uint64_t reason_ns[GA_NVML_REASONS], reason_busy_ns[GA_NVML_REASONS]; /* slow, reason set */
    /* while reading */
    struct ga_nvml_interval *iv;
    size_t n_iv, iv_cap, cursor;
    struct ga_nvml_span *pending; /* busy past the last sample */
    size_t n_pending, pending_cap;
    uint64_t busy_dropped_ns; /* busy time past GA_NVML_PENDING_MAX waiting: not laid over */
    /* busy time that could not wait for the device's first record or first sample (past
     * GA_NVML_EARLY_MAX intervals waiting): not laid over; at most what busy_ns misses (some
     * of it may lie before the first sample, which no interval covers anyway) */
    uint64_t busy_unsampled_ns;
    int have_last;
    struct gt_rec_nvml_sample last;
    struct ga_nvml_point *points; /* GA_NVML_POINTS_MAX, made at the first sample */
    size_t n_points;
    uint64_t per_point; /* samples per point (a power of two), and in the newest one so far: */
    uint64_t in_last;
    struct ga_nvml_kname *knames;
    size_t n_knames, knames_cap;
    struct ga_map kname_idx;     /* name_id -> index into knames */
    struct ga_nvml_kpend *kpend; /* kernels past the last closed interval */
    size_t n_kpend, kpend_cap;
    uint64_t kernels_dropped;
};

/* A process NVML listed on a device after a failed allocation. */
struct ga_nvml_proc {
    uint64_t ts;    /* of the listing: one ts per listing */
    uint64_t bytes; /* UINT64_MAX: NVML did not say */
    int32_t device;
    uint32_t pid;
    char name[64];
};

#define GA_NVML_PROCS_MAX 4096 /* processes kept (listings past it are counted only) */

#define GA_NVML_EARLY_MAX      (1u << 16) /* kernels waiting for their device's first NVML record */
#define GA_NVML_EARLY_DEVICES  64   /* devices whose busy intervals wait for their first record */
#define GA_NVML_EARLY_PAST_IDS 4096 /* device ids whose busy time alone waits, past those */
struct ga_nvml_kearly {
    uint64_t start, ns;
    uint32_t name_id;
    int32_t device;
};
struct ga_nvml_bearly { /* a busy interval read before its device's first NVML record */
    uint64_t s, e;
    int32_t device, pad;
};

struct ga_nvml {
    int status; /* enum ga_nvml_status */
    char why[256];
    uint32_t pid;               /* the traced process (from its process record) */
    struct ga_nvml_proc *procs; /* in trace order */
    size_t n_procs, procs_cap;
    uint64_t procs_dropped;
    struct ga_nvml_device *devices; /* by CUDA ordinal after ga_nvml_finish */
    size_t n_devices, devices_cap;
    /* Kernels read before any NVML record of their device: the reader can deliver a device's
     * first samples after kernels that ran after them (the flusher that writes the samples ran
     * late), so these wait for their device (at most GA_NVML_EARLY_MAX; NVML absent: none). */
    struct ga_nvml_kearly *early;
    size_t n_early, early_cap;
    uint64_t early_dropped; /* past GA_NVML_EARLY_MAX, or their device never sampled */
    /* Busy intervals read before any NVML record of their device wait for it the same way, at
     * most GA_NVML_EARLY_MAX per device and GA_NVML_EARLY_DEVICES devices; early_busy_n holds
     * per device id (key (id, 0)) how many wait and (key (id, 1)) the time of those past either
     * bound, which becomes the device's busy_unsampled_ns (for at most GA_NVML_EARLY_PAST_IDS
     * ids at once; past that, early_busy_lost_ns: a trace with thousands of device ids). */
    struct ga_nvml_bearly *early_busy;
    size_t n_early_busy, early_busy_cap;
    struct ga_map early_busy_n;
    uint32_t early_busy_devices;  /* device ids with a key (id, 0) */
    uint32_t early_busy_past_ids; /* device ids with a key (id, 1) */
    uint64_t early_busy_lost_ns;
};

void ga_nvml_init(struct ga_nvml *x);
/* The trace said NVML was absent or failed: no device record will come, nothing waits for one. */
static inline int ga_nvml_off(const struct ga_nvml *x)
{
    return x->status == GA_NVML_ABSENT || x->status == GA_NVML_FAILED;
}
/* GT_REC_NVML and GT_REC_NVML_SAMPLE; other types are ignored. */
void ga_nvml_event(struct ga_nvml *x, const struct ga_event *ev);
/* The first listing of the device's processes at or after ts (within 10 s): its first entry, and
 * in *n how many it has; NULL when none. */
const struct ga_nvml_proc *ga_nvml_procs_after(const struct ga_nvml *x, int32_t device, uint64_t ts,
                                               size_t *n);
/* One busy interval of a device, in time order per device (ga_gaps' busy_hook). */
void ga_nvml_busy(void *nvml, uint32_t device, uint64_t s, uint64_t e);
void ga_nvml_finish(struct ga_nvml *x);
/* A kernel's execution (GT_REC_GPU_KERNEL), for the kernels slower below the maximum clock. */
void ga_nvml_kernel(struct ga_nvml *x, const struct gt_rec_gpu_kernel *k);
/* The names that ran both ways and were slower below the maximum clock (mean duration), the most
 * time lost first (ga_nvml_kname_extra: the slow runs' time beyond the full-clock mean), at most
 * max into out; returns the count. */
size_t ga_nvml_slow_kernels(const struct ga_nvml_device *d, const struct ga_nvml_kname **out,
                            size_t max);
double ga_nvml_kname_extra(const struct ga_nvml_kname *k);
#define GA_NVML_SLOW_KERNELS 20 /* listed per device */
void ga_nvml_free(struct ga_nvml *x);
/* "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
 * "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
 * "display_clock_setting" for bits 0..8. */
const char *ga_nvml_reason_name(unsigned bit);

#endif
