/* Start-up, threads and devices of the simulated runtime.
 * The driver is loaded with dlopen and every entry point comes from its cuGetProcAddress_v2, found
 * with dlsym: exactly how NVIDIA's libcudart reaches it, so a shim that wraps dlsym and
 * cuGetProcAddress (gputrace) sees the same lookups and calls. Each thread binds its current
 * device's primary context on its first call that needs one (autograd's engine threads launch
 * without ever calling cudaSetDevice). */
#include "srt.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct srt_driver srt_drv;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cudaError_t g_init_err;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static CUcontext g_primary[SRT_MAX_DEVICES];
static int g_ndev;

static __thread int t_dev;          /* cudaSetDevice's device */
static __thread CUcontext t_bound;  /* the primary context this thread made current */
static __thread cudaError_t t_last; /* cudaGetLastError */

void srt_log(const char *fmt, ...)
{
    const char *path = getenv("GTSIM_LOG");
    if (!path || !*path) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t w = write(fd, line, (size_t)n); /* one write: lines from threads never interleave */
    (void)w;
    close(fd);
}

void srt_log_stub(const char *name)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "gtsim-rt: %s is not implemented (cudaErrorNotSupported)\n",
                     name);
    if (n > 0 && !getenv("GTSIMRT_QUIET")) {
        ssize_t w = write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
    }
    srt_log("rtstub %s rc=801", name);
}

/* cudaErrorNotReady (a query's answer) is not an error to remember, as in NVIDIA's runtime. */
cudaError_t srt_err(cudaError_t e)
{
    if (e != cudaSuccess && e != cudaErrorNotReady) t_last = e;
    return e;
}

cudaError_t srt_ret(CUresult r)
{
    return srt_err((cudaError_t)r);
}

static void *resolve(CUresult (*getproc)(const char *, void **, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult *),
                     const char *name, int version, cuuint64_t flags)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (getproc(name, &fn, version, flags, &st) != CUDA_SUCCESS ||
        st != CU_GET_PROC_ADDRESS_SUCCESS)
        return NULL;
    return fn;
}

