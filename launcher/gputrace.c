/* gputrace — run a program under libgputrace.so.
 *
 *   gputrace [-o FILE] [-f] [--] command [args...]
 *
 * Sets LD_PRELOAD (our library appended to any existing value, as an absolute path) and
 * GPUTRACE_OUTPUT (absolute), runs the command, passes its exit status through (a command killed
 * by a signal makes us die of the same signal), and says on stderr where the trace went. */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "version.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gputrace [-o FILE] [-f] [--] command [args...]\n"
            "\n"
            "Runs command with libgputrace.so preloaded and writes a CUDA memory and timeline\n"
            "trace; read it with gputrace-report FILE.\n"
            "\n"
            "  -o FILE      trace file; %%p is replaced by the process id, %%h by the host name\n"
            "               (default: gputrace.%%p.trace in the current directory). Every traced\n"
            "               process that uses CUDA writes its own file; if the name is taken,\n"
            "               the process id is appended.\n"
            "  -f, --force  replace FILE if it exists (without -f an existing FILE is an error)\n"
            "  -h, --help   this help\n"
            "  --version    print the version\n"
            "\n"
            "Environment passed to the program: LD_PRELOAD, GPUTRACE_OUTPUT. Others it honours:\n"
            "GPUTRACE_DEBUG=1, GPUTRACE_FLUSH_MS, GPUTRACE_DISABLE=1, GPUTRACE_LIB (library path).\n");
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* libgputrace.so next to us (build tree) or in ../lib (installed). */
static int find_library(char *out, size_t n)
{
    const char *env = getenv("GPUTRACE_LIB");
    if (env && *env) {
        if (!realpath(env, out)) return -1;
        return 0;
    }
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) return -1;
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = 0;
    const char *cands[] = {"/libgputrace.so", "/../lib/libgputrace.so",
                           "/../lib/gputrace/libgputrace.so"};
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s%s", self, cands[i]);
        if (exists(p) && realpath(p, out)) return 0;
    }
    (void)n;
    return -1;
}

static int make_absolute(char *out, size_t n, const char *path)
{
    char cwd[PATH_MAX];
    int w;
    if (path[0] == '/' || !getcwd(cwd, sizeof(cwd))) w = snprintf(out, n, "%s", path);
    else w = snprintf(out, n, "%.*s/%s", (int)(n / 2), cwd, path);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Turn the output pattern into a glob: %p → [0-9]*, %h → host, %% → %. */
static void pattern_to_glob(char *out, size_t n, const char *pat)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    size_t o = 0;
    for (const char *p = pat; *p && o + 8 < n; p++) {
        if (p[0] == '%' && p[1] == 'p') o += (size_t)snprintf(out + o, n - o, "[0-9]*"), p++;
        else if (p[0] == '%' && p[1] == 'h') o += (size_t)snprintf(out + o, n - o, "%s", host), p++;
        else if (p[0] == '%' && p[1] == '%') out[o++] = '%', p++;
        else if (*p == '*' || *p == '?' || *p == '[') o += (size_t)snprintf(out + o, n - o, "[%c]", *p);
        else out[o++] = *p;
        if (o >= n) o = n - 1;
    }
    out[o] = 0;
}

static void tell_traces(const char *pattern, time_t started)
{
    char g[PATH_MAX * 2], g2[PATH_MAX * 2 + 8];
    glob_t gl;
    int found = 0;
    pattern_to_glob(g, sizeof(g), pattern);
    snprintf(g2, sizeof(g2), "%s.[0-9]*", g);
    memset(&gl, 0, sizeof(gl));
    glob(g, 0, NULL, &gl);
    glob(g2, GLOB_APPEND, NULL, &gl);
    for (size_t i = 0; i < gl.gl_pathc; i++) {
        struct stat st;
        if (stat(gl.gl_pathv[i], &st) != 0 || st.st_mtime < started) continue;
        fprintf(stderr, "gputrace: trace written to %s\n", gl.gl_pathv[i]);
        fprintf(stderr, "gputrace: report: gputrace-report %s\n", gl.gl_pathv[i]);
        found++;
    }
    globfree(&gl);
    if (!found)
        fprintf(stderr, "gputrace: no trace was written: the program made no CUDA driver calls "
                        "(or tracing was off; GPUTRACE_DEBUG=1 says why)\n");
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int force = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (++i >= argc) {
                fprintf(stderr, "gputrace: %s needs a file name\n", a);
                return 2;
            }
            out = argv[i];
        } else if (strncmp(a, "--output=", 9) == 0) {
            out = a + 9;
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--force") == 0) {
            force = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("gputrace %s\n", GT_VERSION);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "gputrace: unknown option %s (try --help)\n", a);
            return 2;
        } else {
            break;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char lib[PATH_MAX], outabs[PATH_MAX];
    if (find_library(lib, sizeof(lib)) != 0) {
        fprintf(stderr, "gputrace: cannot find libgputrace.so next to this program or in ../lib "
                        "(set GPUTRACE_LIB)\n");
        return 2;
    }
    if (make_absolute(outabs, sizeof(outabs), out ? out : "gputrace.%p.trace") != 0) {
        fprintf(stderr, "gputrace: output path too long\n");
        return 2;
    }
    if (out && !strchr(outabs, '%') && exists(outabs)) {
        if (!force) {
            fprintf(stderr, "gputrace: %s exists; use -f to replace it\n", outabs);
            return 2;
        }
        if (unlink(outabs) != 0) {
            fprintf(stderr, "gputrace: cannot remove %s: %s\n", outabs, strerror(errno));
            return 2;
        }
    }
    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *pre = malloc(need);
    if (!pre) return 2;
    if (old && *old) snprintf(pre, need, "%s:%s", old, lib);
    else snprintf(pre, need, "%s", lib);
    setenv("LD_PRELOAD", pre, 1);
    setenv("GPUTRACE_OUTPUT", outabs, 1);
    free(pre);

    time_t started = time(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gputrace: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        execvp(argv[i], argv + i);
        int err = errno;
        fprintf(stderr, "gputrace: cannot run %s: %s\n", argv[i], strerror(err));
        _exit(err == ENOENT ? 127 : 126);
    }
    /* Like a shell waiting for a foreground job: the terminal's ^C goes to the child. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gputrace: waitpid: %s\n", strerror(errno));
            return 2;
        }
    }
    tell_traces(outabs, started);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        /* Die of the same signal so our parent sees what the program did (no core of ours). */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(sig, SIG_DFL);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
