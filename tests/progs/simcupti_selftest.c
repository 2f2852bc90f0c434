/* simcupti_selftest [main|owner|fail|stress|fork]: drives the simulated CUPTI (tests/simcupti) like a
 * CUPTI client would, through dlopen only, against the simulated driver, and checks what comes
 * back. Run by tests/cases/simcupti_selftest.sh, which sets the environment each mode expects:
 *   main    GTSIM_LAUNCH_LATENCY_NS=5000 GTSIM_CUPTI_PERIOD_MS=60000 GTSIM_LOG=<file>
 *   owner   GTSIM_CUPTI_OWNER="Nsight Systems"
 *   fail    GTSIM_CUPTI_FAIL=cuptiActivityEnable,cuptiSubscribe_v2 GTSIM_CUPTI_VERSION=120900
 *   stress  (none)
 *   fork    (none) */
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#define FNS(X)                                                                                     \
    X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiSubscribe) X(cuptiSubscribe_v2)              \
    X(cuptiUnsubscribe) X(cuptiActivityRegisterCallbacks) X(cuptiActivityEnable)                   \
    X(cuptiActivityDisable) X(cuptiActivityEnableDriverApi) X(cuptiActivityFlushAll)               \
    X(cuptiActivityFlushPeriod) X(cuptiActivityGetNextRecord) X(cuptiActivityGetNumDroppedRecords) \
    X(cuptiActivityGetAttribute) X(cuptiActivitySetAttribute)                                      \
    X(cuptiActivityPushExternalCorrelationId) X(cuptiActivityPopExternalCorrelationId)             \
    X(cuptiActivityRegisterTimestampCallback) X(cuptiActivityEnableLatencyTimestamps)              \
    X(cuptiGetTimestamp) X(cuptiFinalize) X(cuptiGetContextId) X(cuptiGetStreamIdEx)               \
    X(cuptiGetDeviceId) X(cuptiGetCallbackName) X(cuptiEventGroupCreate)
#define DECL(f) static __typeof__(&f) p_##f;
FNS(DECL)

static int failures;
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) fail(__VA_ARGS__);                                                            \
    } while (0)
#define EXPECT_RC(call, want)                                                                      \
    do {                                                                                           \
        CUptiResult r_ = (call);                                                                   \
        if (r_ != (want)) fail("%s:%d: %s returned %d, want %d", __FILE__, __LINE__, #call,       \
                               (int)r_, (int)(want));                                              \
    } while (0)
#define OK(call) EXPECT_RC(call, CUPTI_SUCCESS)
#define CU(call)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "FAIL: %s returned %d\n", #call, (int)r_);                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static uint64_t CUPTIAPI mono_cb(void) { return mono(); }
static void sleep_ms(unsigned ms) { usleep(ms * 1000u); }

static void load(void)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "FAIL: dlopen libcupti.so.13: %s\n", dlerror());
        exit(1);
    }
#define LOAD(f)                                                                                    \
    if (!(p_##f = (__typeof__(&f))dlsym(h, #f))) {                                                 \
        fprintf(stderr, "FAIL: %s missing\n", #f);                                                 \
        exit(1);                                                                                   \
    }
    FNS(LOAD)
}

/* ---- buffers and the records that came back ---------------------------------------------------- */
union anyrec {
    CUpti_Activity a;
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemcpy6 m;
    CUpti_ActivityMemset4 s;
    CUpti_ActivityAPI api;
    CUpti_ActivityExternalCorrelation x;
    unsigned char raw[256];
};
struct rec {
    uint32_t kind, size;
    int batch;
    union anyrec u;
};

static pthread_mutex_t rmu = PTHREAD_MUTEX_INITIALIZER; /* the client's own lock, taken in callbacks */
static struct rec *recs;
static size_t nrecs, caprecs;
static int batches, requests, declines;
static size_t buf_size = 64 << 10;
static int decline;
static pthread_t main_thread;
static _Atomic int done_on_main, done_elsewhere; /* written by delivery threads */
static _Atomic int nonfull_from_worker; /* buffers handed back by the worker that were not full */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    pthread_mutex_lock(&rmu);
    requests++;
    int no = decline;
    if (no) declines++;
    size_t sz = buf_size;
    pthread_mutex_unlock(&rmu);
    *max_records = 0;
    if (no) {
        *buffer = NULL;
        *size = 0;
        return;
    }
    *buffer = aligned_alloc(8, sz);
    *size = *buffer ? sz : 0;
}

