/* forkchild MODE: a parent that initializes the driver, allocates 3 blocks of 1 MiB and launches
 * once, forks a child, waits for it, then allocates 2 more blocks and returns 0. The child:
 *   use    calls cuMemAlloc (2 MiB), cuInit, cuMemAlloc (3 MiB) again: on a real GPU, and on the
 *          simulated driver, each fails with CUDA_ERROR_NOT_INITIALIZED (3); prints the codes
 *   none   makes no CUDA call
 *   early  (forked before the parent's cuInit) initializes and allocates 4 MiB: succeeds
 * and ends with exit(0) (its exit handlers run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static void child(const char *mode)
{
    CUdeviceptr p;
    if (!strcmp(mode, "use")) {
        int a = cuMemAlloc(&p, 2 << 20), b = cuInit(0), c = cuMemAlloc(&p, 3 << 20);
        printf("child: cuMemAlloc %d, cuInit %d, cuMemAlloc %d\n", a, b, c);
    } else if (!strcmp(mode, "early")) {
        CUdevice dev;
        CUcontext ctx;
        open_primary(&dev, &ctx);
        CHECK(cuMemAlloc(&p, 4 << 20));
        printf("child: allocated\n");
    }
    fflush(stdout);
    exit(0);
}

static int wait_child(pid_t pid)
{
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "use";
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr p;
    pid_t early = -1;
    if (!strcmp(mode, "early") && (early = fork()) == 0) child(mode);
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel k 1000\n"));
    CHECK(cuModuleGetFunction(&f, mod, "k"));
    for (int i = 0; i < 3; i++)
        CHECK(cuMemAlloc(&p, 1 << 20));
    CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    fflush(stdout);
    if (early < 0) {
        pid_t pid = fork();
        if (pid == 0) child(mode);
        if (!wait_child(pid)) return 1;
    } else if (!wait_child(early)) {
        return 1;
    }
    for (int i = 0; i < 2; i++)
        CHECK(cuMemAlloc(&p, 1 << 20));
    printf("parent: done\n");
    return 0;
}
