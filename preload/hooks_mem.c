/* Memory hooks: allocations and frees of every kind the driver offers.
 * Every wrapper returns exactly what the real call returned and leaves errno as the real call
 * left it. Allocation times are taken after success, free times before forwarding, so that an
 * address freed on one thread and reused on another is ordered correctly. Each records the time
 * spent in the real call (dur_ns): one clock read before forwarding, the record time after. */
#include <cuda.h>
#include <cudaTypedefs.h>

#include "hooks.h"
#include "shim.h"

/* Records the outcome of an allocation call and ends the hook. */
static CUresult finish_alloc(struct gt_thread *t, uint64_t t0, unsigned api, CUresult r,
                             uint64_t addr, uint64_t size, uint64_t stream, uint64_t aux,
                             uint32_t flags, int dev)
{
    int saved = errno;
    if (r == CUDA_SUCCESS) {
        /* asked of the driver once: the record needs it, the sample may (an explicit device
         * says nothing of the current one) */
        int cur = GT_DEV_CURRENT;
        if (dev == GT_DEV_CURRENT) dev = cur = gt_current_device();
        gt_rec_alloc(t, api, t0, addr, size, stream, aux, flags, dev);
        gt_meminfo_tick(t, cur);
    } else {
        gt_rec_alloc_fail(t, api, t0, size, stream, r); /* writes its meminfo sample */
    }
    gt_leave(t);
    errno = saved;
    return r;
}

static CUresult finish_free(struct gt_thread *t, unsigned api, uint64_t t0, CUresult r,
                            uint64_t addr, uint64_t stream, uint64_t size)
{
    int saved = errno;
    gt_rec_free(t, api, t0, addr, stream, size, r);
    gt_meminfo_tick(t, GT_DEV_CURRENT);
    gt_leave(t);
    errno = saved;
    return r;
}

/* ---- plain device memory ---------------------------------------------------------------------- */

GT_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    REAL(real, cuMemAlloc_v2, PFN_cuMemAlloc_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr, bytesize);
    uint64_t t0 = gt_now();
    CUresult r = real(dptr, bytesize);
    return finish_alloc(t, t0, GT_API_cuMemAlloc_v2, r, r ? 0 : *dptr, bytesize, 0, 0, 0,
                        GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                      size_t Height, unsigned int ElementSizeBytes)
{
    REAL(real, cuMemAllocPitch_v2, PFN_cuMemAllocPitch_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    uint64_t t0 = gt_now();
    CUresult r = real(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
    uint64_t pitch = r ? WidthInBytes : *pPitch;
    return finish_alloc(t, t0, GT_API_cuMemAllocPitch_v2, r, r ? 0 : *dptr, pitch * Height, 0,
                        pitch, ElementSizeBytes, GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    REAL(real, cuMemAllocManaged, PFN_cuMemAllocManaged_v6000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr, bytesize, flags);
    uint64_t t0 = gt_now();
    CUresult r = real(dptr, bytesize, flags);
    return finish_alloc(t, t0, GT_API_cuMemAllocManaged, r, r ? 0 : *dptr, bytesize, 0, 0, flags,
                        GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    REAL(real, cuMemFree_v2, PFN_cuMemFree_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr);
    uint64_t t0 = gt_now();
    return finish_free(t, GT_API_cuMemFree_v2, t0, real(dptr), dptr, 0, 0);
}

/* ---- stream-ordered allocations --------------------------------------------------------------- */

/* finish_alloc plus a sample of the pool (pool 0: the device's current pool), rate-limited, and
 * always after a failure. */
static CUresult finish_async(struct gt_thread *t, uint64_t t0, unsigned api, CUresult r,
                             uint64_t addr, uint64_t size, uint64_t stream, uint64_t pool)
{
    int saved = errno;
    int cur = gt_current_device();
    if (r == CUDA_SUCCESS) {
        gt_rec_alloc(t, api, t0, addr, size, stream, pool, 0, cur);
        gt_meminfo_tick(t, cur);
    } else {
        gt_rec_alloc_fail(t, api, t0, size, stream, r);
    }
    if (pool)
        gt_pool_tick(t, pool, r != CUDA_SUCCESS);
    else
        gt_pool_tick_current(t, cur, r != CUDA_SUCCESS);
    gt_leave(t);
    errno = saved;
    return r;
}

static CUresult alloc_async(unsigned api, PFN_cuMemAllocAsync_v11020 real, CUdeviceptr *dptr,
                            size_t bytesize, CUstream s)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr, bytesize, s);
    uint64_t t0 = gt_now();
    CUresult r = real(dptr, bytesize, s);
    return finish_async(t, t0, api, r, r ? 0 : *dptr, bytesize, PTR(s), 0);
}

GT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    REAL(real, cuMemAllocAsync, PFN_cuMemAllocAsync_v11020);
    return alloc_async(GT_API_cuMemAllocAsync, real, dptr, bytesize, hStream);
}

GT_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    REAL(real, cuMemAllocAsync_ptsz, PFN_cuMemAllocAsync_v11020);
    return alloc_async(GT_API_cuMemAllocAsync_ptsz, real, dptr, bytesize, hStream);
}

