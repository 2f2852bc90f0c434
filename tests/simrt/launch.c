/* Fat-binary registration and kernel launches of the simulated runtime.
 * __cudaRegisterFunction maps each host stub to its device function's (mangled) name. A kernel
 * becomes a driver kernel at its first launch: a one-kernel library in the simulated driver's text
 * format ("kernel <name>"), loaded with cuLibraryLoadData (context-independent, as CUDA 12+
 * runtimes load their modules), so the GPU timeline carries the real device function names.
 * Launches go through cuLaunchKernel[_ptsz]; before each, the simulated driver (when it is the
 * driver) is told a duration that grows with the number of threads launched. */
#include "srt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct srt_kernel {
    const void *host; /* the host stub's address: what cudaLaunchKernel is given */
    char *name;       /* device function name */
    CUkernel drv;     /* loaded at first launch */
};

static pthread_mutex_t g_klock = PTHREAD_MUTEX_INITIALIZER;
static struct srt_kernel **g_ktab; /* open addressing on host address; size a power of two */
static size_t g_kcap, g_kn;

static size_t khash(const void *p, size_t cap)
{
    unsigned long long x = (unsigned long long)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static void kinsert(struct srt_kernel *k)
{
    size_t i = khash(k->host, g_kcap);
    while (g_ktab[i] && g_ktab[i]->host != k->host)
        i = (i + 1) & (g_kcap - 1);
    if (!g_ktab[i]) g_kn++;
    g_ktab[i] = k; /* a re-registered host stub takes the newer name */
}

static void kgrow(void)
{
    struct srt_kernel **old = g_ktab;
    size_t oldcap = g_kcap;
    g_kcap = g_kcap ? g_kcap * 2 : 4096;
    g_ktab = calloc(g_kcap, sizeof *g_ktab);
    if (!g_ktab) abort();
    g_kn = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i]) kinsert(old[i]);
    free(old);
}

static struct srt_kernel *klookup(const void *host)
{
    pthread_mutex_lock(&g_klock);
    struct srt_kernel *k = NULL;
    if (g_kcap) {
        size_t i = khash(host, g_kcap);
        while (g_ktab[i] && g_ktab[i]->host != host)
            i = (i + 1) & (g_kcap - 1);
        k = g_ktab[i];
    }
    pthread_mutex_unlock(&g_klock);
    return k;
}

void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin)
{
    void **h = calloc(1, sizeof *h);
    if (!h) abort();
    *h = fatCubin;
    return h;
}

void CUDARTAPI __cudaRegisterFatBinaryEnd(void **h)
{
    (void)h;
}

/* Registered kernels stay known: another library's static destructor may still launch. */
void CUDARTAPI __cudaUnregisterFatBinary(void **h)
{
    (void)h;
}

char CUDARTAPI __cudaInitModule(void **h)
{
    return 1;
}

void CUDARTAPI __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid,
                                      uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    const char *name = deviceName ? deviceName : deviceFun;
    if (!hostFun || !name) return;
    struct srt_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name))) abort();
    k->host = hostFun;
    pthread_mutex_lock(&g_klock);
    if (2 * (g_kn + 1) > g_kcap) kgrow();
    kinsert(k);
    pthread_mutex_unlock(&g_klock);
}

/* Device variables are not modelled: their addresses are never asked for by the workloads the
 * simulated stack carries (cudaGetSymbolAddress is a stub). */
void CUDARTAPI __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress,
                                 const char *deviceName, int ext, size_t size, int constant,
                                 int global)
{
}

void CUDARTAPI __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress,
                                        const char *deviceName, int ext, size_t size, int constant,
                                        int global)
{
}

/* ---- launch configuration (<<<>>> stubs of older compilers push, then pop) ------------------ */

#define SRT_CONFIG_DEPTH 16
struct srt_config {
    dim3 grid, block;
    size_t shmem;
    void *stream;
};
static __thread struct srt_config t_config[SRT_CONFIG_DEPTH];
static __thread unsigned t_nconfig;

unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem,
                                               struct CUstream_st *stream)
{
    if (t_nconfig == SRT_CONFIG_DEPTH) return 1;
    t_config[t_nconfig++] = (struct srt_config){grid, block, shmem, stream};
    return 0;
}

cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem,
                                                 void *stream)
{
    if (t_nconfig == 0) return srt_err(cudaErrorMissingConfiguration);
    struct srt_config *c = &t_config[--t_nconfig];
    *grid = c->grid;
    *block = c->block;
    *shmem = c->shmem;
    *(void **)stream = c->stream;
    return cudaSuccess;
}

/* ---- launches ---------------------------------------------------------------------------------
 */

