/* Device memory from libraries (tests/cases/mem_categories.sh): the program allocates and frees
 * 1 MiB (a temporary before the peak) and allocates 5 MiB of its own, then for each (LIB, N, MIB)
 * argument triple dlopens LIB and has its ws_alloc (tests/libs/wsalloc.c) allocate N x MIB MiB,
 * and last allocates 3 MiB and frees it at once: a temporary that makes the peak. Nothing else
 * is freed.
 *
 *   workspace [LIB N MIB]... */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

static void from_library(const char *path, int n, size_t mib)
{
    void *h = dlopen(path, RTLD_NOW);
    int (*ws_alloc)(int, size_t) = h ? (int (*)(int, size_t))dlsym(h, "ws_alloc") : NULL;
    if (!ws_alloc) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        exit(1);
    }
    if (ws_alloc(n, mib << 20) != 0) {
        fprintf(stderr, "%s: allocation failed\n", path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr own, scratch;
    open_primary(&dev, &ctx);
    CHECK(cuMemAlloc(&scratch, 1 << 20));
    CHECK(cuMemFree(scratch));
    CHECK(cuMemAlloc(&own, 5 << 20));
    for (int i = 1; i + 2 < argc; i += 3)
        from_library(argv[i], atoi(argv[i + 1]), (size_t)atoi(argv[i + 2]));
    CHECK(cuMemAlloc(&scratch, 3 << 20));
    CHECK(cuMemFree(scratch));
    printf("ok\n");
    return 0;
}
