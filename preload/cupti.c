/* The GPU timeline from CUPTI activity records.
 *
 * CUPTI is loaded at run time (never linked), right before the program's first cuInit, because
 * its attributes and timestamp callback must be set before the driver initializes. We only probe
 * the one-subscriber slot (subscribe + unsubscribe) and never hold it, so a PyTorch profiler or
 * Nsight started later still works; if one already holds it, we step aside and say so.
 *
 * The Activity API has one pair of buffer callbacks per process, and CUPTI hands the buffers it
 * holds to whichever pair is registered last. A client that registers its own after us (Kineto
 * at torch.profiler's start) goes through our cuptiActivityRegisterCallbacks: we take our records
 * out first (a forced flush while our callbacks are still the registered ones), stop using CUPTI,
 * write a GT_CUPTI_TAKEN status (the GPU timeline ends there), then let the registration
 * through. The client then gets everything it enables, as without us. One that registers before
 * our set-up keeps CUPTI: we then step aside as when the subscriber slot is held.
 *
 * Linking: each launch hook pushes our correlation id (the launch record's corr) as a CUSTOM2
 * external correlation id around the real call; CUPTI then emits {ext, cupti corr} records, and
 * every kernel/copy carries its cupti corr. Buffer callbacks may run on CUPTI's thread or inside
 * cuptiActivityFlushAll; they take only cupti_mu and the file lock, and nobody calls FlushAll
 * while holding either. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cupti.h>

#include "shim.h"
#include "unwind.h"

#define BUF_BYTES (2u << 20)

typedef CUptiResult (*get_version_fn)(uint32_t *);
typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*subscribe2_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                     CUpti_SubscriberParams *);
typedef CUptiResult (*unsubscribe_fn)(CUpti_SubscriberHandle);
typedef CUptiResult (*register_cb_fn)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*enable_fn)(CUpti_ActivityKind);
typedef CUptiResult (*enable_api_fn)(CUpti_CallbackId, uint8_t);
typedef CUptiResult (*flush_all_fn)(uint32_t);
typedef CUptiResult (*next_record_fn)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*dropped_fn)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*push_fn)(CUpti_ExternalCorrelationKind, uint64_t);
typedef CUptiResult (*pop_fn)(CUpti_ExternalCorrelationKind, uint64_t *);
typedef CUptiResult (*ts_cb_fn)(CUpti_TimestampCallbackFunc);
typedef CUptiResult (*get_ts_fn)(uint64_t *);
typedef CUptiResult (*set_attr_fn)(CUpti_ActivityAttribute, size_t *, void *);

static struct {
    void *lib;
    char path[512];
    uint32_t version;
    int64_t clock_offset;
    next_record_fn next_record;
    dropped_fn dropped;
    flush_all_fn flush_all;
    push_fn push;
    pop_fn pop;
    set_attr_fn set_attr;
    pthread_mutex_t mu;   /* names table and staging; taken inside buffer callbacks */
    pthread_mutex_t call_mu; /* flush calls vs shutdown */
    int stopped;          /* under call_mu: CUPTI may be torn down, make no more calls */
} C = {.mu = PTHREAD_MUTEX_INITIALIZER, .call_mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- loading ---------------------------------------------------------------------------------- */

static void *try_open(const char *path, int flags)
{
    void *h = dlopen(path, flags);
    if (h) {
        struct link_map *lm = NULL;
        if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0])
            snprintf(C.path, sizeof(C.path), "%s", lm->l_name);
        else
            snprintf(C.path, sizeof(C.path), "%s", path);
    }
    return h;
}

