/* Streams, events, host functions, the simulated GPU clock and the activity log.
 *
 * Timing model: the GPU clock is CLOCK_MONOTONIC. Work enqueued on a stream at host time t starts
 * at max(t + GTSIM_LAUNCH_LATENCY_NS, the stream's tail, dependencies) and ends duration later;
 * the stream's tail becomes its end. The legacy default stream waits for every blocking stream of
 * its context and blocking streams (user streams without CU_STREAM_NON_BLOCKING and per-thread
 * default streams) wait for the legacy stream. Nothing runs in the background except host
 * functions: synchronizing calls sleep until the computed end time. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t g_stream_next;

struct sim_event {
    struct sim_ctx *ctx;
    unsigned flags;
    int recorded;
    uint64_t ts;
    uint32_t ctx_id, stream_id; /* stream_id 0: any stream of the context (legacy stream) */
    uint64_t hostfn_seq;
};

/* ---- streams -------------------------------------------------------------------------------- */
struct sim_stream *stream_new(struct sim_ctx *c, int kind, unsigned flags, int prio)
{
    struct sim_stream *s = calloc(1, sizeof *s);
    if (!s)
        abort();
    s->ctx = c;
    s->id = ++g_stream_next;
    s->flags = flags;
    s->priority = prio;
    s->kind = kind;
    s->alive = 1;
    if (kind == STREAM_PTDS)
        s->owner = sim_thread();
    if (kind != STREAM_LEGACY) {
        s->next = c->streams;
        c->streams = s;
    }
    if (kind == STREAM_USER)
        handle_add(s, OBJ_STREAM, s);
    return s;
}

void stream_free(struct sim_stream *s)
{
    if (s->kind != STREAM_LEGACY)
        for (struct sim_stream **pp = &s->ctx->streams; *pp; pp = &(*pp)->next)
            if (*pp == s) {
                *pp = s->next;
                break;
            }
    if (s->kind == STREAM_USER)
        handle_del(s);
    free(s);
}

static struct sim_stream *ptds_of(struct sim_ctx *c)
{
    unsigned me = sim_thread();
    for (struct sim_stream *s = c->streams; s; s = s->next)
        if (s->kind == STREAM_PTDS && s->owner == me)
            return s;
    return stream_new(c, STREAM_PTDS, 0, 0);
}

CUresult stream_resolve(CUstream h, int ptsz, struct sim_stream **out)
{
    struct sim_ctx *c;
    CUresult rc;
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        if ((rc = ctx_current(&c)))
            return rc;
        int per_thread = h == CU_STREAM_PER_THREAD || (h == NULL && ptsz);
        *out = per_thread ? ptds_of(c) : c->legacy;
        return CUDA_SUCCESS;
    }
    struct sim_stream *s = handle_get(h, OBJ_STREAM);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!s->ctx->alive)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = s;
    return CUDA_SUCCESS;
}

static int blocking(const struct sim_stream *s) { return !(s->flags & CU_STREAM_NON_BLOCKING); }

static uint64_t stream_ready(const struct sim_stream *s) /* earliest time new work could start */
{
    uint64_t t = s->tail;
    const struct sim_ctx *c = s->ctx;
    if (s->kind == STREAM_LEGACY) {
        for (const struct sim_stream *x = c->streams; x; x = x->next)
            if (blocking(x) && x->tail > t)
                t = x->tail;
    } else if (blocking(s) && c->legacy && c->legacy->tail > t)
        t = c->legacy->tail;
    return t;
}

uint64_t stream_schedule(struct sim_stream *s, uint64_t now, uint64_t dur, uint64_t *start)
{
    uint64_t st = now + g_cfg.launch_latency_ns, r = stream_ready(s);
    if (r > st)
        st = r;
    s->tail = st + dur;
    *start = st;
    return st + dur;
}

/* ---- the SM clock ---------------------------------------------------------------------------- */
static unsigned (*g_sm_clock)(unsigned long long);

