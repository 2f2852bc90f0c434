/* Simulated CUDA driver: configuration, API entry/exit, logging, containers, handles, errors,
 * cuInit/cuDriverGetVersion and the device queries. */
#include "sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sim_config g_cfg;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_cond;
struct sim_dev g_dev[SIM_MAX_DEV];

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static atomic_int g_inited;
static atomic_ulong g_counts[GTSIM_NEXPORTS];
static atomic_uint g_corr_next;
static atomic_uint g_thread_next;

typedef void (*api_cb_fn)(int, const char *, unsigned, void *);
typedef void (*api_cb_ex_fn)(const struct gtsim_api_info *, void *);
static _Atomic(api_cb_fn) g_cb;
static void *_Atomic g_cb_arg;
static _Atomic(api_cb_ex_fn) g_cb_ex;
static void *_Atomic g_cb_ex_arg;

static __thread unsigned t_corr;
static __thread int t_api_idx = -1;
static __thread unsigned t_serial;

/* ---- configuration ---------------------------------------------------------------------- */
static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    double d = strtod(s, &end); /* accepts 8589934592, 8e9, 0x... */
    if (errno || end == s)
        return def;
    uint64_t mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ull << 10; break;
    case 'm': case 'M': mul = 1ull << 20; break;
    case 'g': case 'G': mul = 1ull << 30; break;
    case 't': case 'T': mul = 1ull << 40; break;
    default: break;
    }
    if (d < 0)
        return def;
    /* integers beyond 2^53 would lose precision through double: reparse exactly */
    if (mul == 1 && d >= 9007199254740992.0)
        return strtoull(s, NULL, 0);
    return (uint64_t)(d * (double)mul);
}

static double env_double(const char *name, double def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    double d = strtod(s, &end);
    return end == s || d <= 0 ? def : d;
}

static void atfork_prepare(void) { pthread_mutex_lock(&g_lock); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_lock); }
static void cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(c, &ca);
    pthread_condattr_destroy(&ca);
}

/* As the real driver: a child forked after the parent initialized the driver cannot use it
 * (cuInit and every call that needs it return CUDA_ERROR_NOT_INITIALIZED, which the runtime
 * reports as "initialization error"; PyTorch says "Cannot re-initialize CUDA in forked
 * subprocess" before it gets there). A child forked before any cuInit initializes as usual.
 * GTSIM_FORK_KEEPS_DRIVER=1 keeps the driver usable in the child (the simulator's own fork
 * safety tests: its lock, its host-function thread, the simulated CUPTI's delivery thread). */
static atomic_int g_fork_broken;

static void atfork_child(void)
{
    pthread_mutex_unlock(&g_lock);
    if (!g_cfg.fork_keeps && atomic_exchange(&g_inited, 0))
        atomic_store(&g_fork_broken, 1);
    cond_init_monotonic(&g_cond); /* waiters of the parent do not exist here */
    sim_stream_atfork_child();
}

