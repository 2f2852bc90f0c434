/* Simulated CUPTI: the Activity API.
 *
 * Records come from two places. API records (DRIVER kind) and the external-correlation records
 * that precede them are made on the calling thread, from the simulated driver's API exit hook.
 * Kernel, memcpy and memset records are made from the driver's activity log
 * (gtsim_activity_drain, completed work only) whenever records are delivered. Both go into one
 * staging queue of finished CUPTI records; delivery moves them into the client's buffers
 * (requesting buffers as needed) and hands buffers back through the completion callback:
 *   worker thread (every period)      full buffers only
 *   cuptiActivityFlushAll(0)           full buffers, and the partly filled one unless GPU work
 *                                      is still in flight (its records would be incomplete)
 *   cuptiActivityFlushAll(FORCED)      full buffers and the partly filled one
 * No lock is held while a client callback runs. */
#include "simcupti.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NKINDS CUPTI_ACTIVITY_KIND_COUNT
#define NXKINDS CUPTI_EXTERNAL_CORRELATION_KIND_SIZE
#define NIV 32       /* enable intervals remembered per kind */
#define MAX_CTXOV 32 /* cuptiActivityEnableContext overrides */

enum { D_WORKER, D_FLUSH, D_FORCED };

struct cbuf {
    uint8_t *p;
    size_t size, used, maxrec, nrec;
};

struct cbuf_list {
    struct cbuf *v;
    size_t n, cap;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/* Threads inside pull() with mu dropped, holding records drained from the driver but not yet
 * converted; a flush waits for them (on drained_cv, under mu) so it never misses such records. */
static int draining;
static pthread_cond_t drained_cv = PTHREAD_COND_INITIALIZER;
/* Threads handing buffers to the client's completion callback (outside mu). Like CUPTI, a flush
 * returns only after every buffer taken out before or during it has been handed back: a client
 * that stops after its final forced flush (as at exit) must not lose the buffers another thread
 * (the delivery thread) was still handing over. */
static int delivering;
static pthread_cond_t delivered_cv = PTHREAD_COND_INITIALIZER;

/* Under mu. */
static CUpti_BuffersCallbackRequestFunc req_cb;
static CUpti_BuffersCallbackCompleteFunc done_cb;
static struct {
    uint64_t on[NIV], off[NIV]; /* CLOCK_MONOTONIC; off = UINT64_MAX while enabled */
    int n;
} hist[NKINDS];
static struct {
    CUcontext ctx;
    int8_t st[NKINDS]; /* 0 follow the global setting, 1 on, -1 off */
} ctxov[MAX_CTXOV];
static int nctxov;
static uint8_t *q; /* staging queue: finished records, 8-byte aligned */
static size_t qhead, qlen, qcap, qrecs;
static struct cbuf cur; /* the buffer being filled */
static int have_cur;
static struct cbuf_list ready, spare;
static unsigned long long dropped;
static int64_t grid_next;
static uint8_t latency_ts;

/* Read without mu on the API path. */
static uint8_t kind_on[NKINDS];
static uint8_t *api_on; /* [sc_driver_cbid_size] */
static int kinds_on;    /* how many kinds are enabled (written under mu) */
static int holding;     /* have_cur || spare.n (written under mu) */
static int api_any;

static const size_t attr_default[] = {
    [CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE] = 3200000,
    [CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP] = 8u << 20,
    [CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT] = 250,
    [CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE] = 25000,
    [CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT] = 250,
    [CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER] = 0,
    [CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE] = 3,
    [CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE] = 3,
    [CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED] = 0,
    [CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER] = 1,
    [CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS] = 16u << 20,
};
#define NATTRS (sizeof(attr_default) / sizeof(attr_default[0]))
static size_t attr[NATTRS]; /* under mu */

static int get_flag(const uint8_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void set_flag(uint8_t *p, int v) { __atomic_store_n(p, (uint8_t)(v != 0), __ATOMIC_RELEASE); }

/* ---- record sizes, the staging queue ------------------------------------------------------------ */
static size_t record_size(uint32_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
    }
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

static void q_push(const void *rec, size_t size) /* under mu */
{
    size_t n = align8(size);
    if (!req_cb) { /* no buffers will ever come for it */
        dropped++;
        return;
    }
    if (qlen + n > qcap) {
        size_t cap = qcap ? qcap : 1u << 16;
        while (qlen + n > cap) cap *= 2;
        uint8_t *nq = realloc(q, cap);
        if (!nq) {
            dropped++;
            return;
        }
        q = nq;
        qcap = cap;
    }
    memcpy(q + qlen, rec, size);
    memset(q + qlen + size, 0, n - size);
    qlen += n;
    qrecs++;
}

static void q_drop_all(void) /* under mu */
{
    dropped += qrecs;
    qhead = qlen = qrecs = 0;
}

static int list_push(struct cbuf_list *l, struct cbuf b)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct cbuf *v = realloc(l->v, cap * sizeof(*v));
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = b;
    return 0;
}

/* ---- which records are wanted ------------------------------------------------------------------- */
static void hist_on(int kind, uint64_t now) /* under mu */
{
    if (get_flag(&kind_on[kind])) return;
    if (hist[kind].n == NIV) {
        memmove(hist[kind].on, hist[kind].on + 1, (NIV - 1) * sizeof(uint64_t));
        memmove(hist[kind].off, hist[kind].off + 1, (NIV - 1) * sizeof(uint64_t));
        hist[kind].n--;
    }
    hist[kind].on[hist[kind].n] = now;
    hist[kind].off[hist[kind].n] = UINT64_MAX;
    hist[kind].n++;
    set_flag(&kind_on[kind], 1);
    __atomic_store_n(&kinds_on, kinds_on + 1, __ATOMIC_RELEASE);
}

static void hist_off(int kind, uint64_t now) /* under mu */
{
    if (!get_flag(&kind_on[kind])) return;
    hist[kind].off[hist[kind].n - 1] = now;
    set_flag(&kind_on[kind], 0);
    __atomic_store_n(&kinds_on, kinds_on - 1, __ATOMIC_RELEASE);
}

/* Was kind enabled (for ctx) when work was enqueued at host time t? Under mu. */
static int wanted(int kind, uint64_t t, void *ctx)
{
    for (int i = 0; i < nctxov; i++)
        if (ctxov[i].ctx == ctx && ctxov[i].st[kind]) return ctxov[i].st[kind] > 0;
    for (int i = hist[kind].n - 1; i >= 0; i--)
        if (t >= hist[kind].on[i] && t < hist[kind].off[i]) return 1;
    return 0;
}

/* ---- GPU records from the driver's activity log ------------------------------------------------- */
static void put_kernel(const struct gtsim_activity *a, CUpti_ActivityKind kind)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof(k));
    k.kind = kind;
    k.start = sc_gpu_time(a->start_ns);
    k.end = sc_gpu_time(a->end_ns);
    k.completed = k.end;
    k.deviceId = a->device;
    k.contextId = a->context_id;
    k.streamId = a->stream_id;
    k.gridX = (int32_t)a->grid[0], k.gridY = (int32_t)a->grid[1], k.gridZ = (int32_t)a->grid[2];
    k.blockX = (int32_t)a->block[0], k.blockY = (int32_t)a->block[1], k.blockZ = (int32_t)a->block[2];
    k.dynamicSharedMemory = (int32_t)a->shared_mem_bytes;
    k.correlationId = a->correlation_id;
    k.gridId = ++grid_next;
    k.name = a->name;
    if (latency_ts) k.queued = k.submitted = sc_gpu_time(a->queued_ns);
    k.launchType = (uint8_t)a->launch_type; /* 0 regular, 1 cooperative (single device) */
    k.graphNodeId = a->graph_node_id;
    k.graphId = a->graph_id;
    k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    q_push(&k, sizeof(k));
}