static void *try_dir(const char *dir)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12"};
    char p[1024];
    if (!dir || !*dir) return NULL;
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
        void *h = try_open(p, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

/* Python wheels: <site-packages>/nvidia/{cu13/lib,cuda_cupti/lib}, found from loaded objects. */
static int find_site_packages(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    void **out = data;
    size_t len = gt_dl_name_len(info->dlpi_name, 4096);
    const char *s = len ? memmem(info->dlpi_name, len, "/site-packages/", 15) : NULL;
    if (!s || *out) return 0;
    char dir[1024];
    int n = (int)(s - info->dlpi_name) + (int)strlen("/site-packages");
    static const char *const subs[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib"};
    for (size_t i = 0; i < 2 && !*out; i++) {
        snprintf(dir, sizeof(dir), "%.*s/%s", n, info->dlpi_name, subs[i]);
        *out = try_dir(dir);
    }
    return *out != NULL;
}

static void *load_cupti(const struct gt_config_env *env)
{
    void *h = NULL;
    char dir[1024];
    if (env->cupti && *env->cupti) return try_open(env->cupti, RTLD_NOW | RTLD_LOCAL);
    /* A copy already in the process (torch loads its own): never load a second one. */
    if ((h = try_open("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD))) return h;
    if ((h = try_open("libcupti.so.12", RTLD_NOW | RTLD_NOLOAD))) return h;
    if ((h = try_open("libcupti.so.13", RTLD_NOW | RTLD_LOCAL))) return h;
    if ((h = try_open("libcupti.so.12", RTLD_NOW | RTLD_LOCAL))) return h;
    const char *homes[] = {env->cuda_home, "/usr/local/cuda"};
    for (size_t i = 0; i < 2 && !h; i++) {
        if (!homes[i] || !*homes[i]) continue;
        static const char *const subs[] = {"lib64", "extras/CUPTI/lib64", "lib"};
        for (size_t j = 0; j < 3 && !h; j++) {
            snprintf(dir, sizeof(dir), "%s/%s", homes[i], subs[j]);
            h = try_dir(dir);
        }
    }
    if (!h) gt_loader_iterate(find_site_packages, &h);
    if (!h && env->conda_prefix && *env->conda_prefix) {
        snprintf(dir, sizeof(dir), "%s/lib", env->conda_prefix);
        h = try_dir(dir);
    }
    return h;
}

/* ---- records ---------------------------------------------------------------------------------- */

static uint64_t monotonic_clock(void) { return gt_now(); }

#define NAME_BITS 14
static struct {
    const char *key[1u << NAME_BITS];
    uint32_t id[1u << NAME_BITS];
    uint32_t next;
} names;

/* Stage records for one GPU chunk; under C.mu. */
static uint8_t stage[1u << 20];
static uint32_t staged;

static void stage_flush(void)
{
    if (staged) gt_write_gpu_chunk(stage, staged);
    staged = 0;
}

static void *stage_reserve(uint32_t size)
{
    if (staged + size > sizeof(stage)) stage_flush();
    void *p = stage + staged;
    memset(p, 0, size);
    staged += size;
    return p;
}

/* Kernel names: CUPTI shares one string per kernel between records; intern by pointer. */
static uint32_t name_id(const char *name)
{
    if (!name) return 0;
    uint32_t mask = (1u << NAME_BITS) - 1;
    uint32_t i = (uint32_t)(((uintptr_t)name * 0x9E3779B97F4A7C15ull) >> (64 - NAME_BITS));
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & mask) {
        if (names.key[i] == name) return names.id[i];
        if (!names.key[i]) break;
    }
    uint32_t id = ++names.next;
    uint32_t len = (uint32_t)strnlen(name, 16384);
    struct gt_rec_gpu_name *r = stage_reserve(gt_rec_size(sizeof(*r), len));
    r->h = (struct gt_rec_header){GT_REC_GPU_NAME, 0, gt_rec_size(sizeof(*r), len)};
    r->id = id;
    r->name_len = len;
    memcpy(r + 1, name, len);
    if (!names.key[i]) {
        names.key[i] = name;
        names.id[i] = id;
    }
    return id;
}

static uint64_t fix(uint64_t t) { return t ? (uint64_t)((int64_t)t - C.clock_offset) : 0; }

static void convert(const CUpti_Activity *a)
{
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)a;
        uint32_t nid = name_id(k->name);
        struct gt_rec_gpu_kernel *r = stage_reserve(sizeof(*r));
        r->h = (struct gt_rec_header){GT_REC_GPU_KERNEL, 0, sizeof(*r)};
        r->start = fix(k->start), r->end = fix(k->end);
        r->corr = k->correlationId, r->device = k->deviceId;
        r->context = k->contextId, r->stream = k->streamId;
        r->graph_id = k->graphId, r->graph_node_id = k->graphNodeId;
        r->name_id = nid;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)a;
        struct gt_rec_gpu_memcpy *r = stage_reserve(sizeof(*r));
        r->h = (struct gt_rec_header){GT_REC_GPU_MEMCPY, m->copyKind, sizeof(*r)};
        r->start = fix(m->start), r->end = fix(m->end), r->bytes = m->bytes;
        r->corr = m->correlationId, r->device = m->deviceId, r->dst_device = m->deviceId;
        r->context = m->contextId, r->stream = m->streamId;
        r->src_kind = m->srcKind, r->dst_kind = m->dstKind, r->flags = m->flags;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)a;
        struct gt_rec_gpu_memcpy *r = stage_reserve(sizeof(*r));
        r->h = (struct gt_rec_header){GT_REC_GPU_MEMCPY, m->copyKind, sizeof(*r)};
        r->start = fix(m->start), r->end = fix(m->end), r->bytes = m->bytes;
        r->corr = m->correlationId, r->device = m->srcDeviceId, r->dst_device = m->dstDeviceId;
        r->context = m->contextId, r->stream = m->streamId;
        r->src_kind = m->srcKind, r->dst_kind = m->dstKind, r->flags = m->flags;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)a;
        struct gt_rec_gpu_memset *r = stage_reserve(sizeof(*r));
        r->h = (struct gt_rec_header){GT_REC_GPU_MEMSET, 0, sizeof(*r)};
        r->start = fix(m->start), r->end = fix(m->end), r->bytes = m->bytes;
        r->corr = m->correlationId, r->device = m->deviceId;
        r->context = m->contextId, r->stream = m->streamId;
        r->value = m->value, r->mem_kind = m->memoryKind;
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *)a;
        if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2) break; /* not ours */
        struct gt_rec_gpu_extcorr *r = stage_reserve(sizeof(*r));
        r->h = (struct gt_rec_header){GT_REC_GPU_EXTCORR, 0, sizeof(*r)};
        r->ext = e->externalId, r->corr = e->correlationId, r->kind = e->externalKind;
        break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
        /* Not written: the launch's own record (its hook's) has the call's times, thread and
         * result, and the analyzer reads none of these (issue 23: 40 bytes per launch packed
         * and written for nothing). CUPTI makes them only as the carriers of the external
         * correlation records (setup). */
        break;
    default:
        break;
    }
}

