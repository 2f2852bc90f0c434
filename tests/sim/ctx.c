/* Contexts: creation/destruction, the per-thread context stack, primary contexts. */
#include "sim.h"

#include <stdlib.h>

static uint32_t g_ctx_next;
static struct sim_ctx *g_ctx_all;

/* per-thread context stack */
static __thread struct sim_ctx **t_stack;
static __thread int t_depth, t_cap;
static pthread_key_t g_stack_key;
static pthread_once_t g_stack_once = PTHREAD_ONCE_INIT;
static void stack_free(void *p) { free(p); }
static void stack_key_init(void) { pthread_key_create(&g_stack_key, stack_free); }

static void stack_push(struct sim_ctx *c)
{
    if (t_depth == t_cap) {
        pthread_once(&g_stack_once, stack_key_init);
        t_cap = t_cap ? t_cap * 2 : 8;
        t_stack = realloc(t_stack, (size_t)t_cap * sizeof *t_stack);
        if (!t_stack)
            abort();
        pthread_setspecific(g_stack_key, t_stack);
    }
    t_stack[t_depth++] = c;
}

uint32_t sim_next_ctx_id(void) { return ++g_ctx_next; }

CUresult ctx_current(struct sim_ctx **out)
{
    if (!t_depth || !t_stack[t_depth - 1])
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_ctx *c = t_stack[t_depth - 1];
    if (!c->alive)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = c;
    return CUDA_SUCCESS;
}

CUresult ctx_check(CUcontext h, struct sim_ctx **out)
{
    if (!h)
        return ctx_current(out);
    struct sim_ctx *c = handle_get(h, OBJ_CTX);
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!c->alive)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    *out = c;
    return CUDA_SUCCESS;
}

void ctx_activate(struct sim_ctx *c)
{
    c->id = sim_next_ctx_id();
    c->alive = 1;
    c->legacy = stream_new(c, STREAM_LEGACY, 0, 0);
    g_dev[c->dev].nctx++;
}

void ctx_release_resources(struct sim_ctx *c)
{
    modules_ctx_destroyed(c);
    mem_ctx_destroyed(c);
    streams_ctx_destroyed(c);
    c->alive = 0;
    g_dev[c->dev].nctx--;
}

/* contexts are never freed: a stale handle keeps answering CONTEXT_IS_DESTROYED */
static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    if (dev_free_bytes(dev) < (int64_t)g_cfg.ctx_overhead) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct sim_ctx *c = calloc(1, sizeof *c);
    if (!c)
        abort();
    c->dev = dev;
    c->flags = flags;
    ctx_activate(c);
    c->next = g_ctx_all;
    g_ctx_all = c;
    handle_add(c, OBJ_CTX, c);
    stack_push(c);
    *pctx = (CUcontext)c;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    SIM_API(cuCtxCreate, ctx_create(pctx, flags, dev));
}
SIM_EXPORT(cuCtxCreate)

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    SIM_API(cuCtxCreate_v2, ctx_create(pctx, flags, dev));
}
SIM_EXPORT(cuCtxCreate_v2)

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev)
{
    SIM_API(cuCtxCreate_v3, (numParams < 0 || (numParams > 0 && !paramsArray))
                                ? CUDA_ERROR_INVALID_VALUE
                                : ctx_create(pctx, flags, dev));
}
SIM_EXPORT(cuCtxCreate_v3)

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                CUdevice dev)
{
    SIM_API(cuCtxCreate_v4,
            (ctxCreateParams && ctxCreateParams->numExecAffinityParams > 0 && !ctxCreateParams->execAffinityParams)
                ? CUDA_ERROR_INVALID_VALUE
                : ctx_create(pctx, flags, dev));
}
SIM_EXPORT(cuCtxCreate_v4)

static void stack_drop_top(struct sim_ctx *c)
{
    if (t_depth && t_stack[t_depth - 1] == c)
        t_depth--;
}