static size_t expected_size(uint32_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return 216;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    EXPECT(ctx == NULL && stream == 0, "completion callback: ctx %p stream %u", (void *)ctx, stream);
    EXPECT(((uintptr_t)buffer & 7) == 0, "completion callback: unaligned buffer");
    EXPECT(valid <= size, "completion callback: validSize %zu > size %zu", valid, size);
    pthread_mutex_lock(&rmu);
    int on_main = pthread_equal(pthread_self(), main_thread);
    if (on_main)
        done_on_main++;
    else
        done_elsewhere++;
    if (!on_main && size - valid >= 216) nonfull_from_worker++;
    int batch = ++batches;
    CUpti_Activity *r = NULL;
    CUptiResult st;
    size_t prev_off = 0;
    struct rec *last = NULL;
    while ((st = p_cuptiActivityGetNextRecord(buffer, valid, &r)) == CUPTI_SUCCESS) {
        size_t off = (size_t)((uint8_t *)r - buffer);
        if (last) last->size = (uint32_t)(off - prev_off);
        if (nrecs == caprecs) {
            caprecs = caprecs ? caprecs * 2 : 1024;
            recs = realloc(recs, caprecs * sizeof(*recs));
            if (!recs) abort();
        }
        last = &recs[nrecs++];
        memset(last, 0, sizeof(*last));
        last->kind = r->kind;
        last->batch = batch;
        size_t n = expected_size(r->kind);
        EXPECT(n != 0, "unexpected record kind %d", (int)r->kind);
        memcpy(&last->u, r, n ? n : sizeof(r->kind));
        prev_off = off;
    }
    if (last) last->size = (uint32_t)(valid - prev_off);
    EXPECT(st == CUPTI_ERROR_MAX_LIMIT_REACHED, "GetNextRecord ended with %d", (int)st);
    pthread_mutex_unlock(&rmu);
    free(buffer);
}

/* The records delivered so far. The delivery thread may be appending (the worker and fork
 * checks run it every 10-30 ms; recs may move when it grows), so counts are taken under rmu. */
static size_t nrecs_now(void)
{
    pthread_mutex_lock(&rmu);
    size_t n = nrecs;
    pthread_mutex_unlock(&rmu);
    return n;
}

/* nth_kernel and the record loops below run on the main thread while nothing else delivers (the
 * delivery thread's period is 60 s in the main mode, and stress mode looks only after the final
 * flush); the counts lock. */
static size_t count_kind(size_t from, uint32_t kind)
{
    size_t n = 0;
    pthread_mutex_lock(&rmu);
    for (size_t i = from; i < nrecs; i++) n += recs[i].kind == kind;
    pthread_mutex_unlock(&rmu);
    return n;
}

