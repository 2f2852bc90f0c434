/* Device, managed, host and stream-ordered memory, copies and memsets of the simulated runtime.
 * Each call is the driver call libcudart makes for it, on the calling thread's primary context;
 * the _ptsz exports use the driver's per-thread-default-stream entry points. */
#include "srt.h"

#include <string.h>

cudaError_t CUDARTAPI cudaMalloc(void **p, size_t size)
{
    if (!p) return srt_err(cudaErrorInvalidValue);
    cudaError_t e = srt_ctx();
    if (e) return e;
    if (size == 0) {
        *p = NULL;
        return cudaSuccess;
    }
    CUdeviceptr d = 0;
    CUresult r = srt_drv.cuMemAlloc(&d, size);
    *p = r == CUDA_SUCCESS ? (void *)d : NULL;
    return srt_ret(r);
}

cudaError_t CUDARTAPI cudaFree(void *p)
{
    cudaError_t e = srt_ctx(); /* cudaFree(0) is the idiom that initializes the context */
    if (e || !p) return e;
    return srt_ret(srt_drv.cuMemFree((CUdeviceptr)p));
}

cudaError_t CUDARTAPI cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemAllocManaged((CUdeviceptr *)p, size, flags));
}

cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free_b, size_t *total)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemGetInfo(free_b, total));
}

cudaError_t CUDARTAPI cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemHostAlloc(p, size, flags));
}

cudaError_t CUDARTAPI cudaMallocHost(void **p, size_t size)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemAllocHost(p, size));
}

cudaError_t CUDARTAPI cudaFreeHost(void *p)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemFreeHost(p));
}

cudaError_t CUDARTAPI cudaHostRegister(void *p, size_t size, unsigned int flags)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemHostRegister(p, size, flags));
}

cudaError_t CUDARTAPI cudaHostUnregister(void *p)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemHostUnregister(p));
}

cudaError_t CUDARTAPI cudaHostGetDevicePointer(void **d, void *h, unsigned int flags)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemHostGetDevicePointer((CUdeviceptr *)d, h, flags));
}

/* Host pointers the driver does not know are cudaMemoryTypeUnregistered, with success (CUDA 11+).
 */
cudaError_t CUDARTAPI cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *ptr)
{
    if (!a) return srt_err(cudaErrorInvalidValue);
    cudaError_t e = srt_ctx();
    if (e) return e;
    memset(a, 0, sizeof *a);
    a->device = -2; /* what the real runtime reports for unregistered memory */
    unsigned int type = 0;
    CUdeviceptr p = (CUdeviceptr)ptr;
    if (srt_drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS) {
        a->type = cudaMemoryTypeUnregistered;
        a->hostPointer = (void *)ptr;
        return cudaSuccess;
    }
    int ordinal = 0, managed = 0;
    srt_drv.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
    srt_drv.cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, p);
    a->device = ordinal;
    if (managed) {
        a->type = cudaMemoryTypeManaged;
        a->devicePointer = a->hostPointer = (void *)ptr;
    } else if (type == CU_MEMORYTYPE_HOST) {
        a->type = cudaMemoryTypeHost;
        a->hostPointer = (void *)ptr;
        CUdeviceptr dp = 0;
        if (srt_drv.cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p) ==
            CUDA_SUCCESS)
            a->devicePointer = (void *)dp;
    } else {
        a->type = cudaMemoryTypeDevice;
        a->devicePointer = (void *)ptr;
    }
    return cudaSuccess;
}

/* ---- copies and memsets ------------------------------------------------------------------------
 */

/* cudaMemcpyDefault: the direction from what the driver knows of each pointer. */
static int is_device(const void *p)
{
    unsigned int type = 0;
    if (srt_drv.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)p) !=
        CUDA_SUCCESS)
        return 0;
    return type == CU_MEMORYTYPE_DEVICE;
}

