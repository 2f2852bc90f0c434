/* Memory copies and memsets. Device memory has no backing store: bytes are really copied (or
 * set) only when both sides are host-accessible (pageable or page-locked host memory, managed
 * memory). Synchronous copies go on the (legacy or per-thread) default stream and block the host
 * until the simulated copy ends; async copies and all memsets only enqueue. */
#include "sim.h"

#include <string.h>

enum { S_HOST = CU_MEMORYTYPE_HOST, S_DEVICE = CU_MEMORYTYPE_DEVICE, S_ARRAY = CU_MEMORYTYPE_ARRAY,
       S_UNIFIED = CU_MEMORYTYPE_UNIFIED };

struct side {
    int type;
    uint64_t addr; /* host or device address of the first byte (x/y/z applied) */
    void *arr;
    uint64_t extent; /* bytes spanned from addr */
    uint64_t pitch, height;
    int kind, host_ok;
};

static CUresult side_check(struct side *x)
{
    int dummy;
    switch (x->type) {
    case S_HOST:
        if (!x->addr)
            return CUDA_ERROR_INVALID_VALUE;
        x->kind = mem_kind_of(x->addr, &x->host_ok); /* managed memory passed as host memory is fine */
        if (x->kind == GTSIM_MEM_DEVICE)
            x->kind = GTSIM_MEM_PAGEABLE, x->host_ok = 0; /* a device address passed as host: never touch */
        return CUDA_SUCCESS;
    case S_DEVICE:
    case S_UNIFIED: {
        x->kind = mem_kind_of(x->addr, &dummy);
        if (x->type == S_UNIFIED && (x->kind == GTSIM_MEM_PAGEABLE || x->kind == GTSIM_MEM_PINNED)) {
            x->host_ok = 1;
            return x->addr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        }
        return mem_check_device_range((CUdeviceptr)x->addr, (size_t)x->extent, &x->host_ok);
    }
    case S_ARRAY: {
        uint64_t b = mem_array_bytes(x->arr);
        x->kind = GTSIM_MEM_ARRAY;
        x->host_ok = 0;
        return b && x->addr + x->extent <= b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    }
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static int cls(const struct side *x) /* 0 host, 1 device, 2 array: the declared type, else the memory */
{
    if (x->type == S_HOST)
        return 0;
    if (x->type == S_DEVICE)
        return 1;
    return x->kind == GTSIM_MEM_ARRAY ? 2 : (x->kind == GTSIM_MEM_DEVICE || x->kind == GTSIM_MEM_MANAGED) ? 1 : 0;
}

static int copy_kind(const struct side *d, const struct side *s, int peer)
{
    static const int k[3][3] = {
        /* dst:   host             device           array */
        {GTSIM_COPY_HTOH, GTSIM_COPY_HTOD, GTSIM_COPY_HTOA}, /* src host */
        {GTSIM_COPY_DTOH, GTSIM_COPY_DTOD, GTSIM_COPY_DTOA}, /* src device */
        {GTSIM_COPY_ATOH, GTSIM_COPY_ATOD, GTSIM_COPY_ATOA}, /* src array */
    };
    int r = k[cls(s)][cls(d)];
    return r == GTSIM_COPY_DTOD && peer ? GTSIM_COPY_PTOP : r;
}

struct copy_req {
    struct side dst, src;
    uint64_t width, height, depth;
    struct sim_ctx *peer_ctx; /* copies between contexts: use the destination context's stream */
    int peer;
};

static uint64_t span(uint64_t w, uint64_t h, uint64_t d, uint64_t pitch, uint64_t height)
{
    if (!w || !h || !d)
        return 0;
    return pitch * height * (d - 1) + pitch * (h - 1) + w;
}

static void host_copy(const struct copy_req *r)
{
    for (uint64_t z = 0; z < r->depth; z++)
        for (uint64_t y = 0; y < r->height; y++) {
            char *dp = (char *)(uintptr_t)(r->dst.addr + z * r->dst.pitch * r->dst.height + y * r->dst.pitch);
            const char *sp = (const char *)(uintptr_t)(r->src.addr + z * r->src.pitch * r->src.height + y * r->src.pitch);
            memmove(dp, sp, (size_t)r->width);
        }
}

static CUresult copy_run(struct copy_req *r, CUstream hs, int ptsz, int sync, int is_async)
{
    uint64_t bytes = r->width * r->height * r->depth;
    for (int i = 0; i < 2; i++) {
        struct side *x = i ? &r->src : &r->dst;
        if (x->type != S_ARRAY && x->pitch < r->width)
            x->pitch = r->width;
        if (!x->height)
            x->height = r->height;
        if (x->type != S_ARRAY && r->height > 1 && x->pitch < r->width)
            return CUDA_ERROR_INVALID_VALUE;
        x->extent = span(r->width, r->height, r->depth, x->pitch, x->height);
    }
    uint64_t end = 0;
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s = NULL;
    CUresult rc;
    if (r->peer_ctx && !hs)
        rc = ptsz ? stream_resolve(CU_STREAM_PER_THREAD, 1, &s) : (s = r->peer_ctx->legacy, CUDA_SUCCESS);
    else
        rc = stream_resolve(hs, ptsz, &s);
    if (!rc && bytes) {
        if ((rc = side_check(&r->dst)) || (rc = side_check(&r->src)))
            goto out;
        if (r->dst.host_ok && r->src.host_ok)
            host_copy(r);
        struct sim_work w = {.kind = GTSIM_ACT_MEMCPY, .dur = copy_duration(bytes), .bytes = bytes,
                             .copy_kind = copy_kind(&r->dst, &r->src, r->peer), .src_kind = r->src.kind,
                             .dst_kind = r->dst.kind, .is_async = is_async};
        end = work_enqueue(s, hs, &w);
    }
out:
    pthread_mutex_unlock(&g_lock);
    if (!rc && sync && end)
        sim_sleep_until(end);
    return rc;
}

static CUresult copy1d(int dt, uint64_t dst, void *darr, int st, uint64_t src, void *sarr, size_t n, CUstream hs,
                       int ptsz, int sync)
{
    struct copy_req r = {.dst = {.type = dt, .addr = dst, .arr = darr},
                         .src = {.type = st, .addr = src, .arr = sarr},
                         .width = n, .height = 1, .depth = 1};
    return copy_run(&r, hs, ptsz, sync, !sync);
}

#define U(p) ((uint64_t)(uintptr_t)(p))

/* synchronous 1D copies: legacy and _ptds pairs */
#define SYNC_COPY(NAME, PTDS, PARAMS, DT, DST, DARR, ST, SRC, SARR, N)                         \
    CUresult CUDAAPI NAME PARAMS { SIM_API(NAME, copy1d(DT, DST, DARR, ST, SRC, SARR, N, NULL, 0, 1)); } \
    SIM_EXPORT(NAME)                                                                           \
    CUresult CUDAAPI PTDS PARAMS { SIM_API(PTDS, copy1d(DT, DST, DARR, ST, SRC, SARR, N, NULL, 1, 1)); } \
    SIM_EXPORT(PTDS)

SYNC_COPY(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
          S_DEVICE, dstDevice, NULL, S_HOST, U(srcHost), NULL, ByteCount)
SYNC_COPY(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
          S_HOST, U(dstHost), NULL, S_DEVICE, srcDevice, NULL, ByteCount)
SYNC_COPY(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
          S_DEVICE, dstDevice, NULL, S_DEVICE, srcDevice, NULL, ByteCount)
SYNC_COPY(cuMemcpy, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
          S_UNIFIED, dst, NULL, S_UNIFIED, src, NULL, ByteCount)
SYNC_COPY(cuMemcpyHtoA_v2, cuMemcpyHtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount),
          S_ARRAY, dstOffset, dstArray, S_HOST, U(srcHost), NULL, ByteCount)
SYNC_COPY(cuMemcpyAtoH_v2, cuMemcpyAtoH_v2_ptds, (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount),
          S_HOST, U(dstHost), NULL, S_ARRAY, srcOffset, srcArray, ByteCount)
SYNC_COPY(cuMemcpyDtoA_v2, cuMemcpyDtoA_v2_ptds, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount),
          S_ARRAY, dstOffset, dstArray, S_DEVICE, srcDevice, NULL, ByteCount)