static size_t count_kernel(size_t from, const char *name)
{
    size_t n = 0;
    pthread_mutex_lock(&rmu);
    for (size_t i = from; i < nrecs; i++)
        n += recs[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && !strcmp(recs[i].u.k.name, name);
    pthread_mutex_unlock(&rmu);
    return n;
}

/* API records from index from on that carry our process id. */
static size_t count_own_api(size_t from)
{
    size_t n = 0;
    pthread_mutex_lock(&rmu);
    for (size_t i = from; i < nrecs; i++)
        n += recs[i].kind == CUPTI_ACTIVITY_KIND_DRIVER && recs[i].u.api.processId == (uint32_t)getpid();
    pthread_mutex_unlock(&rmu);
    return n;
}

static const struct rec *nth_kernel(size_t from, const char *name, int nth)
{
    for (size_t i = from; i < nrecs; i++)
        if (recs[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && !strcmp(recs[i].u.k.name, name) &&
            nth-- == 0)
            return &recs[i];
    return NULL;
}

/* index of the record of kind with correlation id corr (ext: of externalKind xkind), -1 if none */
static long find_corr(size_t from, uint32_t kind, uint32_t corr, int xkind)
{
    for (size_t i = from; i < nrecs; i++) {
        const struct rec *r = &recs[i];
        if (r->kind != kind) continue;
        if (kind == CUPTI_ACTIVITY_KIND_DRIVER && r->u.api.correlationId == corr) return (long)i;
        if (kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION && r->u.x.correlationId == corr &&
            (int)r->u.x.externalKind == xkind)
            return (long)i;
    }
    return -1;
}

/* ---- driver helpers ------------------------------------------------------------------------------ */
static CUcontext ctx;
static CUmodule mod;
static CUfunction f_a, f_b, f_short, f_long;

#define NS_A 20000000ull     /* 20 ms */
#define NS_B 30000000ull     /* 30 ms */
#define NS_SHORT 50000ull    /* 50 us */
#define NS_LONG 1000000000ull /* 1 s */

static void driver_setup(void)
{
    CUdevice dev;
    CU(cuInit(0));
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CU(cuModuleLoadData(&mod, "kernel k_a 20000000\n"
                              "kernel k_b 30000000\n"
                              "kernel k_short 50000\n"
                              "kernel k_long 1000000000\n"));
    CU(cuModuleGetFunction(&f_a, mod, "k_a"));
    CU(cuModuleGetFunction(&f_b, mod, "k_b"));
    CU(cuModuleGetFunction(&f_short, mod, "k_short"));
    CU(cuModuleGetFunction(&f_long, mod, "k_long"));
}

static void launch(CUfunction f, CUstream s) { CU(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, s, NULL, NULL)); }

/* ---- main: the whole Activity API against known kernels ----------------------------------------- */
static void check_setup_errors(void)
{
    uint32_t v = 0;
    OK(p_cuptiGetVersion(&v));
    EXPECT(v == 130001, "cuptiGetVersion: %u", v);
    const char *s = NULL;
    OK(p_cuptiGetResultString(CUPTI_ERROR_QUEUE_EMPTY, &s));
    EXPECT(s && !strcmp(s, "CUPTI_ERROR_QUEUE_EMPTY"), "result string: %s", s ? s : "(null)");
    const char *cbname = NULL;
    OK(p_cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cbname));
    EXPECT(cbname && !strcmp(cbname, "cuLaunchKernel"), "callback name: %s", cbname ? cbname : "(null)");
    EXPECT_RC(p_cuptiEventGroupCreate(NULL, NULL, 0), CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);

    /* one subscriber */
    CUpti_SubscriberHandle sub = NULL, sub2 = NULL;
    CUpti_SubscriberParams p;
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    p.subscriberName = "selftest";
    OK(p_cuptiSubscribe_v2(&sub, NULL, NULL, &p));
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    p.subscriberName = "intruder";
    p.oldSubscriberName = old;
    p.oldSubscriberSize = sizeof(old);
    old[0] = 0;
    EXPECT_RC(p_cuptiSubscribe_v2(&sub2, NULL, NULL, &p), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT(!strcmp(old, "CUPTI for selftest"), "oldSubscriberName '%s'", old);
    EXPECT_RC(p_cuptiSubscribe(&sub2, NULL, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    p.structSize = 0;
    EXPECT_RC(p_cuptiSubscribe_v2(&sub2, NULL, NULL, &p), CUPTI_ERROR_INVALID_PARAMETER);
    OK(p_cuptiUnsubscribe(sub));
    EXPECT_RC(p_cuptiUnsubscribe(sub), CUPTI_ERROR_INVALID_PARAMETER);
    OK(p_cuptiSubscribe(&sub, NULL, NULL));
    OK(p_cuptiUnsubscribe(sub));

    /* external correlation stacks */
    uint64_t last = 0;
    EXPECT_RC(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last),
              CUPTI_ERROR_QUEUE_EMPTY);
    EXPECT_RC(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
              CUPTI_ERROR_INVALID_PARAMETER);
    OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 5));
    OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 6));
    OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last));
    EXPECT(last == 6, "pop: %" PRIu64, last);
    OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, NULL));
    EXPECT_RC(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last),
              CUPTI_ERROR_QUEUE_EMPTY);

    /* buffers, attributes, kinds */
    EXPECT_RC(p_cuptiActivityRegisterCallbacks(NULL, buffer_completed), CUPTI_ERROR_INVALID_PARAMETER);
    EXPECT_RC(p_cuptiActivityRegisterCallbacks(buffer_requested, NULL), CUPTI_ERROR_INVALID_PARAMETER);
    EXPECT_RC(p_cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
    size_t value = 0, vsize = sizeof(value);
    OK(p_cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &vsize, &value));
    EXPECT(value == 3200000 && vsize == sizeof(size_t), "DEVICE_BUFFER_SIZE %zu (%zu bytes)", value, vsize);
    vsize = 4;
    EXPECT_RC(p_cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &vsize, &value),
              CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
    value = 8u << 20;
    vsize = sizeof(value);
    OK(p_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &vsize, &value));
    value = 0;
    OK(p_cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &vsize, &value));
    EXPECT(value == 8u << 20, "DEVICE_BUFFER_SIZE after set: %zu", value);
    uint8_t zeroed = 0;
    vsize = 1;
    OK(p_cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &vsize, &zeroed));
    EXPECT_RC(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR), CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
    EXPECT_RC(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EVENT), CUPTI_ERROR_INVALID_KIND);
    EXPECT_RC(p_cuptiActivityEnable((CUpti_ActivityKind)999), CUPTI_ERROR_INVALID_KIND);
}

static void enable_launch_apis(void)
{
    OK(p_cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1));
    OK(p_cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, 1));
}

