/* Shared by the test programs: CHECK(call) runs a driver call that must succeed; otherwise it
 * prints where, the call and its CUresult on standard error and exits with status 1. */
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

#endif
