/* Execution hooks: launches, synchronizations, blocking copies, stream waits, contexts, streams,
 * cuInit. Launch hooks are the hottest path of the shim: two counter reads and one record, all
 * inlined into each exported wrapper (the driver's arguments pass straight through). */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdatomic.h>

#include "hooks.h"
#include "python.h"
#include "shim.h"

/* ---- launches ---------------------------------------------------------------------------------- */

/* Around the real launch: our correlation id, pushed to CUPTI so its records name the launch. */
#define LAUNCH_CALL(r, call)                                                                       \
    uint64_t corr = gt_next_corr(t);                                                               \
    int cupti = atomic_load_explicit(&gt_cupti_on, memory_order_relaxed);                          \
    if (cupti) gt_cupti_push(corr);                                                                \
    struct gt_clock_mark mk_;                                                                      \
    uint64_t t0 = gt_mark_start(&mk_);                                                             \
    CUresult r = call;                                                                             \
    if (cupti) {                                                                                   \
        int e_ = errno;                                                                            \
        gt_cupti_pop();                                                                            \
        errno = e_;                                                                                \
    }

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, unsigned, CUstream, void **);

static GT_ALWAYS_INLINE CUresult launch(unsigned api, launch_fn real, CUfunction f, unsigned gx,
                                        unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                        unsigned bz, unsigned smem, CUstream s, void **params,
                                        void **extra)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    LAUNCH_CALL(r, real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra));
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    gt_rec_launch(t, api, t0, gt_mark_end(&mk_), corr, PTR(f), PTR(s), grid, block, smem, r);
    gt_leave(t);
    return r;
}

GT_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                  unsigned int gridDimZ, unsigned int blockDimX,
                                  unsigned int blockDimY, unsigned int blockDimZ,
                                  unsigned int sharedMemBytes, CUstream hStream,
                                  void **kernelParams, void **extra)
{
    REAL(real, cuLaunchKernel, launch_fn);
    return launch(GT_API_cuLaunchKernel, real, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                  blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

GT_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                       unsigned int gridDimZ, unsigned int blockDimX,
                                       unsigned int blockDimY, unsigned int blockDimZ,
                                       unsigned int sharedMemBytes, CUstream hStream,
                                       void **kernelParams, void **extra)
{
    REAL(real, cuLaunchKernel_ptsz, launch_fn);
    return launch(GT_API_cuLaunchKernel_ptsz, real, f, gridDimX, gridDimY, gridDimZ, blockDimX,
                  blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
}

static GT_ALWAYS_INLINE CUresult launch_coop(unsigned api, coop_fn real, CUfunction f, unsigned gx,
                                             unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                             unsigned bz, unsigned smem, CUstream s, void **params)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(f, gx, gy, gz, bx, by, bz, smem, s, params);
    LAUNCH_CALL(r, real(f, gx, gy, gz, bx, by, bz, smem, s, params));
    unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    gt_rec_launch(t, api, t0, gt_mark_end(&mk_), corr, PTR(f), PTR(s), grid, block, smem, r);
    gt_leave(t);
    return r;
}

GT_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                             unsigned int gridDimY, unsigned int gridDimZ,
                                             unsigned int blockDimX, unsigned int blockDimY,
                                             unsigned int blockDimZ, unsigned int sharedMemBytes,
                                             CUstream hStream, void **kernelParams)
{
    REAL(real, cuLaunchCooperativeKernel, coop_fn);
    return launch_coop(GT_API_cuLaunchCooperativeKernel, real, f, gridDimX, gridDimY, gridDimZ,
                       blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams);
}

GT_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                                  unsigned int gridDimY, unsigned int gridDimZ,
                                                  unsigned int blockDimX, unsigned int blockDimY,
                                                  unsigned int blockDimZ,
                                                  unsigned int sharedMemBytes, CUstream hStream,
                                                  void **kernelParams)
{
    REAL(real, cuLaunchCooperativeKernel_ptsz, coop_fn);
    return launch_coop(GT_API_cuLaunchCooperativeKernel_ptsz, real, f, gridDimX, gridDimY,
                       gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                       kernelParams);
}

