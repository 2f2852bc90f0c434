/* A native thread inside a Python process (tests/cases/stacks_nogil.sh): a thread that never ran
 * Python allocates, while the thread that started it waits in a foreign call (ctypes.CDLL, the
 * GIL released). Its stack must be native only (no Python frames, least of all another
 * thread's), and nothing may crash. The driver comes from the handle Python loaded it with. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

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
