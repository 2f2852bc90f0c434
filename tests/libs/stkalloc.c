/* A library loaded with dlopen after tracing started (tests/progs/stacks_sites.c): its
 * allocations must be attributed to it and to stk_lib_alloc, although it was not loaded when the
 * tracer first listed the modules. It reaches the driver the way plugins do, by dlsym. */
#include <dlfcn.h>
#include <stddef.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);

void stk_lib_alloc(int n);
__attribute__((noinline)) void stk_lib_alloc(int n)
{
    alloc_fn alloc = (alloc_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
    unsigned long long p;
    for (int i = 0; alloc && i < n; i++)
        alloc(&p, 1 << 20); /* SITE:stk_lib_alloc */
}