static void put_memcpy(const struct gtsim_activity *a)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)a->copy_kind;
    m.srcKind = (uint8_t)a->src_kind;
    m.dstKind = (uint8_t)a->dst_kind;
    m.flags = a->is_async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    m.bytes = a->bytes;
    m.start = sc_gpu_time(a->start_ns);
    m.end = sc_gpu_time(a->end_ns);
    m.deviceId = a->device;
    m.contextId = a->context_id;
    m.streamId = a->stream_id;
    m.correlationId = a->correlation_id;
    m.graphNodeId = a->graph_node_id;
    m.graphId = a->graph_id;
    m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    m.copyCount = 1;
    q_push(&m, sizeof(m));
}

static void put_memcpy_p2p(const struct gtsim_activity *a)
{
    CUpti_ActivityMemcpyPtoP4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    m.copyKind = (uint8_t)a->copy_kind;
    m.srcKind = (uint8_t)a->src_kind;
    m.dstKind = (uint8_t)a->dst_kind;
    m.flags = a->is_async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    m.bytes = a->bytes;
    m.start = sc_gpu_time(a->start_ns);
    m.end = sc_gpu_time(a->end_ns);
    m.deviceId = a->device;
    m.contextId = a->context_id;
    m.streamId = a->stream_id;
    /* The driver's log names one device and context per copy. */
    m.srcDeviceId = m.dstDeviceId = a->device;
    m.srcContextId = m.dstContextId = a->context_id;
    m.correlationId = a->correlation_id;
    m.graphNodeId = a->graph_node_id;
    m.graphId = a->graph_id;
    m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    q_push(&m, sizeof(m));
}

static void put_memset(const struct gtsim_activity *a)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof(m));
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = a->memset_value;
    m.bytes = a->bytes;
    m.start = sc_gpu_time(a->start_ns);
    m.end = sc_gpu_time(a->end_ns);
    m.deviceId = a->device;
    m.contextId = a->context_id;
    m.streamId = a->stream_id;
    m.correlationId = a->correlation_id;
    m.flags = a->is_async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    m.memoryKind = (uint16_t)a->dst_kind;
    m.graphNodeId = a->graph_node_id;
    m.graphId = a->graph_id;
    m.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    q_push(&m, sizeof(m));
}

