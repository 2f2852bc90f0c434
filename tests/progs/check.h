/* Shared by the test programs: CHECK(call) runs a driver call that must succeed; otherwise it
 * prints where, the call and its CUresult on standard error and exits with status 1.
 * open_primary(&dev, &ctx): cuInit, device 0 and its primary context made current, each CHECKed. */
#ifndef GT_TEST_PROGS_CHECK_H
#define GT_TEST_PROGS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)r_);        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline void open_primary(CUdevice *dev_out, CUcontext *ctx_out)
{
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(dev_out, 0));
    CHECK(cuDevicePrimaryCtxRetain(ctx_out, *dev_out));
    CHECK(cuCtxSetCurrent(*ctx_out));
}

#endif
