/* errors: calls that fail, traced or not, must return the same codes and leave errno alone.
 * Prints one line per call: name, return code, errno after the call. Then an out-of-memory
 * allocation on a 64 MiB device (GTSIM_MEM_BYTES=67108864): 40 MiB fits, another 40 MiB not. */
#include <errno.h>
#include <stdio.h>

#include <cuda.h>

#define SHOW(call)                                                                                 \
    do {                                                                                           \
        errno = 4321;                                                                              \
        CUresult r_ = (call);                                                                      \
        int e_ = errno;                                                                            \
        printf("%-40s -> %d errno=%d\n", #call, (int)r_, e_);                                      \
    } while (0)

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr a = 0, b = 0;
    CUstream bogus_stream = (CUstream)(uintptr_t)0xdead0;
    SHOW(cuMemAlloc(&a, 1024)); /* before cuInit */
    SHOW(cuInit(0));
    SHOW(cuDeviceGet(&dev, 0));
    SHOW(cuDevicePrimaryCtxRetain(&ctx, dev));
    SHOW(cuCtxSetCurrent(ctx));
    SHOW(cuMemAlloc(NULL, 16));
    SHOW(cuMemAlloc(&a, 0));
    SHOW(cuMemFree((CUdeviceptr)0xdeadbeef));
    SHOW(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    SHOW(cuStreamSynchronize(bogus_stream));
    SHOW(cuMemFreeHost((void *)0x1234));
    SHOW(cuMemAlloc(&a, 40u << 20));
    SHOW(cuMemAlloc(&b, 40u << 20));
    SHOW(cuMemFree(a));
    SHOW(cuMemAlloc(&b, 40u << 20));
    SHOW(cuMemFree(b));
    return 0;
}
