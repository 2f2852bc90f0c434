/* How programs reach the driver, and how we put our wrappers in their way.
 *
 *  1. Direct link: our exported cuMemAlloc_v2 & co. come first in the global scope (LD_PRELOAD).
 *  2. dlsym(handle, "cuMemAlloc_v2"): we export dlsym (entry in dlsym_entry.S); when the answer
 *     is a tracked driver export that lives in libcuda, we hand out our wrapper instead.
 *  3. cuGetProcAddress / cuGetProcAddress_v2 (how libcudart, PyTorch, NCCL resolve everything):
 *     we call the real resolver, work out which ABI variant it returned (pointer identity first,
 *     then the documented version rule), and hand out the wrapper of exactly that variant, or the
 *     real pointer untouched when we do not trace that variant. Self-lookups of
 *     "cuGetProcAddress" get our resolver wrappers, so later lookups stay visible.
 * Real pointers are kept per variant, write-once. We never call the public dlsym ourselves. */
#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "hooks.h"
#include "shim.h"

/* dlsym is called by sanitizer runtimes while they initialize, before their shadow memory exists:
 * the path from our dlsym to glibc's for untraced names must not be instrumented. */
#define GT_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

/* ---- which object a pointer lies in ---------------------------------------------------------- */

static struct link_map *object_of(const void *p)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!p || !dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP)) return NULL;
    return lm;
}

static int in_libcuda(const void *p)
{
    struct link_map *cuda = NULL;
    void *h = gt_libcuda();
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &cuda) != 0) return 0;
    return object_of(p) == cuda;
}

/* ---- ABI variants of the traced families (from cudaTypedefs.h: PFN_<base>_v<N>[_ptsz|_ptds]) --- */

struct variant {
    const char *base;
    const char *export_name;
    int version;
    int per_thread; /* _ptsz / _ptds variant */
    unsigned api;   /* wrapper we hand out; 0 = pass the real pointer through */
};