static void init_once(void)
{
    cond_init_monotonic(&g_cond);

    g_cfg.driver_version = (int)env_u64("GTSIM_DRIVER_VERSION", 13000);
    uint64_t nd = env_u64("GTSIM_DEVICES", 1);
    g_cfg.ndev = nd > SIM_MAX_DEV ? SIM_MAX_DEV : (int)nd;
    g_cfg.mem_bytes = env_u64("GTSIM_MEM_BYTES", 8ull << 30);
    g_cfg.other_bytes = env_u64("GTSIM_OTHER_BYTES", 0);
    g_cfg.ctx_overhead = env_u64("GTSIM_CTX_OVERHEAD_BYTES", 0);
    g_cfg.alloc_gran = env_u64("GTSIM_ALLOC_GRANULARITY", 512);
    if (g_cfg.alloc_gran == 0)
        g_cfg.alloc_gran = 1;
    g_cfg.alloc_latency_ns = env_u64("GTSIM_ALLOC_LATENCY_NS", 0);
    g_cfg.launch_latency_ns = env_u64("GTSIM_LAUNCH_LATENCY_NS", 2000);
    g_cfg.sync_wake_ns = env_u64("GTSIM_SYNC_WAKE_NS", 0);
    g_cfg.kernel_ns = env_u64("GTSIM_KERNEL_NS", 10000);
    g_cfg.copy_bps = env_double("GTSIM_COPY_BYTES_PER_SEC", 10e9);
    g_cfg.distinct = (int)env_u64("GTSIM_DISTINCT_POINTERS", 0) != 0;
    g_cfg.activity_cap = (size_t)env_u64("GTSIM_ACTIVITY_CAPACITY", 65536);
    g_cfg.log_all = (int)env_u64("GTSIM_LOG_ALL", 0) != 0;
    g_cfg.fork_keeps = (int)env_u64("GTSIM_FORK_KEEPS_DRIVER", 0) != 0;
    g_cfg.log_fd = -1;
    const char *lp = getenv("GTSIM_LOG");
    if (lp && *lp)
        g_cfg.log_fd = open(lp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

    mem_init_devices();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);

    /* Never unload: a host-function thread and atfork handlers may outlive a dlclose. */
    Dl_info di;
    if (dladdr((void *)init_once, &di) && di.dli_fname)
        dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

void sim_init_once(void) { pthread_once(&g_once, init_once); }
int sim_is_initialized(void) { return atomic_load(&g_inited); }

/* ---- time --------------------------------------------------------------------------------- */
uint64_t sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_sleep_until(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

void sim_sleep_ns(uint64_t ns)
{
    if (ns)
        sim_sleep_until(sim_now() + ns);
}

unsigned long long gtsim_now_ns(void) { return sim_now(); }

/* ---- logging ------------------------------------------------------------------------------ */
void sim_log(const char *fmt, ...)
{
    sim_init_once();
    if (g_cfg.log_fd < 0)
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof buf - 2)
        n = sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(g_cfg.log_fd, buf, (size_t)n); /* one write per line: O_APPEND keeps lines whole */
    (void)w;
}

const char *sim_caller_name(void *ra)
{
    Dl_info di;
    if (ra && dladdr(ra, &di) && di.dli_fname && *di.dli_fname)
        return di.dli_fname;
    return "?";
}

/* ---- API entry/exit ------------------------------------------------------------------------ */
unsigned sim_thread(void)
{
    if (!t_serial)
        t_serial = atomic_fetch_add(&g_thread_next, 1) + 1;
    return t_serial;
}

unsigned sim_corr(void) { return t_corr; }
const char *sim_api(void) { return t_api_idx >= 0 ? gtsim_export_names[t_api_idx] : "?"; }

static void call_cbs(int enter, int idx, unsigned corr, int result)
{
    api_cb_fn cb = atomic_load(&g_cb);
    if (cb)
        cb(enter, gtsim_export_names[idx], corr, atomic_load(&g_cb_arg));
    api_cb_ex_fn cbx = atomic_load(&g_cb_ex);
    if (cbx) {
        struct gtsim_api_info info = {enter, gtsim_export_names[idx], idx, corr, result, sim_thread()};
        cbx(&info, atomic_load(&g_cb_ex_arg));
    }
}

void sim_enter(struct sim_call *c, int idx, int need_init)
{
    sim_init_once();
    c->idx = idx;
    c->rc = CUDA_SUCCESS;
    c->corr = atomic_fetch_add(&g_corr_next, 1) + 1;
    c->prev_corr = t_corr;
    c->prev_idx = t_api_idx;
    atomic_fetch_add_explicit(&g_counts[idx], 1, memory_order_relaxed);
    call_cbs(1, idx, c->corr, 0);
    t_corr = c->corr;
    t_api_idx = idx;
    if (need_init && !atomic_load(&g_inited))
        c->rc = CUDA_ERROR_NOT_INITIALIZED;
}

CUresult sim_exit(struct sim_call *c, CUresult rc)
{
    t_corr = c->prev_corr;
    t_api_idx = c->prev_idx;
    if (g_cfg.log_all)
        sim_log("call %s rc=%d", gtsim_export_names[c->idx], (int)rc);
    call_cbs(0, c->idx, c->corr, (int)rc);
    return rc;
}

/* every export without an implementation ends here (see gen_exports.c) */
int gtsim_stub_call(int idx, void *caller)
{
    struct sim_call c;
    sim_enter(&c, idx, 0);
    sim_log("stub %s rc=%d caller=%s", gtsim_export_names[idx], (int)CUDA_ERROR_NOT_SUPPORTED,
            sim_caller_name(caller));
    return (int)sim_exit(&c, CUDA_ERROR_NOT_SUPPORTED);
}

void gtsim_set_api_callback(void (*fn)(int, const char *, unsigned, void *), void *arg)
{
    atomic_store(&g_cb, NULL);
    atomic_store(&g_cb_arg, arg);
    atomic_store(&g_cb, fn);
}

void gtsim_set_api_callback_ex(void (*fn)(const struct gtsim_api_info *, void *), void *arg)
{
    atomic_store(&g_cb_ex, NULL);
    atomic_store(&g_cb_ex_arg, arg);
    atomic_store(&g_cb_ex, fn);
}

static int export_index(const char *name)
{
    if (!name)
        return -1;
    int lo = 0, hi = GTSIM_NEXPORTS - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(name, gtsim_export_names[mid]);
        if (!c)
            return mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

unsigned long gtsim_call_count(const char *name)
{
    int i = export_index(name);
    return i < 0 ? 0 : atomic_load(&g_counts[i]);
}

void gtsim_reset_call_counts(void)
{
    for (int i = 0; i < GTSIM_NEXPORTS; i++)
        atomic_store(&g_counts[i], 0);
}

const char *gtsim_export_name(int i)
{
    return i >= 0 && i < GTSIM_NEXPORTS ? gtsim_export_names[i] : NULL;
}

int gtsim_export_implemented(const char *name)
{
    int i = export_index(name);
    return i < 0 ? -1 : gtsim_export_impl[i] != gtsim_export_stub[i];
}

void *sim_export_pointer(int idx)
{
    sim_init_once();
    if (g_cfg.distinct && gtsim_export_thunk[idx])
        return gtsim_export_thunk[idx];
    return gtsim_export_impl[idx];
}

void *gtsim_internal_pointer(const char *name)
{
    int i = export_index(name);
    return i < 0 ? NULL : sim_export_pointer(i);
}

/* ---- hash map ------------------------------------------------------------------------------ */
static size_t hslot(uint64_t k, size_t cap)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

static void hmap_grow(struct hmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    if (m->n * 4 < m->cap) /* mostly tombstones: rehash at the same size */
        ncap = m->cap;
    uint64_t *ok = m->keys;
    void **ov = m->vals;
    size_t ocap = m->cap;
    m->keys = calloc(ncap, sizeof *m->keys);
    m->vals = calloc(ncap, sizeof *m->vals);
    if (!m->keys || !m->vals)
        abort();
    m->cap = ncap;
    m->n = m->used = 0;
    for (size_t i = 0; i < ocap; i++)
        if (ok[i] > 1)
            hmap_put(m, ok[i], ov[i]);
    free(ok);
    free(ov);
}

void *hmap_get(struct hmap *m, uint64_t k)
{
    if (!m->cap || k <= 1)
        return NULL;
    for (size_t i = hslot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            return m->vals[i];
        if (m->keys[i] == 0)
            return NULL;
    }
}

void hmap_put(struct hmap *m, uint64_t k, void *v)
{
    if ((m->used + 1) * 2 > m->cap)
        hmap_grow(m);
    size_t tomb = (size_t)-1;
    for (size_t i = hslot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k) {
            m->vals[i] = v;
            return;
        }
        if (m->keys[i] == 1 && tomb == (size_t)-1)
            tomb = i;
        if (m->keys[i] == 0) {
            if (tomb != (size_t)-1)
                i = tomb;
            else
                m->used++;
            m->keys[i] = k;
            m->vals[i] = v;
            m->n++;
            return;
        }
    }
}

void *hmap_del(struct hmap *m, uint64_t k)
{
    if (!m->cap || k <= 1)
        return NULL;
    for (size_t i = hslot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k) {
            void *v = m->vals[i];
            m->keys[i] = 1;
            m->vals[i] = NULL;
            m->n--;
            return v;
        }
        if (m->keys[i] == 0)
            return NULL;
    }
}

