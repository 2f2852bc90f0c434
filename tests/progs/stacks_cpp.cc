// Host call stacks from C++ (tests/cases/stacks_cpp.sh): call sites in a namespace, a class and
// a template must come out demangled: gtstk::Pool::grow(unsigned long) and
// float* gtstk::make_buffer<float>(unsigned long).
#include <cstdio>
#include <cstdlib>

#include <cuda.h>

namespace gtstk {

struct Pool {
    CUdeviceptr blocks[8];
    int n = 0;
    __attribute__((noinline)) void grow(size_t bytes)
    {
        if (cuMemAlloc(&blocks[n++], bytes) != CUDA_SUCCESS) std::abort(); // SITE:Pool::grow
    }
};

template <typename T> __attribute__((noinline)) T *make_buffer(size_t count)
{
    CUdeviceptr p = 0;
    if (cuMemAlloc(&p, count * sizeof(T)) != CUDA_SUCCESS) std::abort(); // SITE:make_buffer
    return reinterpret_cast<T *>(p);
}

} // namespace gtstk

int main()
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx))
        return 1;
    gtstk::Pool pool;
    for (int i = 0; i < 3; i++) pool.grow(1 << 20);
    float *f = gtstk::make_buffer<float>(1 << 18);
    std::printf("ok %p\n", static_cast<void *>(f));
    return 0;
}