/* Buffers handed to CUPTI and not yet given back. When the trace cannot be written as fast as
 * the GPU produces records (a slow disk), CUPTI keeps asking; past this many outstanding buffers
 * the request is declined and CUPTI drops records, which it counts and we write as
 * GT_REC_GPU_DROPPED: memory stays bounded and the loss is never silent. */
#define BUF_MAX_OUTSTANDING 64 /* 128 MiB */
static _Atomic unsigned buf_outstanding;

/* Buffers given back, kept for the next requests: a fresh 2 MiB allocation costs 512 page
 * faults when CUPTI zeroes it and an munmap at its free (most of the flusher's kernel time in a
 * PyTorch launch loop). Requests and completions come from any thread: slots are taken and
 * filled by atomic exchange. At most BUF_SPARE * BUF_BYTES stay allocated.
 *
 * Left to itself CUPTI zeroes each buffer we hand it, all 2 MiB, on the thread whose API call
 * needed it: the program's (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, "a few stalls may
 * appear in critical path"). Our periodic flush hands back a buffer that holds a few KiB, so the
 * program met a 2 MiB memset (~50 us) after every flush that ended a buffer: 26-30 in 3 s of a
 * PyTorch step loop (bench/README.md, issue 23 step 12). With the attribute set (buf_zeroed)
 * we hand zeroed buffers instead: fresh ones from calloc (new pages, zero already), spare ones
 * zeroed where CUPTI wrote them, their first `valid` bytes, on the thread that completes them. */