int hmap_next(struct hmap *m, size_t *i, uint64_t *k, void **v)
{
    for (; *i < m->cap; (*i)++) {
        if (m->keys[*i] > 1) {
            if (k)
                *k = m->keys[*i];
            if (v)
                *v = m->vals[*i];
            (*i)++;
            return 1;
        }
    }
    return 0;
}

/* interned strings: never freed, so activity records and cuFuncGetName results stay valid */
static struct hmap g_intern;
static pthread_mutex_t g_intern_lock = PTHREAD_MUTEX_INITIALIZER;
const char *sim_intern(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = s; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    if (h <= 1)
        h += 2;
    pthread_mutex_lock(&g_intern_lock);
    for (;; h = h * 31 + 7) { /* collisions: probe another key */
        if (h <= 1)
            continue;
        const char *e = hmap_get(&g_intern, h);
        if (!e) {
            e = strdup(s);
            if (!e)
                abort();
            hmap_put(&g_intern, h, (void *)e);
        }
        if (!strcmp(e, s)) {
            pthread_mutex_unlock(&g_intern_lock);
            return e;
        }
    }
}

/* ---- handles ------------------------------------------------------------------------------- */
struct handle_ent {
    int type;
    void *obj;
};
static struct hmap g_handles; /* under g_lock */

