/* The simulated NVML (tests/simnvml, test fixture only): libnvidia-ml.so.1 with nvml.h's
 * prototypes, describing the simulated driver's devices.
 * - Devices, names, UUIDs and PCI bus ids are the simulated driver's, asked through its own
 *   functions (gtsim_internal_pointer), never through its exports: a management library is not
 *   the program's CUDA, and a preloaded gputrace must not see these queries as the program's calls.
 * - Memory is the driver's device-wide accounting (gtsim_device_memory): capacity, free, and
 *   GTSIM_OTHER_BYTES as one other process.
 * - Clocks, temperature, power, clock-event (throttle) reasons and utilization follow a schedule
 *   read from the file GTSIM_NVML_SCHEDULE, if set: lines "<ms> key=value ...", ms counted from
 *   the first nvmlInit; a line's values hold from its time until a later line changes them. The
 *   simulated driver is told the SM clock (gtsim_set_sm_clock): a kernel starting while the clock
 *   is below its maximum runs longer in proportion. Key "fail" is a mask of the keys (1 << their
 *   place in the list above, sm_clock first) whose queries answer NVML_ERROR_NOT_SUPPORTED while
 *   it holds, as a board answers for what it cannot measure.
 * - A PCIe board: no NvLink (NVML_ERROR_NOT_SUPPORTED), fabric state "not supported"; PyTorch's
 *   expandable segments then need no fabric handles. Functions not defined here are not exported.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <nvml.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NV_MAX_DEVICES 16
#define NV_MAX_STEPS   256
/* above Linux's largest pid_max: stands for "another process" without naming a real one */
#define NV_OTHER_PID 4194305u

enum {
    K_SM_CLOCK,
    K_MEM_CLOCK,
    K_MAX_SM_CLOCK,
    K_MAX_MEM_CLOCK,
    K_TEMP,
    K_POWER_MW,
    K_POWER_LIMIT_MW,
    K_EVENTS,
    K_UTIL_GPU,
    K_UTIL_MEM,
    K_FAIL, /* a mask of 1 << K_*: those queries answer NVML_ERROR_NOT_SUPPORTED meanwhile */
    K_N
};
static const char *const g_keys[K_N] = {
    "sm_clock",       "mem_clock",    "max_sm_clock", "max_mem_clock", "temp", "power_mw",
    "power_limit_mw", "clock_events", "util_gpu",     "util_mem",      "fail"};
/* an idle H100-like board */
static const unsigned long long g_defaults[K_N] = {1980,   2619, 1980, 2619, 35, 70000,
                                                   700000, 0,    0,    0,    0};

struct step {
    unsigned long long at_ns;
    unsigned long long v[K_N];
};

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static nvmlReturn_t g_init_rc;
static int g_ndev;
static unsigned long long g_t0;
static struct step g_steps[NV_MAX_STEPS];
static int g_nsteps;
static int (*g_dev_memory)(int, size_t *, size_t *, size_t *);
static CUresult (*g_get_name)(char *, int, CUdevice);
static CUresult (*g_get_uuid)(CUuuid *, CUdevice);
static CUresult (*g_get_pci)(char *, int, CUdevice);
static CUresult (*g_drv_version)(int *);
static struct nvmlDevice_st {
    int index;
} g_dev[NV_MAX_DEVICES];

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* One schedule line: "<ms> key=value ...". Returns 0, or -1 with a message on stderr. */
static int parse_step(char *line, const char *path, int lineno, struct step *s)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = 0; /* a comment, also after values */
    char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
    if (!tok) return 1; /* blank */
    char *end;
    errno = 0;
    double ms = strtod(tok, &end);
    if (*end || errno || ms < 0) goto bad;
    s->at_ns = (unsigned long long)(ms * 1e6);
    while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq) goto bad;
        *eq = 0;
        int k = 0;
        while (k < K_N && strcmp(g_keys[k], tok))
            k++;
        errno = 0;
        unsigned long long v = strtoull(eq + 1, &end, 0);
        if (k == K_N || *end || errno) goto bad;
        s->v[k] = v;
    }
    return 0;