static void convert(const struct gtsim_activity *a) /* under mu */
{
    uint64_t t = a->queued_ns;
    switch (a->kind) {
    case GTSIM_ACT_KERNEL:
        if (wanted(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, t, a->context))
            put_kernel(a, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        else if (wanted(CUPTI_ACTIVITY_KIND_KERNEL, t, a->context))
            put_kernel(a, CUPTI_ACTIVITY_KIND_KERNEL);
        break;
    case GTSIM_ACT_MEMCPY:
        if (a->copy_kind == GTSIM_COPY_PTOP) {
            if (wanted(CUPTI_ACTIVITY_KIND_MEMCPY2, t, a->context)) put_memcpy_p2p(a);
        } else if (wanted(CUPTI_ACTIVITY_KIND_MEMCPY, t, a->context)) {
            put_memcpy(a);
        }
        break;
    case GTSIM_ACT_MEMSET:
        if (wanted(CUPTI_ACTIVITY_KIND_MEMSET, t, a->context)) put_memset(a);
        break;
    default:
        break;
    }
}

/* Completed GPU work from the driver's log. Called under mu, but drops it around the driver
 * calls: the driver's own lock must never be taken while mu is held, or fork deadlocks (the
 * driver's atfork handler holds its lock while ours waits for mu, which a thread holding mu
 * would never release while it waits for the driver's lock). */
static int gpu_work_in_flight(void) { return sc_drv.pending && sc_drv.pending() > 0; }

/* Returns whether GPU work is still running after the drain. */
static int pull(void)
{
    struct gtsim_activity buf[128];
    const size_t cap = sizeof(buf) / sizeof(buf[0]);
    for (;;) {
        draining++;
        pthread_mutex_unlock(&mu);
        size_t n = sc_drv.drain(buf, cap);
        unsigned long long lost = 0;
        int in_flight = 0;
        if (n < cap) {
            lost = sc_drv.dropped();
            in_flight = gpu_work_in_flight();
        }
        pthread_mutex_lock(&mu);
        if (--draining == 0) pthread_cond_broadcast(&drained_cv);
        for (size_t i = 0; i < n; i++) convert(&buf[i]);
        dropped += lost; /* the driver log's own overflow */
        if (n < cap) return in_flight;
    }
}

/* ---- delivery ----------------------------------------------------------------------------------- */
static void note_holding(void) /* under mu */
{
    __atomic_store_n(&holding, have_cur || spare.n, __ATOMIC_RELEASE);
}

static void place(void) /* under mu: staging queue -> client buffers */
{
    while (qhead < qlen && have_cur) {
        uint8_t *r = q + qhead;
        uint32_t kind;
        memcpy(&kind, r, sizeof(kind));
        size_t n = align8(record_size(kind));
        if (cur.used + n > cur.size || (cur.maxrec && cur.nrec >= cur.maxrec)) {
            if (cur.used == 0) { /* this buffer cannot hold even this record */
                dropped++;
                qhead += n;
                qrecs--;
                continue;
            }
            if (list_push(&ready, cur)) break;
            have_cur = 0;
            break;
        }
        memcpy(cur.p + cur.used, r, n);
        cur.used += n;
        cur.nrec++;
        qhead += n;
        qrecs--;
    }
    if (qhead == qlen) qhead = qlen = qrecs = 0;
}

/* A buffer the client handed us, under mu. CUPTI zeroes it on the calling thread unless the client
 * set CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, saying it hands zeroed buffers; then the bytes
 * CUPTI does not write stay as they were. GTSIM_CUPTI_CHECK_ZEROED=1 holds the client to its word:
 * a buffer handed as zeroed with a byte set aborts the process (a fixture's assertion). */
static void handed(uint8_t *b, size_t size)
{
    if (!attr[CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER]) {
        memset(b, 0, size);
        return;
    }
    const char *e = getenv("GTSIM_CUPTI_CHECK_ZEROED");
    if (!e || strcmp(e, "1") != 0) return;
    /* by memcmp against a zero block: a byte loop over 2 MiB took long enough under
     * ThreadSanitizer to change what the timing cases saw */
    static const uint8_t zero[4096];
    for (size_t at = 0; at < size; at += sizeof(zero)) {
        size_t n = size - at < sizeof(zero) ? size - at : sizeof(zero);
        if (memcmp(b + at, zero, n) == 0) continue;
        size_t i = at;
        while (!b[i]) i++;
        fprintf(stderr, "gtsim-cupti: a buffer handed as zeroed (%zu bytes at %p) holds 0x%02x "
                        "at offset %zu\n", size, (void *)b, b[i], i);
        abort();
    }
}

static void deliver(int mode)
{
    struct cbuf_list out = {0};
    pthread_mutex_lock(&mu);
    if (!req_cb || !done_cb) {
        pthread_mutex_unlock(&mu);
        return;
    }
    sc_clock_refine();
    int in_flight = pull();
    while (mode != D_WORKER && draining > 0) pthread_cond_wait(&drained_cv, &mu);
    for (;;) {
        place();
        if (qhead == qlen) break;
        if (spare.n) {
            cur = spare.v[--spare.n];
            have_cur = 1;
            continue;
        }
        CUpti_BuffersCallbackRequestFunc req = req_cb;
        uint8_t *b = NULL;
        size_t size = 0, maxrec = 0;
        pthread_mutex_unlock(&mu);
        req(&b, &size, &maxrec);
        pthread_mutex_lock(&mu);
        if (!b || !size) { /* declined: what needed the buffer is lost */
            q_drop_all();
            break;
        }
        handed(b, size);
        struct cbuf nb = {b, size, 0, maxrec, 0};
        if (!have_cur) {
            cur = nb;
            have_cur = 1;
        } else if (list_push(&spare, nb)) {
            list_push(&ready, nb); /* out of memory: hand it straight back, empty */
        }
    }
    out = ready;
    memset(&ready, 0, sizeof(ready));
    if (mode != D_WORKER && have_cur && cur.used &&
        (mode == D_FORCED || !in_flight)) {
        if (list_push(&out, cur) == 0) have_cur = 0;
    }
    /* A forced flush hands back every buffer, empty ones too (validSize 0): the client gets all
     * its memory back, and the next record asks for a new buffer. */
    if (mode == D_FORCED && have_cur && list_push(&out, cur) == 0) have_cur = 0;
    while (mode == D_FORCED && spare.n && list_push(&out, spare.v[spare.n - 1]) == 0)
        spare.n--;
    note_holding();
    CUpti_BuffersCallbackCompleteFunc done = done_cb;
    delivering++;
    pthread_mutex_unlock(&mu);
    for (size_t i = 0; i < out.n; i++) done(NULL, 0, out.v[i].p, out.v[i].size, out.v[i].used);
    free(out.v);
    pthread_mutex_lock(&mu);
    if (--delivering == 0) pthread_cond_broadcast(&delivered_cv);
    while (mode != D_WORKER && delivering > 0) pthread_cond_wait(&delivered_cv, &mu);
    pthread_mutex_unlock(&mu);
}

/* ---- the delivery thread ------------------------------------------------------------------------ */
static pthread_mutex_t wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wcond;
static pthread_t worker;
static int worker_running, worker_stop, worker_kick;
static uint64_t period_ns;

static uint64_t default_period_ns(void)
{
    const char *s = getenv("GTSIM_CUPTI_PERIOD_MS");
    long ms = s && *s ? strtol(s, NULL, 10) : 500;
    return (uint64_t)(ms > 0 ? ms : 500) * 1000000ull;
}

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wmu);
    while (!worker_stop) {
        uint64_t deadline = sc_mono_ns() + period_ns;
        struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
        while (!worker_stop && !worker_kick && sc_mono_ns() < deadline)
            if (pthread_cond_timedwait(&wcond, &wmu, &ts) == ETIMEDOUT) break;
        worker_kick = 0;
        if (worker_stop) break;
        pthread_mutex_unlock(&wmu);
        deliver(D_WORKER);
        pthread_mutex_lock(&wmu);
    }
    pthread_mutex_unlock(&wmu);
    return NULL;
}