SYNC_COPY(cuMemcpyAtoD_v2, cuMemcpyAtoD_v2_ptds, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount),
          S_DEVICE, dstDevice, NULL, S_ARRAY, srcOffset, srcArray, ByteCount)
SYNC_COPY(cuMemcpyAtoA_v2, cuMemcpyAtoA_v2_ptds,
          (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount),
          S_ARRAY, dstOffset, dstArray, S_ARRAY, srcOffset, srcArray, ByteCount)

/* asynchronous 1D copies: legacy and _ptsz pairs */
#define ASYNC_COPY(NAME, PTSZ, PARAMS, DT, DST, DARR, ST, SRC, SARR, N)                                  \
    CUresult CUDAAPI NAME PARAMS { SIM_API(NAME, copy1d(DT, DST, DARR, ST, SRC, SARR, N, hStream, 0, 0)); } \
    SIM_EXPORT(NAME)                                                                                   \
    CUresult CUDAAPI PTSZ PARAMS { SIM_API(PTSZ, copy1d(DT, DST, DARR, ST, SRC, SARR, N, hStream, 1, 0)); } \
    SIM_EXPORT(PTSZ)

ASYNC_COPY(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
           (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
           S_DEVICE, dstDevice, NULL, S_HOST, U(srcHost), NULL, ByteCount)
ASYNC_COPY(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
           (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
           S_HOST, U(dstHost), NULL, S_DEVICE, srcDevice, NULL, ByteCount)
ASYNC_COPY(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
           (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
           S_DEVICE, dstDevice, NULL, S_DEVICE, srcDevice, NULL, ByteCount)
ASYNC_COPY(cuMemcpyAsync, cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
           S_UNIFIED, dst, NULL, S_UNIFIED, src, NULL, ByteCount)
ASYNC_COPY(cuMemcpyHtoAAsync_v2, cuMemcpyHtoAAsync_v2_ptsz,
           (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream),
           S_ARRAY, dstOffset, dstArray, S_HOST, U(srcHost), NULL, ByteCount)
ASYNC_COPY(cuMemcpyAtoHAsync_v2, cuMemcpyAtoHAsync_v2_ptsz,
           (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream),
           S_HOST, U(dstHost), NULL, S_ARRAY, srcOffset, srcArray, ByteCount)

/* peer copies */
static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream hs,
                          int ptsz, int sync)
{
    pthread_mutex_lock(&g_lock);
    struct sim_ctx *dc, *sc;
    CUresult rc = ctx_check(dctx, &dc);
    if (!rc)
        rc = ctx_check(sctx, &sc);
    pthread_mutex_unlock(&g_lock);
    if (!dctx || !sctx)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    if (rc)
        return rc;
    struct copy_req r = {.dst = {.type = S_DEVICE, .addr = dst}, .src = {.type = S_DEVICE, .addr = src},
                         .width = n, .height = 1, .depth = 1, .peer_ctx = dc, .peer = dc->dev != sc->dev};
    return copy_run(&r, hs, ptsz, sync, !sync);
}
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                              size_t ByteCount)
{
    SIM_API(cuMemcpyPeer, copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 0, 1));
}
SIM_EXPORT(cuMemcpyPeer)
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount)
{
    SIM_API(cuMemcpyPeer_ptds, copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 1, 1));
}
SIM_EXPORT(cuMemcpyPeer_ptds)
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    SIM_API(cuMemcpyPeerAsync, copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 0, 0));
}
SIM_EXPORT(cuMemcpyPeerAsync)
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    SIM_API(cuMemcpyPeerAsync_ptsz, copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1, 0));
}
SIM_EXPORT(cuMemcpyPeerAsync_ptsz)

