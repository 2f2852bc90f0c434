/* gputrace — run a program under libgputrace.so.
 *
 *   gputrace [-o FILE|DIR] [-f] [--follow-fork] [--] command [args...]
 *
 * Sets LD_PRELOAD (our library appended to any existing value, as an absolute path) and
 * GPUTRACE_OUTPUT (absolute), checks before the command starts that the trace can be written
 * there, runs the command, forwards SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1 and SIGUSR2 sent to
 * us (not those of the terminal, which the command gets itself) to it, passes its exit status through (a command
 * killed by a signal makes us die of the same signal), and says on stderr where the trace went. */
#include <errno.h>
#include <fcntl.h>
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
            "usage: gputrace [-o FILE|DIR] [-f] [--follow-fork] [--] command [args...]\n"
            "\n"
            "Runs command with libgputrace.so preloaded and writes a CUDA memory and timeline\n"
            "trace; read it with gputrace-report FILE.\n"
            "\n"
            "  -o, --output FILE  trace file (also --output=FILE); %%p is replaced by the process\n"
            "               id, %%h by the host name\n"
            "               (default: GPUTRACE_OUTPUT if set, else gputrace.%%p.trace in the\n"
            "               current directory); an existing directory: gputrace.%%p.trace in it.\n"
            "               Its directory must exist and be writable. Every traced process that\n"
            "               uses CUDA writes its own file: a name another of them took during\n"
            "               the run gets .PID appended.\n"
            "  -f, --force  replace FILE if it exists (without -f an existing FILE is an error)\n"
            "  --follow-fork  a child forked by a traced process traces too, into its own\n"
            "               file (GPUTRACE_FOLLOW_FORK=1; put %%p in FILE); default: it does not\n"
            "  -h, --help   this help\n"
            "  --version    print the version\n"
            "\n"
            "SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1 and SIGUSR2 sent to gputrace are passed to\n"
            "the command; its exit status is gputrace's.\n"
            "Environment passed to the program: LD_PRELOAD, GPUTRACE_OUTPUT, GPUTRACE_FOLLOW_FORK.\n"
            "Others it honours:\n"
            "GPUTRACE_DEBUG=1, GPUTRACE_FLUSH_MS, GPUTRACE_DISABLE=1, GPUTRACE_LIB (library path),\n"
            "GPUTRACE_SAMPLE_HZ (host stack samples per second and thread, default 100; 0: none),\n"
            "GPUTRACE_CUPTI (libcupti path, or off: no GPU timeline), GPUTRACE_NVML_MS (device\n"
            "state samples, default 100; 0: none), GPUTRACE_TORCH (PyTorch bridge: off, stats,\n"
            "snapshots (default), history) and more: the README lists them all.\n");
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* libgputrace.so next to us (build tree) or in ../lib (installed). */
static int find_library(char *out, size_t n)
{
    const char *env = getenv("GPUTRACE_LIB");
    if (env && *env) {
        struct stat st;
        const char *why = NULL;
        if (!realpath(env, out) || stat(out, &st) != 0)
            why = strerror(errno);
        else if (!S_ISREG(st.st_mode))
            why = "not a regular file";
        else if (access(out, R_OK) != 0)
            why = strerror(errno);
        if (why) {
            fprintf(stderr, "gputrace: GPUTRACE_LIB=%s: %s\n", env, why);
            return -2;
        }
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

/* The signals passed on to the command. SIGINT and SIGQUIT typed at the terminal (and SIGHUP of
 * a hang-up) reach the command by themselves, which is in our process group: only those a
 * process sent to us (si_code <= 0: kill, sigqueue, tgkill) are passed on, so the command never
 * gets one twice. */
static const int fwd_sigs[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2};
#define N_FWD ((int)(sizeof(fwd_sigs) / sizeof(fwd_sigs[0])))
static volatile sig_atomic_t child_pid;

static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int e = errno;
    if (child_pid > 0 && si->si_code <= 0) kill((pid_t)child_pid, sig);
    errno = e;
}

/* The output pattern, absolute: -o, else GPUTRACE_OUTPUT, else the default; an existing
 * directory means the default name in it. Checks that its directory is one we can write in and
 * applies the rule for an existing file. 0, or 2 after one line on stderr. */
static int choose_output(char *outabs, size_t n, const char *out, int force)
{
    const char *env = getenv("GPUTRACE_OUTPUT");
    if (out && env && *env && strcmp(out, env) != 0)
        fprintf(stderr, "gputrace: -o %s replaces GPUTRACE_OUTPUT=%s\n", out, env);
    if (!out && env && *env) out = env;
    if (make_absolute(outabs, n, out ? out : "gputrace.%p.trace") != 0) {
        fprintf(stderr, "gputrace: output path too long\n");
        return 2;
    }
    size_t len = strlen(outabs);
    if (!strchr(outabs, '%') && (is_dir(outabs) || outabs[len - 1] == '/')) {
        if (snprintf(outabs + len, n - len, "%sgputrace.%%p.trace",
                     outabs[len - 1] == '/' ? "" : "/") >= (int)(n - len)) {
            fprintf(stderr, "gputrace: output path too long\n");
            return 2;
        }
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", outabs);
    *strrchr(dir, '/') = 0;
    if (!dir[0]) strcpy(dir, "/");
    if (!strchr(dir, '%')) { /* a directory named per process or host is made by nobody */
        if (!is_dir(dir)) {
            fprintf(stderr, "gputrace: cannot write the trace into %s: %s\n", dir,
                    exists(dir) ? "not a directory" : strerror(ENOENT));
            return 2;
        }
        if (access(dir, W_OK | X_OK) != 0) {
            fprintf(stderr, "gputrace: cannot write the trace into %s: %s\n", dir, strerror(errno));
            return 2;
        }
    }
    if (!strchr(outabs, '%') && exists(outabs)) {
        if (!force) {
            fprintf(stderr, "gputrace: %s exists; use -f to replace it\n", outabs);
            return 2;
        }
        if (unlink(outabs) != 0) {
            fprintf(stderr, "gputrace: cannot remove %s: %s\n", outabs, strerror(errno));
            return 2;
        }
    }
    return 0;
}

/* Runs the command with the forwarded signals blocked until our handlers are in place (none is
 * lost, none kills us first). Returns the child's pid, or -1 after one line on stderr; *rc is
 * then our exit status (127: not found, 126: not runnable, as a shell says). */
static pid_t start(char **cmd, int *rc)
{
    sigset_t fwd, old;
    int pfd[2];
    sigemptyset(&fwd);
    for (int k = 0; k < N_FWD; k++)
        sigaddset(&fwd, fwd_sigs[k]);
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        fprintf(stderr, "gputrace: pipe: %s\n", strerror(errno));
        *rc = 2;
        return -1;
    }
    sigprocmask(SIG_BLOCK, &fwd, &old);
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pfd[0]);
        execvp(cmd[0], cmd);
        int err = errno; /* told through the pipe: the parent says it, once */
        ssize_t w = write(pfd[1], &err, sizeof(err));
        (void)w;
        _exit(127);
    }
    close(pfd[1]);
    if (pid < 0) {
        fprintf(stderr, "gputrace: fork: %s\n", strerror(errno));
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pfd[0]);
        *rc = 2;
        return -1;
    }
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < N_FWD; k++)
        sigaction(fwd_sigs[k], &sa, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    int err = 0;
    ssize_t r;
    while ((r = read(pfd[0], &err, sizeof(err))) < 0 && errno == EINTR) {
    }
    close(pfd[0]);
    if (r == (ssize_t)sizeof(err)) {
        waitpid(pid, NULL, 0);
        fprintf(stderr, "gputrace: cannot run %s: %s\n", cmd[0], strerror(err));
        *rc = err == ENOENT ? 127 : 126;
        return -1;
    }
    return pid;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    int force = 0, follow = 0, i;
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
        } else if (strcmp(a, "--follow-fork") == 0) {
            follow = 1;
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
    int rc = find_library(lib, sizeof(lib));
    if (rc == -1)
        fprintf(stderr, "gputrace: cannot find libgputrace.so next to this program or in ../lib "
                        "(set GPUTRACE_LIB)\n");
    if (rc != 0) return 2;
    if (choose_output(outabs, sizeof(outabs), out, force) != 0) return 2;
    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *pre = malloc(need);
    if (!pre) return 2;
    if (old && *old)
        snprintf(pre, need, "%s:%s", old, lib);
    else
        snprintf(pre, need, "%s", lib);
    setenv("LD_PRELOAD", pre, 1);
    setenv("GPUTRACE_OUTPUT", outabs, 1);
    if (follow) setenv("GPUTRACE_FOLLOW_FORK", "1", 1);
    free(pre);

    time_t started = time(NULL);
    pid_t pid = start(argv + i, &rc);
    if (pid < 0) return rc;
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gputrace: waitpid: %s\n", strerror(errno));
            return 2;
        }
    }
    child_pid = 0;
    tell_traces(outabs, started);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        /* Die of the same signal so our parent sees what the program did (no core of ours). */
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        signal(sig, SIG_DFL);
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, sig);
        sigprocmask(SIG_UNBLOCK, &s, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
