/* Host call stacks (tests/cases/stacks_*.sh): allocations, a failed allocation, launches and a
 * synchronization, each from a function of its own whose call line carries a SITE: marker the
 * test looks up, so the report's call sites (function and file:line) can be checked exactly.
 *
 *   stacks_sites [N] [LIB]
 *     alloc_weights   4 x cuMemAlloc 1 MiB, never freed       (leaked 4 MiB)
 *     alloc_buffers   3 x cuMemAlloc 2 MiB, freed by free_buffers
 *     try_huge        1 x cuMemAlloc of 1 PiB: fails (out of memory)
 *     churn           N x (cuMemAlloc 4 KiB + cuMemFree), default 10
 *     run_kernels     5 x cuLaunchKernel
 *     wait_all        1 x cuCtxSynchronize
 *     LIB (optional)  dlopen(LIB) and its stk_lib_alloc(3): 3 x 1 MiB from the library, leaked
 * Compiled -O2 -g like every test program: the site functions are noinline. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#include "check.h"

#define NOINLINE __attribute__((noinline))

static CUdeviceptr weights[4], buffers[3];

NOINLINE static void alloc_weights(void)
{
    for (int i = 0; i < 4; i++)
        CHECK(cuMemAlloc(&weights[i], 1 << 20)); /* SITE:alloc_weights */
}

NOINLINE static void alloc_buffers(void)
{
    for (int i = 0; i < 3; i++)
        CHECK(cuMemAlloc(&buffers[i], 2 << 20)); /* SITE:alloc_buffers */
}

NOINLINE static void free_buffers(void)
{
    for (int i = 0; i < 3; i++)
        CHECK(cuMemFree(buffers[i])); /* SITE:free_buffers */
}

NOINLINE static int try_huge(void)
{
    CUdeviceptr p;
    return cuMemAlloc(&p, (size_t)1 << 50) == CUDA_ERROR_OUT_OF_MEMORY; /* SITE:try_huge */
}

NOINLINE static void churn(int n)
{
    for (int i = 0; i < n; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 4096)); /* SITE:churn */
        CHECK(cuMemFree(p));
    }
}

NOINLINE static void run_kernels(CUfunction f)
{
    for (int i = 0; i < 5; i++)
        CHECK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL)); /* SITE:run_kernels */
}

NOINLINE static void wait_all(void)
{
    CHECK(cuCtxSynchronize()); /* SITE:wait_all */
}

static void from_library(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    void (*lib_alloc)(int) = h ? (void (*)(int))dlsym(h, "stk_lib_alloc") : NULL;
    if (!lib_alloc) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(1);
    }
    lib_alloc(3);
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    int n = argc > 1 ? atoi(argv[1]) : 10;
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel gemm 20000\n"));
    CHECK(cuModuleGetFunction(&f, mod, "gemm"));
    alloc_weights();
    alloc_buffers();
    if (!try_huge()) return 2;
    churn(n);
    run_kernels(f);
    wait_all();
    free_buffers();
    if (argc > 2) from_library(argv[2]);
    printf("ok\n");
    return 0;
}
