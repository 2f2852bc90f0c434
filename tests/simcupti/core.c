/* Simulated CUPTI: load-time configuration, failure injection, attaching to the simulated
 * driver, version and result strings, clocks, the one-subscriber slot, callback bookkeeping,
 * id queries and cuptiFinalize. Activity records live in activity.c. */
#include "simcupti.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct sc_driver sc_drv;
__thread int sc_internal;
static __thread CUptiResult t_last_error;

/* ---- configuration, failure injection ---------------------------------------------------- */
static char *fail_list; /* GTSIM_CUPTI_FAIL: comma-separated function names */

static struct {
    pthread_mutex_t mu;
    int held;
    int external;                          /* held by GTSIM_CUPTI_OWNER, not by a handle */
    char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
    struct CUpti_Subscriber_st *handle;
} slot = {.mu = PTHREAD_MUTEX_INITIALIZER};

__attribute__((constructor)) static void sc_load(void)
{
    const char *f = getenv("GTSIM_CUPTI_FAIL");
    if (f && *f) fail_list = strdup(f);
    const char *owner = getenv("GTSIM_CUPTI_OWNER");
    if (owner && *owner) { /* the slot is taken from load time, as under Nsight */
        slot.held = 1;
        slot.external = 1;
        snprintf(slot.name, sizeof(slot.name), "%s", owner);
    }
}

int sc_fail(const char *fn)
{
    if (!fail_list) return 0;
    size_t n = strlen(fn);
    for (const char *p = fail_list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && memcmp(p, fn, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

CUptiResult sc_ret(CUptiResult r)
{
    if (r != CUPTI_SUCCESS) t_last_error = r;
    return r;
}

/* ---- attaching to the simulated driver ---------------------------------------------------- */
static pthread_once_t attach_once = PTHREAD_ONCE_INIT;
static int attached;

void *sc_driver_sym(const char *name) { return sc_drv.lib ? dlsym(sc_drv.lib, name) : NULL; }

static void attach_fn(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); /* CUPTI loads the driver itself */
    if (!h) return;
    sc_drv.lib = h;
    sc_drv.drain = (size_t(*)(struct gtsim_activity *, size_t))dlsym(h, "gtsim_activity_drain");
    sc_drv.dropped = (unsigned long long (*)(void))dlsym(h, "gtsim_activity_dropped");
    sc_drv.pending = (size_t(*)(void))dlsym(h, "gtsim_activity_pending");
    sc_drv.set_api_callback_ex = (void (*)(void (*)(const struct gtsim_api_info *, void *),
                                           void *))dlsym(h, "gtsim_set_api_callback_ex");
    sc_drv.now_ns = (unsigned long long (*)(void))dlsym(h, "gtsim_now_ns");
    if (!sc_drv.drain || !sc_drv.dropped || !sc_drv.set_api_callback_ex || !sc_drv.now_ns)
        return; /* a real driver: we cannot see its GPU */
    sc_activity_attach();
    attached = 1;
}

int sc_attach(void)
{
    pthread_once(&attach_once, attach_fn);
    return attached;
}

/* ---- clocks -------------------------------------------------------------------------------- */
static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t sc_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t sc_realtime_ns(void) { return clock_ns(CLOCK_REALTIME); }

static _Atomic(CUpti_TimestampCallbackFunc) ts_cb;
static _Atomic int64_t ts_offset; /* callback domain - CLOCK_MONOTONIC, whole microseconds */
static _Atomic int64_t rt_offset; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
/* A callback that does not count nanoseconds (Kineto's TSC clock counts CPU cycles): GPU times
 * are mapped onto it by the line through a reference sample (ts_m0, ts_f0) with slope ts_rate
 * (callback units per ns), as CUPTI "converts GPU timestamps by linear interpolation". ts_linear
 * is 0 for a callback whose rate is 1 (within 1e-3): then ts_offset alone, exactly. Written under
 * the registration mutex before ts_cb is published; the rate is refined by sc_clock_refine. */
static _Atomic int ts_linear;
static uint64_t ts_m0, ts_f0;
static _Atomic(double) ts_rate;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median over back-to-back samples of sample() - CLOCK_MONOTONIC at the midpoint. */
static int64_t measure_offset(uint64_t (*sample)(void))
{
    enum { N = 9 };
    int64_t off[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = sc_mono_ns();
        uint64_t c = sample();
        uint64_t b = sc_mono_ns();
        off[i] = (int64_t)c - (int64_t)(a + (b - a) / 2);
    }
    qsort(off, N, sizeof(off[0]), cmp_i64);
    return off[N / 2];
}

static void rt_once_fn(void) { atomic_store(&rt_offset, measure_offset(sc_realtime_ns)); }

uint64_t sc_cpu_timestamp(void)
{
    CUpti_TimestampCallbackFunc f = atomic_load(&ts_cb);
    return f ? f() : sc_realtime_ns();
}

uint64_t sc_gpu_time(uint64_t mono)
{
    if (!mono) return 0;
    if (atomic_load(&ts_cb) && atomic_load(&ts_linear))
        return ts_f0 +
               (uint64_t)(int64_t)(((double)(int64_t)(mono - ts_m0)) * atomic_load(&ts_rate));
    if (atomic_load(&ts_cb)) return (uint64_t)((int64_t)mono + atomic_load(&ts_offset));
    pthread_once(&rt_once, rt_once_fn);
    return (uint64_t)((int64_t)mono + atomic_load(&rt_offset));
}

static CUpti_TimestampCallbackFunc sampled_cb;
static uint64_t sample_cb(void) { return sampled_cb(); }

/* The tightest of a few (monotonic midpoint, callback) pairs. */
static void ref_sample(CUpti_TimestampCallbackFunc f, uint64_t *m, uint64_t *v)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = sc_mono_ns(), c = f(), b = sc_mono_ns();
        if (b - a < best) best = b - a, *m = a + (b - a) / 2, *v = c;
    }
}

