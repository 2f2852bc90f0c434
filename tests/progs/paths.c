/* One known workload, reached through each way a program can obtain driver entry points:
 *
 *   paths direct            linked against libcuda (our exports win by LD_PRELOAD)
 *   paths dlsym             dlopen("libcuda.so.1") + dlsym(handle, exact versioned names)
 *   paths default           dlsym(RTLD_DEFAULT, ...)
 *   paths next              dlsym(RTLD_NEXT, ...) from the main program
 *   paths getproc2          dlsym("cuGetProcAddress_v2"), self-lookup at 12000, base names
 *   paths getproc2-ptsz     same, with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 *   paths getproc1          the CUDA 11.3 4-argument cuGetProcAddress, self-lookup at 11030
 *
 * Workload (exact figures the report must show):
 *   10 x cuMemAlloc of (i+1) MiB            -> peak 55 MiB
 *   free the first 5 (15 MiB)               -> 40 MiB live, leaked at exit
 *   3 x cuMemAllocAsync 1 MiB + 3 frees     (async pool kind)
 *   7 launches of kernel "alpha", 3 of "beta"
 *   1 cuStreamSynchronize, 1 cuCtxSynchronize
 * Prints "ok" and exits 0 when every call returned what the simulated driver documents. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#undef cuGetProcAddress

struct api {
    PFN_cuInit_v2000 init;
    PFN_cuDeviceGet_v2000 device_get;
    PFN_cuDevicePrimaryCtxRetain_v7000 retain;
    PFN_cuCtxSetCurrent_v4000 set_current;
    PFN_cuMemAlloc_v3020 alloc;
    PFN_cuMemFree_v3020 free_;
    PFN_cuMemAllocAsync_v11020 alloc_async;
    PFN_cuMemFreeAsync_v11020 free_async;
    PFN_cuStreamCreate_v2000 stream_create;
    PFN_cuStreamSynchronize_v2000 stream_sync;
    PFN_cuCtxSynchronize_v2000 ctx_sync;
    PFN_cuModuleLoadData_v2000 module_load;
    PFN_cuModuleGetFunction_v2000 get_function;
    PFN_cuLaunchKernel_v4000 launch;
    PFN_cuMemcpyHtoDAsync_v3020 copy_async; /* hooked like launches (issue 20) */
    PFN_cuMemsetD8Async_v3020 set_async;
};

#include "check.h"

static const char module_image[] = "kernel alpha 20000\nkernel beta 50000\n";

