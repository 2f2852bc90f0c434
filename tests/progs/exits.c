/* exits MODE: 100 allocations of 1 MiB (none freed) and 10 launches, then a pause long enough
 * for the tracer's periodic flush, then ends by MODE:
 *   return | exit | _exit | abort | segv | kill | exec | fork
 * _exit_now: _exit(5) with no pause: only the shim's _exit wrapper writes the records.
 * fork: the child also allocates (untraced by policy) while the parent's threads keep calling
 * the driver; the parent waits for it. Prints what it did; exit codes are part of the check. */
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "check.h"

static CUcontext ctx;
static _Atomic int stop;

static void *churn(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    while (!stop) {
        CUdeviceptr p;
        if (cuMemAlloc(&p, 4096) == CUDA_SUCCESS) cuMemFree(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "return";
    CUdevice dev;
    CUmodule mod;
    CUfunction f;
    open_primary(&dev, &ctx);
    CHECK(cuModuleLoadData(&mod, "kernel k 1000\n"));
    CHECK(cuModuleGetFunction(&f, mod, "k"));
    for (int i = 0; i < 100; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 1 << 20));
    }
    for (int i = 0; i < 10; i++) CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    if (strcmp(mode, "_exit_now") == 0) {
        printf("%s\n", mode);
        fflush(stdout);
        _exit(5);
    }
    usleep(400 * 1000); /* > 2 flush periods */
    printf("%s\n", mode);
    fflush(stdout);
    if (!strcmp(mode, "exit")) exit(4);
    if (!strcmp(mode, "_exit")) _exit(5);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "segv")) {
        volatile int *p = NULL;
        return *p;
    }
    if (!strcmp(mode, "kill")) kill(getpid(), SIGKILL);
    if (!strcmp(mode, "exec")) {
        execl("/bin/sh", "sh", "-c", "exit 6", (char *)NULL);
        return 99;
    }
    if (!strcmp(mode, "fork")) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, churn, NULL);
        int status = 0;
        for (int round = 0; round < 20; round++) { /* fork while other threads are in the shim */
            pid_t pid = fork();
            if (pid == 0) {
                CUdeviceptr p;
                /* The child's driver state is not usable after fork on a real GPU either; it
                 * must not hang or touch the parent's trace. */
                cuMemAlloc(&p, 1 << 20);
                _exit(0);
            }
            waitpid(pid, &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 7;
        }
        stop = 1;
        for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
        printf("forked 20 children\n");
    }
    return 3;
}
