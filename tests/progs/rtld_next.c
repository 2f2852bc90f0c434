/* dlsym(RTLD_NEXT, ...) called from a library (librnext_a, loaded before librnext_b and libcuda):
 *  - an untraced name must resolve relative to the caller: librnext_b's gt_probe_sym (2), not
 *    librnext_a's own (1), which is what a dlsym wrapper that loses the caller would return
 *    (HAMi-core PR #315: OpenMP's ompt_start_tool looped during `import torch`);
 *  - a traced driver name must come back as the shim's wrapper (when the shim is loaded). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

void *rnext_a_lookup(const char *name);

int main(void)
{
    int (*probe)(void) = (int (*)(void))rnext_a_lookup("gt_probe_sym");
    printf("next gt_probe_sym -> %d\n", probe ? probe() : -1);
    void *p = rnext_a_lookup("cuMemAlloc_v2");
    Dl_info info;
    const char *where = p && dladdr(p, &info) && info.dli_fname ? info.dli_fname : "(null)";
    const char *base = strrchr(where, '/');
    printf("next cuMemAlloc_v2 -> %s\n", base ? base + 1 : where);
    void *q = rnext_a_lookup("no_such_symbol_anywhere");
    printf("next missing -> %s\n", q ? "found" : "NULL");
    (void)cuInit;
    return 0;
}
