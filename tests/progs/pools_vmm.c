/* pools_vmm: VMM like PyTorch's expandable segments (tests/cases/pools_vmm.sh). With G the
 * allocation granularity: reserve 32 G of address space; create three handles of G and map them
 * one after the other at the start of the range; unmap and release the middle one; create a
 * 2 G handle (the process peak: 4 G of physical memory, 2 G of it mapped, 2 G not mapped yet)
 * and map it after the last; then unmap, release and free everything. Prints G and the range. */
#include <stdio.h>

#include <cuda.h>

#include "check.h"

static CUmemAllocationProp prop;

static int map(CUdeviceptr va, size_t size, CUmemGenericAllocationHandle h)
{
    CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK(cuMemMap(va, size, 0, h, 0));
    CHECK(cuMemSetAccess(va, size, &acc, 1));
    return 0;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr va;
    CUmemGenericAllocationHandle h[4];
    size_t g;
    open_primary(&dev, &ctx);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK(cuMemAddressReserve(&va, 32 * g, 0, 0, 0));
    printf("gran=%zu\nva=0x%llx\n", g, (unsigned long long)va);
    for (int i = 0; i < 3; i++) {
        CHECK(cuMemCreate(&h[i], g, &prop, 0));
        if (map(va + i * g, g, h[i])) return 1;
    }
    CHECK(cuMemUnmap(va + g, g));
    CHECK(cuMemRelease(h[1]));
    CHECK(cuMemCreate(&h[3], 2 * g, &prop, 0)); /* the peak: 4 G physical, 2 G mapped */
    if (map(va + 3 * g, 2 * g, h[3])) return 1;
    CHECK(cuMemUnmap(va, g));
    CHECK(cuMemUnmap(va + 2 * g, g));
    CHECK(cuMemUnmap(va + 3 * g, 2 * g));
    CHECK(cuMemRelease(h[0]));
    CHECK(cuMemRelease(h[2]));
    CHECK(cuMemRelease(h[3]));
    CHECK(cuMemAddressFree(va, 32 * g));
    printf("ok\n");
    return 0;
}
