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
 *   - any other name is demangled in a helper process, which is stopped when its answer would
 *     pass MAX_OUT bytes or take longer than TIMEOUT_MS; such a name stays mangled. The
 *     helper's names of one report get BUDGET_MS in all (ga_demangle_reset starts a report's
 *     budget), so a trace full of such names costs seconds, not TIMEOUT_MS each. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/demangle.h"

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

/* ---- the helper process -------------------------------------------------------------------
 * Forked on the first name that needs it and kept: a fork per name cost a millisecond in the
 * analyzer and a tenth of a second under AddressSanitizer (its shadow mappings), for names as
 * ordinary as CUTLASS templates. Requests and replies go over a socketpair (send with
 * MSG_NOSIGNAL: a dead helper is an error, not SIGPIPE): a u32 length and the name; the
 * reply is a u32 length (MAX_OUT + 1: too long; UINT32_MAX: not demangled) and the text. The
 * helper ends when the analyzer closes its end or exits; one that overruns is killed and the
 * next name forks a new one. */

static int helper_fd = -1;
static pid_t helper_pid;

static int send_all(int fd, const void *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p = (const char *)p + k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads n bytes (blocking) in the helper. */
static int recv_all(int fd, void *p, size_t n)
{
    while (n) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p = (char *)p + k;
        n -= (size_t)k;
    }
    return 0;
}

/* The helper's loop; it leaves without atexit handlers or stdio flushes (the analyzer's
 * buffers are not its to write). */
static void helper(int fd)
{
    uint32_t len;
    while (recv_all(fd, &len, sizeof(len)) == 0) {
        char *name = malloc((size_t)len + 1);
        if (!name || recv_all(fd, name, len) != 0) _exit(1);
        name[len] = '\0';
        char *d = demangle_here(name);
        size_t n = d ? strlen(d) : 0;
        uint32_t out = !d ? UINT32_MAX : n > MAX_OUT ? MAX_OUT + 1 : (uint32_t)n;
        if (send_all(fd, &out, sizeof(out)) != 0 || (out <= MAX_OUT && send_all(fd, d, n) != 0))
            _exit(1);
        free(d);
        free(name);
    }
    _exit(0);
}

static void helper_stop(void)
{
    if (helper_fd < 0) return;
    close(helper_fd);
    kill(helper_pid, SIGKILL);
    while (waitpid(helper_pid, NULL, 0) < 0 && errno == EINTR) {
    }
    helper_fd = -1;
}

static int helper_start(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        helper(sv[1]);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return -1;
    }
    helper_fd = sv[0];
    helper_pid = pid;
    return 0;
}

/* Reads n bytes from the helper before the deadline. */
static int recv_until(void *p, size_t n, int64_t deadline)
{
    while (n) {
        int64_t left = deadline - now_ms();
        struct pollfd pf = {.fd = helper_fd, .events = POLLIN};
        if (left <= 0) return -1;
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        ssize_t k = read(helper_fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p = (char *)p + k;
        n -= (size_t)k;
    }
    return 0;
}

/* NULL: not demangled, too long, too slow, or no helper; the helper is then stopped if it
 * might still be busy with the name. */
static char *demangle_isolated(const char *name)
{
    int64_t start = now_ms(), deadline = start + (budget_ms < TIMEOUT_MS ? budget_ms : TIMEOUT_MS);
    size_t n = strlen(name);
    uint32_t len = n > UINT32_MAX - 1 ? 0 : (uint32_t)n, out = UINT32_MAX;
    char *d = NULL;
    if (budget_ms <= 0 || !len || (helper_fd < 0 && helper_start() != 0)) return NULL;
    if (send_all(helper_fd, &len, sizeof(len)) != 0 || send_all(helper_fd, name, len) != 0 ||
        recv_until(&out, sizeof(out), deadline) != 0) {
        helper_stop(); /* dead, or still demangling: a fresh one for the next name */
    } else if (out <= MAX_OUT) {
        d = malloc((size_t)out + 1);
        if (!d || recv_until(d, out, deadline) != 0) {
            free(d);
            d = NULL;
            helper_stop();
        } else {
            d[out] = '\0';
        }
    }
    budget_ms -= now_ms() - start;
    return d;
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