void gtsim_set_sm_clock(unsigned (*permille)(unsigned long long t_ns))
{
    __atomic_store_n(&g_sm_clock, permille, __ATOMIC_RELEASE);
}

/* A kernel's duration when enqueued now on s: its duration at the maximum clock, stretched by the
 * SM clock at its start (the clock is sampled once: a kernel never spans a clock change here). */
static uint64_t kernel_duration(struct sim_stream *s, uint64_t now, uint64_t dur)
{
    unsigned (*clock)(unsigned long long) = __atomic_load_n(&g_sm_clock, __ATOMIC_ACQUIRE);
    if (!clock) return dur;
    uint64_t st = now + g_cfg.launch_latency_ns, r = stream_ready(s);
    unsigned p = clock(r > st ? r : st);
    return p && p < 1000 ? dur * 1000 / p : dur;
}

/* ---- activity log ---------------------------------------------------------------------------- */
static struct gtsim_activity *g_ring;
static size_t g_ring_head, g_ring_n;
static unsigned long long g_dropped;

uint64_t work_enqueue(struct sim_stream *s, CUstream as_passed, const struct sim_work *w)
{
    if (!g_ring && g_cfg.activity_cap) { /* before the work is timed: no host time inside it */
        g_ring = calloc(g_cfg.activity_cap, sizeof *g_ring);
        if (!g_ring)
            abort();
    }
    uint64_t now = sim_now(), start;
    uint64_t dur = w->kind == GTSIM_ACT_KERNEL ? kernel_duration(s, now, w->dur) : w->dur;
    uint64_t end = stream_schedule(s, now, dur, &start);
    if (g_ring_n == g_cfg.activity_cap) {
        g_dropped++;
        return end;
    }
    struct gtsim_activity *a = &g_ring[(g_ring_head + g_ring_n++) % g_cfg.activity_cap];
    memset(a, 0, sizeof *a);
    a->kind = (uint32_t)w->kind;
    a->correlation_id = sim_corr();
    a->queued_ns = now;
    a->start_ns = start;
    a->end_ns = end;
    a->device = (uint32_t)s->ctx->dev;
    a->context_id = s->ctx->id;
    a->stream_id = s->id;
    a->launch_type = (uint32_t)w->launch_type;
    a->name = w->name;
    a->api = sim_api();
    a->bytes = w->bytes;
    a->copy_kind = (uint32_t)w->copy_kind;
    a->src_kind = (uint32_t)w->src_kind;
    a->dst_kind = (uint32_t)w->dst_kind;
    a->memset_value = w->memset_value;
    a->is_async = (uint32_t)w->is_async;
    memcpy(a->grid, w->grid, sizeof a->grid);
    memcpy(a->block, w->block, sizeof a->block);
    a->shared_mem_bytes = w->smem;
    a->graph_id = w->graph_id;
    a->graph_exec_id = w->graph_exec_id;
    a->graph_node_id = w->node_id;
    a->context = s->ctx;
    a->stream = as_passed;
    /* The ground truth of the GPU timeline, for tests that check an analysis against it. */
    sim_log("work kind=%u start=%llu end=%llu device=%u stream=%u corr=%u graph=%u name=%s api=%s",
            a->kind, (unsigned long long)start, (unsigned long long)end, a->device, a->stream_id,
            a->correlation_id, a->graph_id, a->name ? a->name : "-", a->api ? a->api : "-");
    return end;
}

size_t gtsim_activity_drain(struct gtsim_activity *out, size_t max)
{
    sim_init_once();
    pthread_mutex_lock(&g_lock);
    uint64_t now = sim_now();
    size_t got = 0, keep = 0, cap = g_cfg.activity_cap;
    /* Completed records at the front (one stream's work completes in order) leave by moving the
     * head. Copying the log down instead cost a traced launch loop 0.6 us per launch: its
     * consumer drains a backlog of thousands, 128 per call. */
    while (g_ring_n && got < max && g_ring[g_ring_head].end_ns <= now) {
        out[got++] = g_ring[g_ring_head];
        g_ring_head = (g_ring_head + 1) % cap;
        g_ring_n--;
    }
    for (size_t i = 0; i < g_ring_n; i++) {
        struct gtsim_activity *a = &g_ring[(g_ring_head + i) % cap];
        if (a->end_ns <= now && got < max)
            out[got++] = *a;
        else {
            if (keep == i && got == max) { /* nothing taken behind the front: all stays */
                keep = g_ring_n;
                break;
            }
            if (keep != i)
                g_ring[(g_ring_head + keep) % cap] = *a;
            keep++;
        }
    }
    g_ring_n = keep;
    if (!keep)
        g_ring_head = 0;
    pthread_mutex_unlock(&g_lock);
    return got;
}

