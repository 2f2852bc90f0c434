/* loaderlock LIB ROUNDS [tight]: each round opens LIB (libspincb.so) anew (a dlclose clears the
 * shim's cached unwind rules), then spends 20 ms inside dl_iterate_phdr, which holds the loader's
 * lock: in LIB's callback (spincb), or with `tight` calling it back to back with a callback that
 * returns at once (mostly taking and releasing the lock), then makes a driver call. Prints
 * "loaderlock ok". Used by tests/cases/hostsample_loaderlock.sh. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda.h>

#include "check.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: loaderlock LIB ROUNDS\n");
        return 2;
    }
    int rounds = atoi(argv[2]);
    int tight = argc > 3 && argv[3][0] == 't';
    double secs = 0.02;
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    open_primary(&dev, &ctx);
    for (int k = 0; k < rounds; k++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        int (*cb)(struct dl_phdr_info *, size_t, void *) =
            (int (*)(struct dl_phdr_info *, size_t, void *))dlsym(h, "spincb");
        if (!cb) {
            fprintf(stderr, "dlsym: %s\n", dlerror());
            return 1;
        }
        if (tight) { /* back to back for secs: mostly inside the lock's lock and unlock */
            int (*nop)(struct dl_phdr_info *, size_t, void *) =
                (int (*)(struct dl_phdr_info *, size_t, void *))dlsym(h, "nopcb");
            struct timespec t0, t;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            do {
                for (int i = 0; i < 1000; i++)
                    dl_iterate_phdr(nop, NULL);
                clock_gettime(CLOCK_MONOTONIC, &t);
            } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < secs);
        } else
            dl_iterate_phdr(cb, &secs);
        dlclose(h);
        CHECK(cuMemAlloc(&p, 4096)); /* the samples are written at the thread's next hooked call */
        CHECK(cuMemFree(p));
    }
    printf("loaderlock ok\n");
    return 0;
}
