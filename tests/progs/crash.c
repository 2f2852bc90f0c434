/* crash MODE: 10 allocations of 1 MiB and 3 kernel launches, then a crash by MODE, with no
 * pause: the tests run it with a flush period far longer than the program, so only the flush
 * made on the crash signal can bring the records into the trace.
 *   abort | segv | bus | fpe | ill | raise-segv   the program has no handler of its own
 *   before     a SIGSEGV handler installed before the first CUDA call (signal()); it says so
 *              and returns after putting the default back: the fault comes again and kills
 *   after      the same handler installed after tracing started (sigaction), which must hand
 *              back the action the program had (SIG_DFL), not the tracer's
 *   recover    a SIGSEGV handler that jumps out of the fault; the program goes on, allocates 5
 *              more blocks and returns 0; reading the action back gives its own handler
 *   ignore-abort  SIGABRT ignored, then abort(): abort still ends the program
 * Prints what it did; the exit status is part of the check. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static sigjmp_buf jump;

static void say(const char *s)
{
    ssize_t w = write(STDOUT_FILENO, s, strlen(s));
    (void)w;
}

static void handler_default_back(int sig)
{
    say("handler ran\n");
    signal(sig, SIG_DFL);
}

static void handler_jump(int sig)
{
    (void)sig;
    say("recovered\n");
    siglongjmp(jump, 1);
}

static void allocate(int n)
{
    for (int i = 0; i < n; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 1 << 20));
    }
}

static int fault_segv(void)
{
    volatile int *p = NULL;
    return *p;
}

static int fault_bus(void)
{
    char path[] = "/tmp/gtcrash.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    unlink(path);
    volatile char *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0); /* the file is empty */
    return m == MAP_FAILED ? 1 : m[0];
}

static int fault_fpe(void)
{
    volatile int zero = 0, one = 1;
    return one / zero;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "abort";
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!strcmp(mode, "before")) signal(SIGSEGV, handler_default_back);
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel k 1000\n"));
    CHECK(cuModuleGetFunction(&f, mod, "k"));
    allocate(10);
    for (int i = 0; i < 3; i++)
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    printf("%s\n", mode);
    if (!strcmp(mode, "after") || !strcmp(mode, "recover")) {
        struct sigaction act, old;
        memset(&act, 0, sizeof(act));
        act.sa_handler = !strcmp(mode, "after") ? handler_default_back : handler_jump;
        sigemptyset(&act.sa_mask);
        act.sa_flags = SA_NODEFER;
        sigaction(SIGSEGV, &act, &old);
        printf("action before: %s\n", old.sa_handler == SIG_DFL ? "default" : "other");
        sigaction(SIGSEGV, NULL, &old);
        printf("action now: %s\n", old.sa_handler == act.sa_handler ? "ours" : "other");
    }
    if (!strcmp(mode, "recover")) {
        if (sigsetjmp(jump, 1) == 0) fault_segv();
        allocate(5);
        printf("went on\n");
        return 0;
    }
    if (!strcmp(mode, "ignore-abort")) signal(SIGABRT, SIG_IGN);
    if (!strcmp(mode, "abort") || !strcmp(mode, "ignore-abort")) abort();
    if (!strcmp(mode, "segv") || !strcmp(mode, "before") || !strcmp(mode, "after"))
        return fault_segv();
    if (!strcmp(mode, "raise-segv")) raise(SIGSEGV);
    if (!strcmp(mode, "bus")) return fault_bus();
    if (!strcmp(mode, "fpe")) return fault_fpe();
    if (!strcmp(mode, "ill")) __builtin_trap();
    return 9;
}
