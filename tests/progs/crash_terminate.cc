// crash_terminate: 10 allocations of 1 MiB and 3 kernel launches, then an exception nobody
// catches, as an out-of-memory error thrown by a framework is: std::terminate calls abort.
#include <cstdio>
#include <new>
#include <stdexcept>

#include <cuda.h>

static void check(CUresult r)
{
    if (r != CUDA_SUCCESS) throw std::runtime_error("driver call failed");
}

int main()
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    check(cuInit(0));
    check(cuDeviceGet(&dev, 0));
    check(cuDevicePrimaryCtxRetain(&ctx, dev));
    check(cuCtxSetCurrent(ctx));
    check(cuModuleLoadData(&mod, "kernel k 1000\n"));
    check(cuModuleGetFunction(&f, mod, "k"));
    for (int i = 0; i < 10; i++) {
        CUdeviceptr p;
        check(cuMemAlloc(&p, 1 << 20));
    }
    for (int i = 0; i < 3; i++)
        check(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
    std::puts("throwing");
    std::fflush(stdout);
    throw std::bad_alloc();
}