#define V(b, e, n, pt, a) {b, e, n, pt, a}
static const struct variant variants[] = {
    V("cuMemAlloc", "cuMemAlloc", 2000, 0, 0),
    V("cuMemAlloc", "cuMemAlloc_v2", 3020, 0, GT_API_cuMemAlloc_v2),
    V("cuMemAllocPitch", "cuMemAllocPitch", 2000, 0, 0),
    V("cuMemAllocPitch", "cuMemAllocPitch_v2", 3020, 0, GT_API_cuMemAllocPitch_v2),
    V("cuMemAllocManaged", "cuMemAllocManaged", 6000, 0, GT_API_cuMemAllocManaged),
    V("cuMemFree", "cuMemFree", 2000, 0, 0),
    V("cuMemFree", "cuMemFree_v2", 3020, 0, GT_API_cuMemFree_v2),
    V("cuMemAllocAsync", "cuMemAllocAsync", 11020, 0, GT_API_cuMemAllocAsync),
    V("cuMemAllocAsync", "cuMemAllocAsync_ptsz", 11020, 1, GT_API_cuMemAllocAsync_ptsz),
    V("cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", 11020, 0,
      GT_API_cuMemAllocFromPoolAsync),
    V("cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", 11020, 1,
      GT_API_cuMemAllocFromPoolAsync_ptsz),
    V("cuMemFreeAsync", "cuMemFreeAsync", 11020, 0, GT_API_cuMemFreeAsync),
    V("cuMemFreeAsync", "cuMemFreeAsync_ptsz", 11020, 1, GT_API_cuMemFreeAsync_ptsz),
    V("cuMemPoolCreate", "cuMemPoolCreate", 11020, 0, GT_API_cuMemPoolCreate),
    V("cuMemPoolDestroy", "cuMemPoolDestroy", 11020, 0, GT_API_cuMemPoolDestroy),
    V("cuMemPoolTrimTo", "cuMemPoolTrimTo", 11020, 0, GT_API_cuMemPoolTrimTo),
    V("cuMemAddressReserve", "cuMemAddressReserve", 10020, 0, GT_API_cuMemAddressReserve),
    V("cuMemAddressFree", "cuMemAddressFree", 10020, 0, GT_API_cuMemAddressFree),
    V("cuMemCreate", "cuMemCreate", 10020, 0, GT_API_cuMemCreate),
    V("cuMemRelease", "cuMemRelease", 10020, 0, GT_API_cuMemRelease),
    V("cuMemMap", "cuMemMap", 10020, 0, GT_API_cuMemMap),
    V("cuMemUnmap", "cuMemUnmap", 10020, 0, GT_API_cuMemUnmap),
    V("cuArrayCreate", "cuArrayCreate", 2000, 0, 0),
    V("cuArrayCreate", "cuArrayCreate_v2", 3020, 0, GT_API_cuArrayCreate_v2),
    V("cuArray3DCreate", "cuArray3DCreate", 2000, 0, 0),
    V("cuArray3DCreate", "cuArray3DCreate_v2", 3020, 0, GT_API_cuArray3DCreate_v2),
    V("cuArrayDestroy", "cuArrayDestroy", 2000, 0, GT_API_cuArrayDestroy),
    V("cuMipmappedArrayCreate", "cuMipmappedArrayCreate", 5000, 0, GT_API_cuMipmappedArrayCreate),
    V("cuMipmappedArrayDestroy", "cuMipmappedArrayDestroy", 5000, 0,
      GT_API_cuMipmappedArrayDestroy),
    V("cuMemHostAlloc", "cuMemHostAlloc", 2020, 0, GT_API_cuMemHostAlloc),
    V("cuMemAllocHost", "cuMemAllocHost", 2000, 0, 0),
    V("cuMemAllocHost", "cuMemAllocHost_v2", 3020, 0, GT_API_cuMemAllocHost_v2),
    V("cuMemFreeHost", "cuMemFreeHost", 2000, 0, GT_API_cuMemFreeHost),
    V("cuCtxCreate", "cuCtxCreate", 2000, 0, 0),
    V("cuCtxCreate", "cuCtxCreate_v2", 3020, 0, GT_API_cuCtxCreate_v2),
    V("cuCtxCreate", "cuCtxCreate_v3", 11040, 0, GT_API_cuCtxCreate_v3),
    V("cuCtxCreate", "cuCtxCreate_v4", 12050, 0, GT_API_cuCtxCreate_v4),
    V("cuCtxDestroy", "cuCtxDestroy", 2000, 0, 0),
    V("cuCtxDestroy", "cuCtxDestroy_v2", 4000, 0, GT_API_cuCtxDestroy_v2),
    V("cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset", 7000, 0, 0),
    V("cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2", 11000, 0,
      GT_API_cuDevicePrimaryCtxReset_v2),
    V("cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease", 7000, 0, 0),
    V("cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2", 11000, 0,
      GT_API_cuDevicePrimaryCtxRelease_v2),
    V("cuStreamCreate", "cuStreamCreate", 2000, 0, GT_API_cuStreamCreate),
    V("cuStreamCreateWithPriority", "cuStreamCreateWithPriority", 5050, 0,
      GT_API_cuStreamCreateWithPriority),
    V("cuStreamDestroy", "cuStreamDestroy", 2000, 0, 0),
    V("cuStreamDestroy", "cuStreamDestroy_v2", 4000, 0, GT_API_cuStreamDestroy_v2),
    V("cuLaunchKernel", "cuLaunchKernel", 4000, 0, GT_API_cuLaunchKernel),
    V("cuLaunchKernel", "cuLaunchKernel_ptsz", 7000, 1, GT_API_cuLaunchKernel_ptsz),
    V("cuLaunchKernelEx", "cuLaunchKernelEx", 11060, 0, GT_API_cuLaunchKernelEx),
    V("cuLaunchKernelEx", "cuLaunchKernelEx_ptsz", 11060, 1, GT_API_cuLaunchKernelEx_ptsz),
    V("cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel", 9000, 0,
      GT_API_cuLaunchCooperativeKernel),
    V("cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", 9000, 1,
      GT_API_cuLaunchCooperativeKernel_ptsz),
    V("cuGraphLaunch", "cuGraphLaunch", 10000, 0, GT_API_cuGraphLaunch),
    V("cuGraphLaunch", "cuGraphLaunch_ptsz", 10000, 1, GT_API_cuGraphLaunch_ptsz),
    V("cuLaunchHostFunc", "cuLaunchHostFunc", 10000, 0, GT_API_cuLaunchHostFunc),
    V("cuLaunchHostFunc", "cuLaunchHostFunc_ptsz", 10000, 1, GT_API_cuLaunchHostFunc_ptsz),
    V("cuCtxSynchronize", "cuCtxSynchronize", 2000, 0, GT_API_cuCtxSynchronize),
    V("cuCtxSynchronize", "cuCtxSynchronize_v2", 13000, 0, GT_API_cuCtxSynchronize_v2),
    V("cuStreamSynchronize", "cuStreamSynchronize", 2000, 0, GT_API_cuStreamSynchronize),
    V("cuStreamSynchronize", "cuStreamSynchronize_ptsz", 7000, 1, GT_API_cuStreamSynchronize_ptsz),
    V("cuEventSynchronize", "cuEventSynchronize", 2000, 0, GT_API_cuEventSynchronize),
    V("cuStreamWaitEvent", "cuStreamWaitEvent", 3020, 0, GT_API_cuStreamWaitEvent),
    V("cuStreamWaitEvent", "cuStreamWaitEvent_ptsz", 7000, 1, GT_API_cuStreamWaitEvent_ptsz),
    V("cuMemcpyHtoD", "cuMemcpyHtoD", 2000, 0, 0),
    V("cuMemcpyHtoD", "cuMemcpyHtoD_v2", 3020, 0, GT_API_cuMemcpyHtoD_v2),
    V("cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds", 7000, 1, GT_API_cuMemcpyHtoD_v2_ptds),
    V("cuMemcpyDtoH", "cuMemcpyDtoH", 2000, 0, 0),
    V("cuMemcpyDtoH", "cuMemcpyDtoH_v2", 3020, 0, GT_API_cuMemcpyDtoH_v2),
    V("cuMemcpyDtoH", "cuMemcpyDtoH_v2_ptds", 7000, 1, GT_API_cuMemcpyDtoH_v2_ptds),
    V("cuMemcpyDtoD", "cuMemcpyDtoD", 2000, 0, 0),
    V("cuMemcpyDtoD", "cuMemcpyDtoD_v2", 3020, 0, GT_API_cuMemcpyDtoD_v2),
    V("cuMemcpyDtoD", "cuMemcpyDtoD_v2_ptds", 7000, 1, GT_API_cuMemcpyDtoD_v2_ptds),
    V("cuMemcpy", "cuMemcpy", 4000, 0, GT_API_cuMemcpy),
    V("cuMemcpy", "cuMemcpy_ptds", 7000, 1, GT_API_cuMemcpy_ptds),
    V("cuMemcpyPeer", "cuMemcpyPeer", 4000, 0, GT_API_cuMemcpyPeer),
    V("cuMemcpyPeer", "cuMemcpyPeer_ptds", 7000, 1, GT_API_cuMemcpyPeer_ptds),
    V("cuMemcpy2D", "cuMemcpy2D", 2000, 0, 0),
    V("cuMemcpy2D", "cuMemcpy2D_v2", 3020, 0, GT_API_cuMemcpy2D_v2),
    V("cuMemcpy2D", "cuMemcpy2D_v2_ptds", 7000, 1, GT_API_cuMemcpy2D_v2_ptds),
    V("cuMemcpy3D", "cuMemcpy3D", 2000, 0, 0),
    V("cuMemcpy3D", "cuMemcpy3D_v2", 3020, 0, GT_API_cuMemcpy3D_v2),
    V("cuMemcpy3D", "cuMemcpy3D_v2_ptds", 7000, 1, GT_API_cuMemcpy3D_v2_ptds),
    V("cuMemcpyAsync", "cuMemcpyAsync", 4000, 0, GT_API_cuMemcpyAsync),
    V("cuMemcpyAsync", "cuMemcpyAsync_ptsz", 7000, 1, GT_API_cuMemcpyAsync_ptsz),
    V("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync", 2000, 0, 0),
    V("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2", 3020, 0, GT_API_cuMemcpyHtoDAsync_v2),
    V("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2_ptsz", 7000, 1,
      GT_API_cuMemcpyHtoDAsync_v2_ptsz),
    V("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync", 2000, 0, 0),
    V("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2", 3020, 0, GT_API_cuMemcpyDtoHAsync_v2),
    V("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2_ptsz", 7000, 1,
      GT_API_cuMemcpyDtoHAsync_v2_ptsz),
    V("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync", 3000, 0, 0),
    V("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2", 3020, 0, GT_API_cuMemcpyDtoDAsync_v2),
    V("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2_ptsz", 7000, 1,
      GT_API_cuMemcpyDtoDAsync_v2_ptsz),
    V("cuMemcpy2DAsync", "cuMemcpy2DAsync", 2000, 0, 0),
    V("cuMemcpy2DAsync", "cuMemcpy2DAsync_v2", 3020, 0, GT_API_cuMemcpy2DAsync_v2),
    V("cuMemcpy2DAsync", "cuMemcpy2DAsync_v2_ptsz", 7000, 1, GT_API_cuMemcpy2DAsync_v2_ptsz),
    V("cuMemcpy3DAsync", "cuMemcpy3DAsync", 2000, 0, 0),
    V("cuMemcpy3DAsync", "cuMemcpy3DAsync_v2", 3020, 0, GT_API_cuMemcpy3DAsync_v2),
    V("cuMemcpy3DAsync", "cuMemcpy3DAsync_v2_ptsz", 7000, 1, GT_API_cuMemcpy3DAsync_v2_ptsz),
    V("cuMemcpyPeerAsync", "cuMemcpyPeerAsync", 4000, 0, GT_API_cuMemcpyPeerAsync),
    V("cuMemcpyPeerAsync", "cuMemcpyPeerAsync_ptsz", 7000, 1, GT_API_cuMemcpyPeerAsync_ptsz),
    V("cuMemsetD8Async", "cuMemsetD8Async", 3020, 0, GT_API_cuMemsetD8Async),
    V("cuMemsetD8Async", "cuMemsetD8Async_ptsz", 7000, 1, GT_API_cuMemsetD8Async_ptsz),
    V("cuMemsetD16Async", "cuMemsetD16Async", 3020, 0, GT_API_cuMemsetD16Async),
    V("cuMemsetD16Async", "cuMemsetD16Async_ptsz", 7000, 1, GT_API_cuMemsetD16Async_ptsz),
    V("cuMemsetD32Async", "cuMemsetD32Async", 3020, 0, GT_API_cuMemsetD32Async),
    V("cuMemsetD32Async", "cuMemsetD32Async_ptsz", 7000, 1, GT_API_cuMemsetD32Async_ptsz),
    V("cuMemsetD2D8Async", "cuMemsetD2D8Async", 3020, 0, GT_API_cuMemsetD2D8Async),
    V("cuMemsetD2D8Async", "cuMemsetD2D8Async_ptsz", 7000, 1, GT_API_cuMemsetD2D8Async_ptsz),
    V("cuMemsetD2D16Async", "cuMemsetD2D16Async", 3020, 0, GT_API_cuMemsetD2D16Async),
    V("cuMemsetD2D16Async", "cuMemsetD2D16Async_ptsz", 7000, 1, GT_API_cuMemsetD2D16Async_ptsz),
    V("cuMemsetD2D32Async", "cuMemsetD2D32Async", 3020, 0, GT_API_cuMemsetD2D32Async),
    V("cuMemsetD2D32Async", "cuMemsetD2D32Async_ptsz", 7000, 1, GT_API_cuMemsetD2D32Async_ptsz),
    V("cuInit", "cuInit", 2000, 0, GT_API_cuInit),
    V("cuGetProcAddress", "cuGetProcAddress", 11030, 0, GT_API_cuGetProcAddress),
    V("cuGetProcAddress", "cuGetProcAddress_v2", 12000, 0, GT_API_cuGetProcAddress_v2),
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* dlsym address of each variant's export in libcuda, looked up once. */
static void *variant_export_addr(size_t i)
{
    static void *_Atomic addr[NVARIANTS];
    void *p = atomic_load_explicit(&addr[i], memory_order_acquire);
    if (!p) {
        void *h = gt_libcuda();
        p = h ? gt_real_dlsym(h, variants[i].export_name) : NULL;
        if (!p) p = GT_MISSING;
        atomic_store_explicit(&addr[i], p, memory_order_release);
    }
    return p == GT_MISSING ? NULL : p;
}

GT_EARLY static inline int maybe_driver_name(const char *s)
{
    return s && s[0] == 'c' && s[1] == 'u' && s[2] >= 'A' && s[2] <= 'Z';
}

/* The api id of a traced export name, or 0. */
GT_EARLY static unsigned api_of_export(const char *name)
{
    if (!maybe_driver_name(name)) return 0;
    for (size_t i = 0; i < NVARIANTS; i++)
        if (variants[i].api && strcmp(variants[i].export_name, name) == 0) return variants[i].api;
    return 0;
}

/* Which variant of `base` did the resolver hand out as p for (version, flags)? */
static const struct variant *identify(const char *base, void *p, int version, uint64_t flags)
{
    const struct variant *best = NULL, *best_pt = NULL;
    int found = 0;
    for (size_t i = 0; i < NVARIANTS; i++) {
        const struct variant *v = &variants[i];
        if (strcmp(v->base, base) != 0) continue;
        found = 1;
        if (variant_export_addr(i) == p) return v;
        if (v->api && atomic_load_explicit(&gt_real[v->api], memory_order_relaxed) == p) return v;
        if (v->version > version) continue;
        if (v->per_thread) {
            if (!best_pt || v->version > best_pt->version) best_pt = v;
        } else if (!best || v->version > best->version) {
            best = v;
        }
    }
    if (!found) return NULL;
    /* The documented rule: newest ABI at or below version; per-thread when asked and present. */
    if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt) return best_pt;
    return best;
}