static void worker_start(void)
{
    pthread_mutex_lock(&wmu);
    if (!worker_running) {
        worker_stop = 0;
        if (pthread_create(&worker, NULL, worker_main, NULL) == 0) worker_running = 1;
    }
    pthread_mutex_unlock(&wmu);
}

static void worker_end(void)
{
    pthread_mutex_lock(&wmu);
    int running = worker_running;
    worker_stop = 1;
    worker_running = 0;
    pthread_cond_broadcast(&wcond);
    pthread_mutex_unlock(&wmu);
    if (!running) return;
    if (pthread_equal(worker, pthread_self()))
        pthread_detach(worker); /* cuptiFinalize from a completion callback on the worker */
    else
        pthread_join(worker, NULL);
}

__attribute__((destructor)) static void sc_unload(void)
{
    /* At exit the worker must not start another delivery into a program being torn down. Wait a
     * little for it, but never hang the exit on a client callback that does not return. */
    pthread_mutex_lock(&wmu);
    int running = worker_running;
    worker_stop = 1;
    worker_running = 0;
    pthread_cond_broadcast(&wcond);
    pthread_mutex_unlock(&wmu);
    if (running && !pthread_equal(worker, pthread_self())) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 2;
        if (pthread_timedjoin_np(worker, NULL, &ts) != 0) pthread_detach(worker);
    }
}

/* fork: the child has no delivery thread; it gets a new one with the next API record. */
static _Atomic int worker_restart;

static void atfork_prepare(void)
{
    pthread_mutex_lock(&mu);
    pthread_mutex_lock(&wmu);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&wmu);
    pthread_mutex_unlock(&mu);
}

/* The process id of the API records, read once: a getpid syscall per record was 2-3% of the CPU
 * of a traced PyTorch launch loop (bench/torch_overhead.sh). The child of a fork reads its own. */
static _Atomic uint32_t api_pid;

static uint32_t record_pid(void)
{
    uint32_t p = atomic_load_explicit(&api_pid, memory_order_relaxed);
    if (!p) atomic_store_explicit(&api_pid, p = (uint32_t)getpid(), memory_order_relaxed);
    return p;
}

