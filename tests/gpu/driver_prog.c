/* GPU kit: a driver-API program with known counts, run on a real GPU.
 * 16 cuMemAlloc of (i+1) MiB, 8 freed; 3 cuMemAllocAsync/cuMemFreeAsync; 100 launches of an
 * empty kernel from a PTX module (JIT-compiled by the driver); expected figures are printed for
 * the kit to compare with the report. GPUKIT_MODULE, if set, is the module image loaded instead
 * of the PTX (tests/cases/gpu_kit.sh runs the kit on the simulated driver, whose images are text:
 * "kernel gt_empty_kernel 1000"). */
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = NULL;                                                                 \
            cuGetErrorName(r_, &s_);                                                               \
            fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?");       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                          ".visible .entry gt_empty_kernel()\n{\n ret;\n}\n";

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUstream s;
    CUdeviceptr p[16], q[3];
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    const char *image = getenv("GPUKIT_MODULE");
    CHECK(cuModuleLoadData(&mod, image && *image ? image : ptx));
    CHECK(cuModuleGetFunction(&f, mod, "gt_empty_kernel"));
    for (int i = 0; i < 16; i++) CHECK(cuMemAlloc(&p[i], (size_t)(i + 1) << 20));
    for (int i = 0; i < 8; i++) CHECK(cuMemFree(p[i]));
    for (int i = 0; i < 3; i++) CHECK(cuMemAllocAsync(&q[i], 1 << 20, s));
    for (int i = 0; i < 3; i++) CHECK(cuMemFreeAsync(q[i], s));
    for (int i = 0; i < 100; i++) CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CHECK(cuStreamSynchronize(s));
    printf("expect allocs=19 frees=11 launches=100 kernels=100 peak=%d leaked=%d\n",
           136 << 20, 100 << 20);
    return 0;
}
