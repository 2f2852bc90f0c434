/* Device state from NVML, sampled on the flusher thread (docs/TRACE_FORMAT.md, "Device state from
 * NVML"). libnvidia-ml.so.1 is dlopen'ed, never linked: without it the trace says so in one
 * gt_rec_nvml record and nothing else changes. CUDA devices are matched to NVML devices by UUID
 * (NVML's indices follow PCI order, CUDA's follow CUDA_VISIBLE_DEVICES and speed).
 *
 * Threads: gt_nvml_device runs once per device on the program thread that wrote the device
 * record (after the first successful cuInit), publishes the UUID with a release store and wakes
 * the flusher for the first one; every
 * other function runs on the flusher thread only (its round lock held), so the NVML state needs
 * no lock. Nothing here runs on a hooked call's path. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define NVML_MS_DEFAULT 100u
#define NVML_DEVS       64

/* The few NVML declarations used, as nvml.h has them (the shim builds without NVML's headers). */
typedef int nvml_ret;
typedef void *nvml_dev;
struct nvml_util {
    unsigned int gpu, memory;
};
struct nvml_mem {
    unsigned long long total, free, used;
};
struct nvml_proc { /* nvmlProcessInfo_v2_t, what nvmlDeviceGetComputeRunningProcesses_v3 fills */
    unsigned int pid;
    unsigned long long used;
    unsigned int gpu_instance, compute_instance;
};
enum { NVML_OK = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMP_GPU = 0 };

static struct {
    nvml_ret (*init)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*by_uuid)(const char *, nvml_dev *);
    nvml_ret (*index)(nvml_dev, unsigned int *);
    nvml_ret (*clock)(nvml_dev, int, unsigned int *);
    nvml_ret (*max_clock)(nvml_dev, int, unsigned int *);
    nvml_ret (*temp)(nvml_dev, int, unsigned int *);
    nvml_ret (*power)(nvml_dev, unsigned int *);
    nvml_ret (*power_limit)(nvml_dev, unsigned int *);
    nvml_ret (*util)(nvml_dev, struct nvml_util *);
    nvml_ret (*reasons)(nvml_dev, unsigned long long *);
    nvml_ret (*mem)(nvml_dev, struct nvml_mem *);
    nvml_ret (*procs)(nvml_dev, unsigned int *, struct nvml_proc *);
    nvml_ret (*proc_name)(unsigned int, char *, unsigned int);
} F;

enum { ST_NEW, ST_MAPPED, ST_UNMATCHED };

static uint64_t period_ns = NVML_MS_DEFAULT * 1000000ull;
static uint8_t uuids[NVML_DEVS][16];
static atomic_int known[NVML_DEVS]; /* 1: uuids[i] is set (release) */
static atomic_int any_known;        /* some device was published: NVML may start */
static atomic_int state;            /* 0 not tried, 1 working, -1 absent or failed */
static uint8_t dev_state[NVML_DEVS];
static nvml_dev handles[NVML_DEVS];
static uint64_t next_due;
static atomic_uint_fast64_t procs_wanted; /* bit d: list device d's processes (after an OOM) */

#define NVML_PROCS_MAX 64

__attribute__((constructor)) static void nvml_configure(void)
{
    period_ns = gt_env_num("GPUTRACE_NVML_MS", 0, 24ul * 3600 * 1000, NVML_MS_DEFAULT) * 1000000ull;
}

/* At exit (atexit runs before any library's destructor, NVML's included): a listing asked for by
 * a failed allocation that the flusher has not made yet is waited for, 500 ms at most, so that a
 * program that fails and exits at once still says who held the memory. */
static void nvml_at_exit(void)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 500 && atomic_load(&procs_wanted) && atomic_load(&state) >= 0; i++) {
        if (i % 10 == 0) gt_flusher_wake();
        gt_syscall(SYS_nanosleep, &ms, NULL); /* (the C library's: waits.c wraps syscall) */
    }
}

void gt_nvml_device(int ordinal, const uint8_t uuid[16])
{
    if (ordinal < 0 || ordinal >= NVML_DEVS || !period_ns) return;
    memcpy(uuids[ordinal], uuid, 16);
    atomic_store_explicit(&known[ordinal], 1, memory_order_release);
    /* the first device: the flusher starts NVML now, not at its next round (a short program
     * would end first, and the trace would not say whether NVML was there) */
    if (!atomic_exchange_explicit(&any_known, 1, memory_order_acq_rel)) {
        static int registered; /* once per process, a forked child that traces included */
        if (!registered++) atexit(nvml_at_exit);
        gt_flusher_wake();
    }
}

uint64_t gt_nvml_next(void)
{
    if (!period_ns || state < 0 || !atomic_load_explicit(&any_known, memory_order_acquire))
        return UINT64_MAX;
    return atomic_load_explicit(&procs_wanted, memory_order_relaxed) ? 0 : next_due;
}

/* From a failed allocation's path (rare; never a successful call's): the flusher lists the
 * device's processes as soon as it can, while the memory that made it fail is likely still held. */