static void check_correlation_and_times(void)
{
    const uint64_t latency = 5000; /* GTSIM_LAUNCH_LATENCY_NS */
    CUstream s1, s2;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    uint32_t sid1 = 0, sid2 = 0, cid = 0, did = 9;
    OK(p_cuptiGetStreamIdEx(NULL, s1, 0, &sid1));
    OK(p_cuptiGetStreamIdEx(NULL, s2, 0, &sid2));
    OK(p_cuptiGetContextId(ctx, &cid));
    OK(p_cuptiGetDeviceId(NULL, &did));
    EXPECT(did == 0, "cuptiGetDeviceId: %u", did);

    size_t from = nrecs_now();
    uint64_t t0 = mono();
    OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 1001));
    launch(f_a, s1);
    uint64_t t1 = mono();
    launch(f_a, s1); /* queued behind the first: starts exactly when it ends */
    uint64_t last = 0;
    OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last));
    EXPECT(last == 1001, "popped %" PRIu64, last);
    OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 7));
    OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 1002));
    uint64_t t2 = mono();
    launch(f_b, s2);
    uint64_t t3 = mono();
    OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, NULL));
    OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL));
    CUdeviceptr d;
    static unsigned char host[4096];
    CU(cuMemAlloc(&d, sizeof(host)));
    CU(cuMemcpyHtoDAsync(d, host, sizeof(host), s1));
    CU(cuMemsetD8Async(d, 0x5a, sizeof(host), s1));
    CU(cuCtxSynchronize());
    int before = done_on_main;
    OK(p_cuptiActivityFlushAll(0));
    EXPECT(done_on_main > before, "FlushAll(0) after a sync delivered nothing on the calling thread");
    CU(cuMemFree(d));

    for (size_t i = from; i < nrecs; i++)
        EXPECT(recs[i].size == expected_size(recs[i].kind), "record kind %u: %u bytes, want %zu",
               recs[i].kind, recs[i].size, expected_size(recs[i].kind));
    EXPECT(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10 is %zu bytes", sizeof(CUpti_ActivityKernel10));
    const struct rec *a1 = nth_kernel(from, "k_a", 0), *a2 = nth_kernel(from, "k_a", 1);
    const struct rec *b = nth_kernel(from, "k_b", 0);
    EXPECT(a1 && a2 && b, "kernel records missing (k_a %d %d, k_b %d)", !!a1, !!a2, !!b);
    if (a1 && a2 && b) {
        const CUpti_ActivityKernel10 *k1 = &a1->u.k, *k2 = &a2->u.k, *kb = &b->u.k;
        EXPECT(k1->end - k1->start == NS_A && k2->end - k2->start == NS_A && kb->end - kb->start == NS_B,
               "durations %" PRIu64 " %" PRIu64 " %" PRIu64, k1->end - k1->start, k2->end - k2->start,
               kb->end - kb->start);
        /* With a CLOCK_MONOTONIC timestamp callback the driver's times come through unchanged:
         * an idle stream starts work exactly GTSIM_LAUNCH_LATENCY_NS after it was queued, and the
         * queue time lies between our own clock readings around the launch. */
        EXPECT(k1->queued >= t0 && k1->queued <= t1, "queued %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]",
               k1->queued, t0, t1);
        EXPECT(k1->start == k1->queued + latency, "start %" PRIu64 " != queued %" PRIu64 " + %" PRIu64,
               k1->start, k1->queued, latency);
        EXPECT(k2->start == k1->end, "second k_a starts at %" PRIu64 ", first ends at %" PRIu64, k2->start, k1->end);
        EXPECT(kb->queued >= t2 && kb->queued <= t3 && kb->start == kb->queued + latency,
               "k_b queued %" PRIu64 " start %" PRIu64, kb->queued, kb->start);
        EXPECT(k1->completed == k1->end, "completed %" PRIu64, k1->completed);
        EXPECT(k1->streamId == sid1 && k2->streamId == sid1 && kb->streamId == sid2,
               "stream ids %u %u %u, want %u %u", k1->streamId, k2->streamId, kb->streamId, sid1, sid2);
        EXPECT(k1->contextId == cid && k1->deviceId == 0, "context %u device %u", k1->contextId, k1->deviceId);
        EXPECT(k1->gridX == 2 && k1->blockX == 64 && k1->gridY == 1, "grid/block %d %d", k1->gridX, k1->blockX);
        EXPECT(k1->name == k2->name, "kernel names are not shared");
        EXPECT(k1->graphId == 0 && k1->graphNodeId == 0, "graph ids on a plain launch");
        const struct {
            const CUpti_ActivityKernel10 *k;
            uint64_t ext;
        } want[] = {{k1, 1001}, {k2, 1001}, {kb, 1002}};
        for (int i = 0; i < 3; i++) {
            long x = find_corr(from, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, want[i].k->correlationId,
                               CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
            long api = find_corr(from, CUPTI_ACTIVITY_KIND_DRIVER, want[i].k->correlationId, 0);
            EXPECT(x >= 0 && recs[x].u.x.externalId == want[i].ext,
                   "kernel %d (corr %u): no CUSTOM2 record with id %" PRIu64, i, want[i].k->correlationId,
                   want[i].ext);
            EXPECT(api >= 0 && x < api, "kernel %d: API record missing or not after its external record", i);
            if (api >= 0) {
                const CUpti_ActivityAPI *r = &recs[api].u.api;
                EXPECT(r->cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel && r->returnValue == 0,
                       "API record cbid %u rc %u", r->cbid, r->returnValue);
                EXPECT(r->processId == (uint32_t)getpid() && r->threadId == (uint32_t)(uintptr_t)pthread_self(),
                       "API record pid %u tid %u", r->processId, r->threadId);
                EXPECT(want[i].k->queued >= r->start && want[i].k->queued <= r->end,
                       "queued outside its API call [%" PRIu64 ", %" PRIu64 "]", r->start, r->end);
            }
        }
        long x0 = find_corr(from, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, kb->correlationId,
                            CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
        long x2 = find_corr(from, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, kb->correlationId,
                            CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
        EXPECT(x0 >= 0 && recs[x0].u.x.externalId == 7 && x0 < x2, "k_b: CUSTOM0 record missing or out of order");
    }
    EXPECT(count_kind(from, CUPTI_ACTIVITY_KIND_DRIVER) == 3, "%zu API records, want the 3 launches",
           count_kind(from, CUPTI_ACTIVITY_KIND_DRIVER));
    EXPECT(count_kind(from, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == 4, "%zu external records, want 4",
           count_kind(from, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    int saw_copy = 0, saw_set = 0;
    for (size_t i = from; i < nrecs; i++) {
        if (recs[i].kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = &recs[i].u.m;
            saw_copy++;
            EXPECT(m->copyKind == CUPTI_ACTIVITY_MEMCPY_KIND_HTOD && m->bytes == 4096 &&
                       (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) && m->streamId == sid1 &&
                       m->end >= m->start && m->copyCount == 1,
                   "memcpy record: kind %u bytes %" PRIu64 " flags %u", m->copyKind, m->bytes, m->flags);
        }
        if (recs[i].kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = &recs[i].u.s;
            saw_set++;
            EXPECT(m->value == 0x5a && m->bytes == 4096 && m->streamId == sid1, "memset record: value %u bytes %" PRIu64,
                   m->value, m->bytes);
        }
    }
    EXPECT(saw_copy == 1 && saw_set == 1, "%d memcpy, %d memset records", saw_copy, saw_set);
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
}

static void check_driver_kind(void)
{
    size_t from = nrecs_now();
    OK(p_cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, 0));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER)); /* overrides the per-API setting */
    CU(cuCtxSynchronize());
    CUdeviceptr d;
    CU(cuMemAlloc(&d, 256));
    OK(p_cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER));
    CU(cuMemFree(d));
    CU(cuCtxSynchronize());
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    int sync = 0, alloc = 0, other = 0;
    for (size_t i = from; i < nrecs; i++) {
        if (recs[i].kind != CUPTI_ACTIVITY_KIND_DRIVER) continue;
        if (recs[i].u.api.cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize)
            sync++;
        else if (recs[i].u.api.cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2)
            alloc++;
        else
            other++;
    }
    EXPECT(sync == 1 && alloc == 1 && other == 0, "DRIVER kind: %d cuCtxSynchronize, %d cuMemAlloc_v2, %d other",
           sync, alloc, other);
    enable_launch_apis();
}

static void check_flush_semantics(void)
{
    CUstream s1, s2;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    size_t from = nrecs_now();
    uint64_t t0 = mono();
    launch(f_long, s2);
    launch(f_short, s1);
    sleep_ms(20); /* k_short is done, k_long is still running */
    OK(p_cuptiActivityFlushAll(0));
    uint64_t t1 = mono();
    if (t1 - t0 < NS_LONG / 2)
        EXPECT(count_kernel(from, "k_short") == 0,
               "FlushAll(0) delivered a buffer while GPU work was still in flight");
    else
        printf("note: slow machine, flag-0 check skipped\n");
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    EXPECT(count_kernel(from, "k_short") == 1, "forced flush: k_short not delivered");
    EXPECT(count_kernel(from, "k_long") == 0, "forced flush: k_long delivered before it ended");
    CU(cuCtxSynchronize());
    OK(p_cuptiActivityFlushAll(0));
    EXPECT(count_kernel(from, "k_long") == 1, "FlushAll(0) after sync: k_long not delivered");
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
}

static void check_dropped(void)
{
    size_t d = 0;
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    OK(p_cuptiActivityGetNumDroppedRecords(NULL, 0, &d));
    EXPECT(d == 0, "%zu records dropped before the decline test", d);
    size_t from = nrecs_now();
    pthread_mutex_lock(&rmu);
    decline = 1;
    pthread_mutex_unlock(&rmu);
    for (int i = 0; i < 5; i++) launch(f_short, NULL);
    CU(cuCtxSynchronize());
    OK(p_cuptiActivityFlushAll(0));
    pthread_mutex_lock(&rmu);
    decline = 0;
    int declined = declines;
    pthread_mutex_unlock(&rmu);
    EXPECT(declined >= 1, "the request callback was never asked");
    OK(p_cuptiActivityGetNumDroppedRecords(NULL, 0, &d));
    EXPECT(d == 10, "dropped %zu records, want 10 (5 kernels + 5 API records)", d);
    OK(p_cuptiActivityGetNumDroppedRecords(NULL, 0, &d));
    EXPECT(d == 0, "dropped count not reset by reading: %zu", d);
    EXPECT(nrecs_now() == from, "records delivered although every buffer was declined");
}

static void check_graph(void)
{
    CUgraph g;
    CUgraphNode node;
    CUgraphExec exec;
    CUDA_KERNEL_NODE_PARAMS kp;
    memset(&kp, 0, sizeof(kp));
    kp.func = f_short;
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = 1;
    kp.blockDimX = 32, kp.blockDimY = kp.blockDimZ = 1;
    CU(cuGraphCreate(&g, 0));
    CU(cuGraphAddKernelNode(&node, g, NULL, 0, &kp));
    CU(cuGraphInstantiate(&exec, g, 0));
    size_t from = nrecs_now();
    OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 2001));
    CU(cuGraphLaunch(exec, NULL));
    OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, NULL));
    CU(cuCtxSynchronize());
    OK(p_cuptiActivityFlushAll(0));
    const struct rec *k = nth_kernel(from, "k_short", 0);
    EXPECT(k != NULL, "graph kernel not delivered");
    if (k) {
        long api = find_corr(from, CUPTI_ACTIVITY_KIND_DRIVER, k->u.k.correlationId, 0);
        long x = find_corr(from, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, k->u.k.correlationId,
                           CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
        EXPECT(api >= 0 && recs[api].u.api.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
               "graph kernel's correlation id is not its cuGraphLaunch's");
        EXPECT(x >= 0 && recs[x].u.x.externalId == 2001, "graph launch: no CUSTOM2 record with id 2001");
        EXPECT(k->u.k.graphId != 0 && k->u.k.graphNodeId != 0, "graph kernel: graphId %u node %" PRIu64,
               k->u.k.graphId, k->u.k.graphNodeId);
    }
    CU(cuGraphExecDestroy(exec));
    CU(cuGraphDestroy(g));
}

