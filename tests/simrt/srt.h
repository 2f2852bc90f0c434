/* The simulated CUDA runtime (tests/simrt, test fixture only): NVIDIA's libcudart.so.13 ABI on top
 * of whatever libcuda.so.1 the process loads (the simulated driver in tests), reached only through
 * cuGetProcAddress_v2 as the real runtime does, so a preloaded gputrace sees the same calls. */
#ifndef SRT_H
#define SRT_H

#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <stddef.h>

#define SRT_MAX_DEVICES 16

/* Driver entry points, resolved with cuGetProcAddress_v2 at the runtime's version: legacy default
 * stream (flags 0) ... */
#define SRT_DRIVER(X)                                                                              \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceGetUuid) X(                    \
        cuDeviceTotalMem) X(cuDeviceGetAttribute) X(cuDeviceGetPCIBusId) X(cuDeviceCanAccessPeer)  \
        X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(                       \
            cuCtxGetStreamPriorityRange) X(cuGetErrorString) X(cuGetErrorName) X(cuMemAlloc)       \
            X(cuMemFree) X(cuMemGetInfo) X(cuMemAllocManaged) X(cuMemHostAlloc) X(cuMemAllocHost)  \
                X(cuMemFreeHost) X(cuMemHostRegister) X(cuMemHostUnregister)                       \
                    X(cuMemHostGetDevicePointer) X(cuPointerGetAttribute) X(cuMemGetAddressRange)  \
                        X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool) X(cuDeviceSetMemPool)   \
                            X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemPoolGetAttribute)        \
                                X(cuMemPoolSetAttribute) X(cuMemPoolTrimTo) X(cuMemPoolSetAccess)  \
                                    X(cuStreamCreate) X(cuStreamCreateWithPriority)                \
                                        X(cuStreamDestroy) X(cuEventCreate) X(cuEventDestroy)      \
                                            X(cuEventQuery) X(cuEventSynchronize)                  \
                                                X(cuEventElapsedTime) X(cuLibraryLoadData)         \
                                                    X(cuLibraryGetKernel) X(cuGetProcAddress)

/* ... and the same calls with the per-thread default stream (flags 2), for the _ptsz exports and
 * for the calls that take a stream. */
#define SRT_DRIVER_STREAM(X)                                                                       \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamQuery)                                                                               \
    X(cuStreamWaitEvent) X(cuStreamGetPriority) X(cuStreamGetFlags) X(cuStreamGetId)               \
        X(cuStreamGetDevice) X(cuStreamIsCapturing) X(cuEventRecord) X(cuEventRecordWithFlags)     \
            X(cuLaunchKernel) X(cuLaunchCooperativeKernel) X(cuLaunchHostFunc)                     \
                X(cuStreamAddCallback) X(cuMemcpyAsync) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)  \
                    X(cuMemcpyDtoDAsync) X(cuMemcpyPeerAsync) X(cuMemsetD8Async)                   \
                        X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocFromPoolAsync)            \
                            X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpy)            \
                                X(cuMemsetD8)

struct srt_driver {
#define SRT_MEMBER(n) __typeof__(n) *n;
    SRT_DRIVER(SRT_MEMBER)
#undef SRT_MEMBER
#define SRT_MEMBER(n)                                                                              \
    __typeof__(n) *n;                                                                              \
    __typeof__(n) *pt_##n;
    SRT_DRIVER_STREAM(SRT_MEMBER)
#undef SRT_MEMBER
    /* 13.0's ABI of cuCtxSynchronize (cuda.h still declares the first one under that name) */
    CUresult (*cuCtxSynchronize_v2)(CUcontext);
    /* the simulated driver's test API, when the driver is the simulated one (else NULL) */
    void (*func_set_duration)(CUfunction, unsigned long long);
};

extern struct srt_driver srt_drv;

/* Loads the driver, resolves the table, cuInit(0); idempotent. The cuInit result, as a cudaError_t.
 */