static enum cudaMemcpyKind direction(const void *dst, const void *src, enum cudaMemcpyKind kind)
{
    if (kind != cudaMemcpyDefault) return kind;
    int d = is_device(dst), s = is_device(src);
    return d ? (s ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
             : (s ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

static cudaError_t memcpy_sync(int pt, void *dst, const void *src, size_t n,
                               enum cudaMemcpyKind kind)
{
    cudaError_t e = srt_ctx();
    if (e) return e;
    if (n == 0) return cudaSuccess;
    switch (direction(dst, src, kind)) {
    case cudaMemcpyHostToHost:
        memmove(dst, src, n);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return srt_ret(SRT_PT(pt, cuMemcpyHtoD)((CUdeviceptr)dst, src, n));
    case cudaMemcpyDeviceToHost:
        return srt_ret(SRT_PT(pt, cuMemcpyDtoH)(dst, (CUdeviceptr)src, n));
    case cudaMemcpyDeviceToDevice:
        return srt_ret(SRT_PT(pt, cuMemcpyDtoD)((CUdeviceptr)dst, (CUdeviceptr)src, n));
    default:
        return srt_err(cudaErrorInvalidMemcpyDirection);
    }
}

static cudaError_t memcpy_async(int pt, void *dst, const void *src, size_t n,
                                enum cudaMemcpyKind kind, cudaStream_t s)
{
    cudaError_t e = srt_ctx();
    if (e) return e;
    if (n == 0) return cudaSuccess;
    switch (direction(dst, src, kind)) {
    case cudaMemcpyHostToHost:
        /* the real runtime orders it on the stream; nothing else here is on the host */
        memmove(dst, src, n);
        return cudaSuccess;
    case cudaMemcpyHostToDevice:
        return srt_ret(SRT_PT(pt, cuMemcpyHtoDAsync)((CUdeviceptr)dst, src, n, s));
    case cudaMemcpyDeviceToHost:
        return srt_ret(SRT_PT(pt, cuMemcpyDtoHAsync)(dst, (CUdeviceptr)src, n, s));
    case cudaMemcpyDeviceToDevice:
        return srt_ret(SRT_PT(pt, cuMemcpyDtoDAsync)((CUdeviceptr)dst, (CUdeviceptr)src, n, s));
    default:
        return srt_err(cudaErrorInvalidMemcpyDirection);
    }
}

cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    return memcpy_sync(0, dst, src, n, kind);
}

cudaError_t CUDARTAPI cudaMemcpy_ptds(void *dst, const void *src, size_t n,
                                      enum cudaMemcpyKind kind)
{
    return memcpy_sync(1, dst, src, n, kind);
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t n,
                                      enum cudaMemcpyKind kind, cudaStream_t s)
{
    return memcpy_async(0, dst, src, n, kind, s);
}

cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n,
                                           enum cudaMemcpyKind kind, cudaStream_t s)
{
    return memcpy_async(1, dst, src, n, kind, s);
}

cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev,
                                          size_t n, cudaStream_t s)
{
    /* one context per device here; a same-device peer copy is a device-to-device copy */
    if (dst_dev != src_dev) return srt_err(cudaErrorNotSupported);
    return memcpy_async(0, dst, src, n, cudaMemcpyDeviceToDevice, s);
}

cudaError_t CUDARTAPI cudaMemset(void *p, int value, size_t n)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemsetD8((CUdeviceptr)p, (unsigned char)value, n));
}

cudaError_t CUDARTAPI cudaMemset_ptds(void *p, int value, size_t n)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.pt_cuMemsetD8((CUdeviceptr)p, (unsigned char)value, n));
}

cudaError_t CUDARTAPI cudaMemsetAsync(void *p, int value, size_t n, cudaStream_t s)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemsetD8Async((CUdeviceptr)p, (unsigned char)value, n, s));
}

cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *p, int value, size_t n, cudaStream_t s)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.pt_cuMemsetD8Async((CUdeviceptr)p, (unsigned char)value, n, s));
}

