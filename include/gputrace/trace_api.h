/* Ids of the driver API calls gputrace records (gt_rec_header.sub of API records).
 * Part of the trace format: ids are never renumbered or reused; new calls get new ids.
 *
 * X(id, enum suffix, exported symbol, family, memory kind)
 *   family: what the call does, for the analyzer
 *   memory kind: for allocation/free calls, which kind of memory (GT_MEM_NONE otherwise)
 */
#ifndef GPUTRACE_TRACE_API_H
#define GPUTRACE_TRACE_API_H

enum gt_api_family {
    GT_FAM_NONE = 0,
    GT_FAM_ALLOC,  /* makes memory: gt_rec_alloc / gt_rec_alloc_fail */
    GT_FAM_FREE,   /* releases memory: gt_rec_free */
    GT_FAM_MAP,    /* VMM map/unmap: gt_rec_vmm_map */
    GT_FAM_LAUNCH, /* gt_rec_launch */
    GT_FAM_SYNC,   /* host blocks until the GPU catches up: gt_rec_span */
    GT_FAM_COPY,   /* blocking copy: gt_rec_span */
    GT_FAM_WAIT,   /* stream waits on an event (GPU-side dependency): gt_rec_span */
    GT_FAM_OBJECT, /* context/stream/pool lifetime: gt_rec_object */
    GT_FAM_INIT,   /* cuInit */
    GT_FAM_RESOLVE, /* cuGetProcAddress */
    GT_FAM_ENQUEUE  /* async copy or memset: gt_rec_launch (func = destination, grid[0..1] = bytes);
                     * GPU work like a launch's, but never a kernel launch */
};

enum gt_mem_kind {
    GT_MEM_NONE = 0,
    GT_MEM_DEVICE,   /* cuMemAlloc, cuMemAllocPitch */
    GT_MEM_MANAGED,  /* cuMemAllocManaged */
    GT_MEM_ASYNC,    /* stream-ordered: cuMemAllocAsync, cuMemAllocFromPoolAsync */
    GT_MEM_VIRTUAL,  /* VMM address reservations (no memory behind them) */
    GT_MEM_PHYSICAL, /* VMM physical allocations (cuMemCreate handles) */
    GT_MEM_ARRAY,    /* CUDA arrays */
    GT_MEM_HOST,     /* page-locked host memory, reported apart from device memory */
    GT_MEM_KIND_COUNT
};