bad:
    fprintf(stderr,
            "gtsim-nvml: %s:%d: expected \"<ms> key=value ...\" with keys sm_clock, mem_clock, "
            "max_sm_clock, max_mem_clock, temp, power_mw, power_limit_mw, clock_events, util_gpu, "
            "util_mem, fail; schedule ignored from here\n",
            path, lineno);
    return -1;
}

static void load_schedule(void)
{
    g_steps[0].at_ns = 0;
    memcpy(g_steps[0].v, g_defaults, sizeof g_defaults);
    g_nsteps = 1;
    const char *path = getenv("GTSIM_NVML_SCHEDULE");
    if (!path || !*path) return;
    FILE *f = fopen(path, "re");
    if (!f) {
        fprintf(stderr, "gtsim-nvml: %s: %s; no schedule\n", path, strerror(errno));
        return;
    }
    char line[1024];
    for (int lineno = 1; fgets(line, sizeof line, f) && g_nsteps < NV_MAX_STEPS; lineno++) {
        struct step s = g_steps[g_nsteps - 1]; /* values carry over */
        int rc = parse_step(line, path, lineno, &s);
        if (rc < 0) break;
        if (rc == 0 && s.at_ns < g_steps[g_nsteps - 1].at_ns) {
            fprintf(stderr,
                    "gtsim-nvml: %s:%d: times must not decrease; schedule ignored from here\n",
                    path, lineno);
            break;
        }
        if (rc == 0) g_steps[g_nsteps++] = s;
    }
    fclose(f);
}

static unsigned long long value_at(int k, unsigned long long abs_ns)
{
    unsigned long long t = abs_ns > g_t0 ? abs_ns - g_t0 : 0;
    int i = g_nsteps - 1;
    while (i > 0 && g_steps[i].at_ns > t)
        i--;
    return g_steps[i].v[k];
}

static unsigned long long value(int k)
{
    return value_at(k, now_ns());
}

/* For the simulated driver: the SM clock against its maximum at GPU time t (both clocks are
 * CLOCK_MONOTONIC), so that kernels run slower while the schedule holds the clock down. */
static unsigned sm_clock_permille(unsigned long long t)
{
    unsigned long long c = value_at(K_SM_CLOCK, t), m = value_at(K_MAX_SM_CLOCK, t);
    return m && c < m ? (unsigned)(c * 1000 / m) : 1000;
}

static void init_once(void)
{
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    void *(*internal)(const char *) =
        drv ? (void *(*)(const char *))dlsym(drv, "gtsim_internal_pointer") : NULL;
    g_dev_memory =
        drv ? (int (*)(int, size_t *, size_t *, size_t *))dlsym(drv, "gtsim_device_memory") : NULL;
    if (!internal || !g_dev_memory) {
        g_init_rc = NVML_ERROR_DRIVER_NOT_LOADED; /* only the simulated driver is described */
        return;
    }
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))internal("cuInit");
    g_get_name = (CUresult(*)(char *, int, CUdevice))internal("cuDeviceGetName");
    g_get_uuid = (CUresult(*)(CUuuid *, CUdevice))internal("cuDeviceGetUuid_v2");
    g_get_pci = (CUresult(*)(char *, int, CUdevice))internal("cuDeviceGetPCIBusId");
    g_drv_version = (CUresult(*)(int *))internal("cuDriverGetVersion");
    if (!init || !g_get_name || !g_get_uuid || !g_get_pci || !g_drv_version) {
        g_init_rc = NVML_ERROR_LIB_RM_VERSION_MISMATCH;
        return;
    }
    CUresult r = init(0);
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_NO_DEVICE) {
        g_init_rc = NVML_ERROR_UNKNOWN;
        return;
    }
    while (g_ndev < NV_MAX_DEVICES && g_dev_memory(g_ndev, NULL, NULL, NULL) == 0) {
        g_dev[g_ndev].index = g_ndev;
        g_ndev++;
    }
    g_t0 = now_ns();
    load_schedule();
    void (*set_clock)(unsigned (*)(unsigned long long)) =
        (void (*)(unsigned (*)(unsigned long long)))dlsym(drv, "gtsim_set_sm_clock");
    if (set_clock && g_nsteps > 1) set_clock(sm_clock_permille);
}