#define BUF_SPARE 4
static _Atomic(uint8_t *) buf_spare[BUF_SPARE];
static _Atomic unsigned long buf_handed, buf_reused; /* GPUTRACE_DEBUG's figures */
static _Atomic int buf_zeroed; /* CUPTI takes our buffers as zeroed: we zero them */
/* GPUTRACE_DEBUG: completed buffers with a byte set past their valid size, which zeroing only the
 * valid bytes would leave set (the GPU kit asks this of the real CUPTI: tests/gpu/run.sh) */
static _Atomic unsigned long buf_dirty_tail;

static uint8_t *spare_take(void)
{
    for (int i = 0; i < BUF_SPARE; i++) {
        uint8_t *b = atomic_load_explicit(&buf_spare[i], memory_order_relaxed);
        if (b && (b = atomic_exchange(&buf_spare[i], NULL)) != NULL) return b;
    }
    return NULL;
}

static int spare_put(uint8_t *b)
{
    for (int i = 0; i < BUF_SPARE; i++) {
        uint8_t *none = NULL;
        if (atomic_compare_exchange_strong(&buf_spare[i], &none, b)) return 1;
    }
    return 0;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;
    *buffer = NULL;
    *size = 0;
    if (atomic_fetch_add(&buf_outstanding, 1) >= BUF_MAX_OUTSTANDING) {
        atomic_fetch_sub(&buf_outstanding, 1);
        return;
    }
    /* malloc's alignment (16) is the 8 CUPTI asks for; calloc zeroes only memory not fresh */
    *buffer = spare_take();
    if (*buffer) atomic_fetch_add_explicit(&buf_reused, 1, memory_order_relaxed);
    if (!*buffer) *buffer = calloc(1, BUF_BYTES);
    if (*buffer) {
        *size = BUF_BYTES;
        atomic_fetch_add_explicit(&buf_handed, 1, memory_order_relaxed);
    } else
        atomic_fetch_sub(&buf_outstanding, 1);
}

/* Whether n bytes at p are all zero (memcmp against a zero block: cheap under the sanitizers). */
static int all_zero(const uint8_t *p, size_t n)
{
    static const uint8_t zero[4096];
    for (size_t at = 0; at < n; at += sizeof(zero))
        if (memcmp(p + at, zero, n - at < sizeof(zero) ? n - at : sizeof(zero)) != 0) return 0;
    return 1;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)ctx, (void)stream;
    int saved_hook = gt_tls_in_hook;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&C.mu);
    CUpti_Activity *rec = NULL;
    while (valid && C.next_record(buffer, valid, &rec) == CUPTI_SUCCESS) convert(rec);
    stage_flush();
    pthread_mutex_unlock(&C.mu);
    /* a spare is handed as it is: zero what CUPTI wrote (it wrote nothing past valid) */
    if (buffer && atomic_load_explicit(&buf_zeroed, memory_order_relaxed)) {
        size_t n = valid < size ? valid : size;
        if (gt_debug && !all_zero(buffer + n, size - n))
            atomic_fetch_add_explicit(&buf_dirty_tail, 1, memory_order_relaxed);
        memset(buffer, 0, n);
    }
    if (buffer && !spare_put(buffer)) free(buffer);
    if (buffer) atomic_fetch_sub(&buf_outstanding, 1);
    __atomic_store_n(&gt_tls_in_hook, saved_hook, __ATOMIC_RELAXED);
}

/* ---- set-up ----------------------------------------------------------------------------------- */

