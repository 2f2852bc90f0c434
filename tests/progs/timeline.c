/* timeline: kernels of known durations on two streams, copies and memsets, host pauses, and a
 * graph launched twice. The GPU timeline the report derives must match the simulated driver's
 * ground truth (its GTSIM_LOG "work" lines) to the nanosecond. Also allocates known memory so runs
 * without a GPU timeline can check the memory report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static void launch(CUfunction f, CUstream s)
{
    CHECK(cuLaunchKernel(f, 4, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUstream a, b;
    CUmodule mod;
    CUfunction k_long, k_a, k_b, k_c;
    CUdeviceptr buf, buf2;
    static char host[1 << 20];
    open_primary(&dev, &ctx);
    CHECK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CHECK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CHECK(cuModuleLoadData(&mod, "kernel _Z6k_longPf 3000000\nkernel k_a 100000\n"
                                 "kernel k_b 200000\nkernel k_c 50000\n"));
    CHECK(cuModuleGetFunction(&k_long, mod, "_Z6k_longPf"));
    CHECK(cuModuleGetFunction(&k_a, mod, "k_a"));
    CHECK(cuModuleGetFunction(&k_b, mod, "k_b"));
    CHECK(cuModuleGetFunction(&k_c, mod, "k_c"));
    CHECK(cuMemAlloc(&buf, 1 << 20));
    CHECK(cuMemAlloc(&buf2, 3 << 20));

    /* Phase 1: overlapping streams, an async copy and a memset. */
    launch(k_long, a);
    for (int i = 0; i < 2; i++) launch(k_b, b);
    for (int i = 0; i < 3; i++) launch(k_a, a);
    CHECK(cuMemcpyHtoDAsync(buf, host, sizeof(host), b));
    CHECK(cuMemsetD8Async(buf, 0, 1 << 20, b));
    CHECK(cuStreamSynchronize(a));
    CHECK(cuStreamSynchronize(b));
    usleep(5000); /* the host is busy: an idle gap */

    /* Phase 2: a two-kernel graph, launched twice. */
    CUgraph g;
    CUgraphExec ge;
    CUgraphNode n1, n2;
    CUDA_KERNEL_NODE_PARAMS p;
    CHECK(cuGraphCreate(&g, 0));
    memset(&p, 0, sizeof(p));
    p.func = k_c, p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 32, p.blockDimY = p.blockDimZ = 1;
    CHECK(cuGraphAddKernelNode(&n1, g, NULL, 0, &p));
    p.func = k_a;
    CHECK(cuGraphAddKernelNode(&n2, g, &n1, 1, &p));
    CHECK(cuGraphInstantiateWithFlags(&ge, g, 0));
    CHECK(cuGraphLaunch(ge, a));
    CHECK(cuGraphLaunch(ge, a));
    CHECK(cuStreamSynchronize(a));
    usleep(2000);

    /* Phase 3: small kernels on the legacy stream, then a blocking copy. */
    for (int i = 0; i < 5; i++) launch(k_c, NULL);
    CHECK(cuCtxSynchronize());
    CHECK(cuMemcpyHtoD(buf, host, sizeof(host)));
    CHECK(cuMemFree(buf));
    printf("timeline ok\n");
    return 0;
}