#define GT_API_LIST(X)                                                                             \
    X(1, cuMemAlloc_v2, "cuMemAlloc_v2", GT_FAM_ALLOC, GT_MEM_DEVICE)                              \
    X(2, cuMemAllocPitch_v2, "cuMemAllocPitch_v2", GT_FAM_ALLOC, GT_MEM_DEVICE)                    \
    X(3, cuMemAllocManaged, "cuMemAllocManaged", GT_FAM_ALLOC, GT_MEM_MANAGED)                     \
    X(4, cuMemFree_v2, "cuMemFree_v2", GT_FAM_FREE, GT_MEM_DEVICE)                                 \
    X(5, cuMemAllocAsync, "cuMemAllocAsync", GT_FAM_ALLOC, GT_MEM_ASYNC)                           \
    X(6, cuMemAllocAsync_ptsz, "cuMemAllocAsync_ptsz", GT_FAM_ALLOC, GT_MEM_ASYNC)                 \
    X(7, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", GT_FAM_ALLOC, GT_MEM_ASYNC)           \
    X(8, cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync_ptsz", GT_FAM_ALLOC, GT_MEM_ASYNC) \
    X(9, cuMemFreeAsync, "cuMemFreeAsync", GT_FAM_FREE, GT_MEM_ASYNC)                              \
    X(10, cuMemFreeAsync_ptsz, "cuMemFreeAsync_ptsz", GT_FAM_FREE, GT_MEM_ASYNC)                   \
    X(11, cuMemPoolCreate, "cuMemPoolCreate", GT_FAM_OBJECT, GT_MEM_NONE)                          \
    X(12, cuMemPoolDestroy, "cuMemPoolDestroy", GT_FAM_OBJECT, GT_MEM_NONE)                        \
    X(13, cuMemPoolTrimTo, "cuMemPoolTrimTo", GT_FAM_OBJECT, GT_MEM_NONE)                          \
    X(14, cuMemAddressReserve, "cuMemAddressReserve", GT_FAM_ALLOC, GT_MEM_VIRTUAL)                \
    X(15, cuMemAddressFree, "cuMemAddressFree", GT_FAM_FREE, GT_MEM_VIRTUAL)                       \
    X(16, cuMemCreate, "cuMemCreate", GT_FAM_ALLOC, GT_MEM_PHYSICAL)                               \
    X(17, cuMemRelease, "cuMemRelease", GT_FAM_FREE, GT_MEM_PHYSICAL)                              \
    X(18, cuMemMap, "cuMemMap", GT_FAM_MAP, GT_MEM_NONE)                                           \
    X(19, cuMemUnmap, "cuMemUnmap", GT_FAM_MAP, GT_MEM_NONE)                                       \
    X(20, cuArrayCreate_v2, "cuArrayCreate_v2", GT_FAM_ALLOC, GT_MEM_ARRAY)                        \
    X(21, cuArray3DCreate_v2, "cuArray3DCreate_v2", GT_FAM_ALLOC, GT_MEM_ARRAY)                    \
    X(22, cuArrayDestroy, "cuArrayDestroy", GT_FAM_FREE, GT_MEM_ARRAY)                             \
    X(23, cuMipmappedArrayCreate, "cuMipmappedArrayCreate", GT_FAM_ALLOC, GT_MEM_ARRAY)            \
    X(24, cuMipmappedArrayDestroy, "cuMipmappedArrayDestroy", GT_FAM_FREE, GT_MEM_ARRAY)           \
    X(25, cuMemHostAlloc, "cuMemHostAlloc", GT_FAM_ALLOC, GT_MEM_HOST)                             \
    X(26, cuMemAllocHost_v2, "cuMemAllocHost_v2", GT_FAM_ALLOC, GT_MEM_HOST)                       \
    X(27, cuMemFreeHost, "cuMemFreeHost", GT_FAM_FREE, GT_MEM_HOST)                                \
    X(28, cuCtxCreate_v2, "cuCtxCreate_v2", GT_FAM_OBJECT, GT_MEM_NONE)                            \
    X(29, cuCtxCreate_v3, "cuCtxCreate_v3", GT_FAM_OBJECT, GT_MEM_NONE)                            \
    X(30, cuCtxCreate_v4, "cuCtxCreate_v4", GT_FAM_OBJECT, GT_MEM_NONE)                            \
    X(31, cuCtxDestroy_v2, "cuCtxDestroy_v2", GT_FAM_OBJECT, GT_MEM_NONE)                          \
    X(32, cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset_v2", GT_FAM_OBJECT, GT_MEM_NONE)    \
    X(33, cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease_v2", GT_FAM_OBJECT,             \
      GT_MEM_NONE)                                                                                 \
    X(34, cuStreamCreate, "cuStreamCreate", GT_FAM_OBJECT, GT_MEM_NONE)                            \
    X(35, cuStreamCreateWithPriority, "cuStreamCreateWithPriority", GT_FAM_OBJECT, GT_MEM_NONE)    \
    X(36, cuStreamDestroy_v2, "cuStreamDestroy_v2", GT_FAM_OBJECT, GT_MEM_NONE)                    \
    X(40, cuLaunchKernel, "cuLaunchKernel", GT_FAM_LAUNCH, GT_MEM_NONE)                            \
    X(41, cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz", GT_FAM_LAUNCH, GT_MEM_NONE)                  \
    X(42, cuLaunchKernelEx, "cuLaunchKernelEx", GT_FAM_LAUNCH, GT_MEM_NONE)                        \
    X(43, cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz", GT_FAM_LAUNCH, GT_MEM_NONE)              \
    X(44, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", GT_FAM_LAUNCH, GT_MEM_NONE)      \
    X(45, cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel_ptsz", GT_FAM_LAUNCH,         \
      GT_MEM_NONE)                                                                                 \
    X(46, cuGraphLaunch, "cuGraphLaunch", GT_FAM_LAUNCH, GT_MEM_NONE)                              \
    X(47, cuGraphLaunch_ptsz, "cuGraphLaunch_ptsz", GT_FAM_LAUNCH, GT_MEM_NONE)                    \
    X(48, cuLaunchHostFunc, "cuLaunchHostFunc", GT_FAM_LAUNCH, GT_MEM_NONE)                        \
    X(49, cuLaunchHostFunc_ptsz, "cuLaunchHostFunc_ptsz", GT_FAM_LAUNCH, GT_MEM_NONE)              \
    X(60, cuCtxSynchronize, "cuCtxSynchronize", GT_FAM_SYNC, GT_MEM_NONE)                          \
    X(61, cuCtxSynchronize_v2, "cuCtxSynchronize_v2", GT_FAM_SYNC, GT_MEM_NONE)                    \
    X(62, cuStreamSynchronize, "cuStreamSynchronize", GT_FAM_SYNC, GT_MEM_NONE)                    \
    X(63, cuStreamSynchronize_ptsz, "cuStreamSynchronize_ptsz", GT_FAM_SYNC, GT_MEM_NONE)          \
    X(64, cuEventSynchronize, "cuEventSynchronize", GT_FAM_SYNC, GT_MEM_NONE)                      \
    X(65, cuStreamWaitEvent, "cuStreamWaitEvent", GT_FAM_WAIT, GT_MEM_NONE)                        \
    X(66, cuStreamWaitEvent_ptsz, "cuStreamWaitEvent_ptsz", GT_FAM_WAIT, GT_MEM_NONE)              \
    X(70, cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2", GT_FAM_COPY, GT_MEM_NONE)                            \
    X(71, cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD_v2_ptds", GT_FAM_COPY, GT_MEM_NONE)                  \
    X(72, cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2", GT_FAM_COPY, GT_MEM_NONE)                            \
    X(73, cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH_v2_ptds", GT_FAM_COPY, GT_MEM_NONE)                  \
    X(74, cuMemcpyDtoD_v2, "cuMemcpyDtoD_v2", GT_FAM_COPY, GT_MEM_NONE)                            \
    X(75, cuMemcpyDtoD_v2_ptds, "cuMemcpyDtoD_v2_ptds", GT_FAM_COPY, GT_MEM_NONE)                  \
    X(76, cuMemcpy, "cuMemcpy", GT_FAM_COPY, GT_MEM_NONE)                                          \
    X(77, cuMemcpy_ptds, "cuMemcpy_ptds", GT_FAM_COPY, GT_MEM_NONE)                                \
    X(78, cuMemcpyPeer, "cuMemcpyPeer", GT_FAM_COPY, GT_MEM_NONE)                                  \
    X(79, cuMemcpyPeer_ptds, "cuMemcpyPeer_ptds", GT_FAM_COPY, GT_MEM_NONE)                        \
    X(80, cuMemcpy2D_v2, "cuMemcpy2D_v2", GT_FAM_COPY, GT_MEM_NONE)                                \
    X(81, cuMemcpy2D_v2_ptds, "cuMemcpy2D_v2_ptds", GT_FAM_COPY, GT_MEM_NONE)                      \
    X(82, cuMemcpy3D_v2, "cuMemcpy3D_v2", GT_FAM_COPY, GT_MEM_NONE)                                \
    X(83, cuMemcpy3D_v2_ptds, "cuMemcpy3D_v2_ptds", GT_FAM_COPY, GT_MEM_NONE)                      \
    X(90, cuInit, "cuInit", GT_FAM_INIT, GT_MEM_NONE)                                              \
    X(91, cuGetProcAddress, "cuGetProcAddress", GT_FAM_RESOLVE, GT_MEM_NONE)                       \
    X(92, cuGetProcAddress_v2, "cuGetProcAddress_v2", GT_FAM_RESOLVE, GT_MEM_NONE)                      \
    X(93, cuMemcpyAsync, "cuMemcpyAsync", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(94, cuMemcpyAsync_ptsz, "cuMemcpyAsync_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(95, cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(96, cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync_v2_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(97, cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(98, cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync_v2_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(99, cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(100, cuMemcpyDtoDAsync_v2_ptsz, "cuMemcpyDtoDAsync_v2_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(101, cuMemcpy2DAsync_v2, "cuMemcpy2DAsync_v2", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(102, cuMemcpy2DAsync_v2_ptsz, "cuMemcpy2DAsync_v2_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(103, cuMemcpy3DAsync_v2, "cuMemcpy3DAsync_v2", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(104, cuMemcpy3DAsync_v2_ptsz, "cuMemcpy3DAsync_v2_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(105, cuMemcpyPeerAsync, "cuMemcpyPeerAsync", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(106, cuMemcpyPeerAsync_ptsz, "cuMemcpyPeerAsync_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(107, cuMemsetD8Async, "cuMemsetD8Async", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(108, cuMemsetD8Async_ptsz, "cuMemsetD8Async_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(109, cuMemsetD16Async, "cuMemsetD16Async", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(110, cuMemsetD16Async_ptsz, "cuMemsetD16Async_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(111, cuMemsetD32Async, "cuMemsetD32Async", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(112, cuMemsetD32Async_ptsz, "cuMemsetD32Async_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(113, cuMemsetD2D8Async, "cuMemsetD2D8Async", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(114, cuMemsetD2D8Async_ptsz, "cuMemsetD2D8Async_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(115, cuMemsetD2D16Async, "cuMemsetD2D16Async", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(116, cuMemsetD2D16Async_ptsz, "cuMemsetD2D16Async_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(117, cuMemsetD2D32Async, "cuMemsetD2D32Async", GT_FAM_ENQUEUE, GT_MEM_NONE) \
    X(118, cuMemsetD2D32Async_ptsz, "cuMemsetD2D32Async_ptsz", GT_FAM_ENQUEUE, GT_MEM_NONE)

enum gt_api {
    GT_API_NONE = 0,
#define GT_API_ENUM(id, e, name, fam, kind) GT_API_##e = id,
    GT_API_LIST(GT_API_ENUM)
#undef GT_API_ENUM
    GT_API_MAX = 128 /* ids stay below this */
};

struct gt_api_info {
    const char *name; /* NULL for ids not in use */
    enum gt_api_family family;
    enum gt_mem_kind mem_kind;
};

/* Table indexed by gt_api id (common/api.c). */
extern const struct gt_api_info gt_api_table[GT_API_MAX];
const char *gt_api_name(unsigned api);            /* "unknown-api" for unused ids; never NULL */
const char *gt_mem_kind_name(enum gt_mem_kind k); /* "device", "managed", ... */

#endif /* GPUTRACE_TRACE_API_H */