static void note_status(struct gt_thread *t, int status, int result, const char *reason)
{
    struct gt_rec_cupti r = {.ts = gt_now(), .clock_offset_ns = C.clock_offset,
                             .version = (int32_t)C.version, .result = result};
    char text[1024];
    int n = snprintf(text, sizeof(text), "%s%s", C.path, reason ? reason : "");
    r.path_len = (uint32_t)strlen(C.path);
    r.reason_len = n > 0 ? (uint32_t)n - r.path_len : 0;
    if (r.path_len + r.reason_len > sizeof(text) - 1) r.reason_len = sizeof(text) - 1 - r.path_len;
    gt_emit_named(t, GT_REC_CUPTI, (uint16_t)status, &r, sizeof(r), text,
                  r.path_len + r.reason_len);
    if (status == GT_CUPTI_TAKEN)
        gt_log("gputrace: GPU timeline ends%s\n", reason);
    else if (status != GT_CUPTI_ON)
        gt_log("gputrace: GPU timeline unavailable: %s\n", reason);
}

#define SYM(var, type, name)                                                                       \
    type var = (type)gt_real_dlsym(C.lib, name);                                                   \
    if (!var) {                                                                                    \
        note_status(t, GT_CUPTI_FAILED, 0, ": " name " missing from libcupti");                    \
        return;                                                                                    \
    }

/* Is another profiler holding the one CUPTI subscriber slot? Probe without keeping it. */
static int owned_by_other(struct gt_thread *t)
{
    CUpti_SubscriberHandle sub = NULL;
    subscribe2_fn s2 = (subscribe2_fn)gt_real_dlsym(C.lib, "cuptiSubscribe_v2");
    subscribe_fn s1 = (subscribe_fn)gt_real_dlsym(C.lib, "cuptiSubscribe");
    unsubscribe_fn un = (unsubscribe_fn)gt_real_dlsym(C.lib, "cuptiUnsubscribe");
    char old[128] = "";
    CUptiResult r;
    if (s2) {
        CUpti_SubscriberParams p;
        memset(&p, 0, sizeof(p));
        p.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        p.subscriberName = "gputrace";
        p.oldSubscriberName = old;
        p.oldSubscriberSize = sizeof(old);
        r = s2(&sub, NULL, NULL, &p);
    } else if (s1) {
        r = s1(&sub, NULL, NULL);
    } else {
        return 0;
    }
    if (r == CUPTI_SUCCESS) {
        if (un) un(sub);
        return 0;
    }
    char why[256];
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(why, sizeof(why), ": another profiler holds CUPTI%s%s%s", old[0] ? " (" : "", old,
                 old[0] ? ")" : "");
    else
        snprintf(why, sizeof(why), ": cuptiSubscribe failed with %d", (int)r);
    note_status(t, r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? GT_CUPTI_OWNED
                                                                       : GT_CUPTI_FAILED,
                (int)r, why);
    return 1;
}

static void exit_flush(void);
/* Another client registered activity callbacks before our set-up (the program's first cuInit):
 * registering ours would take its records; we step aside as from a held subscriber slot. */
static atomic_int foreign_client;

