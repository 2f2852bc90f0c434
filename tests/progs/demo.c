/* The demo workload behind `make demo`: a toy training loop on the simulated GPU (2 GiB).
 * Weights stay resident, each step allocates activations and a workspace, launches a forward and
 * a backward kernel, synchronizes and frees; step 6 asks for a buffer that no longer fits, and one
 * buffer is never freed. The report shows the peak, the OOM with its evidence, and the leak. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#define MiB (1024ull * 1024)
#include "check.h"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUmodule mod;
    CUfunction fwd, bwd, opt;
    CUdeviceptr weights, leak;
    open_primary(&dev, &ctx);
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK(cuModuleLoadData(&mod, "kernel forward_gemm 400000\nkernel backward_gemm 800000\n"
                                 "kernel adam_step 100000\n"));
    CHECK(cuModuleGetFunction(&fwd, mod, "forward_gemm"));
    CHECK(cuModuleGetFunction(&bwd, mod, "backward_gemm"));
    CHECK(cuModuleGetFunction(&opt, mod, "adam_step"));
    CHECK(cuMemAlloc(&weights, 512 * MiB));
    CHECK(cuMemAlloc(&leak, 64 * MiB)); /* never freed */
    for (int step = 0; step < 10; step++) {
        CUdeviceptr act, ws, big;
        CHECK(cuMemAlloc(&act, 300 * MiB));
        CHECK(cuMemAllocAsync(&ws, 128 * MiB, s));
        for (int l = 0; l < 4; l++) CHECK(cuLaunchKernel(fwd, 64, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
        for (int l = 0; l < 4; l++) CHECK(cuLaunchKernel(bwd, 64, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
        CHECK(cuLaunchKernel(opt, 32, 1, 1, 256, 1, 1, 0, s, NULL, NULL));
        if (step == 6) {
            CUresult r = cuMemAlloc(&big, 1536 * MiB);
            printf("step %d: asking for 1.5 GiB more -> %s\n", step,
                   r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "ok");
            if (r == CUDA_SUCCESS) CHECK(cuMemFree(big));
        }
        CHECK(cuMemFreeAsync(ws, s));
        CHECK(cuStreamSynchronize(s));
        CHECK(cuMemFree(act));
    }
    CHECK(cuCtxSynchronize());
    CHECK(cuMemFree(weights));
    printf("demo: 10 steps done\n");
    return 0;
}