/* 2D and 3D copies */
static void side_from(struct side *x, int type, const void *host, CUdeviceptr dev, CUarray arr, size_t xb, size_t y,
                      size_t z, size_t pitch, size_t height)
{
    x->type = type;
    x->pitch = pitch;
    x->height = height;
    if (type == S_ARRAY) {
        x->arr = arr;
        x->addr = 0; /* offsets inside arrays are not modelled beyond the size check */
        return;
    }
    uint64_t base = type == S_HOST ? U(host) : (uint64_t)dev;
    if (type == S_UNIFIED && !base)
        base = U(host);
    x->addr = base + (uint64_t)z * pitch * height + (uint64_t)y * pitch + xb;
}

static CUresult copy2d(const CUDA_MEMCPY2D *p, CUstream hs, int ptsz, int sync)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    struct copy_req r = {.width = p->WidthInBytes, .height = p->Height, .depth = 1};
    side_from(&r.src, p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, 0, p->srcPitch,
              p->Height);
    side_from(&r.dst, p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, 0, p->dstPitch,
              p->Height);
    if ((p->srcMemoryType != CU_MEMORYTYPE_ARRAY && p->Height > 1 && p->srcPitch < p->WidthInBytes) ||
        (p->dstMemoryType != CU_MEMORYTYPE_ARRAY && p->Height > 1 && p->dstPitch < p->WidthInBytes))
        return CUDA_ERROR_INVALID_VALUE;
    return copy_run(&r, hs, ptsz, sync, !sync);
}