void handle_add(const void *h, int type, void *obj)
{
    struct handle_ent *e = malloc(sizeof *e);
    if (!e)
        abort();
    e->type = type;
    e->obj = obj;
    hmap_put(&g_handles, (uint64_t)(uintptr_t)h, e);
}

void *handle_get(const void *h, int type)
{
    struct handle_ent *e = hmap_get(&g_handles, (uint64_t)(uintptr_t)h);
    return e && e->type == type ? e->obj : NULL;
}

int handle_type(const void *h)
{
    struct handle_ent *e = hmap_get(&g_handles, (uint64_t)(uintptr_t)h);
    return e ? e->type : 0;
}

void handle_del(const void *h)
{
    free(hmap_del(&g_handles, (uint64_t)(uintptr_t)h));
}

size_t handle_list(int type, void ***out)
{
    size_t n = 0, cap = 16;
    void **v = malloc(cap * sizeof *v);
    uint64_t k;
    void *val;
    if (!v)
        abort();
    for (size_t i = 0; hmap_next(&g_handles, &i, &k, &val);) {
        struct handle_ent *e = val;
        if (e->type != type)
            continue;
        if (n == cap) {
            cap *= 2;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                abort();
        }
        v[n++] = e->obj;
    }
    *out = v;
    return n;
}

