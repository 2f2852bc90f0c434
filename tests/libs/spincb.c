/* libspincb.so: a dl_iterate_phdr callback that spins on CPU for *(double *)arg seconds, for
 * tests/progs/loaderlock.c. Its own library, opened and closed in every round, so that its code
 * has no cached unwind rule when a sample lands in it (a dlclose clears the shim's rules). */
#include <link.h>
#include <time.h>

int spincb(struct dl_phdr_info *info, size_t size, void *arg);

int spincb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long spin = 0;
    do { /* the clock read now and then: samples land in this code, not in the vDSO's */
        for (int i = 0; i < 100000; i++)
            spin++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < *(const double *)arg);
    return 1; /* the first object only */
}

/* returns at once: dl_iterate_phdr called back to back spends its time taking and releasing the
 * loader's lock */
int nopcb(struct dl_phdr_info *info, size_t size, void *arg);

int nopcb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    (void)arg;
    return 1;
}