static void setup(struct gt_thread *t)
{
    const struct gt_config_env *env = gt_config_env();
    if (env->cupti && strcmp(env->cupti, "off") == 0) {
        note_status(t, GT_CUPTI_OFF_BY_USER, 0, "disabled by GPUTRACE_CUPTI=off");
        return;
    }
    C.lib = load_cupti(env);
    if (!C.lib) {
        C.path[0] = 0;
        note_status(t, GT_CUPTI_NOT_FOUND, 0,
                    env->cupti && *env->cupti ? "cannot load the libcupti named by GPUTRACE_CUPTI"
                                              : "no libcupti.so.13/.so.12 found (set GPUTRACE_CUPTI)");
        return;
    }
    SYM(get_version, get_version_fn, "cuptiGetVersion");
    SYM(reg, register_cb_fn, "cuptiActivityRegisterCallbacks");
    SYM(enable, enable_fn, "cuptiActivityEnable");
    SYM(next, next_record_fn, "cuptiActivityGetNextRecord");
    SYM(flush, flush_all_fn, "cuptiActivityFlushAll");
    SYM(push, push_fn, "cuptiActivityPushExternalCorrelationId");
    SYM(pop, pop_fn, "cuptiActivityPopExternalCorrelationId");
    get_version(&C.version);
    if (owned_by_other(t)) return;
    if (atomic_load(&foreign_client)) {
        note_status(t, GT_CUPTI_OWNED, 0,
                    ": another CUPTI client registered its activity callbacks before CUDA started");
        return;
    }
    C.next_record = next, C.flush_all = flush, C.push = push, C.pop = pop;
    C.dropped = (dropped_fn)gt_real_dlsym(C.lib, "cuptiActivityGetNumDroppedRecords");
    ts_cb_fn ts_cb = (ts_cb_fn)gt_real_dlsym(C.lib, "cuptiActivityRegisterTimestampCallback");
    if (!ts_cb || ts_cb(monotonic_clock) != CUPTI_SUCCESS) {
        /* Map CUPTI's clock onto ours: the tightest of a few back-to-back samples. */
        get_ts_fn get_ts = (get_ts_fn)gt_real_dlsym(C.lib, "cuptiGetTimestamp");
        uint64_t best = UINT64_MAX;
        for (int i = 0; get_ts && i < 16; i++) {
            uint64_t a = gt_now(), c = 0, b;
            get_ts(&c);
            b = gt_now();
            if (b - a < best) best = b - a, C.clock_offset = (int64_t)c - (int64_t)(a + (b - a) / 2);
        }
    }
    /* before the first request (the attribute holds for buffers requested after it is set); a
     * CUPTI without it zeroes them itself */
    C.set_attr = (set_attr_fn)gt_real_dlsym(C.lib, "cuptiActivitySetAttribute");
    uint8_t one = 1;
    size_t one_size = sizeof(one);
    if (C.set_attr &&
        C.set_attr(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &one_size, &one) == CUPTI_SUCCESS)
        atomic_store(&buf_zeroed, 1);
    CUptiResult r = reg(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        note_status(t, GT_CUPTI_FAILED, (int)r, ": cuptiActivityRegisterCallbacks failed");
        return;
    }
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if ((r = enable(kinds[i])) != CUPTI_SUCCESS) {
            note_status(t, GT_CUPTI_FAILED, (int)r, ": cuptiActivityEnable failed");
            return;
        }
    }
    /* External correlation records come with API records: ask for those of launches, async copies
     * and memsets only. */
    static const CUpti_CallbackId launch_cbids[] = {
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
        /* async copies and memsets push our id too (hooks_exec.c) */
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync, CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2, CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async, CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async,
        CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz};
    enable_api_fn api = (enable_api_fn)gt_real_dlsym(C.lib, "cuptiActivityEnableDriverApi");
    int api_ok = api != NULL;
    for (size_t i = 0; api && i < sizeof(launch_cbids) / sizeof(launch_cbids[0]); i++)
        api_ok &= api(launch_cbids[i], 1) == CUPTI_SUCCESS;
    if (!api_ok) enable(CUPTI_ACTIVITY_KIND_DRIVER);
    atomic_store(&gt_cupti_on, 1);
    note_status(t, GT_CUPTI_ON, 0, "");
    (void)exit_flush;
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static struct gt_thread *setup_thread;

static void setup_once_fn(void) { setup(setup_thread); }

/* Called from the cuInit hook (tracing on, inside the hook) before the real cuInit. */
void gt_cupti_setup(struct gt_thread *t)
{
    setup_thread = t;
    pthread_once(&setup_once, setup_once_fn);
}

void gt_cupti_push(uint64_t corr) { C.push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, corr); }

void gt_cupti_pop(void)
{
    uint64_t last;
    C.pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

/* Records CUPTI could not deliver. Asked here, after a flush and under no lock of ours that a
 * buffer callback takes: asking inside the completion callback is the ABBA deadlock Kineto hit
 * (kineto #1347). */
static void note_dropped(void)
{
    size_t dropped = 0;
    if (!C.dropped || C.dropped(NULL, 0, &dropped) != CUPTI_SUCCESS || !dropped) return;
    pthread_mutex_lock(&C.mu);
    struct gt_rec_gpu_dropped *d = stage_reserve(sizeof(*d));
    d->h = (struct gt_rec_header){GT_REC_GPU_DROPPED, 0, sizeof(*d)};
    d->ts = gt_now(), d->count = dropped;
    stage_flush();
    pthread_mutex_unlock(&C.mu);
}

/* ---- another CUPTI client -------------------------------------------------------------------- */

typedef CUptiResult (*reg_fn)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);