static void atfork_child(void)
{
    atomic_store(&api_pid, 0);
    if (worker_running) {
        worker_running = 0;
        atomic_store(&worker_restart, 1);
    }
    draining = 0; /* the threads that were draining or delivering do not exist in the child */
    delivering = 0;
    pthread_mutex_unlock(&wmu);
    pthread_mutex_unlock(&mu);
}

/* ---- attach, finalize --------------------------------------------------------------------------- */
static void reset_locked(void)
{
    req_cb = NULL;
    done_cb = NULL;
    for (int k = 0; k < NKINDS; k++) set_flag(&kind_on[k], 0);
    __atomic_store_n(&kinds_on, 0, __ATOMIC_RELEASE);
    memset(hist, 0, sizeof(hist));
    nctxov = 0;
    memset(ctxov, 0, sizeof(ctxov));
    for (unsigned i = 0; i < sc_driver_cbid_size; i++) set_flag(&api_on[i], 0);
    __atomic_store_n(&api_any, 0, __ATOMIC_RELEASE);
    memcpy(attr, attr_default, sizeof(attr));
    latency_ts = 0;
    qhead = qlen = qrecs = 0;
    dropped = 0;
}

void sc_activity_attach(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wcond, &ca);
    pthread_condattr_destroy(&ca);
    period_ns = default_period_ns();
    api_on = calloc(sc_driver_cbid_size, 1);
    if (!api_on) abort();
    pthread_mutex_lock(&mu);
    reset_locked();
    pthread_mutex_unlock(&mu);
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    sc_drv.dropped(); /* overflow from before we were here is not ours */
    sc_drv.set_api_callback_ex(sc_api_callback, NULL);
}

void sc_activity_finalize(void)
{
    worker_end();
    deliver(D_FORCED);
    /* Hand back every buffer we still hold, empty ones included, so the client can free them. */
    pthread_mutex_lock(&mu);
    struct cbuf_list out = ready;
    memset(&ready, 0, sizeof(ready));
    if (have_cur) list_push(&out, cur);
    have_cur = 0;
    for (size_t i = 0; i < spare.n; i++) list_push(&out, spare.v[i]);
    spare.n = 0;
    note_holding();
    CUpti_BuffersCallbackCompleteFunc done = done_cb;
    reset_locked();
    pthread_mutex_lock(&wmu);
    period_ns = default_period_ns();
    pthread_mutex_unlock(&wmu);
    pthread_mutex_unlock(&mu);
    for (size_t i = 0; done && i < out.n; i++) done(NULL, 0, out.v[i].p, out.v[i].size, out.v[i].used);
    free(out.v);
}

/* ---- API records and external correlation ------------------------------------------------------- */
struct frame {
    unsigned corr, cbid;
    uint64_t start;
};
#define MAX_DEPTH 64
static __thread struct frame t_frames[MAX_DEPTH];
static __thread int t_depth;

struct xstack {
    uint64_t *v;
    size_t n, cap;
};
static __thread struct xstack t_x[NXKINDS];
static pthread_key_t xkey;
static pthread_once_t xkey_once = PTHREAD_ONCE_INIT;

static void xstack_free(void *p)
{
    struct xstack *x = p;
    for (int k = 0; k < NXKINDS; k++) {
        free(x[k].v);
        x[k].v = NULL;
        x[k].n = x[k].cap = 0;
    }
}
static void xkey_init(void) { pthread_key_create(&xkey, xstack_free); }

/* CUPTI asks for a buffer when it has something to store, on the thread that makes the record:
 * while a kind is enabled and it holds no buffer (none yet, or a flush took the last), the next
 * traced driver call requests one, before any delivery. Clients depend on it: Kineto flushes at
 * stop only if it has handed out a buffer (CuptiActivityApi::activityBuffers), so a library that
 * asked only at delivery time gave torch.profiler an empty GPU trace. A declined request loses
 * nothing yet (records are still staged): the next delivery asks again. */
static void request_if_empty(void)
{
    if (__atomic_load_n(&holding, __ATOMIC_ACQUIRE) ||
        !__atomic_load_n(&kinds_on, __ATOMIC_ACQUIRE))
        return;
    static int requesting; /* under mu: one request at a time */
    pthread_mutex_lock(&mu);
    CUpti_BuffersCallbackRequestFunc req = req_cb;
    if (!req || !done_cb || have_cur || spare.n || requesting) {
        pthread_mutex_unlock(&mu);
        return;
    }
    requesting = 1;
    uint8_t *b = NULL;
    size_t size = 0, maxrec = 0;
    pthread_mutex_unlock(&mu);
    req(&b, &size, &maxrec);
    pthread_mutex_lock(&mu);
    requesting = 0;
    if (b && size) {
        handed(b, size);
        struct cbuf nb = {b, size, 0, maxrec, 0};
        if (!have_cur) {
            cur = nb;
            have_cur = 1;
        } else if (list_push(&spare, nb)) {
            list_push(&ready, nb); /* out of memory: hand it back, empty, at the next delivery */
        }
    }
    note_holding();
    pthread_mutex_unlock(&mu);
}