/* ---- errors --------------------------------------------------------------------------------- */
static const struct {
    int code;
    const char *str;
} g_errstr[] = {
    {0, "no error"},
    {1, "invalid argument"},
    {2, "out of memory"},
    {3, "initialization error"},
    {4, "driver shutting down"},
    {5, "profiler disabled while using external profiling tool"},
    {6, "profiler not initialized: call cudaProfilerInitialize()"},
    {7, "profiler already started"},
    {8, "profiler already stopped"},
    {34, "CUDA driver is a stub library"},
    {46, "CUDA-capable device(s) is/are busy or unavailable"},
    {100, "no CUDA-capable device is detected"},
    {101, "invalid device ordinal"},
    {200, "device kernel image is invalid"},
    {201, "invalid device context"},
    {202, "context already current"},
    {205, "mapping of buffer object failed"},
    {206, "unmapping of buffer object failed"},
    {207, "array is mapped"},
    {208, "resource already mapped"},
    {209, "no kernel image is available for execution on the device"},
    {210, "resource already acquired"},
    {211, "resource not mapped"},
    {212, "resource not mapped as array"},
    {213, "resource not mapped as pointer"},
    {214, "uncorrectable ECC error encountered"},
    {215, "limit is not supported on this architecture"},
    {216, "exclusive-thread device already in use by a different thread"},
    {217, "peer access is not supported between these two devices"},
    {218, "a PTX JIT compilation failed"},
    {219, "invalid OpenGL or DirectX context"},
    {220, "uncorrectable NVLink error detected during the execution"},
    {221, "PTX JIT compiler library not found"},
    {222, "the provided PTX was compiled with an unsupported toolchain."},
    {300, "device kernel image is invalid"},
    {301, "file not found"},
    {302, "shared object symbol not found"},
    {303, "shared object initialization failed"},
    {304, "OS call failed or operation not supported on this OS"},
    {400, "invalid resource handle"},
    {401, "the operation cannot be performed in the present state"},
    {500, "named symbol not found"},
    {600, "device not ready"},
    {700, "an illegal memory access was encountered"},
    {701, "too many resources requested for launch"},
    {702, "the launch timed out and was terminated"},
    {703, "launch uses incompatible texturing mode"},
    {704, "peer access is already enabled"},
    {705, "peer access has not been enabled"},
    {708, "cannot set while device is active in this process"},
    {709, "context is destroyed"},
    {710, "device-side assert triggered"},
    {711, "too many resources requested for launch"},
    {712, "part or all of the requested memory range is already mapped"},
    {713, "pointer does not correspond to a registered memory region"},
    {714, "an illegal instruction was encountered"},
    {715, "misaligned address"},
    {716, "operation not supported on global/shared address space"},
    {717, "an illegal memory access was encountered"},
    {718, "an illegal instruction was encountered"},
    {719, "unspecified launch failure"},
    {720, "too many blocks in cooperative launch"},
    {800, "operation not permitted"},
    {801, "operation not supported"},
    {802, "system not yet initialized"},
    {803, "system has unsupported display driver / cuda driver combination"},
    {804, "forward compatibility was attempted on non supported HW"},
    {900, "operation not permitted when stream is capturing"},
    {901, "operation failed due to a previous error during capture"},
    {902, "operation would result in a merge of separate capture sequences"},
    {903, "capture was not ended in the same stream as it began"},
    {904, "capturing stream has unjoined work"},
    {905, "operation would make the legacy stream depend on a capturing blocking stream"},
    {906, "operation not permitted on an event last recorded in a capturing stream"},
    {907, "attempt to terminate a thread-local capture sequence from another thread"},
    {908, "wait operation timed out"},
    {910, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
    {999, "unknown error"},
};

static const char *err_name(int code)
{
    for (size_t i = 0; i < gtsim_nerrnames; i++)
        if (gtsim_errnames[i].code == code)
            return gtsim_errnames[i].name;
    return NULL;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    SIM_API_NOINIT(cuGetErrorName, ({
        CUresult r_ = CUDA_SUCCESS;
        const char *n = err_name((int)error);
        if (!pStr)
            r_ = CUDA_ERROR_INVALID_VALUE;
        else if (!n) {
            *pStr = NULL;
            r_ = CUDA_ERROR_INVALID_VALUE;
        } else
            *pStr = n;
        r_;
    }));
}
SIM_EXPORT(cuGetErrorName)

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    SIM_API_NOINIT(cuGetErrorString, ({
        CUresult r_ = CUDA_SUCCESS;
        const char *n = err_name((int)error), *s = NULL;
        for (size_t i = 0; i < sizeof g_errstr / sizeof g_errstr[0]; i++)
            if (g_errstr[i].code == (int)error)
                s = g_errstr[i].str;
        if (!s)
            s = n; /* documented deviation: codes without a known message give their name */
        if (!pStr)
            r_ = CUDA_ERROR_INVALID_VALUE;
        else if (!n) {
            *pStr = NULL;
            r_ = CUDA_ERROR_INVALID_VALUE;
        } else
            *pStr = s;
        r_;
    }));
}
SIM_EXPORT(cuGetErrorString)

/* ---- initialization, version ------------------------------------------------------------------ */
static CUresult do_init(unsigned flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (g_cfg.ndev <= 0)
        return CUDA_ERROR_NO_DEVICE;
    if (atomic_load(&g_fork_broken))
        return CUDA_ERROR_NOT_INITIALIZED;
    atomic_store(&g_inited, 1);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuInit(unsigned int Flags) { SIM_API_NOINIT(cuInit, do_init(Flags)); }
SIM_EXPORT(cuInit)

static CUresult do_driver_version(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = g_cfg.driver_version;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    SIM_API_NOINIT(cuDriverGetVersion, do_driver_version(driverVersion));
}
SIM_EXPORT(cuDriverGetVersion)

/* cudart asks for this after its lookups; refusing makes it give up, as documented in README. */
CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    SIM_API_NOINIT(cuGetExportTable, ({
        if (ppExportTable)
            *ppExportTable = NULL;
        (void)pExportTableId;
        CUDA_ERROR_NOT_SUPPORTED;
    }));
}
SIM_EXPORT(cuGetExportTable)

