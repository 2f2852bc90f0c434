/* multi_rank: one rank of a simulated data-parallel job, for the several-process report.
 *
 *   multi_rank MODE RANK NRANKS SLOW_RANK STEPS DIR
 *
 * Every step: the rank launches a compute kernel, then a "collective", then waits in
 * cuStreamSynchronize. One rank (SLOW_RANK) is slower by construction:
 *   host  the slow rank's host works SLOW_US (40 ms) before each step; compute kernels last
 *         2 ms everywhere; the collective is a barrier run as a host function on the stream (each
 *         rank creates DIR/s<step>.r<rank> and polls until all NRANKS files exist), so the other
 *         ranks sit in cuStreamSynchronize with their GPU idle until the slow rank arrives.
 *   gpu   the slow rank's compute kernel lasts 30 ms, the others' 5 ms; the collective is a
 *         kernel named like NCCL's (ncclDevKernel_AllReduce_Sum_f32) that lasts 0.2 ms on the
 *         slow rank and 25.2 ms on the others: the GPU-side wait of a real NCCL all-reduce whose
 *         peers are late, made exact (no cross-process coupling).
 * Memory, exact per rank: a = (RANK+1) MiB, b = 2 MiB + RANK * 4 KiB, free a, c = 1 MiB: the
 * peak is a + b. Before its first launch it prints "clock <realtime ns> <monotonic ns>
 * <bracket ns>" (the realtime read between two monotonic reads, the tightest of 5 tries). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

#define MiB           (1u << 20)
#define SLOW_US       40000
#define BARRIER_LIMIT 30000000ull /* µs: a rank that never arrives fails the run, not hangs it */

static int g_rank, g_nranks;
static const char *g_dir;
static int g_barrier_failed;

struct step {
    int n;
};

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void print_clock(void)
{
    uint64_t best = UINT64_MAX, real = 0, mono = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t m1 = now_ns(CLOCK_MONOTONIC), r = now_ns(CLOCK_REALTIME);
        uint64_t m2 = now_ns(CLOCK_MONOTONIC);
        if (m2 - m1 < best) best = m2 - m1, real = r, mono = m1 + (m2 - m1) / 2;
    }
    printf("clock %llu %llu %llu\n", (unsigned long long)real, (unsigned long long)mono,
           (unsigned long long)best);
}

static int arrived(int step, int rank)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/s%d.r%d", g_dir, step, rank);
    return access(p, F_OK) == 0;
}

/* The host function: runs on the driver's thread when the stream reaches it. */
static void CUDA_CB barrier(void *arg)
{
    int step = ((struct step *)arg)->n;
    char p[4096];
    snprintf(p, sizeof(p), "%s/s%d.r%d", g_dir, step, g_rank);
    int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    for (unsigned long long waited = 0;; waited += 100) {
        int all = 1;
        for (int r = 0; r < g_nranks && all; r++)
            all = arrived(step, r);
        if (all) return;
        if (waited > BARRIER_LIMIT) {
            g_barrier_failed = 1;
            return;
        }
        usleep(100);
    }
}

static CUfunction load(CUmodule *mod, const char *name, unsigned long long ns)
{
    char image[256];
    CUfunction f;
    snprintf(image, sizeof(image), "kernel %s %llu\n", name, ns);
    CHECK(cuModuleLoadData(mod, image));
    CHECK(cuModuleGetFunction(&f, *mod, name));
    return f;
}

static void memory(void)
{
    CUdeviceptr a, b, c;
    CHECK(cuMemAlloc(&a, (size_t)(g_rank + 1) * MiB));
    CHECK(cuMemAlloc(&b, 2 * MiB + (size_t)g_rank * 4096));
    CHECK(cuMemFree(a));
    CHECK(cuMemAlloc(&c, MiB));
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: multi_rank host|gpu RANK NRANKS SLOW_RANK STEPS DIR\n");
        return 2;
    }
    int gpu = strcmp(argv[1], "gpu") == 0, slow, steps;
    g_rank = atoi(argv[2]), g_nranks = atoi(argv[3]), slow = atoi(argv[4]), steps = atoi(argv[5]);
    g_dir = argv[6];
    int is_slow = g_rank == slow;
    CUdevice dev;
    CUcontext ctx;
    CUstream s;
    CUmodule m1, m2;
    open_primary(&dev, &ctx);
    CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUfunction compute = load(&m1, "compute", gpu ? (is_slow ? 30000000 : 5000000) : 2000000);
    CUfunction allreduce =
        gpu ? load(&m2, "ncclDevKernel_AllReduce_Sum_f32", is_slow ? 200000 : 25200000) : NULL;
    memory();
    print_clock();
    struct step *st = calloc((size_t)steps, sizeof(*st));
    for (int i = 0; i < steps; i++) {
        if (!gpu && is_slow) usleep(SLOW_US);
        CHECK(cuLaunchKernel(compute, 8, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
        st[i].n = i;
        if (gpu)
            CHECK(cuLaunchKernel(allreduce, 8, 1, 1, 128, 1, 1, 0, s, NULL, NULL));
        else
            CHECK(cuLaunchHostFunc(s, barrier, &st[i]));
        CHECK(cuStreamSynchronize(s));
    }
    free(st);
    if (g_barrier_failed) {
        fprintf(stderr, "rank %d: a peer never reached the barrier\n", g_rank);
        return 1;
    }
    printf("rank %d ok\n", g_rank);
    return 0;
}