static int g_inits; /* nvmlInit/nvmlShutdown nest */

nvmlReturn_t DECLDIR nvmlInitWithFlags(unsigned int flags)
{
    pthread_once(&g_once, init_once);
    if (g_init_rc == NVML_SUCCESS) __atomic_add_fetch(&g_inits, 1, __ATOMIC_RELAXED);
    return g_init_rc;
}

nvmlReturn_t DECLDIR nvmlInit_v2(void)
{
    return nvmlInitWithFlags(0);
}

nvmlReturn_t DECLDIR nvmlShutdown(void)
{
    int n = __atomic_load_n(&g_inits, __ATOMIC_RELAXED);
    while (n > 0 &&
           !__atomic_compare_exchange_n(&g_inits, &n, n - 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return n > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

static nvmlReturn_t ready(void)
{
    return __atomic_load_n(&g_inits, __ATOMIC_RELAXED) > 0 ? NVML_SUCCESS
                                                           : NVML_ERROR_UNINITIALIZED;
}

static nvmlReturn_t device(nvmlDevice_t d, int *index)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!d || d < g_dev || d >= g_dev + g_ndev) return NVML_ERROR_INVALID_ARGUMENT;
    *index = d->index;
    return NVML_SUCCESS;
}

const char *DECLDIR nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t DECLDIR nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!v) return NVML_ERROR_INVALID_ARGUMENT;
    return g_drv_version(v) == CUDA_SUCCESS ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t DECLDIR nvmlSystemGetCudaDriverVersion(int *v)
{
    return nvmlSystemGetCudaDriverVersion_v2(v);
}

nvmlReturn_t DECLDIR nvmlSystemGetDriverVersion(char *s, unsigned int len)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!s) return NVML_ERROR_INVALID_ARGUMENT;
    return (unsigned)snprintf(s, len, "gtsim-580.00") < len ? NVML_SUCCESS
                                                            : NVML_ERROR_INSUFFICIENT_SIZE;
}

nvmlReturn_t DECLDIR nvmlDeviceGetCount_v2(unsigned int *n)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!n) return NVML_ERROR_INVALID_ARGUMENT;
    *n = (unsigned)g_ndev;
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!d || i >= (unsigned)g_ndev) return NVML_ERROR_INVALID_ARGUMENT;
    *d = &g_dev[i];
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (!rc && !i) rc = NVML_ERROR_INVALID_ARGUMENT;
    if (!rc) *i = (unsigned)k;
    return rc;
}