/* ---- stream-ordered pools (cudaMemPool_t is the driver's CUmemoryPool; the attribute and
 * access-descriptor types share numbers and layouts) --------------------------------------------
 */

cudaError_t CUDARTAPI cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int dev)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuDeviceGetDefaultMemPool((CUmemoryPool *)pool, dev));
}

cudaError_t CUDARTAPI cudaDeviceGetMemPool(cudaMemPool_t *pool, int dev)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuDeviceGetMemPool((CUmemoryPool *)pool, dev));
}

cudaError_t CUDARTAPI cudaDeviceSetMemPool(int dev, cudaMemPool_t pool)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuDeviceSetMemPool(dev, (CUmemoryPool)pool));
}

cudaError_t CUDARTAPI cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    cudaError_t e = srt_ctx();
    return e ? e
             : srt_ret(
                   srt_drv.cuMemPoolCreate((CUmemoryPool *)pool, (const CUmemPoolProps *)props));
}

cudaError_t CUDARTAPI cudaMemPoolDestroy(cudaMemPool_t pool)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemPoolDestroy((CUmemoryPool)pool));
}

cudaError_t CUDARTAPI cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{
    cudaError_t e = srt_ctx();
    return e ? e
             : srt_ret(
                   srt_drv.cuMemPoolGetAttribute((CUmemoryPool)pool, (CUmemPool_attribute)a, v));
}

cudaError_t CUDARTAPI cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{
    cudaError_t e = srt_ctx();
    return e ? e
             : srt_ret(
                   srt_drv.cuMemPoolSetAttribute((CUmemoryPool)pool, (CUmemPool_attribute)a, v));
}

cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemPoolTrimTo((CUmemoryPool)pool, keep));
}

cudaError_t CUDARTAPI cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc *d,
                                           size_t n)
{
    cudaError_t e = srt_ctx();
    return e ? e
             : srt_ret(
                   srt_drv.cuMemPoolSetAccess((CUmemoryPool)pool, (const CUmemAccessDesc *)d, n));
}

static cudaError_t malloc_async(int pt, void **p, size_t size, cudaStream_t s)
{
    if (!p) return srt_err(cudaErrorInvalidValue);
    cudaError_t e = srt_ctx();
    if (e) return e;
    CUdeviceptr d = 0;
    CUresult r = SRT_PT(pt, cuMemAllocAsync)(&d, size, s);
    *p = r == CUDA_SUCCESS ? (void *)d : NULL;
    return srt_ret(r);
}

cudaError_t CUDARTAPI cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    return malloc_async(0, p, size, s);
}
cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **p, size_t size, cudaStream_t s)
{
    return malloc_async(1, p, size, s);
}

cudaError_t CUDARTAPI cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool,
                                              cudaStream_t s)
{
    cudaError_t e = srt_ctx();
    return e ? e
             : srt_ret(
                   srt_drv.cuMemAllocFromPoolAsync((CUdeviceptr *)p, size, (CUmemoryPool)pool, s));
}

cudaError_t CUDARTAPI cudaFreeAsync(void *p, cudaStream_t s)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuMemFreeAsync((CUdeviceptr)p, s));
}

cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.pt_cuMemFreeAsync((CUdeviceptr)p, s));
}

/* Graph memory nodes do not exist here: nothing is ever reserved for them. */
cudaError_t CUDARTAPI cudaDeviceGetGraphMemAttribute(int dev, enum cudaGraphMemAttributeType a,
                                                     void *v)
{
    cudaError_t e = srt_ctx();
    if (e) return e;
    if (!v) return srt_err(cudaErrorInvalidValue);
    *(cuuint64_t *)v = 0;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceSetGraphMemAttribute(int dev, enum cudaGraphMemAttributeType a,
                                                     void *v)
{
    cudaError_t e = srt_ctx();
    return e ? e : cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGraphMemTrim(int dev)
{
    cudaError_t e = srt_ctx();
    return e ? e : cudaSuccess;
}