/* The callback's rate against CLOCK_MONOTONIC over 2 ms (once, at registration). */
static double calibrate(CUpti_TimestampCallbackFunc f, uint64_t *m0, uint64_t *f0)
{
    uint64_t ma, fa;
    ref_sample(f, &ma, &fa);
    while (sc_mono_ns() < ma + 2000000) {
    }
    ref_sample(f, m0, f0);
    return (double)(int64_t)(*f0 - fa) / (double)(*m0 - ma);
}

/* At deliveries: a longer baseline from the reference sample makes a non-ns callback's slope
 * more precise (what CUPTI's interpolation does with its periodic samples). */
void sc_clock_refine(void)
{
    CUpti_TimestampCallbackFunc f = atomic_load(&ts_cb);
    if (!f || !atomic_load(&ts_linear)) return;
    uint64_t m, v;
    ref_sample(f, &m, &v);
    if (m > ts_m0 + 100000000)
        atomic_store(&ts_rate, (double)(int64_t)(v - ts_f0) / (double)(m - ts_m0));
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
    SC_ENTER_DRIVER();
    if (!funcTimestamp) R(CUPTI_ERROR_INVALID_PARAMETER);
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mu);
    sampled_cb = funcTimestamp;
    atomic_store(&ts_cb, NULL);
    uint64_t m0, f0;
    double rate = calibrate(funcTimestamp, &m0, &f0);
    ts_m0 = m0, ts_f0 = f0;
    atomic_store(&ts_rate, rate);
    atomic_store(&ts_linear, rate < 0.999 || rate > 1.001);
    int64_t off = measure_offset(sample_cb);
    /* Whole microseconds: a callback on CLOCK_MONOTONIC maps GPU times 1:1. */
    off = off >= 0 ? (off + 500) / 1000 * 1000 : -((-off + 500) / 1000 * 1000);
    atomic_store(&ts_offset, off);
    atomic_store(&ts_cb, funcTimestamp);
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    SC_ENTER();
    if (!timestamp) R(CUPTI_ERROR_INVALID_PARAMETER);
    *timestamp = sc_cpu_timestamp();
    R(CUPTI_SUCCESS);
}

/* ---- version, results ---------------------------------------------------------------------- */
CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    SC_ENTER();
    if (!version) R(CUPTI_ERROR_INVALID_PARAMETER);
    const char *v = getenv("GTSIM_CUPTI_VERSION");
    *version = v && *v ? (uint32_t)strtoul(v, NULL, 0) : CUPTI_API_VERSION;
    R(CUPTI_SUCCESS);
}