static CUresult copy3d(const CUDA_MEMCPY3D *p, CUstream hs, int ptsz, int sync)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    struct copy_req r = {.width = p->WidthInBytes, .height = p->Height, .depth = p->Depth};
    side_from(&r.src, p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcZ,
              p->srcPitch, p->srcHeight ? p->srcHeight : p->Height);
    side_from(&r.dst, p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstZ,
              p->dstPitch, p->dstHeight ? p->dstHeight : p->Height);
    return copy_run(&r, hs, ptsz, sync, !sync);
}

CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy) { SIM_API(cuMemcpy2D_v2, copy2d(pCopy, NULL, 0, 1)); }
SIM_EXPORT(cuMemcpy2D_v2)
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy) { SIM_API(cuMemcpy2D_v2_ptds, copy2d(pCopy, NULL, 1, 1)); }
SIM_EXPORT(cuMemcpy2D_v2_ptds)
CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy)
{
    SIM_API(cuMemcpy2DUnaligned_v2, copy2d(pCopy, NULL, 0, 1));
}
SIM_EXPORT(cuMemcpy2DUnaligned_v2)
CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy)
{
    SIM_API(cuMemcpy2DUnaligned_v2_ptds, copy2d(pCopy, NULL, 1, 1));
}
SIM_EXPORT(cuMemcpy2DUnaligned_v2_ptds)
CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    SIM_API(cuMemcpy2DAsync_v2, copy2d(pCopy, hStream, 0, 0));
}
SIM_EXPORT(cuMemcpy2DAsync_v2)
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    SIM_API(cuMemcpy2DAsync_v2_ptsz, copy2d(pCopy, hStream, 1, 0));
}
SIM_EXPORT(cuMemcpy2DAsync_v2_ptsz)
CUresult CUDAAPI cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy) { SIM_API(cuMemcpy3D_v2, copy3d(pCopy, NULL, 0, 1)); }
SIM_EXPORT(cuMemcpy3D_v2)
CUresult CUDAAPI cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy) { SIM_API(cuMemcpy3D_v2_ptds, copy3d(pCopy, NULL, 1, 1)); }
SIM_EXPORT(cuMemcpy3D_v2_ptds)
CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    SIM_API(cuMemcpy3DAsync_v2, copy3d(pCopy, hStream, 0, 0));
}
SIM_EXPORT(cuMemcpy3DAsync_v2)
CUresult CUDAAPI cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    SIM_API(cuMemcpy3DAsync_v2_ptsz, copy3d(pCopy, hStream, 1, 0));
}
SIM_EXPORT(cuMemcpy3DAsync_v2_ptsz)

