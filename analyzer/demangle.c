/* C++ demangling through libstdc++'s __cxa_demangle (the analyzer links -lstdc++). Kernel names
 * from CUPTI and from cuModuleGetFunction are Itanium-mangled ("_Z..."); nvcc keeps extern "C"
 * kernels plain.
 *
 * Names come from the trace, and the demangler's output (and time) can grow exponentially with
 * the name: each back-reference (S<n>_, T<n>_) may print again everything it names, so 30 nested
 * references in a 300-byte name print gigabytes (a 400-byte trace took 21 s and 1.7 GB; a few
 * more levels exhaust any machine). __cxa_demangle has no output limit, so:
 *   - a name whose worst case is small is demangled here: at most MAX_IN_PROCESS_REFS
 *     back-references and no pack expansion (Dp, sp) or fold, and short enough that
 *     length * 32 * 2^refs stays under IN_PROCESS_BOUND (a mangled byte prints at most 32);
 *   - any other name is demangled in a child process that the parent stops when its output
 *     passes MAX_OUT bytes or it runs past TIMEOUT_MS; such a name stays mangled. The children
 *     of one report get BUDGET_MS in all (ga_demangle_reset starts a report's budget), so a
 *     trace full of such names costs seconds, not TIMEOUT_MS each. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

#define MAX_IN_PROCESS_REFS 8
#define IN_PROCESS_BOUND    (8u << 20)
#define MAX_OUT             (64u << 10) /* longer demangled names are shown mangled */
#define TIMEOUT_MS          1000
#define BUDGET_MS           5000

static int64_t budget_ms = BUDGET_MS; /* left for child processes in this report */

/* extern "C" in libstdc++ (cxxabi.h), so callable from C. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static char *demangle_here(const char *name)
{
    int status = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status == 0 && d) return d;
    free(d);
    return NULL;
}

/* Whether the demangler's worst case for this name is small (see above). A source name that
 * happens to contain "Dp" or a letter pair like a reference only sends the name to the child. */
static int bounded(const char *name)
{
    size_t len = strlen(name), refs = 0;
    for (const char *p = name; *p; p++) {
        if ((p[0] == 'D' && p[1] == 'p') || (p[0] == 's' && p[1] == 'p') ||
            (p[0] == 'f' && p[1] && strchr("lrLR", p[1])))
            return 0;
        if (p[0] == 'S' || p[0] == 'T') {
            const char *q = p + 1;
            while ((*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'Z'))
                q++;
            if (*q == '_') refs++;
        }
    }
    return refs <= MAX_IN_PROCESS_REFS && len <= (IN_PROCESS_BOUND / 32) >> refs;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child: demangle, write at most MAX_OUT + 1 bytes, and leave without atexit handlers or
 * stdio flushes (the parent's buffers are not ours to write). */
static void child(const char *name, int fd)
{
    char *d = demangle_here(name);
    size_t n = d ? strlen(d) : 0, done = 0;
    if (n > MAX_OUT) n = MAX_OUT + 1;
    while (done < n) {
        ssize_t k = write(fd, d + done, n - done);
        if (k <= 0) _exit(1);
        done += (size_t)k;
    }
    _exit(d ? 0 : 1);
}

/* Reads what the child writes, until it closes the pipe, writes too much or runs too long.
 * Returns the bytes read, or -1 when the name is to stay mangled. */
static ssize_t collect(int fd, char *buf)
{
    size_t got = 0;
    int64_t deadline = now_ms() + (budget_ms < TIMEOUT_MS ? budget_ms : TIMEOUT_MS);
    for (;;) {
        int64_t left = deadline - now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0) return -1;
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        ssize_t k = read(fd, buf + got, MAX_OUT + 1 - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) return (ssize_t)got;
        got += (size_t)k;
        if (got > MAX_OUT) return -1;
    }
}

static char *demangle_isolated(const char *name)
{
    int fd[2], status = 0;
    int64_t start = now_ms();
    if (budget_ms <= 0) return NULL;
    char *buf = malloc(MAX_OUT + 1);
    if (!buf || pipe2(fd, O_CLOEXEC) != 0) {
        free(buf);
        return NULL;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        child(name, fd[1]);
    }
    close(fd[1]);
    ssize_t n = pid > 0 ? collect(fd[0], buf) : -1;
    close(fd[0]);
    if (pid > 0) {
        if (n < 0) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) n = -1;
    }
    budget_ms -= now_ms() - start;
    if (n <= 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

void ga_demangle_reset(void)
{
    budget_ms = BUDGET_MS;
}

char *ga_demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2) != 0) return NULL;
    return bounded(name) ? demangle_here(name) : demangle_isolated(name);
}