static void api_record(const struct gtsim_api_info *info);

void sc_api_callback(const struct gtsim_api_info *info, void *arg)
{
    (void)arg;
    api_record(info);
    if (!info->enter && !sc_internal) request_if_empty();
}

static void api_record(const struct gtsim_api_info *info)
{
    if (sc_internal) return;
    if (info->enter) {
        if (t_depth < MAX_DEPTH) {
            struct frame *f = &t_frames[t_depth];
            f->corr = info->corr_id;
            f->cbid = 0;
            f->start = 0;
            /* only a call whose record is enabled is timed (cuptiActivityEnableDriverApi
             * selects the calls so that the others cost nothing more) */
            if (__atomic_load_n(&api_any, __ATOMIC_ACQUIRE)) {
                unsigned cbid = sc_driver_cbid(info->api, info->export_index);
                if (cbid && cbid < sc_driver_cbid_size && get_flag(&api_on[cbid])) {
                    f->cbid = cbid;
                    f->start = sc_cpu_timestamp();
                }
            }
        }
        t_depth++;
        return;
    }
    if (t_depth == 0) return; /* entered before we were installed */
    if (--t_depth >= MAX_DEPTH) return;
    struct frame *f = &t_frames[t_depth];
    if (f->corr != info->corr_id || !f->cbid || f->cbid >= sc_driver_cbid_size ||
        !get_flag(&api_on[f->cbid]))
        return;
    CUpti_ActivityAPI api;
    memset(&api, 0, sizeof(api));
    api.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    api.cbid = f->cbid;
    api.start = f->start;
    api.end = sc_cpu_timestamp();
    api.processId = record_pid();
    api.threadId = sc_thread_id();
    api.correlationId = info->corr_id;
    api.returnValue = (uint32_t)info->result;
    CUpti_ActivityExternalCorrelation ext[NXKINDS];
    int next = 0;
    if (get_flag(&kind_on[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])) {
        for (int k = 0; k < NXKINDS; k++) {
            if (!t_x[k].n) continue;
            memset(&ext[next], 0, sizeof(ext[next]));
            ext[next].kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            ext[next].externalKind = (CUpti_ExternalCorrelationKind)k;
            ext[next].externalId = t_x[k].v[t_x[k].n - 1];
            ext[next].correlationId = info->corr_id;
            next++;
        }
    }
    pthread_mutex_lock(&mu);
    for (int i = 0; i < next; i++) q_push(&ext[i], sizeof(ext[i]));
    q_push(&api, sizeof(api));
    pthread_mutex_unlock(&mu);
    if (atomic_load_explicit(&worker_restart, memory_order_relaxed) && atomic_exchange(&worker_restart, 0))
        worker_start();
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    SC_ENTER_DRIVER();
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= NXKINDS)
        R(CUPTI_ERROR_INVALID_PARAMETER);
    struct xstack *x = &t_x[kind];
    if (x->n == x->cap) {
        if (!x->v) {
            pthread_once(&xkey_once, xkey_init);
            pthread_setspecific(xkey, t_x);
        }
        size_t cap = x->cap ? x->cap * 2 : 16;
        uint64_t *v = realloc(x->v, cap * sizeof(*v));
        if (!v) R(CUPTI_ERROR_OUT_OF_MEMORY);
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = id;
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
    SC_ENTER_DRIVER();
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= NXKINDS)
        R(CUPTI_ERROR_INVALID_PARAMETER);
    struct xstack *x = &t_x[kind];
    if (!x->n) R(CUPTI_ERROR_QUEUE_EMPTY);
    uint64_t id = x->v[--x->n];
    if (lastId) *lastId = id;
    R(CUPTI_SUCCESS);
}

/* ---- kinds -------------------------------------------------------------------------------------- */
static CUptiResult check_kind(CUpti_ActivityKind kind)
{
    switch ((int)kind) {
    case CUPTI_ACTIVITY_KIND_SOURCE_LOCATOR:
    case CUPTI_ACTIVITY_KIND_GLOBAL_ACCESS:
    case CUPTI_ACTIVITY_KIND_BRANCH:
    case CUPTI_ACTIVITY_KIND_INSTRUCTION_EXECUTION:
    case CUPTI_ACTIVITY_KIND_SHARED_ACCESS:
    case CUPTI_ACTIVITY_KIND_PC_SAMPLING:
    case CUPTI_ACTIVITY_KIND_PC_SAMPLING_RECORD_INFO:
    case CUPTI_ACTIVITY_KIND_INSTRUCTION_CORRELATION:
        return CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED;
    case CUPTI_ACTIVITY_KIND_EVENT:
    case CUPTI_ACTIVITY_KIND_METRIC:
    case CUPTI_ACTIVITY_KIND_EVENT_INSTANCE:
    case CUPTI_ACTIVITY_KIND_METRIC_INSTANCE:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_EVENT:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_EVENT_INSTANCE:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_METRIC:
    case CUPTI_ACTIVITY_KIND_INSTANTANEOUS_METRIC_INSTANCE:
        return CUPTI_ERROR_INVALID_KIND; /* "unsupported" in 13.0 */
    default:
        return (int)kind > CUPTI_ACTIVITY_KIND_INVALID && (int)kind < NKINDS ? CUPTI_SUCCESS
                                                                           : CUPTI_ERROR_INVALID_KIND;
    }
}