unsigned long long gtsim_activity_dropped(void)
{
    pthread_mutex_lock(&g_lock);
    unsigned long long d = g_dropped;
    g_dropped = 0;
    pthread_mutex_unlock(&g_lock);
    return d;
}

size_t gtsim_activity_pending(void)
{
    pthread_mutex_lock(&g_lock);
    size_t n = g_ring_n;
    pthread_mutex_unlock(&g_lock);
    return n;
}

uint64_t copy_duration(uint64_t bytes)
{
    return (uint64_t)((double)bytes * 1e9 / g_cfg.copy_bps);
}

/* ---- host functions: run on a driver thread when their stream reaches them ---------------------- */
struct hostfn {
    uint64_t time, seq;
    uint32_t ctx_id, stream_id;
    int callback; /* 0: CUhostFn(arg), 1: CUstreamCallback(stream, status, arg) */
    void *fn, *arg;
    CUstream hs;
};
static struct hostfn *g_heap;
static size_t g_heap_n, g_heap_cap;
static struct hostfn g_running;
static int g_running_active;
static uint64_t g_hostfn_seq;
static pthread_cond_t g_worker_cond;
static int g_worker_started;
static pthread_once_t g_worker_once = PTHREAD_ONCE_INIT;

static int hf_less(const struct hostfn *a, const struct hostfn *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_push(struct hostfn e)
{
    if (g_heap_n == g_heap_cap) {
        g_heap_cap = g_heap_cap ? g_heap_cap * 2 : 16;
        g_heap = realloc(g_heap, g_heap_cap * sizeof *g_heap);
        if (!g_heap)
            abort();
    }
    size_t i = g_heap_n++;
    while (i && hf_less(&e, &g_heap[(i - 1) / 2])) {
        g_heap[i] = g_heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    g_heap[i] = e;
}

static struct hostfn heap_pop(void)
{
    struct hostfn top = g_heap[0], last = g_heap[--g_heap_n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct hostfn *best = &last;
        if (l < g_heap_n && hf_less(&g_heap[l], best))
            m = l, best = &g_heap[l];
        if (r < g_heap_n && hf_less(&g_heap[r], best))
            m = r;
        if (m == i)
            break;
        g_heap[i] = g_heap[m];
        i = m;
    }
    if (g_heap_n)
        g_heap[i] = last;
    return top;
}

int hostfn_pending(uint32_t ctx_id, uint32_t stream_id, uint64_t max_seq)
{
    if (g_running_active && g_running.ctx_id == ctx_id && (!stream_id || g_running.stream_id == stream_id) &&
        g_running.seq <= max_seq)
        return 1;
    for (size_t i = 0; i < g_heap_n; i++)
        if (g_heap[i].ctx_id == ctx_id && (!stream_id || g_heap[i].stream_id == stream_id) && g_heap[i].seq <= max_seq)
            return 1;
    return 0;
}

uint64_t hostfn_seq_now(void) { return g_hostfn_seq; }

static void worker_cond_init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g_worker_cond, &ca);
    pthread_condattr_destroy(&ca);
}

