/* libdeepspin.so, for tests/progs/smallstack.py: deepspin(margin, seconds) runs on CPU for that
 * long with only `margin` bytes of the calling thread's stack left below it, so that a signal
 * handler that runs meanwhile has the kernel's signal frame and what remains of margin, and one
 * that needs more overflows into the guard page (SIGSEGV). Returns the kernel's minimum signal
 * frame size (AT_MINSIGSTKSZ), 0 where the stack bounds are unknown. */
#include <alloca.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <time.h>

unsigned long deepspin(unsigned long margin, double seconds);

__attribute__((noinline)) static void spin(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long k = 0;
    do { /* the clock read now and then: samples land in this code, not in the vDSO's */
        for (int i = 0; i < 20000; i++)
            k++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
}

unsigned long deepspin(unsigned long margin, double seconds)
{
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return 0;
    int bad = pthread_attr_getstack(&a, &lo, &size) != 0;
    pthread_attr_destroy(&a);
    if (bad) return 0;
    char here;
    uintptr_t sp = (uintptr_t)&here, low = (uintptr_t)lo;
    /* (512: this frame's and spin's own, and clock_gettime's) */
    size_t use = sp - low > margin + 512 ? sp - low - margin - 512 : 0;
    volatile char *p = alloca(use + 1);
    p[0] = 1; /* its lowest byte touched: the pages are there */
    spin(seconds);
    return p[0] ? getauxval(AT_MINSIGSTKSZ) : 0;
}