/* "GPU-" and the driver's 16 UUID bytes as 8-4-4-4-12 hex digits, as nvidia-smi prints them */
static void uuid_string(int k, char *out, size_t len)
{
    CUuuid u;
    memset(&u, 0, sizeof u);
    g_get_uuid(&u, k);
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

nvmlReturn_t DECLDIR nvmlDeviceGetUUID(nvmlDevice_t d, char *s, unsigned int len)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    if (!s) return NVML_ERROR_INVALID_ARGUMENT;
    char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    uuid_string(k, u, sizeof u);
    if (strlen(u) >= len) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(s, u, strlen(u) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!uuid || !d) return NVML_ERROR_INVALID_ARGUMENT;
    for (int k = 0; k < g_ndev; k++) {
        char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        uuid_string(k, u, sizeof u);
        if (!strcasecmp(u, uuid)) {
            *d = &g_dev[k];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t DECLDIR nvmlDeviceGetName(nvmlDevice_t d, char *s, unsigned int len)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    if (!s || len == 0) return NVML_ERROR_INVALID_ARGUMENT;
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
    if (g_get_name(name, sizeof name, k) != CUDA_SUCCESS) return NVML_ERROR_UNKNOWN;
    if (strlen(name) >= len) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(s, name, strlen(name) + 1);
    return NVML_SUCCESS;
}

/* The driver's "dddd:bb:dd.f" (NVML's busId is "dddddddd:bb:dd.f"; both are accepted below). */
static void pci_id(int k, char *out, size_t len)
{
    g_get_pci(out, (int)len, k);
}

nvmlReturn_t DECLDIR nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    if (!p) return NVML_ERROR_INVALID_ARGUMENT;
    memset(p, 0, sizeof *p);
    char id[32];
    pci_id(k, id, sizeof id);
    unsigned dom = 0, bus = 0, dev = 0, fn = 0;
    sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn);
    p->domain = dom;
    p->bus = bus;
    p->device = dev;
    p->pciDeviceId = 0x233010deu; /* H100 SXM, NVIDIA's vendor id in the low half */
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    snprintf(p->busId, sizeof p->busId, "%08x:%02x:%02x.%x", dom, bus, dev, fn);
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *d)
{
    nvmlReturn_t rc = ready();
    if (rc) return rc;
    if (!bus_id || !d) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned dom, bus, dev, fn = 0;
    if (sscanf(bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) < 3)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (int k = 0; k < g_ndev; k++) {
        char id[32];
        unsigned d2 = 0, b2 = 0, v2 = 0, f2 = 0;
        pci_id(k, id, sizeof id);
        sscanf(id, "%x:%x:%x.%x", &d2, &b2, &v2, &f2);
        if (d2 == dom && b2 == bus && v2 == dev && f2 == fn) {
            *d = &g_dev[k];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

static nvmlReturn_t memory(nvmlDevice_t d, unsigned long long *total, unsigned long long *free_b,
                           unsigned long long *used, unsigned long long *other)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    size_t f = 0, t = 0, o = 0;
    if (g_dev_memory(k, &f, &t, &o) != 0) return NVML_ERROR_UNKNOWN;
    *total = t;
    *free_b = f;
    *used = t - f;
    if (other) *other = o;
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    if (!m) return ready() ? ready() : NVML_ERROR_INVALID_ARGUMENT;
    return memory(d, &m->total, &m->free, &m->used, NULL);
}

nvmlReturn_t DECLDIR nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    if (!m) return ready() ? ready() : NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->reserved = 0;
    return memory(d, &m->total, &m->free, &m->used, NULL);
}

/* This process (what the simulated driver charged to it) and, with GTSIM_OTHER_BYTES, one other. */
static nvmlReturn_t processes(nvmlDevice_t d, unsigned int *count, void *infos, size_t stride)
{
    unsigned long long total, free_b, used, other;
    nvmlReturn_t rc = memory(d, &total, &free_b, &used, &other);
    if (rc) return rc;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long mine = used - other;
    unsigned n = (mine > 0) + (other > 0), cap = *count;
    *count = n;
    if (cap < n) return NVML_ERROR_INSUFFICIENT_SIZE;
    if (n && !infos) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned i = 0;
    unsigned long long bytes[2] = {mine, other};
    unsigned pids[2] = {(unsigned)getpid(), NV_OTHER_PID};
    for (int j = 0; j < 2; j++) {
        if (!bytes[j]) continue;
        /* every layout starts with pid, usedGpuMemory; the v2+ fields after them say "none" */
        unsigned char *e = (unsigned char *)infos + (size_t)i++ * stride;
        memset(e, 0, stride);
        nvmlProcessInfo_v1_t head = {.pid = pids[j], .usedGpuMemory = bytes[j]};
        memcpy(e, &head, sizeof head);
        if (stride >= sizeof(nvmlProcessInfo_v2_t)) {
            ((nvmlProcessInfo_v2_t *)e)->gpuInstanceId = 0xFFFFFFFFu;
            ((nvmlProcessInfo_v2_t *)e)->computeInstanceId = 0xFFFFFFFFu;
        }
    }
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *n,
                                                             nvmlProcessInfo_t *p)
{
    return processes(d, n, p, sizeof *p);
}

/* The unversioned export keeps the first ABI (nvml.h declares it with nvmlProcessInfo_v1_t). */
#undef nvmlDeviceGetComputeRunningProcesses
nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n,
                                                          nvmlProcessInfo_v1_t *p);