static int workload(const struct api *a)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUmodule mod;
    CUfunction alpha, beta;
    CUdeviceptr p[10], q[3];
    CHECK(a->init(0));
    CHECK(a->device_get(&dev, 0));
    CHECK(a->retain(&ctx, dev));
    CHECK(a->set_current(ctx));
    CHECK(a->stream_create(&s, 0));
    for (int i = 0; i < 10; i++) CHECK(a->alloc(&p[i], (size_t)(i + 1) << 20));
    for (int i = 0; i < 5; i++) CHECK(a->free_(p[i]));
    for (int i = 0; i < 3; i++) CHECK(a->alloc_async(&q[i], 1 << 20, s));
    for (int i = 0; i < 3; i++) CHECK(a->free_async(q[i], s));
    CHECK(a->module_load(&mod, module_image));
    CHECK(a->get_function(&alpha, mod, "alpha"));
    CHECK(a->get_function(&beta, mod, "beta"));
    for (int i = 0; i < 10; i++)
        CHECK(a->launch(i < 7 ? alpha : beta, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    static char batch[4096];
    CHECK(a->copy_async(p[5], batch, sizeof(batch), s));
    CHECK(a->set_async(p[6], 0, 4096, s));
    CHECK(a->stream_sync(s));
    CHECK(a->ctx_sync());
    return 0;
}

#define DIRECT(field, fn) a.field = fn
static void from_direct(struct api *a_)
{
    struct api a;
    DIRECT(init, cuInit);
    DIRECT(device_get, cuDeviceGet);
    DIRECT(retain, cuDevicePrimaryCtxRetain);
    DIRECT(set_current, cuCtxSetCurrent);
    DIRECT(alloc, cuMemAlloc_v2);
    DIRECT(free_, cuMemFree_v2);
    DIRECT(alloc_async, cuMemAllocAsync);
    DIRECT(free_async, cuMemFreeAsync);
    DIRECT(stream_create, cuStreamCreate);
    DIRECT(stream_sync, cuStreamSynchronize);
    DIRECT(ctx_sync, cuCtxSynchronize);
    DIRECT(module_load, cuModuleLoadData);
    DIRECT(get_function, cuModuleGetFunction);
    DIRECT(launch, cuLaunchKernel);
    DIRECT(copy_async, cuMemcpyHtoDAsync_v2);
    DIRECT(set_async, cuMemsetD8Async);
    *a_ = a;
}

static void *must(void *p, const char *what)
{
    if (!p) {
        fprintf(stderr, "lookup of %s failed: %s\n", what, dlerror());
        exit(1);
    }
    return p;
}

static void from_dlsym(struct api *a, void *h)
{
#define SYM(field, name) a->field = must(dlsym(h, name), name)
    SYM(init, "cuInit");
    SYM(device_get, "cuDeviceGet");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(set_current, "cuCtxSetCurrent");
    SYM(alloc, "cuMemAlloc_v2");
    SYM(free_, "cuMemFree_v2");
    SYM(alloc_async, "cuMemAllocAsync");
    SYM(free_async, "cuMemFreeAsync");
    SYM(stream_create, "cuStreamCreate");
    SYM(stream_sync, "cuStreamSynchronize");
    SYM(ctx_sync, "cuCtxSynchronize");
    SYM(module_load, "cuModuleLoadData");
    SYM(get_function, "cuModuleGetFunction");
    SYM(launch, "cuLaunchKernel");
    SYM(copy_async, "cuMemcpyHtoDAsync_v2");
    SYM(set_async, "cuMemsetD8Async");
#undef SYM
}

static void from_getproc(struct api *a, int four_args, cuuint64_t flags)
{
    void *h = must(dlopen("libcuda.so.1", RTLD_NOW), "libcuda.so.1");
    PFN_cuGetProcAddress_v12000 gp2 = NULL;
    PFN_cuGetProcAddress_v11030 gp1 = NULL;
    /* As libcudart does: one dlsym, then everything through the self-looked-up resolver. */
    if (four_args) {
        PFN_cuGetProcAddress_v11030 boot = must(dlsym(h, "cuGetProcAddress"), "cuGetProcAddress");
        CHECK(boot("cuGetProcAddress", (void **)&gp1, 11030, 0));
        must((void *)gp1, "self-lookup 11030");
    } else {
        PFN_cuGetProcAddress_v12000 boot =
            must(dlsym(h, "cuGetProcAddress_v2"), "cuGetProcAddress_v2");
        CUdriverProcAddressQueryResult st = 99;
        void *probe = (void *)1;
        CHECK(boot("", &probe, 12000, 0, &st)); /* cudart's probe */
        CHECK(boot("cuGetProcAddress", (void **)&gp2, 12000, 0, &st));
        must((void *)gp2, "self-lookup 12000");
        if (st != CU_GET_PROC_ADDRESS_SUCCESS) exit(1);
    }
#define GP(field, name, ver)                                                                       \
    do {                                                                                           \
        void *fn_ = NULL;                                                                          \
        CUdriverProcAddressQueryResult st_ = 99;                                                   \
        if (four_args) CHECK(gp1(name, &fn_, ver, flags));                                         \
        else {                                                                                     \
            CHECK(gp2(name, &fn_, ver, flags, &st_));                                              \
            if (st_ != CU_GET_PROC_ADDRESS_SUCCESS) {                                              \
                fprintf(stderr, "%s@%d: status %d\n", name, ver, (int)st_);                        \
                exit(1);                                                                           \
            }                                                                                      \
        }                                                                                          \
        a->field = must(fn_, name);                                                                \
    } while (0)
    GP(init, "cuInit", 2000);
    GP(device_get, "cuDeviceGet", 2000);
    GP(retain, "cuDevicePrimaryCtxRetain", 7000);
    GP(set_current, "cuCtxSetCurrent", 4000);
    GP(alloc, "cuMemAlloc", 3020);
    GP(free_, "cuMemFree", 3020);
    GP(alloc_async, "cuMemAllocAsync", 11020);
    GP(free_async, "cuMemFreeAsync", 11020);
    GP(stream_create, "cuStreamCreate", 2000);
    GP(stream_sync, "cuStreamSynchronize", 7000);
    GP(ctx_sync, "cuCtxSynchronize", 2000);
    GP(module_load, "cuModuleLoadData", 2000);
    GP(get_function, "cuModuleGetFunction", 2000);
    GP(launch, "cuLaunchKernel", 7000);
    GP(copy_async, "cuMemcpyHtoDAsync", 7000);
    GP(set_async, "cuMemsetD8Async", 7000);
#undef GP
}

int main(int argc, char **argv)
{
    struct api a;
    const char *path = argc > 1 ? argv[1] : "direct";
    memset(&a, 0, sizeof(a));
    if (strcmp(path, "direct") == 0) from_direct(&a);
    else if (strcmp(path, "dlsym") == 0)
        from_dlsym(&a, must(dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), "libcuda.so.1"));
    else if (strcmp(path, "default") == 0) from_dlsym(&a, RTLD_DEFAULT);
    else if (strcmp(path, "next") == 0) from_dlsym(&a, RTLD_NEXT);
    else if (strcmp(path, "getproc2") == 0) from_getproc(&a, 0, 0);
    else if (strcmp(path, "getproc2-ptsz") == 0)
        from_getproc(&a, 0, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    else if (strcmp(path, "getproc1") == 0) from_getproc(&a, 1, 0);
    else {
        fprintf(stderr, "unknown path %s\n", path);
        return 2;
    }
    workload(&a);
    /* What the simulated driver saw, so the tests can tell which entry points were reached. */
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    unsigned long (*count)(const char *) =
        drv ? (unsigned long (*)(const char *))dlsym(drv, "gtsim_call_count") : NULL;
    if (count) {
        const char *names[] = {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuMemAlloc_v2",
                               "cuStreamSynchronize", "cuStreamSynchronize_ptsz"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            printf("calls %s=%lu\n", names[i], count(names[i]));
    }
    printf("ok\n");
    return 0;
}
