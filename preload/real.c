/* The real driver and dlsym, as the shim calls them for itself: glibc's dlsym (never our own
 * export), libcuda's handle, the real entry point of each traced API (write-once, per variant)
 * and the driver functions the shim calls for its own records (never wrapped). Everything here
 * is below the hooks and the resolvers (resolve.c) that hand our wrappers out. */
#include <dlfcn.h>
#include <stdatomic.h>

#include <cuda.h>

#include "shim.h"

/* dlsym is called by sanitizer runtimes while they initialize, before their shadow memory exists:
 * the path from our dlsym to glibc's for untraced names must not be instrumented. */
#define GT_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))

void *_Atomic gt_real[GT_API_MAX];
void *gt_real_dlsym_fn; /* glibc's dlsym; read by dlsym_entry.S */

/* ---- the real dlsym and libcuda ---------------------------------------------------------------- */

GT_EARLY void gt_real_dlsym_init(void)
{
    if (__atomic_load_n(&gt_real_dlsym_fn, __ATOMIC_ACQUIRE)) return;
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
    __atomic_store_n(&gt_real_dlsym_fn, p, __ATOMIC_RELEASE);
}

GT_EARLY void *gt_real_dlsym(void *handle, const char *name)
{
    gt_real_dlsym_init();
    void *(*f)(void *, const char *) = (void *(*)(void *, const char *))gt_real_dlsym_fn;
    return f ? f(handle, name) : NULL;
}

void *gt_libcuda(void)
{
    static void *_Atomic handle;
    void *h = atomic_load(&handle);
    if (h) return h;
    int saved = errno;
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    errno = saved;
    if (!h) return NULL;
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&handle, &expected, h)) {
        dlclose(h); /* another thread won; keep one reference */
        h = expected;
    }
    return h;
}

void *gt_real_resolve(unsigned api)
{
    void *h = gt_libcuda();
    void *p = h ? gt_real_dlsym(h, gt_api_name(api)) : NULL;
    void *expected = NULL;
    if (p && !atomic_compare_exchange_strong(&gt_real[api], &expected, p)) p = expected;
    return p;
}

static const char *const helper_names[GT_H_COUNT] = {
    [GT_H_CtxGetDevice] = "cuCtxGetDevice",
    [GT_H_CtxGetCurrent] = "cuCtxGetCurrent",
    [GT_H_MemGetInfo] = "cuMemGetInfo_v2",
    [GT_H_FuncGetName] = "cuFuncGetName",
    [GT_H_KernelGetName] = "cuKernelGetName",
    [GT_H_DriverGetVersion] = "cuDriverGetVersion",
    [GT_H_DeviceGetCount] = "cuDeviceGetCount",
    [GT_H_DeviceGet] = "cuDeviceGet",
    [GT_H_DeviceGetName] = "cuDeviceGetName",
    [GT_H_DeviceTotalMem] = "cuDeviceTotalMem_v2",
    [GT_H_DeviceGetAttribute] = "cuDeviceGetAttribute",
    [GT_H_DeviceGetUuid] = "cuDeviceGetUuid_v2",
    [GT_H_PrimaryCtxGetState] = "cuDevicePrimaryCtxGetState",
};

void *gt_helper_fn(enum gt_helper which)
{
    static void *_Atomic fns[GT_H_COUNT];
    void *p = atomic_load_explicit(&fns[which], memory_order_acquire);
    if (!p) {
        void *h = gt_libcuda();
        p = h ? gt_real_dlsym(h, helper_names[which]) : NULL;
        if (!p) p = GT_MISSING;
        atomic_store_explicit(&fns[which], p, memory_order_release);
    }
    return p == GT_MISSING ? NULL : p;
}

typedef CUresult (*ctx_get_device_fn)(CUdevice *);

int gt_current_device(void)
{
    ctx_get_device_fn f = (ctx_get_device_fn)gt_helper_fn(GT_H_CtxGetDevice);
    CUdevice d;
    if (f && f(&d) == CUDA_SUCCESS) return (int)d;
    return -1;
}
