/* Host stacks from switched and user-supplied stacks (tests/cases/stacks_unwind_switch.sh): the
 * shim's unwinder must fall back (or stay inside the stack) wherever the stack pointer lies
 * outside the thread's own stack, while another thread loads and unloads a library in a loop.
 *
 *   stacks_switch N LIB
 *     main_alloc     N x (cuMemAlloc 4 KiB + cuMemFree) on the main stack, alternating with
 *     co_alloc       N x the same in a makecontext coroutine on a malloc'ed stack (swapcontext
 *                    back and forth: the two interleave, one pair per switch)
 *     local_alloc    N x the same in a coroutine whose stack is an array on the main stack
 *     user_alloc     N x the same in a thread created on a user-supplied (mmap'ed) stack
 *     LIB            dlopen'ed and dlclosed in a loop by another thread until the end
 * Exits 0 when every call succeeded. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cuda.h>

#include "check.h"

#define NOINLINE __attribute__((noinline))

static CUcontext ctx;
static int n;
static ucontext_t main_uc, co_uc, local_uc;
static _Atomic int stop;

#define ONE_PAIR()                                                                                 \
    do {                                                                                           \
        CUdeviceptr p_;                                                                            \
        CHECK(cuMemAlloc(&p_, 4096));                                                              \
        CHECK(cuMemFree(p_));                                                                      \
    } while (0)

NOINLINE static void main_alloc(void)
{
    ONE_PAIR(); /* SITE:main_alloc */
}

NOINLINE static void co_alloc(void)
{
    ONE_PAIR(); /* SITE:co_alloc */
}

NOINLINE static void local_alloc(void)
{
    ONE_PAIR(); /* SITE:local_alloc */
}

NOINLINE static void user_alloc(void)
{
    ONE_PAIR(); /* SITE:user_alloc */
}

static void co_main(void)
{
    for (int i = 0; i < n; i++) {
        co_alloc();
        swapcontext(&co_uc, &main_uc);
    }
}

static void local_main(void)
{
    for (int i = 0; i < n; i++)
        local_alloc();
}

static void *user_thread(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    for (int i = 0; i < n; i++)
        user_alloc();
    return NULL;
}

static void *dl_churn(void *arg)
{
    while (!atomic_load(&stop)) {
        void *h = dlopen(arg, RTLD_NOW | RTLD_LOCAL);
        if (h) dlclose(h);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    if (argc < 3) return 2;
    n = atoi(argv[1]);
    open_primary(&dev, &ctx);
    pthread_t churn;
    if (pthread_create(&churn, NULL, dl_churn, argv[2]) != 0) return 3;

    size_t co_size = 64 << 10; /* under the mmap threshold: the brk heap */
    char *co_stack = malloc(co_size);
    if (!co_stack || getcontext(&co_uc) != 0) return 4;
    co_uc.uc_stack.ss_sp = co_stack;
    co_uc.uc_stack.ss_size = co_size;
    co_uc.uc_link = &main_uc;
    makecontext(&co_uc, co_main, 0);
    for (int i = 0; i < n; i++) {
        main_alloc();
        if (swapcontext(&main_uc, &co_uc) != 0) return 5;
    }
    swapcontext(&main_uc, &co_uc); /* co_main returns: back here through uc_link */

    static char local_stack_guard; /* (keeps the array below from being optimized away) */
    char local_stack[128 << 10];
    local_stack[0] = local_stack_guard;
    if (getcontext(&local_uc) != 0) return 6;
    local_uc.uc_stack.ss_sp = local_stack;
    local_uc.uc_stack.ss_size = sizeof(local_stack);
    local_uc.uc_link = &main_uc;
    makecontext(&local_uc, local_main, 0);
    if (swapcontext(&main_uc, &local_uc) != 0) return 7;

    size_t user_size = 1 << 20;
    void *user_stack =
        mmap(NULL, user_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    pthread_attr_t a;
    pthread_t user;
    if (user_stack == MAP_FAILED || pthread_attr_init(&a) != 0 ||
        pthread_attr_setstack(&a, user_stack, user_size) != 0 ||
        pthread_create(&user, &a, user_thread, NULL) != 0)
        return 8;
    pthread_join(user, NULL);

    atomic_store(&stop, 1);
    pthread_join(churn, NULL);
    free(co_stack);
    printf("done\n");
    return 0;
}