/* ---- devices ---------------------------------------------------------------------------------- */
CUresult dev_check(CUdevice d)
{
    return d >= 0 && d < g_cfg.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult do_dev_count(int *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = g_cfg.ndev;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetCount(int *count) { SIM_API(cuDeviceGetCount, do_dev_count(count)); }
SIM_EXPORT(cuDeviceGetCount)

static CUresult do_dev_get(CUdevice *device, int ordinal)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) { SIM_API(cuDeviceGet, do_dev_get(device, ordinal)); }
SIM_EXPORT(cuDeviceGet)

static CUresult do_dev_name(char *name, int len, CUdevice dev)
{
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", "gputrace simulated GPU");
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    SIM_API(cuDeviceGetName, do_dev_name(name, len, dev));
}
SIM_EXPORT(cuDeviceGetName)

static CUresult do_total_mem(size_t *bytes, CUdevice dev)
{
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    *bytes = (size_t)g_dev[dev].capacity;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    SIM_API(cuDeviceTotalMem_v2, do_total_mem(bytes, dev));
}
SIM_EXPORT(cuDeviceTotalMem_v2)

static int dev_attr(CUdevice_attribute a, CUdevice dev)
{
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return 49152;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 132;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return dev + 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 3;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID: return dev;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return 232448;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE: return 33554432;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE: return 134213632;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: return 1024;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES: return CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH: return 1;
    case CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED: return 1;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID: return -1;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: return -1;
    default: return 0;
    }
}

static CUresult do_dev_attr(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if ((int)attrib <= 0 || (int)attrib >= (int)CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    *pi = dev_attr(attrib, dev);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    SIM_API(cuDeviceGetAttribute, do_dev_attr(pi, attrib, dev));
}
SIM_EXPORT(cuDeviceGetAttribute)

static CUresult do_cc(int *major, int *minor, CUdevice dev)
{
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    *major = 9;
    *minor = 0;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    SIM_API(cuDeviceComputeCapability, do_cc(major, minor, dev));
}
SIM_EXPORT(cuDeviceComputeCapability)

static CUresult do_uuid(CUuuid *uuid, CUdevice dev)
{
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    static const char tmpl[16] = "GTSIM-GPU-UUID-";
    memcpy(uuid->bytes, tmpl, 16);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { SIM_API(cuDeviceGetUuid, do_uuid(uuid, dev)); }
SIM_EXPORT(cuDeviceGetUuid)
CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { SIM_API(cuDeviceGetUuid_v2, do_uuid(uuid, dev)); }
SIM_EXPORT(cuDeviceGetUuid_v2)

static CUresult do_pci(char *pciBusId, int len, CUdevice dev)
{
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", dev + 1);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    SIM_API(cuDeviceGetPCIBusId, do_pci(pciBusId, len, dev));
}
SIM_EXPORT(cuDeviceGetPCIBusId)

static CUresult do_can_peer(int *can, CUdevice a, CUdevice b)
{
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(a) || dev_check(b))
        return CUDA_ERROR_INVALID_DEVICE;
    *can = a != b;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    SIM_API(cuDeviceCanAccessPeer, do_can_peer(canAccessPeer, dev, peerDev));
}
SIM_EXPORT(cuDeviceCanAccessPeer)

/* ---- test knobs --------------------------------------------------------------------------------- */
int gtsim_set_mem_capacity(int dev, size_t bytes)
{
    sim_init_once();
    if (dev < 0 || dev >= g_cfg.ndev)
        return -1;
    pthread_mutex_lock(&g_lock);
    g_dev[dev].capacity = bytes;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int gtsim_set_other_bytes(int dev, size_t bytes)
{
    sim_init_once();
    if (dev < 0 || dev >= g_cfg.ndev)
        return -1;
    pthread_mutex_lock(&g_lock);
    g_dev[dev].other = bytes;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

size_t gtsim_used_bytes(int dev)
{
    sim_init_once();
    if (dev < 0 || dev >= g_cfg.ndev)
        return 0;
    pthread_mutex_lock(&g_lock);
    size_t u = (size_t)g_dev[dev].used;
    pthread_mutex_unlock(&g_lock);
    return u;
}

/* Device-wide memory as a management library (the simulated NVML) sees it. */
int gtsim_device_memory(int dev, size_t *free_bytes, size_t *total, size_t *other)
{
    sim_init_once();
    if (dev < 0 || dev >= g_cfg.ndev)
        return -1;
    pthread_mutex_lock(&g_lock);
    int64_t f = dev_free_bytes(dev);
    if (free_bytes)
        *free_bytes = f > 0 ? (size_t)f : 0;
    if (total)
        *total = (size_t)g_dev[dev].capacity;
    if (other)
        *other = (size_t)g_dev[dev].other;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

int64_t dev_free_bytes(int dev)
{
    struct sim_dev *d = &g_dev[dev];
    return (int64_t)d->capacity - (int64_t)d->other - (int64_t)(d->nctx * g_cfg.ctx_overhead) -
           (int64_t)d->used;
}