void gt_nvml_oom(int dev)
{
    if (dev < 0 || dev >= NVML_DEVS || !period_ns) return;
    uint64_t bit = 1ull << dev;
    if (!(atomic_fetch_or(&procs_wanted, bit) & bit)) gt_flusher_wake();
}

/* Records are gathered here and written as one chunk by the caller's writer. */
struct out {
    uint8_t buf[NVML_DEVS * sizeof(struct gt_rec_nvml_sample) +
                NVML_PROCS_MAX * (sizeof(struct gt_rec_nvml_proc) + 64) + 2048];
    uint32_t n;
};

static void put_status(struct out *o, unsigned sub, int dev, uint32_t index, uint32_t max_sm,
                       uint32_t max_mem, const char *text)
{
    uint32_t tl = text ? (uint32_t)strnlen(text, 400) : 0;
    struct gt_rec_nvml r = {.h = {GT_REC_NVML, (uint16_t)sub, gt_rec_size(sizeof(r), tl)},
                            .ts = gt_now(),
                            .device = dev,
                            .nvml_index = index,
                            .max_sm_mhz = max_sm,
                            .max_mem_mhz = max_mem,
                            .text_len = tl};
    if (o->n + r.h.size > sizeof(o->buf)) return;
    memset(o->buf + o->n, 0, r.h.size);
    memcpy(o->buf + o->n, &r, sizeof(r));
    if (tl) memcpy(o->buf + o->n + sizeof(r), text, tl);
    o->n += r.h.size;
}

static void *sym(void *h, const char *name)
{
    return gt_real_dlsym(h, name); /* glibc's: our exported dlsym is for the program */
}

/* 0 with F filled, or -1 with the reason in why. */
static int load(char *why, size_t n)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, n, "%s", e ? e : "libnvidia-ml.so.1: cannot load");
        return -1;
    }
    F.init = (nvml_ret(*)(void))sym(h, "nvmlInit_v2");
    F.error_string = (const char *(*)(nvml_ret))sym(h, "nvmlErrorString");
    F.by_uuid = (nvml_ret(*)(const char *, nvml_dev *))sym(h, "nvmlDeviceGetHandleByUUID");
    F.index = (nvml_ret(*)(nvml_dev, unsigned int *))sym(h, "nvmlDeviceGetIndex");
    F.clock = (nvml_ret(*)(nvml_dev, int, unsigned int *))sym(h, "nvmlDeviceGetClockInfo");
    F.max_clock = (nvml_ret(*)(nvml_dev, int, unsigned int *))sym(h, "nvmlDeviceGetMaxClockInfo");
    F.temp = (nvml_ret(*)(nvml_dev, int, unsigned int *))sym(h, "nvmlDeviceGetTemperature");
    F.power = (nvml_ret(*)(nvml_dev, unsigned int *))sym(h, "nvmlDeviceGetPowerUsage");
    F.power_limit =
        (nvml_ret(*)(nvml_dev, unsigned int *))sym(h, "nvmlDeviceGetEnforcedPowerLimit");
    F.util = (nvml_ret(*)(nvml_dev, struct nvml_util *))sym(h, "nvmlDeviceGetUtilizationRates");
    F.mem = (nvml_ret(*)(nvml_dev, struct nvml_mem *))sym(h, "nvmlDeviceGetMemoryInfo");
    /* CUDA 12.x renamed "throttle reasons" to "clocks event reasons"; older libraries have only
     * the first name, newer ones both. */
    F.reasons = (nvml_ret(*)(nvml_dev, unsigned long long *))sym(
        h, "nvmlDeviceGetCurrentClocksEventReasons");
    F.procs = (nvml_ret(*)(nvml_dev, unsigned int *, struct nvml_proc *))sym(
        h, "nvmlDeviceGetComputeRunningProcesses_v3");
    F.proc_name =
        (nvml_ret(*)(unsigned int, char *, unsigned int))sym(h, "nvmlSystemGetProcessName");
    if (!F.reasons)
        F.reasons = (nvml_ret(*)(nvml_dev, unsigned long long *))sym(
            h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!F.init || !F.by_uuid) {
        snprintf(why, n, "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByUUID");
        return -1;
    }
    nvml_ret rc = F.init();
    if (rc != NVML_OK) {
        const char *e = F.error_string ? F.error_string(rc) : NULL;
        snprintf(why, n, "nvmlInit_v2 failed: %s (%d)", e ? e : "error", rc);
        return -1;
    }
    return 0;
}