static GT_ALWAYS_INLINE CUresult launch_ex(unsigned api, PFN_cuLaunchKernelEx_v11060 real,
                                           const CUlaunchConfig *c, CUfunction f, void **params,
                                           void **extra)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(c, f, params, extra);
    LAUNCH_CALL(r, real(c, f, params, extra));
    unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, smem = 0;
    CUstream s = NULL;
    if (c) { /* the driver rejects a NULL config; we must not crash on it either */
        grid[0] = c->gridDimX, grid[1] = c->gridDimY, grid[2] = c->gridDimZ;
        block[0] = c->blockDimX, block[1] = c->blockDimY, block[2] = c->blockDimZ;
        smem = c->sharedMemBytes;
        s = c->hStream;
    }
    gt_rec_launch(t, api, t0, gt_mark_end(&mk_), corr, PTR(f), PTR(s), grid, block, smem, r);
    gt_leave(t);
    return r;
}

GT_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                    void **kernelParams, void **extra)
{
    REAL(real, cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060);
    return launch_ex(GT_API_cuLaunchKernelEx, real, config, f, kernelParams, extra);
}

GT_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                         void **kernelParams, void **extra)
{
    REAL(real, cuLaunchKernelEx_ptsz, PFN_cuLaunchKernelEx_v11060);
    return launch_ex(GT_API_cuLaunchKernelEx_ptsz, real, config, f, kernelParams, extra);
}

static GT_ALWAYS_INLINE CUresult graph_launch(unsigned api, PFN_cuGraphLaunch_v10000 real,
                                              CUgraphExec g, CUstream s)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(g, s);
    LAUNCH_CALL(r, real(g, s));
    gt_rec_launch(t, api, t0, gt_mark_end(&mk_), corr, PTR(g), PTR(s), NULL, NULL, 0, r);
    gt_leave(t);
    return r;
}

GT_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    REAL(real, cuGraphLaunch, PFN_cuGraphLaunch_v10000);
    return graph_launch(GT_API_cuGraphLaunch, real, hGraphExec, hStream);
}

GT_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    REAL(real, cuGraphLaunch_ptsz, PFN_cuGraphLaunch_v10000);
    return graph_launch(GT_API_cuGraphLaunch_ptsz, real, hGraphExec, hStream);
}

static GT_ALWAYS_INLINE CUresult host_func(unsigned api, PFN_cuLaunchHostFunc_v10000 real,
                                           CUstream s, CUhostFn fn, void *data)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(s, fn, data);
    uint64_t corr = gt_next_corr(t);
    struct gt_clock_mark mk_;
    uint64_t t0 = gt_mark_start(&mk_);
    CUresult r = real(s, fn, data);
    gt_rec_launch(t, api, t0, gt_mark_end(&mk_), corr, PTR(fn), PTR(s), NULL, NULL, 0, r);
    gt_leave(t);
    return r;
}

GT_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    REAL(real, cuLaunchHostFunc, PFN_cuLaunchHostFunc_v10000);
    return host_func(GT_API_cuLaunchHostFunc, real, hStream, fn, userData);
}

GT_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    REAL(real, cuLaunchHostFunc_ptsz, PFN_cuLaunchHostFunc_v10000);
    return host_func(GT_API_cuLaunchHostFunc_ptsz, real, hStream, fn, userData);
}

/* ---- spans: the host waits for the GPU --------------------------------------------------------- */

/* Starts a span: returns the thread (or NULL to just forward) and its enter time. */
#define SPAN_BEGIN(call)                                                                           \
    struct gt_thread *t = gt_enter();                                                              \
    if (!t) return call;                                                                           \
    uint64_t t0 = gt_now()

static CUresult span_end(struct gt_thread *t, unsigned api, uint64_t t0, CUresult r,
                         uint64_t object, uint64_t bytes)
{
    int saved = errno;
    gt_rec_span(t, api, t0, gt_now(), object, bytes, r);
    gt_leave(t);
    errno = saved;
    return r;
}