static void init_once(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        g_init_err = cudaErrorInsufficientDriver;
        return;
    }
    CUresult (*getproc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        (CUresult(*)(const char *, void **, int, cuuint64_t,
                     CUdriverProcAddressQueryResult *))dlsym(lib, "cuGetProcAddress_v2");
    if (!getproc) {
        g_init_err = cudaErrorInsufficientDriver;
        return;
    }
    int version = CUDART_VERSION;
    int (*drv_version)(int *) = (int (*)(int *))resolve(getproc, "cuDriverGetVersion", 2020, 0);
    int v = 0;
    if (!drv_version || drv_version(&v) != 0 || v < CUDART_VERSION) {
        g_init_err = cudaErrorInsufficientDriver;
        return;
    }
#define SRT_RESOLVE(n) srt_drv.n = (__typeof__(srt_drv.n))resolve(getproc, #n, version, 0);
    SRT_DRIVER(SRT_RESOLVE)
#undef SRT_RESOLVE
#define SRT_RESOLVE(n)                                                                             \
    srt_drv.n = (__typeof__(srt_drv.n))resolve(getproc, #n, version, 0);                           \
    srt_drv.pt_##n = (__typeof__(srt_drv.pt_##n))resolve(                                          \
        getproc, #n, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    SRT_DRIVER_STREAM(SRT_RESOLVE)
#undef SRT_RESOLVE
    srt_drv.cuCtxSynchronize_v2 =
        (CUresult(*)(CUcontext))resolve(getproc, "cuCtxSynchronize", version, 0);
    srt_drv.func_set_duration =
        (void (*)(CUfunction, unsigned long long))dlsym(lib, "gtsim_func_set_duration");
    /* a driver without one of them cannot carry this runtime: say which, fail cudaGetDeviceCount */
    const char *missing = NULL;
#define SRT_CHECK(n)                                                                               \
    if (!srt_drv.n && !missing) missing = #n;
    SRT_DRIVER(SRT_CHECK)
#undef SRT_CHECK
#define SRT_CHECK(n)                                                                               \
    if ((!srt_drv.n || !srt_drv.pt_##n) && !missing) missing = #n;
    SRT_DRIVER_STREAM(SRT_CHECK)
#undef SRT_CHECK
    if (!srt_drv.cuCtxSynchronize_v2 && !missing) missing = "cuCtxSynchronize";
    if (missing) {
        char msg[160];
        int n = snprintf(msg, sizeof msg, "gtsim-rt: the driver has no %s\n", missing);
        ssize_t w = write(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : 0);
        (void)w;
        g_init_err = cudaErrorInsufficientDriver;
        return;
    }
    CUresult r = srt_drv.cuInit ? srt_drv.cuInit(0) : CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_SUCCESS && srt_drv.cuDeviceGetCount(&g_ndev) != CUDA_SUCCESS) g_ndev = 0;
    if (r == CUDA_SUCCESS && g_ndev > SRT_MAX_DEVICES) g_ndev = SRT_MAX_DEVICES;
    g_init_err = r == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice : (cudaError_t)r;
}

cudaError_t srt_init(void)
{
    pthread_once(&g_once, init_once);
    return g_init_err;
}

int srt_device(void)
{
    return t_dev;
}

CUcontext srt_context(void)
{
    return t_bound;
}

static cudaError_t bind(int dev)
{
    pthread_mutex_lock(&g_lock);
    CUresult r = CUDA_SUCCESS;
    if (!g_primary[dev]) {
        CUdevice d;
        r = srt_drv.cuDeviceGet(&d, dev);
        if (r == CUDA_SUCCESS) r = srt_drv.cuDevicePrimaryCtxRetain(&g_primary[dev], d);
    }
    CUcontext c = g_primary[dev];
    pthread_mutex_unlock(&g_lock);
    if (r == CUDA_SUCCESS) r = srt_drv.cuCtxSetCurrent(c);
    if (r == CUDA_SUCCESS) t_bound = c;
    return srt_ret(r);
}

cudaError_t srt_ctx(void)
{
    cudaError_t e = srt_init();
    if (e != cudaSuccess) return srt_err(e);
    if (t_dev >= g_ndev) return srt_err(cudaErrorInvalidDevice);
    CUcontext c = g_primary[t_dev];
    if (c && t_bound == c) return cudaSuccess;
    return bind(t_dev);
}

/* ---- errors ------------------------------------------------------------------------------- */

cudaError_t CUDARTAPI cudaGetLastError(void)
{
    cudaError_t e = t_last;
    t_last = cudaSuccess;
    return e;
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
    return t_last;
}

static const struct {
    cudaError_t code;
    const char *name, *text;
} g_errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled",
     "peer access is already enabled"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const char *CUDARTAPI cudaGetErrorName(cudaError_t e)
{
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].code == e) return g_errors[i].name;
    return "cudaErrorUnknown";
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t e)
{
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].code == e) return g_errors[i].text;
    return "unrecognized error code";
}

/* ---- versions, devices ------------------------------------------------------------------------
 */

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *v)
{
    if (!v) return srt_err(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int *v)
{
    if (!v) return srt_err(cudaErrorInvalidValue);
    *v = 0;
    if (srt_init() == cudaErrorInsufficientDriver)
        return cudaSuccess; /* no driver: 0, as the real runtime says */
    return srt_ret(srt_drv.cuDriverGetVersion(v));
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int *n)
{
    if (!n) return srt_err(cudaErrorInvalidValue);
    *n = 0;
    cudaError_t e = srt_init();
    if (e != cudaSuccess) return srt_err(e);
    *n = g_ndev;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaGetDevice(int *dev)
{
    if (!dev) return srt_err(cudaErrorInvalidValue);
    cudaError_t e = srt_init();
    if (e != cudaSuccess) return srt_err(e);
    *dev = t_dev;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaSetDevice(int dev)
{
    cudaError_t e = srt_init();
    if (e != cudaSuccess) return srt_err(e);
    if (dev < 0 || dev >= g_ndev) return srt_err(cudaErrorInvalidDevice);
    t_dev = dev;
    return srt_ctx(); /* since CUDA 12 cudaSetDevice initializes the device's primary context */
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuCtxSynchronize_v2(t_bound));
}

static cudaError_t check_dev(int dev)
{
    cudaError_t e = srt_init();
    if (e != cudaSuccess) return srt_err(e);
    return dev < 0 || dev >= g_ndev ? srt_err(cudaErrorInvalidDevice) : cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int dev)
{
    cudaError_t e = check_dev(dev);
    /* cudaDeviceAttr and CUdevice_attribute share their numbers */
    return e ? e : srt_ret(srt_drv.cuDeviceGetAttribute(value, (CUdevice_attribute)attr, dev));
}

cudaError_t CUDARTAPI cudaDeviceGetPCIBusId(char *id, int len, int dev)
{
    cudaError_t e = check_dev(dev);
    return e ? e : srt_ret(srt_drv.cuDeviceGetPCIBusId(id, len, dev));
}

cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    cudaError_t e = check_dev(dev);
    if (!e) e = check_dev(peer);
    return e ? e : srt_ret(srt_drv.cuDeviceCanAccessPeer(can, dev, peer));
}

cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    cudaError_t e = srt_ctx();
    if (!e) e = check_dev(peer);
    if (e) return e;
    return peer == t_dev ? srt_err(cudaErrorInvalidDevice) : cudaSuccess;
}

cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    cudaError_t e = srt_ctx();
    return e ? e : srt_ret(srt_drv.cuCtxGetStreamPriorityRange(least, greatest));
}

static int attr(int dev, CUdevice_attribute a)
{
    int v = 0;
    srt_drv.cuDeviceGetAttribute(&v, a, dev);
    return v;
}

cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev)
{
    if (!p) return srt_err(cudaErrorInvalidValue);
    cudaError_t e = check_dev(dev);
    if (e) return e;
    memset(p, 0, sizeof *p);
    srt_drv.cuDeviceGetName(p->name, sizeof p->name, dev);
    srt_drv.cuDeviceGetUuid((CUuuid *)&p->uuid, dev);
    srt_drv.cuDeviceTotalMem(&p->totalGlobalMem, dev);
    p->sharedMemPerBlock = (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    p->regsPerBlock = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    p->warpSize = attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    p->memPitch = (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_PITCH);
    p->maxThreadsPerBlock = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    for (int i = 0; i < 3; i++) {
        p->maxThreadsDim[i] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i);
        p->maxGridSize[i] = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i);
    }
    p->totalConstMem = (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
    p->major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    p->minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    p->textureAlignment = (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT);
    p->multiProcessorCount = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    p->integrated = attr(dev, CU_DEVICE_ATTRIBUTE_INTEGRATED);
    p->canMapHostMemory = attr(dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
    p->concurrentKernels = attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS);
    p->ECCEnabled = attr(dev, CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
    p->pciBusID = attr(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
    p->pciDeviceID = attr(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
    p->pciDomainID = attr(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
    p->asyncEngineCount = attr(dev, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    p->unifiedAddressing = attr(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
    p->memoryBusWidth = attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    p->l2CacheSize = attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    p->persistingL2CacheMaxSize = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    p->maxThreadsPerMultiProcessor = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    p->sharedMemPerMultiprocessor =
        (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    p->regsPerMultiprocessor = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    p->managedMemory = attr(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
    p->isMultiGpuBoard = attr(dev, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
    p->concurrentManagedAccess = attr(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
    p->sharedMemPerBlockOptin =
        (size_t)attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    p->maxBlocksPerMultiProcessor = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    p->memoryPoolsSupported = attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
    return cudaSuccess;
}

/* The driver's own entry points, through its resolver (the call gputrace wraps). */
cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char *symbol, void **fn,
                                                       unsigned int version,
                                                       unsigned long long flags,
                                                       enum cudaDriverEntryPointQueryResult *status)
{
    cudaError_t e = srt_init();
    if (e != cudaSuccess && e != cudaErrorNoDevice) return srt_err(e);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = srt_drv.cuGetProcAddress(symbol, fn, (int)version, flags, &st);
    if (status) *status = (enum cudaDriverEntryPointQueryResult)st;
    return srt_ret(r);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char *symbol, void **fn,
                                              unsigned long long flags,
                                              enum cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(symbol, fn, CUDART_VERSION, flags, status);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char *symbol, void **fn,
                                                   unsigned long long flags,
                                                   enum cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(symbol, fn, CUDART_VERSION, flags, status);
}

cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion_ptsz(
    const char *symbol, void **fn, unsigned int version, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(symbol, fn, version, flags, status);
}

cudaError_t CUDARTAPI cudaProfilerStart(void)
{
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaProfilerStop(void)
{
    return cudaSuccess;
}