/* Our buffers back to us, then no more CUPTI calls from us (launch hooks stop pushing ids: they
 * read gt_cupti_on; a push made before is popped by the hook that made it). */
static void hand_over(void)
{
    int saved = gt_tls_in_hook;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    gt_cupti_flush(1);
    pthread_mutex_lock(&C.call_mu);
    int was_on = !C.stopped;
    C.stopped = 1;
    /* the new client's buffers are zeroed by CUPTI again, as it expects (the default) */
    if (atomic_exchange(&buf_zeroed, 0) && C.set_attr) {
        uint8_t zero = 0;
        size_t zero_size = sizeof(zero);
        C.set_attr(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zero_size, &zero);
    }
    pthread_mutex_unlock(&C.call_mu);
    atomic_store(&gt_cupti_on, 0);
    __atomic_store_n(&gt_tls_in_hook, saved, __ATOMIC_RELAXED);
    struct gt_thread *t = was_on ? gt_enter() : NULL;
    if (!t) return;
    note_status(t, GT_CUPTI_TAKEN, 0,
                ": another CUPTI client (torch.profiler's Kineto, Nsight, ...) registered its "
                "activity callbacks; GPU records end here");
    gt_leave(t);
}

GT_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
    /* the library the caller would have reached without us (our own calls go through C.lib) */
    reg_fn real = (reg_fn)gt_real_dlsym(RTLD_NEXT, "cuptiActivityRegisterCallbacks");
    if (!real) return CUPTI_ERROR_NOT_INITIALIZED;
    if (req && done && atomic_load(&gt_cupti_on))
        hand_over();
    else if (req && done)
        atomic_store(&foreign_client, 1);
    return real(req, done);
}

/* Periodic (flag 0: complete buffers only) or final (forced) flush. Never under our locks. */
void gt_cupti_flush(int forced)
{
    if (!atomic_load(&gt_cupti_on)) return;
    pthread_mutex_lock(&C.call_mu);
    if (!C.stopped) {
        C.flush_all(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
        note_dropped();
    }
    pthread_mutex_unlock(&C.call_mu);
}

typedef CUresult (*ctx_sync_fn)(void);

/* At exit, before the CUDA runtime's own exit handlers (registered earlier, so run later) and
 * long before libcupti's destructor: wait for the GPU, force out every record, then make no more
 * CUPTI calls. Registered after the first successful cuInit. */
static void exit_flush(void)
{
    if (!atomic_load(&gt_cupti_on)) return;
    int saved = gt_tls_in_hook;
    __atomic_store_n(&gt_tls_in_hook, 1, __ATOMIC_RELAXED);
    ctx_sync_fn sync = (ctx_sync_fn)gt_real_dlsym(gt_libcuda(), "cuCtxSynchronize");
    if (sync) sync();
    gt_cupti_flush(1);
    pthread_mutex_lock(&C.call_mu);
    C.stopped = 1;
    pthread_mutex_unlock(&C.call_mu);
    atomic_store(&gt_cupti_on, 0);
    gt_log("gputrace: cupti: %lu buffers handed out, %lu of them reused; handed zeroed: %s, %lu "
           "with a byte set past their valid size\n",
           atomic_load(&buf_handed), atomic_load(&buf_reused),
           atomic_load(&buf_zeroed) ? "yes" : "no", atomic_load(&buf_dirty_tail));
    __atomic_store_n(&gt_tls_in_hook, saved, __ATOMIC_RELAXED);
}

void gt_cupti_after_init(void)
{
    static atomic_int done;
    if (atomic_load(&gt_cupti_on) && !atomic_exchange(&done, 1)) atexit(exit_flush);
}