static void *worker_main(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        if (!g_heap_n) {
            pthread_cond_wait(&g_worker_cond, &g_lock);
            continue;
        }
        uint64_t now = sim_now();
        if (g_heap[0].time > now) {
            struct timespec ts = {.tv_sec = (time_t)(g_heap[0].time / 1000000000ull),
                                  .tv_nsec = (long)(g_heap[0].time % 1000000000ull)};
            pthread_cond_timedwait(&g_worker_cond, &g_lock, &ts);
            continue;
        }
        g_running = heap_pop();
        g_running_active = 1;
        pthread_mutex_unlock(&g_lock);
        if (g_running.callback)
            ((CUstreamCallback)g_running.fn)(g_running.hs, CUDA_SUCCESS, g_running.arg);
        else
            ((CUhostFn)g_running.fn)(g_running.arg);
        pthread_mutex_lock(&g_lock);
        g_running_active = 0;
        pthread_cond_broadcast(&g_cond);
    }
    return NULL;
}

static void ensure_worker(void) /* under g_lock */
{
    pthread_once(&g_worker_once, worker_cond_init);
    if (g_worker_started)
        return;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, worker_main, NULL) == 0)
        g_worker_started = 1;
    pthread_attr_destroy(&a);
}

void sim_stream_atfork_child(void)
{
    g_worker_started = 0; /* the worker thread does not exist in the child */
    g_running_active = 0;
    if (pthread_once(&g_worker_once, worker_cond_init) == 0)
        worker_cond_init(); /* fresh condition variable: the parent's waiter is gone */
}

static void wait_hostfns(uint32_t ctx_id, uint32_t stream_id, uint64_t max_seq) /* under g_lock */
{
    while (hostfn_pending(ctx_id, stream_id, max_seq)) {
        ensure_worker();
        pthread_cond_wait(&g_cond, &g_lock);
    }
}

static CUresult host_func(CUstream hs, int ptsz, void *fn, void *arg, int callback)
{
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(hs, ptsz, &s);
    if (!rc) {
        uint64_t start;
        stream_schedule(s, sim_now(), 0, &start);
        struct hostfn e = {start, ++g_hostfn_seq, s->ctx->id, s->id, callback, fn, arg, hs};
        s->last_hostfn = e.seq;
        heap_push(e);
        ensure_worker();
        pthread_cond_signal(&g_worker_cond);
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    SIM_API(cuLaunchHostFunc, host_func(hStream, 0, (void *)fn, userData, 0));
}
SIM_EXPORT(cuLaunchHostFunc)
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    SIM_API(cuLaunchHostFunc_ptsz, host_func(hStream, 1, (void *)fn, userData, 0));
}
SIM_EXPORT(cuLaunchHostFunc_ptsz)
CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    SIM_API(cuStreamAddCallback, flags ? CUDA_ERROR_INVALID_VALUE : host_func(hStream, 0, (void *)callback, userData, 1));
}
SIM_EXPORT(cuStreamAddCallback)
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags)
{
    SIM_API(cuStreamAddCallback_ptsz,
            flags ? CUDA_ERROR_INVALID_VALUE : host_func(hStream, 1, (void *)callback, userData, 1));
}
SIM_EXPORT(cuStreamAddCallback_ptsz)

/* ---- synchronization -------------------------------------------------------------------------- */
struct wait_spec {
    uint64_t until;
    uint32_t ctx_id, stream_id;
    uint64_t seq;
    int dev;
};

static struct wait_spec stream_wait_spec(const struct sim_stream *s)
{
    struct wait_spec w = {stream_ready(s), s->ctx->id, s->id, s->last_hostfn, s->ctx->dev};
    if (s->kind == STREAM_LEGACY) { /* waits for the blocking streams too */
        w.stream_id = 0;
        w.seq = g_hostfn_seq;
    } else
        w.until = s->tail; /* its queued work already waited for whatever it depended on */
    return w;
}

/* called without g_lock. A call that finds work still queued returns GTSIM_SYNC_WAKE_NS after the
 * work ends: the time a blocking synchronize takes to wake its thread (0 by default). */
