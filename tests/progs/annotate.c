/* annotate: a toy arena allocator described through include/gputrace/annotate.h. Works the same
 * with and without the tracer (the annotation entry points are weak: NULL when it is absent) and
 * prints the same lines either way; whether the tracer listens goes to stderr.
 * Scenario (tests/cases/annotate.sh derives the expected records from it): one 16 MiB cuMemAlloc
 * range in pool 0xa11c ("arena"), blocks at offsets 0 (1 MiB), 1 MiB (4 MiB), 8 MiB (2 MiB), the
 * 4 MiB one freed, a failed 12 MiB request, the first freed with size 0, the range removed, the
 * pool destroyed; pool 0xb0b with a 259-byte name whose 255th byte is inside a UTF-8 character;
 * pool 0xc0c with no name; a forked child's annotation (pool 0xf04c) that must not be recorded. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#include "gputrace/annotate.h"

#define MiB  (1ull << 20)
#define POOL 0xa11cull
#include "check.h"

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr base;
    open_primary(&dev, &ctx);
    CHECK(cuMemAlloc(&base, 16 * MiB));
    printf("base=0x%llx\n", (unsigned long long)base);
    fprintf(stderr, "active=%d\n", gputrace_active());

    errno = 4321;
    gputrace_pool_create(POOL, 0, "arena");
    gputrace_pool_add_range(POOL, base, 16 * MiB);
    gputrace_block_alloc(POOL, base, 1 * MiB);
    gputrace_block_alloc(POOL, base + 1 * MiB, 4 * MiB);
    gputrace_block_alloc(POOL, base + 8 * MiB, 2 * MiB);
    gputrace_block_free(POOL, base + 1 * MiB, 4 * MiB);
    gputrace_block_fail(POOL, 12 * MiB);
    gputrace_block_free(POOL, base, 0);
    gputrace_pool_remove_range(POOL, base, 16 * MiB);
    gputrace_pool_destroy(POOL);
    printf("errno=%d\n", errno);

    char name[300];
    memset(name, 'n', 254);
    strcpy(name + 254, "\xc3\xa9tail"); /* U+00E9 in bytes 254..255, then "tail": 259 bytes */
    gputrace_pool_create(0xb0b, -1, name);
    gputrace_pool_create(0xc0c, 1, NULL);

    fflush(stdout); /* the child must not inherit (and print again) what is buffered */
    pid_t pid = fork();
    if (pid == 0) {
        gputrace_block_alloc(0xf04c, 0x1000, 0x1000);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

    CHECK(cuMemFree(base));
    printf("ok\n");
    return 0;
}