static void *wrap(unsigned api, void *real)
{
    void *expected = NULL;
    atomic_compare_exchange_strong(&gt_real[api], &expected, real);
    return gt_wrappers[api] ? gt_wrappers[api] : real;
}

/* ---- dlsym (entered from dlsym_entry.S) ------------------------------------------------------- */

static void *after_dlsym(const char *name, void *p)
{
    unsigned api = api_of_export(name);
    if (!api || !p) return p;
    void *out = p;
    if (p == gt_wrappers[api]) { /* RTLD_DEFAULT found our own export */
    } else if (in_libcuda(p)) {
        out = wrap(api, p);
    } else {
        api = 0; /* another library's function of that name: leave it alone */
    }
    gt_rec_resolve(GT_RESOLVE_DLSYM, name, 0, 0, api, 0);
    return out;
}

GT_EARLY void *gt_dlsym_default(void *handle, const char *name)
{
    void *p = gt_real_dlsym(handle, name);
    if (!maybe_driver_name(name) || gt_tls_in_hook) return p;
    int saved = errno;
    p = after_dlsym(name, p);
    errno = saved;
    return p;
}

/* Called with RTLD_NEXT: 1 if we must answer (a traced driver name), 0 to let glibc answer for
 * the original caller. Also makes sure gt_real_dlsym_fn is set before the trampoline jumps. */