cudaError_t srt_init(void);
/* srt_init, then binds the calling thread's current device's primary context if it is not bound. */
cudaError_t srt_ctx(void);
/* The calling thread's current device. */
int srt_device(void);
/* The context srt_ctx bound on this thread. */
CUcontext srt_context(void);
/* Records a failure as the thread's last error; returns it. Driver and runtime share the numbers
 * of every code the simulated driver returns (both enums are laid out so), so it converts by value.
 */
cudaError_t srt_ret(CUresult r);
cudaError_t srt_err(cudaError_t e);
/* Picks the legacy or per-thread driver entry point for a runtime call made through a _ptsz
 * export (pt=1) or the plain one (pt=0). */
#define SRT_PT(pt, n) ((pt) ? srt_drv.pt_##n : srt_drv.n)
/* Logs "not implemented: NAME" once per name (stderr, and GTSIM_LOG when set). */
void srt_log_stub(const char *name);
/* Appends one line to GTSIM_LOG, if set. */
void srt_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Exports the headers declare only under per-thread-default-stream macros or in nvcc's crt/. */
cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char *, void **, unsigned long long,
                                                   enum cudaDriverEntryPointQueryResult *);
cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(const char *, void **, unsigned int,
                                                            unsigned long long,
                                                            enum cudaDriverEntryPointQueryResult *);
cudaError_t CUDARTAPI cudaMemcpy_ptds(void *, const void *, size_t, enum cudaMemcpyKind);
cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void *, const void *, size_t, enum cudaMemcpyKind,
                                           cudaStream_t);
cudaError_t CUDARTAPI cudaMemset_ptds(void *, int, size_t);
cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void *, int, size_t, cudaStream_t);
cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void **, size_t, cudaStream_t);
cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void *, cudaStream_t);
cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t);
cudaError_t CUDARTAPI cudaStreamWaitEvent_ptsz(cudaStream_t, cudaEvent_t, unsigned int);
cudaError_t CUDARTAPI cudaStreamGetPriority_ptsz(cudaStream_t, int *);
cudaError_t CUDARTAPI cudaStreamGetFlags_ptsz(cudaStream_t, unsigned int *);
cudaError_t CUDARTAPI cudaStreamGetId_ptsz(cudaStream_t, unsigned long long *);
cudaError_t CUDARTAPI cudaStreamGetDevice_ptsz(cudaStream_t, int *);
cudaError_t CUDARTAPI cudaStreamAddCallback_ptsz(cudaStream_t, cudaStreamCallback_t, void *,
                                                 unsigned int);
cudaError_t CUDARTAPI cudaLaunchHostFunc_ptsz(cudaStream_t, cudaHostFn_t, void *);
cudaError_t CUDARTAPI cudaStreamIsCapturing_ptsz(cudaStream_t, enum cudaStreamCaptureStatus *);
cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);
cudaError_t CUDARTAPI cudaEventRecordWithFlags_ptsz(cudaEvent_t, cudaStream_t, unsigned int);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t,
                                            cudaStream_t);
cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);
void **CUDARTAPI __cudaRegisterFatBinary(void *);
void CUDARTAPI __cudaRegisterFatBinaryEnd(void **);
void CUDARTAPI __cudaUnregisterFatBinary(void **);
char CUDARTAPI __cudaInitModule(void **);
void CUDARTAPI __cudaRegisterFunction(void **, const char *, char *, const char *, int, uint3 *,
                                      uint3 *, dim3 *, dim3 *, int *);
void CUDARTAPI __cudaRegisterVar(void **, char *, char *, const char *, int, size_t, int, int);
void CUDARTAPI __cudaRegisterManagedVar(void **, void **, char *, const char *, int, size_t, int,
                                        int);
unsigned CUDARTAPI __cudaPushCallConfiguration(dim3, dim3, size_t, struct CUstream_st *);
cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *, dim3 *, size_t *, void *);
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *, const void *);
cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t,
                                              cudaStream_t);

#endif