GT_EXPORT CUresult cuCtxSynchronize(void)
{
    REAL(real, cuCtxSynchronize, PFN_cuCtxSynchronize_v2000);
    SPAN_BEGIN(real());
    return span_end(t, GT_API_cuCtxSynchronize, t0, real(), 0, 0);
}

GT_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    REAL(real, cuCtxSynchronize_v2, PFN_cuCtxSynchronize_v13000);
    SPAN_BEGIN(real(ctx));
    return span_end(t, GT_API_cuCtxSynchronize_v2, t0, real(ctx), PTR(ctx), 0);
}

GT_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    REAL(real, cuStreamSynchronize, PFN_cuStreamSynchronize_v2000);
    SPAN_BEGIN(real(hStream));
    return span_end(t, GT_API_cuStreamSynchronize, t0, real(hStream), PTR(hStream), 0);
}

GT_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    REAL(real, cuStreamSynchronize_ptsz, PFN_cuStreamSynchronize_v7000_ptsz);
    SPAN_BEGIN(real(hStream));
    return span_end(t, GT_API_cuStreamSynchronize_ptsz, t0, real(hStream), PTR(hStream), 0);
}

GT_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    REAL(real, cuEventSynchronize, PFN_cuEventSynchronize_v2000);
    SPAN_BEGIN(real(hEvent));
    return span_end(t, GT_API_cuEventSynchronize, t0, real(hEvent), PTR(hEvent), 0);
}

GT_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    REAL(real, cuStreamWaitEvent, PFN_cuStreamWaitEvent_v3020);
    SPAN_BEGIN(real(hStream, hEvent, Flags));
    return span_end(t, GT_API_cuStreamWaitEvent, t0, real(hStream, hEvent, Flags), PTR(hStream),
                    PTR(hEvent));
}

GT_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    REAL(real, cuStreamWaitEvent_ptsz, PFN_cuStreamWaitEvent_v7000_ptsz);
    SPAN_BEGIN(real(hStream, hEvent, Flags));
    return span_end(t, GT_API_cuStreamWaitEvent_ptsz, t0, real(hStream, hEvent, Flags),
                    PTR(hStream), PTR(hEvent));
}