static void do_wait(struct wait_spec w)
{
    if (g_cfg.sync_wake_ns && w.until > sim_now())
        w.until += g_cfg.sync_wake_ns;
    sim_sleep_until(w.until);
    pthread_mutex_lock(&g_lock);
    wait_hostfns(w.ctx_id, w.stream_id, w.seq);
    mem_pools_release(w.dev);
    pthread_mutex_unlock(&g_lock);
}

void ctx_sync(struct sim_ctx *c)
{
    pthread_mutex_lock(&g_lock);
    struct wait_spec w = {c->legacy ? c->legacy->tail : 0, c->id, 0, g_hostfn_seq, c->dev};
    for (struct sim_stream *s = c->streams; s; s = s->next)
        if (s->tail > w.until)
            w.until = s->tail;
    pthread_mutex_unlock(&g_lock);
    do_wait(w);
}

static CUresult stream_sync(CUstream h, int ptsz)
{
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(h, ptsz, &s);
    struct wait_spec w = {0, 0, 0, 0, 0};
    if (!rc)
        w = stream_wait_spec(s);
    pthread_mutex_unlock(&g_lock);
    if (!rc)
        do_wait(w);
    return rc;
}
CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) { SIM_API(cuStreamSynchronize, stream_sync(hStream, 0)); }
SIM_EXPORT(cuStreamSynchronize)
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    SIM_API(cuStreamSynchronize_ptsz, stream_sync(hStream, 1));
}
SIM_EXPORT(cuStreamSynchronize_ptsz)

static CUresult stream_query(CUstream h, int ptsz)
{
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(h, ptsz, &s);
    if (!rc) {
        struct wait_spec w = stream_wait_spec(s);
        if (sim_now() < w.until || hostfn_pending(w.ctx_id, w.stream_id, w.seq))
            rc = CUDA_ERROR_NOT_READY;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuStreamQuery(CUstream hStream) { SIM_API(cuStreamQuery, stream_query(hStream, 0)); }
SIM_EXPORT(cuStreamQuery)
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) { SIM_API(cuStreamQuery_ptsz, stream_query(hStream, 1)); }
SIM_EXPORT(cuStreamQuery_ptsz)

/* ---- stream lifecycle and queries ---------------------------------------------------------------- */
static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    if (prio > 0)
        prio = 0;
    if (prio < -5)
        prio = -5;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc)
        *ph = (CUstream)stream_new(c, STREAM_USER, flags, prio);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    SIM_API(cuStreamCreate, stream_create(phStream, Flags, 0));
}
SIM_EXPORT(cuStreamCreate)
CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    SIM_API(cuStreamCreateWithPriority, stream_create(phStream, flags, priority));
}
SIM_EXPORT(cuStreamCreateWithPriority)

/* Work still queued keeps its simulated times; host functions still run (they hold the CUstream
 * value only). As on the real driver the call does not wait. */
static CUresult stream_destroy(CUstream h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s = handle_get(h, OBJ_STREAM);
    if (s)
        stream_free(s);
    pthread_mutex_unlock(&g_lock);
    return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuStreamDestroy(CUstream hStream) { SIM_API(cuStreamDestroy, stream_destroy(hStream)); }
SIM_EXPORT(cuStreamDestroy)
CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) { SIM_API(cuStreamDestroy_v2, stream_destroy(hStream)); }
SIM_EXPORT(cuStreamDestroy_v2)

void streams_ctx_destroyed(struct sim_ctx *c)
{
    while (c->streams)
        stream_free(c->streams);
    if (c->legacy) {
        stream_free(c->legacy);
        c->legacy = NULL;
    }
    void **ev;
    size_t n = handle_list(OBJ_EVENT, &ev);
    for (size_t i = 0; i < n; i++) {
        struct sim_event *e = ev[i];
        if (e->ctx == c) {
            handle_del(e);
            free(e);
        }
    }
    free(ev);
}