nvmlReturn_t DECLDIR nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *n,
                                                          nvmlProcessInfo_v1_t *p)
{
    return processes(d, n, p, sizeof *p);
}

/* As a PCIe H100 answers: success, fabric state "not supported" (versions 2-4 share the fields
 * up to state). PyTorch then shares expandable segments by file descriptor. */
nvmlReturn_t DECLDIR nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfoV_t *info)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    if (!info) return NVML_ERROR_INVALID_ARGUMENT;
    if ((info->version >> 24) < 2 || (info->version >> 24) > 4)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memset(info->clusterUuid, 0, sizeof info->clusterUuid);
    info->status = NVML_SUCCESS;
    info->cliqueId = 0;
    info->state = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

nvmlReturn_t DECLDIR nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t d, unsigned int link,
                                                         nvmlIntNvLinkDeviceType_t *type)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    return rc ? rc : NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t DECLDIR nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
                                                         nvmlPciInfo_t *pci)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    return rc ? rc : NVML_ERROR_NOT_SUPPORTED;
}

/* ---- the scheduled state ------------------------------------------------------------------- */

static nvmlReturn_t scheduled(nvmlDevice_t d, void *out, int key, int is64)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    if (!out) return NVML_ERROR_INVALID_ARGUMENT;
    if (value(K_FAIL) >> key & 1) return NVML_ERROR_NOT_SUPPORTED;
    if (is64)
        *(unsigned long long *)out = value(key);
    else
        *(unsigned int *)out = (unsigned int)value(key);
    return NVML_SUCCESS;
}

static int clock_key(nvmlClockType_t t, int max)
{
    if (t == NVML_CLOCK_SM || t == NVML_CLOCK_GRAPHICS) return max ? K_MAX_SM_CLOCK : K_SM_CLOCK;
    if (t == NVML_CLOCK_MEM) return max ? K_MAX_MEM_CLOCK : K_MEM_CLOCK;
    return -1;
}

nvmlReturn_t DECLDIR nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
    int key = clock_key(t, 0);
    return key < 0 ? NVML_ERROR_NOT_SUPPORTED : scheduled(d, mhz, key, 0);
}

nvmlReturn_t DECLDIR nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t t, unsigned int *mhz)
{
    int key = clock_key(t, 1);
    return key < 0 ? NVML_ERROR_NOT_SUPPORTED : scheduled(d, mhz, key, 0);
}

nvmlReturn_t DECLDIR nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t s,
                                              unsigned int *c)
{
    return s == NVML_TEMPERATURE_GPU ? scheduled(d, c, K_TEMP, 0) : NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t DECLDIR nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
    return scheduled(d, mw, K_POWER_MW, 0);
}

nvmlReturn_t DECLDIR nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw)
{
    return scheduled(d, mw, K_POWER_LIMIT_MW, 0);
}

nvmlReturn_t DECLDIR nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
    return scheduled(d, r, K_EVENTS, 1);
}

nvmlReturn_t DECLDIR nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                               unsigned long long *r)
{
    return scheduled(d, r, K_EVENTS, 1);
}

nvmlReturn_t DECLDIR nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    int k;
    nvmlReturn_t rc = device(d, &k);
    if (rc) return rc;
    if (!u) return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = (unsigned)value(K_UTIL_GPU);
    u->memory = (unsigned)value(K_UTIL_MEM);
    return NVML_SUCCESS;
}

/* This process's name as the kernel has it (comm); the simulated other process is "gtsim-other". */
nvmlReturn_t DECLDIR nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
    char path[64], comm[64] = "";
    if (!name || !length) return NVML_ERROR_INVALID_ARGUMENT;
    if (pid == NV_OTHER_PID) {
        snprintf(comm, sizeof comm, "gtsim-other");
    } else {
        snprintf(path, sizeof path, "/proc/%u/comm", pid);
        FILE *f = fopen(path, "r");
        if (!f) return NVML_ERROR_NOT_FOUND;
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
    }
    if (strlen(comm) >= length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(name, comm, strlen(comm) + 1);
    return NVML_SUCCESS;
}