static CUresult alloc_from_pool(unsigned api, PFN_cuMemAllocFromPoolAsync_v11020 real,
                                CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr, bytesize, pool, s);
    uint64_t t0 = gt_now();
    CUresult r = real(dptr, bytesize, pool, s);
    return finish_async(t, t0, api, r, r ? 0 : *dptr, bytesize, PTR(s), PTR(pool));
}

GT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                           CUstream hStream)
{
    REAL(real, cuMemAllocFromPoolAsync, PFN_cuMemAllocFromPoolAsync_v11020);
    return alloc_from_pool(GT_API_cuMemAllocFromPoolAsync, real, dptr, bytesize, pool, hStream);
}

GT_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                CUmemoryPool pool, CUstream hStream)
{
    REAL(real, cuMemAllocFromPoolAsync_ptsz, PFN_cuMemAllocFromPoolAsync_v11020);
    return alloc_from_pool(GT_API_cuMemAllocFromPoolAsync_ptsz, real, dptr, bytesize, pool,
                           hStream);
}

static CUresult free_async(unsigned api, PFN_cuMemFreeAsync_v11020 real, CUdeviceptr dptr,
                           CUstream s)
{
    struct gt_thread *t = gt_enter();
    if (!t) return real(dptr, s);
    int saved = errno;
    uint64_t pool = gt_pool_of_ptr_if_due(t, dptr); /* asked while dptr is still allocated */
    errno = saved;
    uint64_t t0 = gt_now();
    CUresult r = real(dptr, s);
    saved = errno;
    gt_rec_free(t, api, t0, dptr, PTR(s), 0, r);
    gt_meminfo_tick(t, GT_DEV_CURRENT);
    if (pool && r == CUDA_SUCCESS) gt_pool_tick(t, pool, 0);
    gt_leave(t);
    errno = saved;
    return r;
}

GT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    REAL(real, cuMemFreeAsync, PFN_cuMemFreeAsync_v11020);
    return free_async(GT_API_cuMemFreeAsync, real, dptr, hStream);
}

GT_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    REAL(real, cuMemFreeAsync_ptsz, PFN_cuMemFreeAsync_v11020);
    return free_async(GT_API_cuMemFreeAsync_ptsz, real, dptr, hStream);
}

/* ---- pools ------------------------------------------------------------------------------------- */

GT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    REAL(real, cuMemPoolCreate, PFN_cuMemPoolCreate_v11020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pool, poolProps);
    CUresult r = real(pool, poolProps);
    int dev = poolProps && poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE
                  ? poolProps->location.id
                  : -1;
    int saved = errno;
    gt_rec_object(t, GT_API_cuMemPoolCreate, gt_now(), r ? 0 : PTR(*pool), 0, dev, r);
    if (r == CUDA_SUCCESS) gt_pool_created(t, PTR(*pool), dev);
    gt_leave(t);
    errno = saved;
    return r;
}