static void set_all_driver_apis(int on) /* under mu */
{
    for (unsigned i = 1; i < sc_driver_cbid_size; i++) set_flag(&api_on[i], on);
    __atomic_store_n(&api_any, on, __ATOMIC_RELEASE);
}

static void recount_api_any(void) /* under mu */
{
    int any = 0;
    for (unsigned i = 1; i < sc_driver_cbid_size && !any; i++) any = get_flag(&api_on[i]);
    __atomic_store_n(&api_any, any, __ATOMIC_RELEASE);
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    SC_ENTER_DRIVER();
    CUptiResult r = check_kind(kind);
    if (r) R(r);
    pthread_mutex_lock(&mu);
    hist_on((int)kind, sc_mono_ns());
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) set_all_driver_apis(1); /* overrides per-API settings */
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
    SC_ENTER_DRIVER();
    /* No DEVICE/CONTEXT/STREAM records are modelled, so there is nothing to dump. */
    CUptiResult r = check_kind(kind);
    if (r) R(r);
    pthread_mutex_lock(&mu);
    hist_on((int)kind, sc_mono_ns());
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) set_all_driver_apis(1);
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
    SC_ENTER_DRIVER();
    CUptiResult r = check_kind(kind);
    if (r) R(r);
    pthread_mutex_lock(&mu);
    hist_off((int)kind, sc_mono_ns());
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) set_all_driver_apis(0);
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

static CUptiResult context_setting(CUcontext ctx, CUpti_ActivityKind kind, int st)
{
    CUptiResult r = check_kind(kind);
    if (r) return r;
    if (!ctx) return CUPTI_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&mu);
    int i;
    for (i = 0; i < nctxov && ctxov[i].ctx != ctx; i++)
        ;
    if (i == nctxov) {
        if (nctxov == MAX_CTXOV) {
            pthread_mutex_unlock(&mu);
            return CUPTI_ERROR_MAX_LIMIT_REACHED;
        }
        memset(&ctxov[i], 0, sizeof(ctxov[i]));
        ctxov[i].ctx = ctx;
        nctxov++;
    }
    ctxov[i].st[kind] = (int8_t)st;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind)
{
    SC_ENTER_DRIVER();
    R(context_setting(context, kind, 1));
}

CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind)
{
    SC_ENTER_DRIVER();
    R(context_setting(context, kind, -1));
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    SC_ENTER_DRIVER();
    if (cbid == 0 || cbid >= sc_driver_cbid_size) R(CUPTI_ERROR_INVALID_PARAMETER);
    pthread_mutex_lock(&mu);
    set_flag(&api_on[cbid], enable);
    recount_api_any();
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    SC_ENTER_DRIVER();
    (void)enable; /* no runtime is simulated: accepted, nothing recorded */
    if (cbid == 0 || cbid >= sc_runtime_cbid_size) R(CUPTI_ERROR_INVALID_PARAMETER);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
    SC_ENTER_DRIVER();
    pthread_mutex_lock(&mu);
    latency_ts = enable != 0;
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

/* Switches that change nothing in the simulation: accepted. */
#define ACCEPT_U8(fn)                                                                              \
    CUptiResult CUPTIAPI fn(uint8_t enable)                                                        \
    {                                                                                              \
        SC_ENTER_DRIVER();                                                                         \
        (void)enable;                                                                              \
        R(CUPTI_SUCCESS);                                                                          \
    }
ACCEPT_U8(cuptiActivityEnableLaunchAttributes)
ACCEPT_U8(cuptiActivityEnableDeviceGraph)
ACCEPT_U8(cuptiActivityEnableAllocationSource)
ACCEPT_U8(cuptiActivityEnableAllSyncRecords)
ACCEPT_U8(cuptiActivityEnableCudaEventDeviceTimestamps)

CUptiResult CUPTIAPI cuptiActivityEnableHWTrace(uint8_t enable)
{
    SC_ENTER_DRIVER();
    (void)enable;
    R(CUPTI_ERROR_NOT_SUPPORTED); /* a Blackwell-only feature */
}

CUptiResult CUPTIAPI cuptiActivityConfigurePCSampling(CUcontext ctx, CUpti_ActivityPCSamplingConfig *config)
{
    SC_ENTER_DRIVER();
    (void)ctx, (void)config;
    R(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
}

/* ---- buffers, flushing -------------------------------------------------------------------------- */
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    SC_ENTER_DRIVER();
    if (!funcBufferRequested || !funcBufferCompleted) R(CUPTI_ERROR_INVALID_PARAMETER);
    pthread_mutex_lock(&mu);
    req_cb = funcBufferRequested;
    done_cb = funcBufferCompleted;
    pthread_mutex_unlock(&mu);
    worker_start();
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    SC_ENTER_DRIVER();
    pthread_mutex_lock(&mu);
    int registered = req_cb && done_cb;
    pthread_mutex_unlock(&mu);
    if (!registered) R(CUPTI_ERROR_INVALID_OPERATION);
    if (atomic_load_explicit(&worker_restart, memory_order_relaxed) && atomic_exchange(&worker_restart, 0))
        worker_start();
    deliver(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? D_FORCED : D_FLUSH);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
    SC_ENTER_DRIVER();
    (void)context, (void)streamId; /* deprecated: both ignored */
    pthread_mutex_lock(&mu);
    int registered = req_cb && done_cb;
    pthread_mutex_unlock(&mu);
    if (!registered) R(CUPTI_ERROR_INVALID_OPERATION);
    deliver(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? D_FORCED : D_FLUSH);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time)
{
    SC_ENTER_DRIVER();
    pthread_mutex_lock(&wmu);
    period_ns = time ? (uint64_t)time * 1000000ull : default_period_ns();
    worker_kick = 1;
    pthread_cond_broadcast(&wcond);
    pthread_mutex_unlock(&wmu);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped_out)
{
    SC_ENTER_DRIVER();
    (void)streamId;
    if (!dropped_out) R(CUPTI_ERROR_INVALID_PARAMETER);
    if (context) { /* one global queue here: per-context queues are always empty */
        *dropped_out = 0;
        R(CUPTI_SUCCESS);
    }
    unsigned long long lost = sc_drv.dropped(); /* never call the driver under mu (see pull) */
    pthread_mutex_lock(&mu);
    dropped += lost;
    *dropped_out = (size_t)dropped;
    dropped = 0;
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    SC_ENTER();
    if (!buffer || !record) R(CUPTI_ERROR_INVALID_PARAMETER);
    size_t off = 0;
    if (*record) {
        const uint8_t *prev = (const uint8_t *)*record;
        if (prev < buffer || prev >= buffer + validBufferSizeBytes) R(CUPTI_ERROR_INVALID_PARAMETER);
        size_t n = record_size((uint32_t)(*record)->kind);
        if (!n) R(CUPTI_ERROR_INVALID_KIND);
        off = (size_t)(prev - buffer) + align8(n);
    }
    if (off >= validBufferSizeBytes) R(CUPTI_ERROR_MAX_LIMIT_REACHED);
    if (validBufferSizeBytes - off < sizeof(uint32_t)) R(CUPTI_ERROR_INVALID_KIND);
    uint32_t kind;
    memcpy(&kind, buffer + off, sizeof(kind));
    size_t n = record_size(kind);
    if (!n || n > validBufferSizeBytes - off) R(CUPTI_ERROR_INVALID_KIND);
    *record = (CUpti_Activity *)(buffer + off);
    R(CUPTI_SUCCESS);
}

/* ---- attributes --------------------------------------------------------------------------------- */
static size_t attr_size(CUpti_ActivityAttribute a)
{
    switch (a) {
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER: return sizeof(uint8_t);
    default: return sizeof(size_t);
    }
}

static CUptiResult check_attr(CUpti_ActivityAttribute a, size_t *valueSize, void *value)
{
    if (!valueSize || !value || (unsigned)a >= NATTRS) return CUPTI_ERROR_INVALID_PARAMETER;
    if (a == CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_SIZE ||
        a == CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_POOL_LIMIT ||
        a == CUPTI_ACTIVITY_ATTR_PROFILING_SEMAPHORE_PRE_ALLOCATE_VALUE)
        return CUPTI_ERROR_NOT_SUPPORTED; /* "not supported starting with CUDA 12.3" */
    if (*valueSize < attr_size(a)) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attribute, size_t *valueSize, void *value)
{
    SC_ENTER_DRIVER();
    CUptiResult r = check_attr(attribute, valueSize, value);
    if (r) R(r);
    pthread_mutex_lock(&mu);
    size_t v = attr[attribute];
    pthread_mutex_unlock(&mu);
    if (attr_size(attribute) == sizeof(uint8_t)) {
        uint8_t b = (uint8_t)v;
        memcpy(value, &b, 1);
    } else {
        memcpy(value, &v, sizeof(v));
    }
    *valueSize = attr_size(attribute);
    R(CUPTI_SUCCESS);
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attribute, size_t *valueSize, void *value)
{
    SC_ENTER_DRIVER();
    CUptiResult r = check_attr(attribute, valueSize, value);
    if (r) R(r);
    size_t v;
    if (attr_size(attribute) == sizeof(uint8_t)) {
        uint8_t b;
        memcpy(&b, value, 1);
        v = b;
    } else {
        memcpy(&v, value, sizeof(v));
    }
    pthread_mutex_lock(&mu);
    if ((attribute == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE &&
         v >= attr[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT]) ||
        (attribute == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE && v == 0)) {
        pthread_mutex_unlock(&mu);
        R(CUPTI_ERROR_INVALID_PARAMETER);
    }
    attr[attribute] = v;
    pthread_mutex_unlock(&mu);
    R(CUPTI_SUCCESS);
}
