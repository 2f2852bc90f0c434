/* A native thread inside a Python process (tests/cases/stacks_nogil.sh): a thread that never ran
 * Python allocates, while the thread that started it waits in a foreign call (ctypes.CDLL, the
 * GIL released). Its stack must be native only (no Python frames, least of all another
 * thread's), and nothing may crash. The driver comes from the handle Python loaded it with. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*setctx_fn)(void *);

struct job {
    void *ctx;
    size_t bytes;
    int rc;
};

static void *body(void *arg)
{
    struct job *j = arg;
    void *cu = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    setctx_fn set = cu ? (setctx_fn)dlsym(cu, "cuCtxSetCurrent") : NULL;
    alloc_fn alloc = cu ? (alloc_fn)dlsym(cu, "cuMemAlloc_v2") : NULL;
    unsigned long long p;
    j->rc = !set || !alloc || set(j->ctx) != 0 ? -1 : alloc(&p, j->bytes); /* SITE:body */
    return NULL;
}

int pythread_alloc(void *ctx, size_t bytes);
int pythread_alloc(void *ctx, size_t bytes)
{
    struct job j = {ctx, bytes, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, body, &j) != 0) return -1;
    pthread_join(t, NULL);
    return j.rc;
}

/* The "shutdown" scenario of stacks_nogil.py: called through ctypes.CDLL from a Python daemon
 * thread (the GIL released for good), it allocates `small` bytes once (spin_small), counts it in
 * counts[0], waits for *phase to become 1 (set by an atexit handler that runs after the tracer's
 * atexit guard), then allocates and frees `big` bytes (spin_big) in a loop that never ends,
 * counting in counts[1], while the interpreter finalizes and frees this thread's state. */
typedef int (*free_fn)(unsigned long long);

__attribute__((noinline)) static int spin_small(alloc_fn alloc, size_t bytes)
{
    unsigned long long p;
    return alloc(&p, bytes); /* SITE:spin_small */
}

__attribute__((noinline)) static int spin_big(alloc_fn alloc, free_fn release, size_t bytes)
{
    unsigned long long p;
    int rc = alloc(&p, bytes); /* SITE:spin_big */
    return rc ? rc : release(p);
}

int pythread_spin(void *ctx, const int *phase, int *counts, size_t small, size_t big);
int pythread_spin(void *ctx, const int *phase, int *counts, size_t small, size_t big)
{
    void *cu = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    setctx_fn set = cu ? (setctx_fn)dlsym(cu, "cuCtxSetCurrent") : NULL;
    alloc_fn alloc = cu ? (alloc_fn)dlsym(cu, "cuMemAlloc_v2") : NULL;
    free_fn release = cu ? (free_fn)dlsym(cu, "cuMemFree_v2") : NULL;
    if (!set || !alloc || !release || set(ctx) != 0 || spin_small(alloc, small) != 0) return -1;
    __atomic_add_fetch(&counts[0], 1, __ATOMIC_SEQ_CST);
    struct timespec nap = {0, 50000};
    while (!__atomic_load_n(phase, __ATOMIC_SEQ_CST))
        nanosleep(&nap, NULL);
    for (;;) {
        if (spin_big(alloc, release, big) != 0) return -2;
        __atomic_add_fetch(&counts[1], 1, __ATOMIC_SEQ_CST);
        nanosleep(&nap, NULL);
    }
}

/* tests/cases/stacks_pyerr.sh: called through ctypes.PyDLL (the GIL held), it raises
 * KeyError("gputrace-pyerr") the way a C extension does (PyErr_SetString), then allocates, as a
 * deallocator freeing device memory while an exception propagates would: the tracer reads the
 * Python frames through the API then, and must leave the exception exactly as it found it, so
 * ctypes raises it on return. Returns the allocation's result. */
typedef void (*seterr_fn)(void *, const char *);

int pythread_alloc_raising(size_t bytes);
int pythread_alloc_raising(size_t bytes)
{
    seterr_fn seterr = (seterr_fn)dlsym(RTLD_DEFAULT, "PyErr_SetString");
    void **keyerror = (void **)dlsym(RTLD_DEFAULT, "PyExc_KeyError");
    void *cu = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    alloc_fn alloc = cu ? (alloc_fn)dlsym(cu, "cuMemAlloc_v2") : NULL;
    if (!seterr || !keyerror || !alloc) return -1;
    seterr(*keyerror, "gputrace-pyerr");
    unsigned long long p;
    return alloc(&p, bytes); /* SITE:raising */
}