GT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    REAL(real, cuMemPoolDestroy, PFN_cuMemPoolDestroy_v11020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pool);
    uint64_t t0 = gt_now();
    CUresult r = real(pool);
    if (r == CUDA_SUCCESS) gt_pool_destroyed(PTR(pool));
    return gt_object_end(t, GT_API_cuMemPoolDestroy, t0, r, PTR(pool), 0, -1);
}

GT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    REAL(real, cuMemPoolTrimTo, PFN_cuMemPoolTrimTo_v11020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pool, minBytesToKeep);
    uint64_t t0 = gt_now();
    CUresult r = real(pool, minBytesToKeep);
    int saved = errno;
    gt_rec_object(t, GT_API_cuMemPoolTrimTo, t0, PTR(pool), minBytesToKeep, -1, r);
    if (r == CUDA_SUCCESS) gt_pool_tick(t, PTR(pool), 1);
    gt_leave(t);
    errno = saved;
    return r;
}

/* ---- virtual memory management (PyTorch expandable segments, NCCL) ---------------------------- */

GT_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                       CUdeviceptr addr, unsigned long long flags)
{
    REAL(real, cuMemAddressReserve, PFN_cuMemAddressReserve_v10020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(ptr, size, alignment, addr, flags);
    uint64_t t0 = gt_now();
    CUresult r = real(ptr, size, alignment, addr, flags);
    return finish_alloc(t, t0, GT_API_cuMemAddressReserve, r, r ? 0 : *ptr, size, 0, alignment,
                        (uint32_t)flags, GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    REAL(real, cuMemAddressFree, PFN_cuMemAddressFree_v10020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(ptr, size);
    uint64_t t0 = gt_now();
    return finish_free(t, GT_API_cuMemAddressFree, t0, real(ptr, size), ptr, 0, size);
}

GT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop, unsigned long long flags)
{
    REAL(real, cuMemCreate, PFN_cuMemCreate_v10020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(handle, size, prop, flags);
    uint64_t t0 = gt_now();
    CUresult r = real(handle, size, prop, flags);
    /* Host-NUMA handles (NCCL) are not device memory: device -1. */
    int dev = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
    return finish_alloc(t, t0, GT_API_cuMemCreate, r, r ? 0 : *handle, size, 0,
                        prop ? (uint64_t)prop->type : 0, (uint32_t)flags, dev);
}

GT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    REAL(real, cuMemRelease, PFN_cuMemRelease_v10020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(handle);
    uint64_t t0 = gt_now();
    return finish_free(t, GT_API_cuMemRelease, t0, real(handle), handle, 0, 0);
}

static CUresult finish_map(struct gt_thread *t, unsigned api, uint64_t ts, CUresult r,
                           uint64_t addr, uint64_t size, uint64_t offset, uint64_t handle)
{
    int saved = errno;
    struct gt_rec_vmm_map *m = gt_reserve(t, sizeof(*m));
    if (m) {
        *m = (struct gt_rec_vmm_map){.ts = ts, .addr = addr, .size = size, .offset = offset,
                                     .handle = handle, .result = r};
        gt_commit(t, m, GT_REC_VMM_MAP, (uint16_t)api, sizeof(*m), ts);
    }
    gt_leave(t);
    errno = saved;
    return r;
}

GT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                            CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    REAL(real, cuMemMap, PFN_cuMemMap_v10020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(ptr, size, offset, handle, flags);
    CUresult r = real(ptr, size, offset, handle, flags);
    return finish_map(t, GT_API_cuMemMap, gt_now(), r, ptr, size, offset, handle);
}

GT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    REAL(real, cuMemUnmap, PFN_cuMemUnmap_v10020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(ptr, size);
    uint64_t t0 = gt_now();
    return finish_map(t, GT_API_cuMemUnmap, t0, real(ptr, size), ptr, size, 0, 0);
}

/* ---- arrays ------------------------------------------------------------------------------------ */

static uint64_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF: return 2;
    default: return 4;
    }
}

static uint64_t dim(size_t v) { return v ? v : 1; }

static uint64_t array3d_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
    uint64_t total = 0;
    if (!d) return 0;
    for (unsigned l = 0; l < (levels ? levels : 1) && l < 64; l++)
        total += dim(d->Width >> l) * dim(d->Height >> l) * dim(d->Depth >> l) * d->NumChannels *
                 format_bytes(d->Format);
    return total;
}