static CUresult ctx_destroy(CUcontext h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c = handle_get(h, OBJ_CTX);
    CUresult rc = !h || !c ? CUDA_ERROR_INVALID_CONTEXT
                  : !c->alive ? CUDA_ERROR_CONTEXT_IS_DESTROYED
                  : c->primary ? CUDA_ERROR_INVALID_CONTEXT
                               : CUDA_SUCCESS;
    pthread_mutex_unlock(&g_lock);
    if (rc)
        return rc;
    ctx_sync(c);
    pthread_mutex_lock(&g_lock);
    if (c->alive)
        ctx_release_resources(c);
    stack_drop_top(c);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) { SIM_API(cuCtxDestroy, ctx_destroy(ctx)); }
SIM_EXPORT(cuCtxDestroy)
CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx) { SIM_API(cuCtxDestroy_v2, ctx_destroy(ctx)); }
SIM_EXPORT(cuCtxDestroy_v2)

static CUresult ctx_get_current(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = t_depth ? (CUcontext)t_stack[t_depth - 1] : NULL;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) { SIM_API(cuCtxGetCurrent, ctx_get_current(pctx)); }
SIM_EXPORT(cuCtxGetCurrent)

static CUresult ctx_set_current(CUcontext h)
{
    if (!h) {
        if (t_depth)
            t_depth--;
        return CUDA_SUCCESS;
    }
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_check(h, &c);
    pthread_mutex_unlock(&g_lock);
    if (rc)
        return rc;
    if (t_depth)
        t_stack[t_depth - 1] = c;
    else
        stack_push(c);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) { SIM_API(cuCtxSetCurrent, ctx_set_current(ctx)); }
SIM_EXPORT(cuCtxSetCurrent)

static CUresult ctx_push(CUcontext h)
{
    if (!h)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_check(h, &c);
    pthread_mutex_unlock(&g_lock);
    if (!rc)
        stack_push(c);
    return rc;
}
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) { SIM_API(cuCtxPushCurrent, ctx_push(ctx)); }
SIM_EXPORT(cuCtxPushCurrent)
CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) { SIM_API(cuCtxPushCurrent_v2, ctx_push(ctx)); }
SIM_EXPORT(cuCtxPushCurrent_v2)

static CUresult ctx_pop(CUcontext *pctx)
{
    if (!t_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_ctx *c = t_stack[--t_depth];
    if (pctx)
        *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx) { SIM_API(cuCtxPopCurrent, ctx_pop(pctx)); }
SIM_EXPORT(cuCtxPopCurrent)
CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx) { SIM_API(cuCtxPopCurrent_v2, ctx_pop(pctx)); }
SIM_EXPORT(cuCtxPopCurrent_v2)

static CUresult ctx_get_device(CUdevice *device, CUcontext h)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_check(h, &c);
    if (!rc)
        *device = c->dev;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) { SIM_API(cuCtxGetDevice, ctx_get_device(device, NULL)); }
SIM_EXPORT(cuCtxGetDevice)
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    SIM_API(cuCtxGetDevice_v2, ctx_get_device(device, ctx));
}
SIM_EXPORT(cuCtxGetDevice_v2)

static CUresult ctx_synchronize(CUcontext h)
{
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_check(h, &c);
    pthread_mutex_unlock(&g_lock);
    if (!rc)
        ctx_sync(c);
    return rc;
}
CUresult CUDAAPI cuCtxSynchronize(void) { SIM_API(cuCtxSynchronize, ctx_synchronize(NULL)); }
SIM_EXPORT(cuCtxSynchronize)
CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) { SIM_API(cuCtxSynchronize_v2, ctx_synchronize(ctx)); }
SIM_EXPORT(cuCtxSynchronize_v2)

static CUresult ctx_get_id(CUcontext h, unsigned long long *id)
{
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_check(h, &c);
    if (!rc)
        *id = c->id;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId) { SIM_API(cuCtxGetId, ctx_get_id(ctx, ctxId)); }
SIM_EXPORT(cuCtxGetId)