static void map_new_devices(struct out *o)
{
    for (int i = 0; i < NVML_DEVS; i++) {
        if (dev_state[i] != ST_NEW || !atomic_load_explicit(&known[i], memory_order_acquire))
            continue;
        const uint8_t *b = uuids[i];
        char u[64];
        unsigned int index = 0, max_sm = 0, max_mem = 0;
        snprintf(u, sizeof(u),
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
        if (F.by_uuid(u, &handles[i]) != NVML_OK) {
            dev_state[i] = ST_UNMATCHED;
            put_status(o, GT_NVML_UNMATCHED, i, 0, 0, 0, u);
            continue;
        }
        dev_state[i] = ST_MAPPED;
        if (F.index) F.index(handles[i], &index);
        if (F.max_clock && F.max_clock(handles[i], NVML_CLOCK_SM, &max_sm) != NVML_OK) max_sm = 0;
        if (F.max_clock && F.max_clock(handles[i], NVML_CLOCK_MEM, &max_mem) != NVML_OK)
            max_mem = 0;
        put_status(o, GT_NVML_DEVICE, i, index, max_sm, max_mem, u);
    }
}

/* A query that is missing or fails leaves its field 0 and its valid bit clear. */
#define ASK(fn, bit, ...)                                                                          \
    do {                                                                                           \
        if (F.fn && F.fn(__VA_ARGS__) == NVML_OK) r.valid |= (bit);                                \
    } while (0)

static void sample(struct out *o, int i)
{
    struct gt_rec_nvml_sample r;
    struct nvml_util u = {0, 0};
    struct nvml_mem m = {0, 0, 0};
    unsigned long long reasons = 0;
    memset(&r, 0, sizeof(r));
    r.h = (struct gt_rec_header){GT_REC_NVML_SAMPLE, 0, sizeof(r)};
    r.ts = gt_now();
    r.device = i;
    nvml_dev d = handles[i];
    ASK(clock, GT_NVML_HAS_SM_CLOCK, d, NVML_CLOCK_SM, &r.sm_mhz);
    ASK(clock, GT_NVML_HAS_MEM_CLOCK, d, NVML_CLOCK_MEM, &r.mem_mhz);
    ASK(temp, GT_NVML_HAS_TEMP, d, NVML_TEMP_GPU, &r.temp_c);
    ASK(power, GT_NVML_HAS_POWER, d, &r.power_mw);
    ASK(power_limit, GT_NVML_HAS_POWER_LIMIT, d, &r.power_limit_mw);
    ASK(util, GT_NVML_HAS_UTIL, d, &u);
    ASK(reasons, GT_NVML_HAS_REASONS, d, &reasons);
    ASK(mem, GT_NVML_HAS_MEM_USED, d, &m);
    r.util_gpu = u.gpu;
    r.util_mem = u.memory;
    r.reasons = reasons;
    r.mem_used = m.used;
    if (o->n + sizeof(r) > sizeof(o->buf)) return;
    memcpy(o->buf + o->n, &r, sizeof(r));
    o->n += sizeof(r);
}

/* The processes NVML lists on device i, one record each, all with one ts. */
static void list_procs(struct out *o, int i)
{
    static struct nvml_proc p[NVML_PROCS_MAX];
    unsigned int n = NVML_PROCS_MAX;
    uint64_t ts = gt_now();
    if (!F.procs || F.procs(handles[i], &n, p) != NVML_OK) return;
    for (unsigned int k = 0; k < n && k < NVML_PROCS_MAX; k++) {
        char name[64] = "";
        if (F.proc_name && F.proc_name(p[k].pid, name, sizeof(name)) != NVML_OK) name[0] = 0;
        name[sizeof(name) - 1] = 0;
        uint32_t nl = (uint32_t)strlen(name);
        struct gt_rec_nvml_proc r = {.h = {GT_REC_NVML_PROC, 0, gt_rec_size(sizeof(r), nl)},
                                     .ts = ts,
                                     .device = i,
                                     .pid = p[k].pid,
                                     .bytes = p[k].used,
                                     .name_len = nl};
        if (o->n + r.h.size > sizeof(o->buf)) return;
        memset(o->buf + o->n, 0, r.h.size);
        memcpy(o->buf + o->n, &r, sizeof(r));
        memcpy(o->buf + o->n + sizeof(r), name, nl);
        o->n += r.h.size;
    }
}

void gt_nvml_tick(void (*write)(const void *p, uint32_t size))
{
    static struct out o; /* the flusher's only, kept off its stack */
    uint64_t now = gt_now();
    if (gt_nvml_next() > now) return;
    o.n = 0;
    if (state == 0) {
        char why[512];
        state = load(why, sizeof(why)) == 0 ? 1 : -1;
        if (state < 0) {
            void *absent = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
            put_status(&o, F.init || absent ? GT_NVML_FAILED : GT_NVML_ABSENT, -1, 0, 0, 0, why);
            if (absent) dlclose(absent);
        }
    }
    uint64_t want = atomic_exchange(&procs_wanted, 0);
    if (state > 0) {
        map_new_devices(&o);
        for (int i = 0; i < NVML_DEVS; i++)
            if (dev_state[i] == ST_MAPPED && want >> i & 1) list_procs(&o, i);
        if (now >= next_due) {
            for (int i = 0; i < NVML_DEVS; i++)
                if (dev_state[i] == ST_MAPPED) sample(&o, i);
            next_due = now + period_ns;
        }
    }
    if (o.n) write(o.buf, o.n);
}

/* In the child only, before its flusher exists. The library stays loaded and initialized. */
void gt_nvml_forget(void)
{
    for (int i = 0; i < NVML_DEVS; i++)
        atomic_store(&known[i], 0);
    atomic_store(&any_known, 0);
    atomic_store(&procs_wanted, 0);
    memset(dev_state, 0, sizeof(dev_state));
    next_due = 0;
}