/* ---- memsets ------------------------------------------------------------------------------------ */
static CUresult memset_run(CUdeviceptr dst, size_t pitch, unsigned value, unsigned elem, size_t width, size_t height,
                           CUstream hs, int ptsz, int is_async)
{
    uint64_t row = (uint64_t)width * elem;
    if (height > 1 && pitch < row)
        return CUDA_ERROR_INVALID_VALUE;
    if (height <= 1)
        pitch = (size_t)row;
    uint64_t bytes = row * height;
    pthread_mutex_lock(&g_lock);
    struct sim_stream *s;
    CUresult rc = stream_resolve(hs, ptsz, &s);
    if (!rc && bytes) {
        int host_ok;
        uint64_t extent = (uint64_t)pitch * (height - 1) + row;
        rc = mem_check_device_range(dst, (size_t)extent, &host_ok);
        if (!rc && (elem == 2 ? dst % 2 : elem == 4 ? dst % 4 : 0))
            rc = CUDA_ERROR_INVALID_VALUE;
        if (!rc) {
            if (host_ok)
                for (size_t y = 0; y < height; y++) {
                    char *p = (char *)(uintptr_t)(dst + y * pitch);
                    if (elem == 1)
                        memset(p, (int)(value & 0xff), width);
                    else
                        for (size_t i = 0; i < width; i++) {
                            if (elem == 2) {
                                unsigned short v = (unsigned short)value;
                                memcpy(p + 2 * i, &v, 2);
                            } else
                                memcpy(p + 4 * i, &value, 4);
                        }
                }
            int dummy;
            struct sim_work w = {.kind = GTSIM_ACT_MEMSET, .dur = copy_duration(bytes), .bytes = bytes,
                                 .dst_kind = mem_kind_of(dst, &dummy), .memset_value = value, .is_async = is_async};
            work_enqueue(s, hs, &w);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

#define MEMSET_PAIR(NAME, PT, VT, ELEM)                                                                   \
    CUresult CUDAAPI NAME(CUdeviceptr dstDevice, VT v, size_t N)                                          \
    {                                                                                                     \
        SIM_API(NAME, memset_run(dstDevice, 0, (unsigned)v, ELEM, N, 1, NULL, 0, 0));                     \
    }                                                                                                     \
    SIM_EXPORT(NAME)                                                                                      \
    CUresult CUDAAPI PT(CUdeviceptr dstDevice, VT v, size_t N)                                            \
    {                                                                                                     \
        SIM_API(PT, memset_run(dstDevice, 0, (unsigned)v, ELEM, N, 1, NULL, 1, 0));                       \
    }                                                                                                     \
    SIM_EXPORT(PT)
MEMSET_PAIR(cuMemsetD8_v2, cuMemsetD8_v2_ptds, unsigned char, 1)
MEMSET_PAIR(cuMemsetD16_v2, cuMemsetD16_v2_ptds, unsigned short, 2)
MEMSET_PAIR(cuMemsetD32_v2, cuMemsetD32_v2_ptds, unsigned int, 4)

#define MEMSET2D_PAIR(NAME, PT, VT, ELEM)                                                                 \
    CUresult CUDAAPI NAME(CUdeviceptr dstDevice, size_t dstPitch, VT v, size_t Width, size_t Height)      \
    {                                                                                                     \
        SIM_API(NAME, memset_run(dstDevice, dstPitch, (unsigned)v, ELEM, Width, Height, NULL, 0, 0));     \
    }                                                                                                     \
    SIM_EXPORT(NAME)                                                                                      \
    CUresult CUDAAPI PT(CUdeviceptr dstDevice, size_t dstPitch, VT v, size_t Width, size_t Height)        \
    {                                                                                                     \
        SIM_API(PT, memset_run(dstDevice, dstPitch, (unsigned)v, ELEM, Width, Height, NULL, 1, 0));       \
    }                                                                                                     \
    SIM_EXPORT(PT)
MEMSET2D_PAIR(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds, unsigned char, 1)
MEMSET2D_PAIR(cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds, unsigned short, 2)
MEMSET2D_PAIR(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds, unsigned int, 4)

#define MEMSET_ASYNC_PAIR(NAME, PT, VT, ELEM)                                                             \
    CUresult CUDAAPI NAME(CUdeviceptr dstDevice, VT v, size_t N, CUstream hStream)                        \
    {                                                                                                     \
        SIM_API(NAME, memset_run(dstDevice, 0, (unsigned)v, ELEM, N, 1, hStream, 0, 1));                  \
    }                                                                                                     \
    SIM_EXPORT(NAME)                                                                                      \
    CUresult CUDAAPI PT(CUdeviceptr dstDevice, VT v, size_t N, CUstream hStream)                          \
    {                                                                                                     \
        SIM_API(PT, memset_run(dstDevice, 0, (unsigned)v, ELEM, N, 1, hStream, 1, 1));                    \
    }                                                                                                     \
    SIM_EXPORT(PT)
MEMSET_ASYNC_PAIR(cuMemsetD8Async, cuMemsetD8Async_ptsz, unsigned char, 1)
MEMSET_ASYNC_PAIR(cuMemsetD16Async, cuMemsetD16Async_ptsz, unsigned short, 2)
MEMSET_ASYNC_PAIR(cuMemsetD32Async, cuMemsetD32Async_ptsz, unsigned int, 4)

#define MEMSET2D_ASYNC_PAIR(NAME, PT, VT, ELEM)                                                                  \
    CUresult CUDAAPI NAME(CUdeviceptr dstDevice, size_t dstPitch, VT v, size_t Width, size_t Height, CUstream hStream) \
    {                                                                                                            \
        SIM_API(NAME, memset_run(dstDevice, dstPitch, (unsigned)v, ELEM, Width, Height, hStream, 0, 1));         \
    }                                                                                                            \
    SIM_EXPORT(NAME)                                                                                             \
    CUresult CUDAAPI PT(CUdeviceptr dstDevice, size_t dstPitch, VT v, size_t Width, size_t Height, CUstream hStream) \
    {                                                                                                            \
        SIM_API(PT, memset_run(dstDevice, dstPitch, (unsigned)v, ELEM, Width, Height, hStream, 1, 1));           \
    }                                                                                                            \
    SIM_EXPORT(PT)
MEMSET2D_ASYNC_PAIR(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz, unsigned char, 1)
MEMSET2D_ASYNC_PAIR(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz, unsigned short, 2)
MEMSET2D_ASYNC_PAIR(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz, unsigned int, 4)
