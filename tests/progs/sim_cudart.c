/* Loads the real NVIDIA libcudart given on the command line and makes it start up against the
 * simulated driver: cudart dlopens libcuda.so.1, dlsyms cuGetProcAddress_v2 and resolves its whole
 * driver table through it. The simulated driver then refuses cuGetExportTable, so the runtime call
 * itself fails; only the start-up lookups are of interest (see GTSIM_LOG). */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s /path/to/libcudart.so.N\n", argv[0]);
        return 2;
    }
    void *rt = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!rt) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    int (*get_count)(int *) = (int (*)(int *))dlsym(rt, "cudaGetDeviceCount");
    int (*drv_version)(int *) = (int (*)(int *))dlsym(rt, "cudaDriverGetVersion");
    if (!get_count || !drv_version) {
        fprintf(stderr, "cudart symbols not found\n");
        return 2;
    }
    int n = -1, v = -1;
    int rc = get_count(&n);
    int rv = drv_version(&v);
    printf("cudaGetDeviceCount rc=%d count=%d cudaDriverGetVersion rc=%d version=%d\n", rc, n, rv, v);
    return 0;
}