static void check_worker(void)
{
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    size_t from = nrecs_now();
    pthread_mutex_lock(&rmu);
    buf_size = 1024; /* four kernel records */
    int elsewhere = done_elsewhere;
    pthread_mutex_unlock(&rmu);
    for (int i = 0; i < 20; i++) launch(f_short, NULL);
    CU(cuCtxSynchronize());
    OK(p_cuptiActivityFlushPeriod(30));
    sleep_ms(300);
    pthread_mutex_lock(&rmu);
    int by_worker = done_elsewhere - elsewhere, nonfull = nonfull_from_worker;
    pthread_mutex_unlock(&rmu);
    EXPECT(by_worker >= 5, "the delivery thread handed back %d buffers, want >= 5", by_worker);
    EXPECT(nonfull == 0, "the delivery thread handed back %d buffers that were not full", nonfull);
    size_t k = count_kernel(from, "k_short");
    EXPECT(k < 20, "all 20 records delivered without a flush: the partial buffer too");
    OK(p_cuptiActivityFlushAll(0));
    EXPECT(count_kernel(from, "k_short") == 20, "%zu of 20 kernels after FlushAll(0)", count_kernel(from, "k_short"));
    OK(p_cuptiActivityFlushPeriod(0));
    pthread_mutex_lock(&rmu);
    buf_size = 64 << 10;
    pthread_mutex_unlock(&rmu);
}

