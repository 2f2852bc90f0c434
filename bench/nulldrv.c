/* A do-nothing libcuda.so.1 for the thread-scaling benchmark only.
 *
 * The simulated driver (tests/sim) guards all its state with one mutex, so N threads launching
 * through it are serialized by the driver itself and cannot show whether the shim scales. This
 * library has no shared state at all: launches return at once, allocations hand out per-thread
 * addresses. Put its directory first on LD_LIBRARY_PATH to run bench_launch against it. It has
 * just the entry points bench_launch and the shim's helpers use; the shim degrades gracefully
 * for any it does not find. No CUPTI can attach to it. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <stdint.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static char dummy[64]; /* handles point here */
static __thread uint64_t next_addr;

EXPORT CUresult CUDAAPI cuInit(unsigned int flags)
{
    return flags ? CUDA_ERROR_INVALID_VALUE : 0;
}
EXPORT CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    (void)dev;
    if (len > 0) {
        strncpy(name, "null driver", (size_t)len - 1);
        name[len - 1] = 0;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    (void)dev;
    *bytes = 80ull << 30;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice dev)
{
    (void)dev;
    *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice dev)
{
    (void)dev;
    *c = (CUcontext)dummy;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *c)
{
    *c = (CUcontext)dummy;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *d)
{
    *d = 0;
    return CUDA_SUCCESS;
}
EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *m, const void *image)
{
    (void)image;
    *m = (CUmodule)(dummy + 8);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m, (void)name;
    *f = (CUfunction)(dummy + 16);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction f)
{
    (void)f;
    *name = "bench_kernel";
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void)flags;
    *s = (CUstream)(dummy + 24);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                       unsigned int gz, unsigned int bx, unsigned int by,
                                       unsigned int bz, unsigned int smem, CUstream s,
                                       void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)smem, (void)s;
    (void)params, (void)extra;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    if (!next_addr) next_addr = 0x680000000000ull + ((uint64_t)(uintptr_t)&next_addr << 8);
    *p = next_addr;
    next_addr += (bytes + 511) & ~(size_t)511;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr p)
{
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    *free_bytes = *total = 80ull << 30;
    return CUDA_SUCCESS;
}
