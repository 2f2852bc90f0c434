/* spawn MODE: a CUDA program that starts children while 4 of its threads churn through the
 * driver (each 20,000 rounds of cuMemAlloc(4096) + cuMemFree), so the shim's buffers and locks
 * are busy when the child is created. MODE:
 *   spawn        posix_spawn(3) 3 children, the environment as it is (LD_PRELOAD inherited)
 *   vfork        vfork(2) + execve(2) 3 children, the environment as it is
 *   spawn-noenv  posix_spawn(3) 3 children with LD_PRELOAD removed from their environment
 * The parent also makes 10 allocations of 1 MiB that it never frees. Each child (argv[1] =
 * "child") first counts its open descriptors that name a *.trace file (what it inherited), then
 * allocates 3 x 2 MiB, frees one, launches 2 kernels and exits with status 7.
 * stdout: deterministic lines; stderr: "child_pid=N" per child (for the test to find traces). */
#include <dirent.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#define CHILDREN 3
#define CHURNERS 4
#define ROUNDS   20000

extern char **environ;

#include "check.h"

static CUcontext ctx;

static int trace_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d))) {
        char link[300], path[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, path, sizeof(path) - 1);
        if (k <= 0) continue;
        path[k] = 0;
        n += strstr(path, ".trace") != NULL;
    }
    closedir(d);
    return n;
}

static void init(void)
{
    CUdevice dev;
    open_primary(&dev, &ctx);
}

static int child(void)
{
    int inherited = trace_fds();
    CUmodule mod;
    CUfunction f;
    CUdeviceptr p[3];
    init();
    CHECK(cuModuleLoadData(&mod, "kernel child_k 1000\n"));
    CHECK(cuModuleGetFunction(&f, mod, "child_k"));
    for (int i = 0; i < 3; i++)
        CHECK(cuMemAlloc(&p[i], 2 << 20));
    CHECK(cuMemFree(p[0]));
    for (int i = 0; i < 2; i++)
        CHECK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuCtxSynchronize());
    printf("child: inherited trace descriptors %d\n", inherited);
    return 7;
}

static void *churn(void *arg)
{
    (void)arg;
    CHECK(cuCtxSetCurrent(ctx));
    for (int i = 0; i < ROUNDS; i++) {
        CUdeviceptr p;
        CHECK(cuMemAlloc(&p, 4096));
        CHECK(cuMemFree(p));
    }
    return NULL;
}

/* The environment without LD_PRELOAD (static: the child gets a copy). */
static char **env_without_preload(void)
{
    static char *env[4096];
    size_t n = 0;
    for (char **e = environ; *e && n + 1 < sizeof(env) / sizeof(env[0]); e++)
        if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env[n++] = *e;
    env[n] = NULL;
    return env;
}

static pid_t start_child(const char *mode, char *self)
{
    char *argv[] = {self, "child", NULL};
    pid_t pid = -1;
    if (!strcmp(mode, "vfork")) {
        pid = vfork();
        if (pid == 0) {
            execve(self, argv, environ);
            _exit(127);
        }
        return pid;
    }
    char **env = !strcmp(mode, "spawn-noenv") ? env_without_preload() : environ;
    int r = posix_spawn(&pid, self, NULL, NULL, argv, env);
    return r == 0 ? pid : -1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) return child();
    const char *mode = argc > 1 ? argv[1] : "spawn";
    pthread_t th[CHURNERS];
    CUdeviceptr keep;
    init();
    for (int i = 0; i < 10; i++)
        CHECK(cuMemAlloc(&keep, 1 << 20));
    for (int i = 0; i < CHURNERS; i++)
        pthread_create(&th[i], NULL, churn, NULL);
    for (int c = 0; c < CHILDREN; c++) {
        fflush(stdout); /* the child must not repeat our buffered output */
        pid_t pid = start_child(mode, "/proc/self/exe");
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid) {
            printf("parent: %s failed\n", mode);
            return 1;
        }
        fprintf(stderr, "child_pid=%d\n", (int)pid);
        printf("parent: child %d exited with %d\n", c,
               WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    for (int i = 0; i < CHURNERS; i++)
        pthread_join(th[i], NULL);
    printf("parent: %s done\n", mode);
    return 0;
}