enum { Q_ID, Q_CTX, Q_FLAGS, Q_PRIO, Q_DEV, Q_CAPTURE };
static CUresult stream_q(CUstream h, int ptsz, int what, void *out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(h, ptsz, &s);
    if (!rc) {
        switch (what) {
        case Q_ID: *(unsigned long long *)out = s->id; break;
        case Q_CTX: *(CUcontext *)out = (CUcontext)s->ctx; break;
        case Q_FLAGS: *(unsigned *)out = s->flags; break;
        case Q_PRIO: *(int *)out = s->priority; break;
        case Q_DEV: *(CUdevice *)out = s->ctx->dev; break;
        case Q_CAPTURE: *(CUstreamCaptureStatus *)out = CU_STREAM_CAPTURE_STATUS_NONE; break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    SIM_API(cuStreamGetId, stream_q(hStream, 0, Q_ID, streamId));
}
SIM_EXPORT(cuStreamGetId)
CUresult CUDAAPI cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
    SIM_API(cuStreamGetId_ptsz, stream_q(hStream, 1, Q_ID, streamId));
}
SIM_EXPORT(cuStreamGetId_ptsz)
CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx) { SIM_API(cuStreamGetCtx, stream_q(hStream, 0, Q_CTX, pctx)); }
SIM_EXPORT(cuStreamGetCtx)
CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    SIM_API(cuStreamGetCtx_ptsz, stream_q(hStream, 1, Q_CTX, pctx));
}
SIM_EXPORT(cuStreamGetCtx_ptsz)
CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    SIM_API(cuStreamGetFlags, stream_q(hStream, 0, Q_FLAGS, flags));
}
SIM_EXPORT(cuStreamGetFlags)
CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
    SIM_API(cuStreamGetFlags_ptsz, stream_q(hStream, 1, Q_FLAGS, flags));
}
SIM_EXPORT(cuStreamGetFlags_ptsz)
CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
    SIM_API(cuStreamGetPriority, stream_q(hStream, 0, Q_PRIO, priority));
}
SIM_EXPORT(cuStreamGetPriority)
CUresult CUDAAPI cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
    SIM_API(cuStreamGetPriority_ptsz, stream_q(hStream, 1, Q_PRIO, priority));
}
SIM_EXPORT(cuStreamGetPriority_ptsz)
CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    SIM_API(cuStreamGetDevice, stream_q(hStream, 0, Q_DEV, device));
}
SIM_EXPORT(cuStreamGetDevice)
CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    SIM_API(cuStreamGetDevice_ptsz, stream_q(hStream, 1, Q_DEV, device));
}
SIM_EXPORT(cuStreamGetDevice_ptsz)
CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    SIM_API(cuStreamIsCapturing, stream_q(hStream, 0, Q_CAPTURE, captureStatus));
}
SIM_EXPORT(cuStreamIsCapturing)
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    SIM_API(cuStreamIsCapturing_ptsz, stream_q(hStream, 1, Q_CAPTURE, captureStatus));
}
SIM_EXPORT(cuStreamIsCapturing_ptsz)