GT_EARLY int gt_dlsym_next_tracked(const char *name)
{
    gt_real_dlsym_init();
    return api_of_export(name) != 0 && !gt_tls_in_hook;
}

/* RTLD_NEXT for a traced name: the first definition in an object loaded after the caller's. */
void *gt_dlsym_next(void *handle, const char *name, void *caller)
{
    (void)handle;
    int saved = errno;
    struct link_map *self = object_of(caller), *m;
    void *found = NULL;
    for (m = self ? self->l_next : NULL; m && !found; m = m->l_next) {
        if (!m->l_name || !m->l_name[0]) continue;
        void *h = dlopen(m->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h) continue;
        void *p = gt_real_dlsym(h, name);
        if (p && object_of(p) == m) found = p;
        dlclose(h);
    }
    if (!self) found = gt_real_dlsym(RTLD_DEFAULT, name);
    found = after_dlsym(name, found);
    errno = saved;
    return found;
}

/* ---- cuGetProcAddress ------------------------------------------------------------------------- */

static void after_getproc(unsigned how, const char *symbol, void **pfn, int version,
                          uint64_t flags, const CUdriverProcAddressQueryResult *status, CUresult r)
{
    unsigned api = 0, st = 3;
    if (r == CUDA_SUCCESS && pfn) {
        st = status ? (unsigned)*status : (*pfn ? 0u : 1u);
        if (*pfn && symbol) {
            const struct variant *v = identify(symbol, *pfn, version, flags);
            if (v && v->api) {
                *pfn = wrap(v->api, *pfn);
                api = v->api;
            }
        }
    }
    gt_rec_resolve(how, symbol ? symbol : "", version, flags, api, st);
}