static void check_finalize(void)
{
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    CUpti_SubscriberHandle sub;
    OK(p_cuptiSubscribe(&sub, NULL, NULL));
    OK(p_cuptiFinalize()); /* frees the slot, the kinds and the callbacks */
    size_t from = nrecs_now();
    launch(f_short, NULL);
    CU(cuCtxSynchronize());
    EXPECT_RC(p_cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION);
    OK(p_cuptiSubscribe(&sub, NULL, NULL));
    OK(p_cuptiUnsubscribe(sub));
    EXPECT(nrecs_now() == from, "records after cuptiFinalize");
}

/* Every GPU record against the simulated driver's own account of the work (GTSIM_LOG "work"
 * lines, written when the work is enqueued): same correlation id, start and end to the ns. */
static void check_ground_truth(void)
{
    const char *path = getenv("GTSIM_LOG");
    if (!path || !*path) {
        printf("note: GTSIM_LOG unset, ground-truth check skipped\n");
        return;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        fail("cannot open GTSIM_LOG %s", path);
        return;
    }
    struct work {
        unsigned kind, corr;
        uint64_t start, end;
        char name[128];
    } *w = NULL;
    size_t nw = 0, cap = 0;
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        struct work x;
        if (strncmp(line, "work ", 5) ||
            sscanf(line, "work kind=%u start=%" SCNu64 " end=%" SCNu64 " device=%*u stream=%*u corr=%u graph=%*u name=%127s",
                   &x.kind, &x.start, &x.end, &x.corr, x.name) != 5)
            continue;
        if (nw == cap) {
            cap = cap ? cap * 2 : 256;
            w = realloc(w, cap * sizeof(*w));
            if (!w) abort();
        }
        w[nw++] = x;
    }
    fclose(f);
    size_t checked = 0;
    for (size_t i = 0; i < nrecs; i++) {
        const struct rec *r = &recs[i];
        unsigned kind;
        uint64_t start, end;
        uint32_t corr;
        const char *name = NULL;
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            kind = 1, start = r->u.k.start, end = r->u.k.end, corr = r->u.k.correlationId, name = r->u.k.name;
        else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
            kind = 2, start = r->u.m.start, end = r->u.m.end, corr = r->u.m.correlationId;
        else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET)
            kind = 3, start = r->u.s.start, end = r->u.s.end, corr = r->u.s.correlationId;
        else
            continue;
        size_t j;
        for (j = 0; j < nw; j++)
            if (w[j].kind == kind && w[j].corr == corr && (!name || !strcmp(w[j].name, name)) &&
                w[j].start == start && w[j].end == end)
                break;
        EXPECT(j < nw, "record kind %u corr %u [%" PRIu64 ", %" PRIu64 "] not in the driver's log", r->kind, corr,
               start, end);
        checked++;
    }
    EXPECT(checked >= 28, "only %zu GPU records checked against the driver's log", checked);
    free(w);
}