/* ---- events ------------------------------------------------------------------------------------ */
static CUresult event_create(CUevent *ph, unsigned flags)
{
    if (!ph || (flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((flags & CU_EVENT_INTERPROCESS) && !(flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc) {
        struct sim_event *e = calloc(1, sizeof *e);
        if (!e)
            abort();
        e->ctx = c;
        e->flags = flags;
        handle_add(e, OBJ_EVENT, e);
        *ph = (CUevent)e;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags) { SIM_API(cuEventCreate, event_create(phEvent, Flags)); }
SIM_EXPORT(cuEventCreate)

static CUresult event_record(CUevent h, CUstream hs, int ptsz, unsigned flags)
{
    if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_event *e = handle_get(h, OBJ_EVENT);
    struct sim_stream *s;
    CUresult rc = e ? stream_resolve(hs, ptsz, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (!rc) {
        uint64_t start;
        e->ts = stream_schedule(s, sim_now(), 0, &start);
        e->recorded = 1;
        e->ctx_id = s->ctx->id;
        e->stream_id = s->kind == STREAM_LEGACY ? 0 : s->id;
        e->hostfn_seq = s->kind == STREAM_LEGACY ? g_hostfn_seq : s->last_hostfn;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) { SIM_API(cuEventRecord, event_record(hEvent, hStream, 0, 0)); }
SIM_EXPORT(cuEventRecord)
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    SIM_API(cuEventRecord_ptsz, event_record(hEvent, hStream, 1, 0));
}
SIM_EXPORT(cuEventRecord_ptsz)
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    SIM_API(cuEventRecordWithFlags, event_record(hEvent, hStream, 0, flags));
}
SIM_EXPORT(cuEventRecordWithFlags)
CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    SIM_API(cuEventRecordWithFlags_ptsz, event_record(hEvent, hStream, 1, flags));
}
SIM_EXPORT(cuEventRecordWithFlags_ptsz)

static int event_done(const struct sim_event *e) /* under g_lock */
{
    return !e->recorded || (sim_now() >= e->ts && !hostfn_pending(e->ctx_id, e->stream_id, e->hostfn_seq));
}

static CUresult event_query(CUevent h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_event *e = handle_get(h, OBJ_EVENT);
    CUresult rc = !e ? CUDA_ERROR_INVALID_HANDLE : event_done(e) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuEventQuery(CUevent hEvent) { SIM_API(cuEventQuery, event_query(hEvent)); }
SIM_EXPORT(cuEventQuery)

static CUresult event_sync(CUevent h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_event *e = handle_get(h, OBJ_EVENT);
    struct wait_spec w = {0, 0, 0, 0, 0};
    if (e && e->recorded)
        w = (struct wait_spec){e->ts, e->ctx_id, e->stream_id, e->hostfn_seq, e->ctx->dev};
    pthread_mutex_unlock(&g_lock);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    if (w.ctx_id)
        do_wait(w);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) { SIM_API(cuEventSynchronize, event_sync(hEvent)); }
SIM_EXPORT(cuEventSynchronize)

static CUresult event_elapsed(float *ms, CUevent hs, CUevent he)
{
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_event *a = handle_get(hs, OBJ_EVENT), *b = handle_get(he, OBJ_EVENT);
    CUresult rc = CUDA_SUCCESS;
    if (!a || !b || !a->recorded || !b->recorded || ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!event_done(a) || !event_done(b))
        rc = CUDA_ERROR_NOT_READY;
    else
        *ms = (float)(((double)b->ts - (double)a->ts) / 1e6);
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    SIM_API(cuEventElapsedTime, event_elapsed(pMilliseconds, hStart, hEnd));
}
SIM_EXPORT(cuEventElapsedTime)
CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    SIM_API(cuEventElapsedTime_v2, event_elapsed(pMilliseconds, hStart, hEnd));
}
SIM_EXPORT(cuEventElapsedTime_v2)

static CUresult event_destroy(CUevent h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_event *e = handle_get(h, OBJ_EVENT);
    if (e) {
        handle_del(e);
        free(e);
    }
    pthread_mutex_unlock(&g_lock);
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
CUresult CUDAAPI cuEventDestroy(CUevent hEvent) { SIM_API(cuEventDestroy, event_destroy(hEvent)); }
SIM_EXPORT(cuEventDestroy)
CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) { SIM_API(cuEventDestroy_v2, event_destroy(hEvent)); }
SIM_EXPORT(cuEventDestroy_v2)

static CUresult stream_wait_event(CUstream hs, CUevent h, unsigned flags, int ptsz)
{
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_event *e = handle_get(h, OBJ_EVENT);
    struct sim_stream *s;
    CUresult rc = e ? stream_resolve(hs, ptsz, &s) : CUDA_ERROR_INVALID_HANDLE;
    if (!rc && e->recorded && e->ts > s->tail)
        s->tail = e->ts;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    SIM_API(cuStreamWaitEvent, stream_wait_event(hStream, hEvent, Flags, 0));
}
SIM_EXPORT(cuStreamWaitEvent)
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    SIM_API(cuStreamWaitEvent_ptsz, stream_wait_event(hStream, hEvent, Flags, 1));
}
SIM_EXPORT(cuStreamWaitEvent_ptsz)