static const struct sc_result *find_result(CUptiResult r)
{
    for (size_t i = 0; i < sc_nresults; i++)
        if (sc_results[i].code == (int)r) return &sc_results[i];
    return NULL;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    SC_ENTER();
    const struct sc_result *e = find_result(result);
    if (!str) R(CUPTI_ERROR_INVALID_PARAMETER);
    *str = e ? e->name : NULL;
    R(e ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char **str)
{
    SC_ENTER();
    const struct sc_result *e = find_result(result);
    if (!str) R(CUPTI_ERROR_INVALID_PARAMETER);
    *str = e ? e->message : NULL;
    R(e ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiGetLastError(void)
{
    if (sc_fail(__func__)) return CUPTI_ERROR_UNKNOWN;
    CUptiResult r = t_last_error;
    t_last_error = CUPTI_SUCCESS;
    return r;
}

/* ---- driver API export -> cbid -------------------------------------------------------------- */
static int cmp_cbid(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const struct sc_cbid *)elem)->name);
}

#define CBID_CACHE 8192
static _Atomic int cbid_cache[CBID_CACHE]; /* export index -> cbid + 1; 0 = not looked up yet */

unsigned sc_driver_cbid(const char *export_name, int export_index)
{
    if (export_index >= 0 && export_index < CBID_CACHE) {
        int c = atomic_load_explicit(&cbid_cache[export_index], memory_order_relaxed);
        if (c) return (unsigned)(c - 1);
    }
    const struct sc_cbid *e = export_name ? bsearch(export_name, sc_driver_cbids, sc_ndriver_cbids,
                                                    sizeof(sc_driver_cbids[0]), cmp_cbid)
                                          : NULL;
    unsigned cbid = e ? e->cbid : 0;
    if (export_index >= 0 && export_index < CBID_CACHE)
        atomic_store_explicit(&cbid_cache[export_index], (int)cbid + 1, memory_order_relaxed);
    return cbid;
}

/* ---- thread ids ----------------------------------------------------------------------------- */
static _Atomic int thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;

uint32_t sc_thread_id(void)
{
    if (atomic_load(&thread_id_type) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        return (uint32_t)syscall(SYS_gettid);
    return (uint32_t)(uintptr_t)pthread_self();
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
    SC_ENTER();
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
        R(CUPTI_ERROR_INVALID_PARAMETER);
    atomic_store(&thread_id_type, (int)type);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType *type)
{
    SC_ENTER();
    if (!type) R(CUPTI_ERROR_INVALID_PARAMETER);
    *type = (CUpti_ActivityThreadIdType)atomic_load(&thread_id_type);
    R(CUPTI_SUCCESS);
}

/* ---- subscriber slot and callback bookkeeping ----------------------------------------------- */
/* Callbacks are recorded but never invoked: the simulated driver does not give us the
 * parameter structs a CUpti_CallbackData must point to (see README.md). */
struct CUpti_Subscriber_st {
    CUpti_CallbackFunc callback;
    void *userdata;
    uint8_t *enabled[CUPTI_CB_DOMAIN_SIZE];
};

static unsigned domain_size(CUpti_CallbackDomain d)
{
    switch (d) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return sc_driver_cbid_size;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return sc_runtime_cbid_size;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
    }
}