GT_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    REAL(real, cuArrayCreate_v2, PFN_cuArrayCreate_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pHandle, pAllocateArray);
    uint64_t t0 = gt_now();
    CUresult r = real(pHandle, pAllocateArray);
    const CUDA_ARRAY_DESCRIPTOR *d = pAllocateArray;
    uint64_t bytes = d ? dim(d->Width) * dim(d->Height) * d->NumChannels * format_bytes(d->Format)
                       : 0;
    return finish_alloc(t, t0, GT_API_cuArrayCreate_v2, r, r ? 0 : PTR(*pHandle), bytes, 0, 0, 0,
                        GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle,
                                      const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    REAL(real, cuArray3DCreate_v2, PFN_cuArray3DCreate_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pHandle, pAllocateArray);
    uint64_t t0 = gt_now();
    CUresult r = real(pHandle, pAllocateArray);
    return finish_alloc(t, t0, GT_API_cuArray3DCreate_v2, r, r ? 0 : PTR(*pHandle),
                        array3d_bytes(pAllocateArray, 1), 0, 0, 0, GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
    REAL(real, cuArrayDestroy, PFN_cuArrayDestroy_v2000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(hArray);
    uint64_t t0 = gt_now();
    return finish_free(t, GT_API_cuArrayDestroy, t0, real(hArray), PTR(hArray), 0, 0);
}

GT_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                          const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                          unsigned int numMipmapLevels)
{
    REAL(real, cuMipmappedArrayCreate, PFN_cuMipmappedArrayCreate_v5000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pHandle, pMipmappedArrayDesc, numMipmapLevels);
    uint64_t t0 = gt_now();
    CUresult r = real(pHandle, pMipmappedArrayDesc, numMipmapLevels);
    return finish_alloc(t, t0, GT_API_cuMipmappedArrayCreate, r, r ? 0 : PTR(*pHandle),
                        array3d_bytes(pMipmappedArrayDesc, numMipmapLevels), 0, numMipmapLevels,
                        0, GT_DEV_CURRENT);
}

GT_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    REAL(real, cuMipmappedArrayDestroy, PFN_cuMipmappedArrayDestroy_v5000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(hMipmappedArray);
    uint64_t t0 = gt_now();
    return finish_free(t, GT_API_cuMipmappedArrayDestroy, t0, real(hMipmappedArray),
                       PTR(hMipmappedArray), 0, 0);
}

/* ---- page-locked host memory (reported apart from device memory) ------------------------------- */

GT_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    REAL(real, cuMemHostAlloc, PFN_cuMemHostAlloc_v2020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pp, bytesize, Flags);
    uint64_t t0 = gt_now();
    CUresult r = real(pp, bytesize, Flags);
    return finish_alloc(t, t0, GT_API_cuMemHostAlloc, r, r ? 0 : PTR(*pp), bytesize, 0, 0, Flags,
                        -1);
}

GT_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    REAL(real, cuMemAllocHost_v2, PFN_cuMemAllocHost_v3020);
    struct gt_thread *t = gt_enter();
    if (!t) return real(pp, bytesize);
    uint64_t t0 = gt_now();
    CUresult r = real(pp, bytesize);
    return finish_alloc(t, t0, GT_API_cuMemAllocHost_v2, r, r ? 0 : PTR(*pp), bytesize, 0, 0, 0,
                        -1);
}

GT_EXPORT CUresult cuMemFreeHost(void *p)
{
    REAL(real, cuMemFreeHost, PFN_cuMemFreeHost_v2000);
    struct gt_thread *t = gt_enter();
    if (!t) return real(p);
    uint64_t t0 = gt_now();
    return finish_free(t, GT_API_cuMemFreeHost, t0, real(p), PTR(p), 0, 0);
}