static int run_main(void)
{
    check_setup_errors();
    OK(p_cuptiActivityRegisterTimestampCallback(mono_cb));
    OK(p_cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    OK(p_cuptiActivityEnableLatencyTimestamps(1));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    enable_launch_apis();
    driver_setup();
    check_correlation_and_times();
    check_driver_kind();
    check_flush_semantics();
    check_dropped();
    check_graph();
    check_worker();
    check_ground_truth();
    check_finalize();
    if (failures) return 1;
    printf("ok: %zu records in %d buffers (%d requested)\n", nrecs, batches, requests);
    return 0;
}

/* ---- owner: another tool holds CUPTI from the start --------------------------------------------- */
static int run_owner(void)
{
    const char *owner = getenv("GTSIM_CUPTI_OWNER");
    CUpti_SubscriberHandle sub = NULL;
    CUpti_SubscriberParams p;
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
    memset(&p, 0, sizeof(p));
    p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    p.subscriberName = "selftest";
    p.oldSubscriberName = old;
    p.oldSubscriberSize = sizeof(old);
    EXPECT_RC(p_cuptiSubscribe_v2(&sub, NULL, NULL, &p), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT(owner && !strcmp(old, owner), "oldSubscriberName '%s', want '%s'", old, owner ? owner : "");
    char tiny[5] = "xxxx";
    p.oldSubscriberName = tiny;
    p.oldSubscriberSize = sizeof(tiny);
    EXPECT_RC(p_cuptiSubscribe_v2(&sub, NULL, NULL, &p), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    EXPECT(strlen(tiny) == 4 && !strncmp(tiny, owner ? owner : "", 4), "truncated name '%s'", tiny);
    EXPECT_RC(p_cuptiSubscribe(&sub, NULL, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    OK(p_cuptiFinalize());
    EXPECT_RC(p_cuptiSubscribe(&sub, NULL, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    if (failures) return 1;
    printf("ok: held by '%s'\n", old);
    return 0;
}

/* ---- fail: GTSIM_CUPTI_FAIL and GTSIM_CUPTI_VERSION ------------------------------------------------ */
static int run_fail(void)
{
    uint32_t v = 0;
    OK(p_cuptiGetVersion(&v));
    EXPECT(v == 120900, "GTSIM_CUPTI_VERSION: %u", v);
    EXPECT_RC(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_UNKNOWN);
    CUpti_SubscriberHandle sub;
    EXPECT_RC(p_cuptiSubscribe_v2(&sub, NULL, NULL, NULL), CUPTI_ERROR_UNKNOWN);
    OK(p_cuptiSubscribe(&sub, NULL, NULL));
    OK(p_cuptiUnsubscribe(sub));
    OK(p_cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    uint64_t ts = 0;
    OK(p_cuptiGetTimestamp(&ts));
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t now = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
    EXPECT(ts <= now && now - ts < 1000000000ull, "cuptiGetTimestamp is not CLOCK_REALTIME: %" PRIu64, ts);
    if (failures) return 1;
    printf("ok: injected failures\n");
    return 0;
}

/* ---- stress: launches with external ids on several threads, concurrent flushes ------------------- */
#define ST_THREADS 4
#define ST_LAUNCHES 300
static _Atomic int st_stop;

static void *st_launcher(void *arg)
{
    int t = (int)(intptr_t)arg;
    CU(cuCtxSetCurrent(ctx));
    CUstream s;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (int i = 0; i < ST_LAUNCHES; i++) {
        OK(p_cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
                                                    (uint64_t)t * 1000000u + (uint64_t)i));
        launch(f_short, s);
        OK(p_cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, NULL));
    }
    CU(cuStreamSynchronize(s));
    CU(cuStreamDestroy(s));
    return NULL;
}

static void *st_flusher(void *arg)
{
    (void)arg;
    while (!st_stop) {
        OK(p_cuptiActivityFlushAll(0));
        size_t d;
        OK(p_cuptiActivityGetNumDroppedRecords(NULL, 0, &d));
        EXPECT(d == 0, "stress: %zu records dropped", d);
        usleep(500);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int run_stress(void)
{
    buf_size = 4096;
    OK(p_cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    OK(p_cuptiActivityFlushPeriod(5));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
    OK(p_cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1));
    driver_setup();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t rt0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    pthread_t fl[2], th[ST_THREADS];
    for (int i = 0; i < 2; i++) pthread_create(&fl[i], NULL, st_flusher, NULL);
    for (int i = 0; i < ST_THREADS; i++) pthread_create(&th[i], NULL, st_launcher, (void *)(intptr_t)i);
    for (int i = 0; i < ST_THREADS; i++) pthread_join(th[i], NULL);
    st_stop = 1;
    for (int i = 0; i < 2; i++) pthread_join(fl[i], NULL);
    CU(cuCtxSynchronize());
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t rt1 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    /* no timestamp callback: every time is on CUPTI's default clock, CLOCK_REALTIME */
    size_t off_clock = 0;
    for (size_t i = 0; i < nrecs; i++) {
        uint64_t a = 0, b = 0;
        if (recs[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            a = recs[i].u.k.start, b = recs[i].u.k.end;
        else if (recs[i].kind == CUPTI_ACTIVITY_KIND_DRIVER)
            a = recs[i].u.api.start, b = recs[i].u.api.end;
        else
            continue;
        off_clock += a < rt0 || b > rt1 || a > b;
    }
    EXPECT(off_clock == 0, "%zu records outside [%" PRIu64 ", %" PRIu64 "] on CLOCK_REALTIME", off_clock, rt0, rt1);
    /* every kernel's correlation id leads to the external id pushed around its launch */
    size_t n = 0;
    uint64_t *ids = calloc(ST_THREADS * ST_LAUNCHES, sizeof(*ids));
    for (size_t i = 0; i < nrecs && ids; i++) {
        if (recs[i].kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        long x = find_corr(0, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, recs[i].u.k.correlationId,
                           CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
        EXPECT(x >= 0, "kernel corr %u without an external record", recs[i].u.k.correlationId);
        if (x >= 0 && n < ST_THREADS * ST_LAUNCHES) ids[n++] = recs[x].u.x.externalId;
    }
    EXPECT(n == ST_THREADS * ST_LAUNCHES, "%zu kernels with external ids, want %d", n, ST_THREADS * ST_LAUNCHES);
    if (ids) qsort(ids, n, sizeof(*ids), cmp_u64);
    for (size_t i = 0; ids && i < n; i++) {
        uint64_t want = (uint64_t)(i / ST_LAUNCHES) * 1000000u + (uint64_t)(i % ST_LAUNCHES);
        if (ids[i] != want) {
            fail("external id #%zu is %" PRIu64 ", want %" PRIu64, i, ids[i], want);
            break;
        }
    }
    free(ids);
    if (failures) return 1;
    printf("ok: %zu records in %d buffers, %d delivered by the worker\n", nrecs, batches, done_elsewhere);
    return 0;
}

/* ---- fork: the child keeps working (no lock left held, a new delivery thread) ---------------- */
static int run_fork(void)
{
    buf_size = 1024;
    OK(p_cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
    OK(p_cuptiActivityFlushPeriod(10));
    OK(p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    OK(p_cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1));
    driver_setup();
    for (int i = 0; i < 50; i++) launch(f_short, NULL);
    /* The delivery thread may be inside a completion callback: fork with rmu held so the child
     * inherits neither a held lock nor a half-appended record list. The callbacks take rmu
     * without holding any lock of the simulated CUPTI, so its fork handlers still get theirs. */
    pthread_mutex_lock(&rmu);
    pid_t pid = fork();
    pthread_mutex_unlock(&rmu);
    if (pid < 0) {
        fail("fork");
        return 1;
    }
    size_t from = nrecs_now();
    int elsewhere = done_elsewhere;
    for (int i = 0; i < 40; i++) launch(pid ? f_short : f_a, NULL);
    CU(cuCtxSynchronize());
    sleep_ms(100);
    EXPECT(done_elsewhere > elsewhere, "%s: no buffer from the delivery thread", pid ? "parent" : "child");
    OK(p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    size_t mine = count_kernel(from, pid ? "k_short" : "k_a");
    /* the pid is cached, and read again in the child (the records made before the fork and
     * delivered after it carry the parent's) */
    size_t own = count_own_api(from);
    EXPECT(own >= 40, "%s: %zu API records with its pid, want its 40 launches'", pid ? "parent" : "child", own);
    if (!pid) {
        EXPECT(mine == 40, "child: %zu of its 40 kernels", mine);
        _exit(failures ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status %d)", status);
    EXPECT(count_kernel(0, "k_short") == 90, "parent: %zu of 90 kernels", count_kernel(0, "k_short"));
    EXPECT(count_kernel(0, "k_a") == 0, "parent got the child's kernels");
    if (failures) return 1;
    printf("ok: fork\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "main";
    main_thread = pthread_self();
    load();
    if (!strcmp(mode, "main")) return run_main();
    if (!strcmp(mode, "owner")) return run_owner();
    if (!strcmp(mode, "fail")) return run_fail();
    if (!strcmp(mode, "stress")) return run_stress();
    if (!strcmp(mode, "fork")) return run_fork();
    fprintf(stderr, "usage: %s [main|owner|fail|stress|fork]\n", argv[0]);
    return 2;
}