/* Blocking copies: object = destination, bytes = size. */
#define COPY_HOOK(e, pfn, params, args, dst, bytes)                                                \
    GT_EXPORT CUresult e params                                                                    \
    {                                                                                              \
        REAL(real, e, pfn);                                                                        \
        SPAN_BEGIN(real args);                                                                     \
        return span_end(t, GT_API_##e, t0, real args, (uint64_t)(uintptr_t)(dst), (bytes));        \
    }

COPY_HOOK(cuMemcpyHtoD_v2, PFN_cuMemcpyHtoD_v3020,
          (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
          (dstDevice, srcHost, ByteCount), dstDevice, ByteCount)
COPY_HOOK(cuMemcpyHtoD_v2_ptds, PFN_cuMemcpyHtoD_v7000_ptds,
          (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
          (dstDevice, srcHost, ByteCount), dstDevice, ByteCount)
COPY_HOOK(cuMemcpyDtoH_v2, PFN_cuMemcpyDtoH_v3020,
          (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
          (dstHost, srcDevice, ByteCount), dstHost, ByteCount)
COPY_HOOK(cuMemcpyDtoH_v2_ptds, PFN_cuMemcpyDtoH_v7000_ptds,
          (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
          (dstHost, srcDevice, ByteCount), dstHost, ByteCount)
COPY_HOOK(cuMemcpyDtoD_v2, PFN_cuMemcpyDtoD_v3020,
          (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
          (dstDevice, srcDevice, ByteCount), dstDevice, ByteCount)
COPY_HOOK(cuMemcpyDtoD_v2_ptds, PFN_cuMemcpyDtoD_v7000_ptds,
          (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
          (dstDevice, srcDevice, ByteCount), dstDevice, ByteCount)
COPY_HOOK(cuMemcpy, PFN_cuMemcpy_v4000, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
          (dst, src, ByteCount), dst, ByteCount)
COPY_HOOK(cuMemcpy_ptds, PFN_cuMemcpy_v7000_ptds,
          (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount), dst,
          ByteCount)
COPY_HOOK(cuMemcpyPeer, PFN_cuMemcpyPeer_v4000,
          (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
           CUcontext srcContext, size_t ByteCount),
          (dstDevice, dstContext, srcDevice, srcContext, ByteCount), dstDevice, ByteCount)
COPY_HOOK(cuMemcpyPeer_ptds, PFN_cuMemcpyPeer_v7000_ptds,
          (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
           CUcontext srcContext, size_t ByteCount),
          (dstDevice, dstContext, srcDevice, srcContext, ByteCount), dstDevice, ByteCount)

static uint64_t copy2d_bytes(const CUDA_MEMCPY2D *c) { return c ? (uint64_t)c->WidthInBytes * c->Height : 0; }
static uint64_t copy2d_dst(const CUDA_MEMCPY2D *c) { return c ? (c->dstDevice ? c->dstDevice : PTR(c->dstHost)) : 0; }
static uint64_t copy3d_bytes(const CUDA_MEMCPY3D *c)
{
    return c ? (uint64_t)c->WidthInBytes * (c->Height ? c->Height : 1) * (c->Depth ? c->Depth : 1)
             : 0;
}
static uint64_t copy3d_dst(const CUDA_MEMCPY3D *c) { return c ? (c->dstDevice ? c->dstDevice : PTR(c->dstHost)) : 0; }

COPY_HOOK(cuMemcpy2D_v2, PFN_cuMemcpy2D_v3020, (const CUDA_MEMCPY2D *pCopy), (pCopy),
          copy2d_dst(pCopy), copy2d_bytes(pCopy))
COPY_HOOK(cuMemcpy2D_v2_ptds, PFN_cuMemcpy2D_v7000_ptds, (const CUDA_MEMCPY2D *pCopy), (pCopy),
          copy2d_dst(pCopy), copy2d_bytes(pCopy))
COPY_HOOK(cuMemcpy3D_v2, PFN_cuMemcpy3D_v3020, (const CUDA_MEMCPY3D *pCopy), (pCopy),
          copy3d_dst(pCopy), copy3d_bytes(pCopy))
COPY_HOOK(cuMemcpy3D_v2_ptds, PFN_cuMemcpy3D_v7000_ptds, (const CUDA_MEMCPY3D *pCopy), (pCopy),
          copy3d_dst(pCopy), copy3d_bytes(pCopy))

/* ---- async copies and memsets: GPU work queued like a launch's ----------------------------------- */

/* The launch record with the api telling it apart (GT_FAM_ENQUEUE): func = destination,
 * grid[0..1] = bytes (low, high 32 bits); our correlation id is pushed to CUPTI around the call,
 * as for launches, so the copy or memset the GPU runs is linked to the call that queued it. errno
 * is kept as gt_rec_launch keeps it: the fast path cannot change it, the slow ones save it. */
static GT_ALWAYS_INLINE void rec_enqueue(struct gt_thread *t, unsigned api, uint64_t t0,
                                         uint64_t t1, uint64_t corr, uint64_t dst, CUstream s,
                                         uint64_t bytes, int result)
{
    unsigned grid[3] = {(unsigned)bytes, (unsigned)(bytes >> 32), 0};
    gt_rec_launch_write(t, api, t0, t1, corr, dst, PTR(s), grid, NULL, 0, result, 0);
}

#define ENQUEUE_HOOK(e, pfn, params, args, stream, dst, bytes)                                     \
    GT_EXPORT CUresult e params                                                                    \
    {                                                                                              \
        REAL(real, e, pfn);                                                                        \
        struct gt_thread *t = gt_enter();                                                          \
        if (!t) return real args;                                                                  \
        LAUNCH_CALL(r, real args);                                                                 \
        rec_enqueue(t, GT_API_##e, t0, gt_mark_end(&mk_), corr, (uint64_t)(uintptr_t)(dst), stream, \
                    (bytes), r);                                                                   \
        gt_leave(t);                                                                               \
        return r;                                                                                  \
    }

/* Both the default-stream form and its _ptsz twin of a call. */
#define ENQUEUE_PAIR(e, pfn, pfn_ptsz, params, args, stream, dst, bytes)                           \
    ENQUEUE_HOOK(e, pfn, params, args, stream, dst, bytes)                                         \
    ENQUEUE_HOOK(e##_ptsz, pfn_ptsz, params, args, stream, dst, bytes)

ENQUEUE_PAIR(cuMemcpyAsync, PFN_cuMemcpyAsync_v4000, PFN_cuMemcpyAsync_v7000_ptsz,
             (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
             (dst, src, ByteCount, hStream), hStream, dst, ByteCount)
ENQUEUE_PAIR(cuMemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v3020,
             PFN_cuMemcpyHtoDAsync_v7000_ptsz,
             (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
             (dstDevice, srcHost, ByteCount, hStream), hStream, dstDevice, ByteCount)
ENQUEUE_PAIR(cuMemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v3020,
             PFN_cuMemcpyDtoHAsync_v7000_ptsz,
             (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
             (dstHost, srcDevice, ByteCount, hStream), hStream, dstHost, ByteCount)
ENQUEUE_PAIR(cuMemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v3020,
             PFN_cuMemcpyDtoDAsync_v7000_ptsz,
             (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
             (dstDevice, srcDevice, ByteCount, hStream), hStream, dstDevice, ByteCount)
ENQUEUE_PAIR(cuMemcpy2DAsync_v2, PFN_cuMemcpy2DAsync_v3020, PFN_cuMemcpy2DAsync_v7000_ptsz,
             (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream), hStream,
             copy2d_dst(pCopy), copy2d_bytes(pCopy))
ENQUEUE_PAIR(cuMemcpy3DAsync_v2, PFN_cuMemcpy3DAsync_v3020, PFN_cuMemcpy3DAsync_v7000_ptsz,
             (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream), hStream,
             copy3d_dst(pCopy), copy3d_bytes(pCopy))
ENQUEUE_PAIR(cuMemcpyPeerAsync, PFN_cuMemcpyPeerAsync_v4000, PFN_cuMemcpyPeerAsync_v7000_ptsz,
             (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
              CUcontext srcContext, size_t ByteCount, CUstream hStream),
             (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream), hStream,
             dstDevice, ByteCount)

#define MEMSET_PAIR(e, type, size)                                                                 \
    ENQUEUE_PAIR(e, PFN_##e##_v3020, PFN_##e##_v7000_ptsz,                                         \
                 (CUdeviceptr dstDevice, type v, size_t N, CUstream hStream),                      \
                 (dstDevice, v, N, hStream), hStream, dstDevice, (uint64_t)N * (size))
#define MEMSET2D_PAIR(e, type, size)                                                               \
    ENQUEUE_PAIR(e, PFN_##e##_v3020, PFN_##e##_v7000_ptsz,                                         \
                 (CUdeviceptr dstDevice, size_t dstPitch, type v, size_t Width, size_t Height,     \
                  CUstream hStream),                                                               \
                 (dstDevice, dstPitch, v, Width, Height, hStream), hStream, dstDevice,             \
                 (uint64_t)Width * (size) * Height)

MEMSET_PAIR(cuMemsetD8Async, unsigned char, 1)
MEMSET_PAIR(cuMemsetD16Async, unsigned short, 2)
MEMSET_PAIR(cuMemsetD32Async, unsigned int, 4)
MEMSET2D_PAIR(cuMemsetD2D8Async, unsigned char, 1)
MEMSET2D_PAIR(cuMemsetD2D16Async, unsigned short, 2)
MEMSET2D_PAIR(cuMemsetD2D32Async, unsigned int, 4)

/* ---- contexts and streams ---------------------------------------------------------------------- */

GT_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    REAL(real, cuCtxCreate_v2, PFN_cuCtxCreate_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pctx, flags, dev);
    CUresult r = real(pctx, flags, dev);
    return gt_object_end(t, GT_API_cuCtxCreate_v2, gt_now(), r, r ? 0 : PTR(*pctx), flags, dev);
}

GT_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                  int numParams, unsigned int flags, CUdevice dev)
{
    REAL(real, cuCtxCreate_v3, PFN_cuCtxCreate_v11040);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pctx, paramsArray, numParams, flags, dev);
    CUresult r = real(pctx, paramsArray, numParams, flags, dev);
    return gt_object_end(t, GT_API_cuCtxCreate_v3, gt_now(), r, r ? 0 : PTR(*pctx), flags, dev);
}

GT_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                  unsigned int flags, CUdevice dev)
{
    REAL(real, cuCtxCreate_v4, PFN_cuCtxCreate_v12050);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pctx, ctxCreateParams, flags, dev);
    CUresult r = real(pctx, ctxCreateParams, flags, dev);
    return gt_object_end(t, GT_API_cuCtxCreate_v4, gt_now(), r, r ? 0 : PTR(*pctx), flags, dev);
}

GT_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    REAL(real, cuCtxDestroy_v2, PFN_cuCtxDestroy_v4000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(ctx);
    uint64_t t0 = gt_now();
    return gt_object_end(t, GT_API_cuCtxDestroy_v2, t0, real(ctx), PTR(ctx), 0, -1);
}

GT_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    REAL(real, cuDevicePrimaryCtxReset_v2, PFN_cuDevicePrimaryCtxReset_v11000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(dev);
    uint64_t t0 = gt_now();
    return gt_object_end(t, GT_API_cuDevicePrimaryCtxReset_v2, t0, real(dev), 0, 1, dev);
}

typedef CUresult (*primary_state_fn)(CUdevice, unsigned int *, int *);

/* aux = 1 when the release destroyed the primary context (and with it its memory). */
GT_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    REAL(real, cuDevicePrimaryCtxRelease_v2, PFN_cuDevicePrimaryCtxRelease_v11000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(dev);
    uint64_t t0 = gt_now();
    CUresult r = real(dev);
    primary_state_fn st = (primary_state_fn)gt_helper_fn(GT_H_PrimaryCtxGetState);
    unsigned flags = 0;
    int active = 1;
    if (r == CUDA_SUCCESS && st && st(dev, &flags, &active) != CUDA_SUCCESS) active = 1;
    return gt_object_end(t, GT_API_cuDevicePrimaryCtxRelease_v2, t0, r, 0,
                      r == CUDA_SUCCESS && !active, dev);
}

GT_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    REAL(real, cuStreamCreate, PFN_cuStreamCreate_v2000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(phStream, Flags);
    CUresult r = real(phStream, Flags);
    return gt_object_end(t, GT_API_cuStreamCreate, gt_now(), r, r ? 0 : PTR(*phStream), Flags,
                      gt_current_device());
}

GT_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                              int priority)
{
    REAL(real, cuStreamCreateWithPriority, PFN_cuStreamCreateWithPriority_v5050);
    struct gt_thread *t = gt_enter();
    if (!t) return real(phStream, flags, priority);
    CUresult r = real(phStream, flags, priority);
    return gt_object_end(t, GT_API_cuStreamCreateWithPriority, gt_now(), r,
                      r ? 0 : PTR(*phStream), flags, gt_current_device());
}

GT_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    REAL(real, cuStreamDestroy_v2, PFN_cuStreamDestroy_v4000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(hStream);
    uint64_t t0 = gt_now();
    return gt_object_end(t, GT_API_cuStreamDestroy_v2, t0, real(hStream), PTR(hStream), 0, -1);
}

/* ---- cuInit ------------------------------------------------------------------------------------ */

/* CUPTI must be configured before the driver initializes; the driver facts are written after. */
GT_EXPORT CUresult cuInit(unsigned int Flags)
{
    REAL(real, cuInit, PFN_cuInit_v2000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(Flags);
    int saved = errno;
    gt_cupti_setup(t);
    gt_py_rescan();
    gt_py_early();
    errno = saved;
    CUresult r = real(Flags);
    saved = errno;
    if (r == CUDA_SUCCESS) {
        gt_rec_driver_info(t);
        gt_cupti_after_init();
    }
    gt_leave(t);
    errno = saved;
    return r;
}
