/* The cache of native captures (preload/stacks.c): one call site in via() calls, through a function
 * pointer, three allocating functions in turn (site_a, site_b, site_c: the same code). Each walk
 * differs from the previous two (the walker's logs keep two), so it comes from the walk cache
 * (each site's own entry: the walk looks itself up at the hook's caller, the site), and its
 * capture from the cache of native captures after the first round. The captures must stay three
 * stacks, each with its exact count (tests/cases/stacks_natc.sh).
 *
 *   stacks_natc [N]   N rounds of the three (default 300), each cuMemAlloc 4 KiB + cuMemFree */
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

#include "check.h"

#define NOINLINE __attribute__((noinline))

static volatile size_t bytes = 4096;

NOINLINE static void site_a(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc(&p, bytes)); /* SITE:site_a */
    CHECK(cuMemFree(p));
}

NOINLINE static void site_b(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc(&p, bytes)); /* SITE:site_b */
    CHECK(cuMemFree(p));
}

NOINLINE static void site_c(void)
{
    CUdeviceptr p;
    CHECK(cuMemAlloc(&p, bytes)); /* SITE:site_c */
    CHECK(cuMemFree(p));
}

static void (*volatile sites[3])(void) = {site_a, site_b, site_c};

NOINLINE static void via(int k)
{
    sites[k % 3]();
    __asm__ volatile("" ::: "memory"); /* not a tail call: via's frame stays on the stack */
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    int n = argc > 1 ? atoi(argv[1]) : 300;
    open_primary(&dev, &ctx);
    for (int k = 0; k < 3 * n; k++)
        via(k);
    printf("ok\n");
    return 0;
}
