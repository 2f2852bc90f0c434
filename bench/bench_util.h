/* Shared by the bench programs: a clock reading in ns, and CHECK(call) for driver calls that must
 * succeed (else "<program>: <call> failed: <CUresult>" on stderr and exit 1; BENCH_PROG names
 * the program). */
#ifndef GT_BENCH_UTIL_H
#define GT_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, BENCH_PROG ": %s failed: %d\n", #call, (int)r_);                      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