static cudaError_t kload(struct srt_kernel *k, CUkernel *out)
{
    pthread_mutex_lock(&g_klock);
    CUresult r = CUDA_SUCCESS;
    if (!k->drv) {
        size_t len = strlen(k->name) + 16;
        char *text = malloc(len);
        if (!text) abort();
        snprintf(text, len, "kernel %s\n", k->name);
        CUlibrary lib;
        r = srt_drv.cuLibraryLoadData(&lib, text, NULL, NULL, 0, NULL, NULL, 0);
        free(text);
        if (r == CUDA_SUCCESS) r = srt_drv.cuLibraryGetKernel(&k->drv, lib, k->name);
    }
    *out = k->drv;
    pthread_mutex_unlock(&g_klock);
    return srt_ret(r);
}

/* 2 us of launch overhead plus 4 ns per 1024 threads: a memory-bound elementwise kernel moving
 * 8 bytes per thread at about 2 TB/s (1 M threads: 6 us). */
static unsigned long long duration_ns(dim3 g, dim3 b)
{
    unsigned long long threads = (unsigned long long)g.x * g.y * g.z * b.x * b.y * b.z;
    return 2000 + threads / 256;
}

static cudaError_t launch(int pt, struct srt_kernel *k, dim3 g, dim3 b, void **args, size_t shmem,
                          cudaStream_t s)
{
    if (!k) return srt_err(cudaErrorInvalidDeviceFunction);
    cudaError_t e = srt_ctx();
    if (e) return e;
    CUkernel drv;
    if ((e = kload(k, &drv))) return e;
    if (srt_drv.func_set_duration) srt_drv.func_set_duration((CUfunction)drv, duration_ns(g, b));
    return srt_ret(SRT_PT(pt, cuLaunchKernel)((CUfunction)drv, g.x, g.y, g.z, b.x, b.y, b.z,
                                              (unsigned)shmem, s, args, NULL));
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                                       cudaStream_t s)
{
    return launch(0, klookup(func), g, b, args, shmem, s);
}

cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 g, dim3 b, void **args,
                                            size_t shmem, cudaStream_t s)
{
    return launch(1, klookup(func), g, b, args, shmem, s);
}

/* CUDA 13 launch stubs: __cudaGetKernel once per stub, then __cudaLaunchKernel[_ptsz] with its
 * handle (here the registration entry itself). */
cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *out, const void *func)
{
    struct srt_kernel *k = klookup(func);
    if (!out || !k) return srt_err(cudaErrorInvalidDeviceFunction);
    *out = (cudaKernel_t)k;
    return cudaSuccess;
}

cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kern, dim3 g, dim3 b, void **args,
                                         size_t shmem, cudaStream_t s)
{
    return launch(0, (struct srt_kernel *)kern, g, b, args, shmem, s);
}

cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kern, dim3 g, dim3 b, void **args,
                                              size_t shmem, cudaStream_t s)
{
    return launch(1, (struct srt_kernel *)kern, g, b, args, shmem, s);
}

static cudaError_t launch_ex(int pt, const cudaLaunchConfig_t *c, const void *func, void **args)
{
    if (!c) return srt_err(cudaErrorInvalidValue);
    for (unsigned i = 0; i < c->numAttrs; i++)
        if (c->attrs[i].id == cudaLaunchAttributeCooperative && c->attrs[i].val.cooperative)
            return srt_err(cudaErrorNotSupported); /* not needed by the workloads carried */
    return launch(pt, klookup(func), c->gridDim, c->blockDim, args, c->dynamicSmemBytes, c->stream);
}

cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *c, const void *func,
                                          void **args)
{
    return launch_ex(0, c, func, args);
}

cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *c, const void *func,
                                               void **args)
{
    return launch_ex(1, c, func, args);
}

/* ---- function attributes and occupancy (an H100-like SM: 2048 threads, 32 blocks, 64 K regs) --
 */

cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func)
{
    if (!a) return srt_err(cudaErrorInvalidValue);
    if (!klookup(func)) return srt_err(cudaErrorInvalidDeviceFunction);
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 1024;
    a->numRegs = 32;
    a->ptxVersion = 90;
    a->binaryVersion = 90;
    a->maxDynamicSharedSizeBytes = 48 * 1024;
    a->preferredShmemCarveout = -1;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    return klookup(func) ? cudaSuccess : srt_err(cudaErrorInvalidDeviceFunction);
}

cudaError_t CUDARTAPI cudaFuncSetCacheConfig(const void *func, enum cudaFuncCache c)
{
    return klookup(func) ? cudaSuccess : srt_err(cudaErrorInvalidDeviceFunction);
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n,
                                                                             const void *func,
                                                                             int block, size_t smem,
                                                                             unsigned int flags)
{
    if (!n || block <= 0) return srt_err(cudaErrorInvalidValue);
    if (!klookup(func)) return srt_err(cudaErrorInvalidDeviceFunction);
    int by_threads = 2048 / block, by_smem = smem ? (int)((228 * 1024) / smem) : 32;
    int v = by_threads < by_smem ? by_threads : by_smem;
    *n = v > 32 ? 32 : v;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func,
                                                                    int block, size_t smem)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, block, smem, 0);
}
