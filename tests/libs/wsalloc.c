/* A stand-in for a GPU library that allocates its own device buffers (tests/progs/workspace.c):
 * the test copies it under a library's file name (libnccl.so.2, libcublasLt.so.13, ...) and the
 * report must put its allocations in that library's category. It reaches the driver by dlsym,
 * as those libraries do. */
#include <dlfcn.h>
#include <stddef.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);

int ws_alloc(int n, size_t bytes);
__attribute__((noinline)) int ws_alloc(int n, size_t bytes)
{
    alloc_fn alloc = (alloc_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
    unsigned long long p;
    for (int i = 0; i < n; i++)
        if (!alloc || alloc(&p, bytes) != 0) return -1;
    return 0;
}