static void subscriber_free(struct CUpti_Subscriber_st *s)
{
    if (!s) return;
    for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++) free(s->enabled[d]);
    free(s);
}

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                             void *userdata, const char *name, char *old, size_t old_size)
{
    if (!subscriber) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&slot.mu);
    if (slot.held) {
        if (old && old_size) snprintf(old, old_size, "%s", slot.name);
        pthread_mutex_unlock(&slot.mu);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    struct CUpti_Subscriber_st *s = calloc(1, sizeof(*s));
    if (!s) {
        pthread_mutex_unlock(&slot.mu);
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE; d++) {
        s->enabled[d] = calloc(domain_size((CUpti_CallbackDomain)d) + 1, 1);
        if (!s->enabled[d]) {
            subscriber_free(s);
            pthread_mutex_unlock(&slot.mu);
            return CUPTI_ERROR_OUT_OF_MEMORY;
        }
    }
    s->callback = callback;
    s->userdata = userdata;
    slot.held = 1;
    slot.external = 0;
    slot.handle = s;
    /* "CUPTI for <name>": CUPTI adds a 10-byte prefix to the name it keeps (cupti_callbacks.h). */
    if (name)
        snprintf(slot.name, sizeof(slot.name), "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN, name);
    else
        snprintf(slot.name, sizeof(slot.name), "CUPTI");
    pthread_mutex_unlock(&slot.mu);
    *subscriber = s;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                    void *userdata)
{
    SC_ENTER_DRIVER();
    R(subscribe(subscriber, callback, userdata, NULL, NULL, 0));
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                       void *userdata, CUpti_SubscriberParams *pParams)
{
    SC_ENTER_DRIVER();
    const char *name = NULL;
    char *old = NULL;
    size_t old_size = 0;
    if (pParams) {
        size_t have = pParams->structSize;
        if (have < offsetof(CUpti_SubscriberParams, subscriberName) + sizeof(pParams->subscriberName))
            R(CUPTI_ERROR_INVALID_PARAMETER);
        name = pParams->subscriberName;
        if (have >= CUpti_SubscriberParams_STRUCT_SIZE) {
            old = pParams->oldSubscriberName;
            old_size = pParams->oldSubscriberSize;
        }
    }
    R(subscribe(subscriber, callback, userdata, name, old, old_size));
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    SC_ENTER_DRIVER();
    pthread_mutex_lock(&slot.mu);
    if (!subscriber || subscriber != slot.handle) {
        pthread_mutex_unlock(&slot.mu);
        R(CUPTI_ERROR_INVALID_PARAMETER);
    }
    slot.handle = NULL;
    slot.held = 0;
    slot.name[0] = 0;
    pthread_mutex_unlock(&slot.mu);
    subscriber_free(subscriber);
    R(CUPTI_SUCCESS);
}

static CUptiResult check_sub(CUpti_SubscriberHandle s)
{
    pthread_mutex_lock(&slot.mu);
    int ok = s && s == slot.handle;
    pthread_mutex_unlock(&slot.mu);
    return ok ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiSupportedDomains(size_t *domainCount, CUpti_DomainTable *domainTable)
{
    SC_ENTER_DRIVER();
    static CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API,
                                             CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CB_DOMAIN_SYNCHRONIZE,
                                             CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE};
    if (!domainCount || !domainTable) R(CUPTI_ERROR_INVALID_PARAMETER);
    *domainCount = sizeof(domains) / sizeof(domains[0]);
    *domainTable = domains;
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    SC_ENTER_DRIVER();
    if (check_sub(subscriber) || !domain_size(domain) || cbid >= domain_size(domain))
        R(CUPTI_ERROR_INVALID_PARAMETER);
    subscriber->enabled[domain][cbid] = enable != 0;
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain)
{
    SC_ENTER_DRIVER();
    if (check_sub(subscriber) || !domain_size(domain)) R(CUPTI_ERROR_INVALID_PARAMETER);
    memset(subscriber->enabled[domain], enable != 0, domain_size(domain));
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
    SC_ENTER_DRIVER();
    if (check_sub(subscriber)) R(CUPTI_ERROR_INVALID_PARAMETER);
    for (int d = 1; d < CUPTI_CB_DOMAIN_SIZE; d++)
        memset(subscriber->enabled[d], enable != 0, domain_size((CUpti_CallbackDomain)d));
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    SC_ENTER_DRIVER();
    if (!enable || check_sub(subscriber) || !domain_size(domain) || cbid >= domain_size(domain))
        R(CUPTI_ERROR_INVALID_PARAMETER);
    *enable = subscriber->enabled[domain][cbid];
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    SC_ENTER();
    if (!name) R(CUPTI_ERROR_INVALID_PARAMETER);
    *name = NULL;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < sc_driver_cbid_size)
        *name = sc_driver_cbid_name[cbid];
    else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < sc_runtime_cbid_size)
        *name = sc_runtime_cbid_name[cbid];
    R(*name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER);
}