#undef cuGetProcAddress
GT_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags)
{
    PFN_cuGetProcAddress_v11030 real =
        (PFN_cuGetProcAddress_v11030)gt_real_fn(GT_API_cuGetProcAddress);
    if (!real) return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = real(symbol, pfn, cudaVersion, flags);
    int saved = errno;
    after_getproc(GT_RESOLVE_GETPROC, symbol, pfn, cudaVersion, flags, NULL, r);
    errno = saved;
    return r;
}

GT_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    PFN_cuGetProcAddress_v12000 real =
        (PFN_cuGetProcAddress_v12000)gt_real_fn(GT_API_cuGetProcAddress_v2);
    if (!real) return CUDA_ERROR_NOT_SUPPORTED;
    CUresult r = real(symbol, pfn, cudaVersion, flags, status);
    int saved = errno;
    after_getproc(GT_RESOLVE_GETPROC2, symbol, pfn, cudaVersion, flags, status, r);
    errno = saved;
    return r;
}

/* ---- the wrapper table -------------------------------------------------------------------------- */

void *const gt_wrappers[GT_API_MAX] = {
#define GT_WRAPPER_ROW(id, e, nm, fam, kind) [id] = (void *)e,
    GT_API_LIST(GT_WRAPPER_ROW)
#undef GT_WRAPPER_ROW
};