static CUresult ctx_get_flags(unsigned *flags)
{
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_current(&c);
    if (!rc)
        *flags = c->flags;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags) { SIM_API(cuCtxGetFlags, ctx_get_flags(flags)); }
SIM_EXPORT(cuCtxGetFlags)

static CUresult ctx_api_version(CUcontext h, unsigned *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *c;
    CUresult rc = ctx_check(h, &c);
    if (!rc)
        *version = 3020;
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    SIM_API(cuCtxGetApiVersion, ctx_api_version(ctx, version));
}
SIM_EXPORT(cuCtxGetApiVersion)

static CUresult ctx_prio_range(int *least, int *greatest)
{
    if (least)
        *least = 0;
    if (greatest)
        *greatest = -5;
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    SIM_API(cuCtxGetStreamPriorityRange, ctx_prio_range(leastPriority, greatestPriority));
}
SIM_EXPORT(cuCtxGetStreamPriorityRange)

/* ---- primary contexts ------------------------------------------------------------------------- */
static struct sim_ctx *primary_of(int dev)
{
    struct sim_ctx *p = g_dev[dev].primary;
    if (!p) {
        p = calloc(1, sizeof *p);
        if (!p)
            abort();
        p->dev = dev;
        p->primary = 1;
        p->next = g_ctx_all;
        g_ctx_all = p;
        handle_add(p, OBJ_CTX, p);
        g_dev[dev].primary = p;
    }
    return p;
}

static CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *p = primary_of(dev);
    if (!p->alive) {
        if (dev_free_bytes(dev) < (int64_t)g_cfg.ctx_overhead)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else
            ctx_activate(p);
    }
    if (!rc) {
        p->refcount++;
        *pctx = (CUcontext)p;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    SIM_API(cuDevicePrimaryCtxRetain, primary_retain(pctx, dev));
}
SIM_EXPORT(cuDevicePrimaryCtxRetain)

static CUresult primary_teardown(int dev, int reset)
{
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *p = primary_of(dev);
    if (!reset && p->refcount <= 0) {
        pthread_mutex_unlock(&g_lock);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    int destroy = reset ? p->alive : (--p->refcount == 0);
    if (reset)
        p->refcount = 0;
    pthread_mutex_unlock(&g_lock);
    if (!destroy)
        return CUDA_SUCCESS;
    ctx_sync(p);
    pthread_mutex_lock(&g_lock);
    if (p->alive && p->refcount == 0)
        ctx_release_resources(p);
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { SIM_API(cuDevicePrimaryCtxRelease, primary_teardown(dev, 0)); }
SIM_EXPORT(cuDevicePrimaryCtxRelease)
CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    SIM_API(cuDevicePrimaryCtxRelease_v2, primary_teardown(dev, 0));
}
SIM_EXPORT(cuDevicePrimaryCtxRelease_v2)
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) { SIM_API(cuDevicePrimaryCtxReset, primary_teardown(dev, 1)); }
SIM_EXPORT(cuDevicePrimaryCtxReset)
CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev) { SIM_API(cuDevicePrimaryCtxReset_v2, primary_teardown(dev, 1)); }
SIM_EXPORT(cuDevicePrimaryCtxReset_v2)

static CUresult primary_state(CUdevice dev, unsigned *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *p = primary_of(dev);
    *flags = p->flags;
    *active = p->alive;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    SIM_API(cuDevicePrimaryCtxGetState, primary_state(dev, flags, active));
}
SIM_EXPORT(cuDevicePrimaryCtxGetState)

static CUresult primary_set_flags(CUdevice dev, unsigned flags)
{
    if (dev_check(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (flags & ~(unsigned)CU_CTX_FLAGS_MASK)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    primary_of(dev)->flags = flags;
    pthread_mutex_unlock(&g_lock);
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    SIM_API(cuDevicePrimaryCtxSetFlags_v2, primary_set_flags(dev, flags));
}
SIM_EXPORT(cuDevicePrimaryCtxSetFlags_v2)