/* ---- ids of driver objects (asked of the driver, untraced) ---------------------------------- */
typedef CUresult (*ctx_get_id_fn)(CUcontext, unsigned long long *);
typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*stream_get_id_fn)(CUstream, unsigned long long *);
typedef CUresult (*stream_get_ctx_fn)(CUstream, CUcontext *);
typedef CUresult (*ctx_get_device_fn)(CUdevice *);

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
    SC_ENTER_DRIVER();
    if (!contextId) R(CUPTI_ERROR_INVALID_PARAMETER);
    if (!context) R(CUPTI_ERROR_INVALID_CONTEXT);
    ctx_get_id_fn get = (ctx_get_id_fn)sc_driver_sym("cuCtxGetId");
    unsigned long long id = 0;
    sc_internal++;
    CUresult r = get ? get(context, &id) : CUDA_ERROR_NOT_SUPPORTED;
    sc_internal--;
    if (r != CUDA_SUCCESS) R(CUPTI_ERROR_INVALID_CONTEXT);
    *contextId = (uint32_t)id;
    R(CUPTI_SUCCESS);
}

static CUptiResult stream_id(CUcontext context, CUstream stream, int per_thread, uint32_t *out)
{
    if (!out) return CUPTI_ERROR_INVALID_PARAMETER;
    stream_get_id_fn get = (stream_get_id_fn)sc_driver_sym("cuStreamGetId");
    stream_get_ctx_fn get_ctx = (stream_get_ctx_fn)sc_driver_sym("cuStreamGetCtx");
    if (!get) return CUPTI_ERROR_INVALID_STREAM;
    if (!stream && per_thread) stream = CU_STREAM_PER_THREAD;
    unsigned long long id = 0;
    CUcontext owner = NULL;
    sc_internal++;
    CUresult r = get(stream, &id);
    if (r == CUDA_SUCCESS && context && get_ctx && get_ctx(stream, &owner) == CUDA_SUCCESS &&
        owner != context)
        r = CUDA_ERROR_INVALID_HANDLE;
    sc_internal--;
    if (r != CUDA_SUCCESS) return CUPTI_ERROR_INVALID_STREAM;
    *out = (uint32_t)id;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                                        uint32_t *streamId)
{
    SC_ENTER_DRIVER();
    R(stream_id(context, stream, perThreadStream != 0, streamId));
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *streamId)
{
    SC_ENTER_DRIVER();
    R(stream_id(context, stream, 0, streamId));
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
    SC_ENTER_DRIVER();
    if (!deviceId) R(CUPTI_ERROR_INVALID_PARAMETER);
    ctx_push_fn push = (ctx_push_fn)sc_driver_sym("cuCtxPushCurrent_v2");
    ctx_pop_fn pop = (ctx_pop_fn)sc_driver_sym("cuCtxPopCurrent_v2");
    ctx_get_device_fn get = (ctx_get_device_fn)sc_driver_sym("cuCtxGetDevice");
    if (!get || (context && (!push || !pop))) R(CUPTI_ERROR_INVALID_DEVICE);
    CUdevice dev = 0;
    CUcontext popped;
    sc_internal++;
    CUresult r = context ? push(context) : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        r = get(&dev);
        if (context) pop(&popped);
    }
    sc_internal--;
    if (r != CUDA_SUCCESS) R(CUPTI_ERROR_INVALID_DEVICE);
    *deviceId = (uint32_t)dev;
    R(CUPTI_SUCCESS);
}

/* ---- finalize ------------------------------------------------------------------------------- */
void sc_core_finalize(void)
{
    pthread_mutex_lock(&slot.mu);
    struct CUpti_Subscriber_st *s = slot.handle;
    if (!slot.external) {
        slot.held = 0;
        slot.name[0] = 0;
    }
    slot.handle = NULL;
    pthread_mutex_unlock(&slot.mu);
    subscriber_free(s);
    atomic_store(&ts_cb, NULL);
    atomic_store(&ts_offset, 0);
    atomic_store(&ts_linear, 0);
    atomic_store(&thread_id_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
}

CUptiResult CUPTIAPI cuptiFinalize(void)
{
    SC_ENTER_DRIVER();
    sc_activity_finalize();
    sc_core_finalize();
    R(CUPTI_SUCCESS);
}
