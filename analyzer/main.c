/* gputrace-report: reads a gputrace trace and prints a report (text, JSON, or a record dump). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "model/multi.h"
#include "model/report.h"
#include "base/progress.h"
#include "base/util.h"
#include "render/chrome_trace.h"
#include "render/dump.h"
#include "render/folded.h"
#include "render/html.h"

enum mode { MODE_TEXT, MODE_JSON, MODE_DUMP, MODE_CHROME, MODE_FOLDED, MODE_HTML };

struct opts {
    enum mode mode;
    const char *out;
    const char *export_path; /* --chrome-trace FILE, --html FILE */
    int folded;              /* --folded WHAT: ga_folded_what's index */
    const char **traces; /* as given: files or directories */
    size_t n_traces, traces_cap;
    int show_stacks;
    int all_gaps;   /* --all-gaps: every GPU idle gap in the JSON, not the longest 20 */
    int dirs_given; /* a directory among the traces: always the several-process report */
    enum ga_progress_mode progress; /* --quiet, --progress; else on when stderr is a terminal */
    const char *ignore_frames;      /* NULL: the built-in list */
};

static const char usage_text[] =
    "Usage: " GA_PROG " [--json|--dump] [-o OUT] TRACE|DIR...\n"
    "       " GA_PROG " --html FILE TRACE|DIR...\n"
    "       " GA_PROG " --chrome-trace FILE TRACE|DIR...\n"
    "       " GA_PROG " --folded peak|alloc|leak|launch|sync|idle TRACE\n"
    "Reads traces written by libgputrace.so and prints a report.\n"
    "\n"
    "  (default)      a text report that fits a screen: process, devices, memory (allocations,\n"
    "                 peaks, leaks, failed allocations with an OOM verdict), launches, blocking\n"
    "                 calls, the GPU timeline (per device busy/idle/utilization, kernels by GPU\n"
    "                 time, copies) or why it is unavailable, idle gaps by cause, the SM\n"
    "                 clock from NVML (time below its maximum and why), entry-point resolver,\n"
    "                 lost records, notes\n"
    "  --json         the same as one JSON object (schema: docs/REPORT_JSON.md, version 1)\n"
    "  --dump         every record in time order (host and GPU merged), one line each:\n"
    "                 <ns from trace start> tid=<tid> <TYPE> <api> key=value ...\n"
    "                 (a GPU record at its start time; GPU_EXTCORR and GPU_NAME, timeless, where\n"
    "                 the file has them)\n"
    "  --html FILE    write one self-contained HTML page (no network needed): memory over\n"
    "                 time with the peak and OOMs, the address map at the peak and at each\n"
    "                 OOM, the peak by stack (icicle) and by site, library, API and size\n"
    "                 class, the GPU timeline per device and stream with zoom and pan (the\n"
    "                 whole run within a budget; the page says what is exact), a utilization\n"
    "                 strip over the whole run, idle gaps, top kernels, copies, blocking calls,\n"
    "                 OOMs, the SM clock per device from NVML, one row per rank (docs/HTML.md)\n"
    "  --chrome-trace FILE  write the Chrome trace-event JSON that PyTorch's profiler writes\n"
    "                 (Perfetto UI, chrome://tracing, Holistic Trace Analysis open it): kernels,\n"
    "                 copies and memsets per device and stream, host CUDA calls per thread\n"
    "                 linked to their kernels, live device bytes, pool bytes, every idle\n"
    "                 gap, NVML's samples (SM clock, temperature, power, memory used) as\n"
    "                 counters; times in us from the trace start. Several traces: FILE is a\n"
    "                 directory (made if absent) that gets rank-<i>.json per trace, i in the\n"
    "                 order given, on one clock (docs/CHROME_TRACE.md)\n"
    "  --folded WHAT  folded stacks (frame;frame;frame weight, outermost frame first) for\n"
    "                 flamegraph.pl, inferno, speedscope: WHAT = peak (bytes live at the peak;\n"
    "                 the weights add up to it exactly), alloc (bytes allocated), leak (bytes\n"
    "                 live at the end), launch (kernel launches), sync (ns blocked in\n"
    "                 synchronizing calls), idle (GPU idle ns by the host stack it is\n"
    "                 attributed to, under a [GPU n idle: cause] leaf). Python frames as\n"
    "                 'file.py:line function', native ones demangled; [no stack] for events\n"
    "                 the tracer took no stack of. One trace\n"
    "  --stacks       print the full host call stack of each call site listed (text report);\n"
    "                 sites come from the stacks the tracer recorded (GPUTRACE_STACKS)\n"
    "  --all-gaps     list every GPU idle gap in the JSON, in time order (default: the 20\n"
    "                 longest per device); streamed, memory does not grow with the gaps\n"
    "  --ignore-frames REGEX  frames whose function or object file name match this POSIX\n"
    "                 extended regex are allocator internals, never a call site; replaces the\n"
    "                 built-in list (PyTorch's caching allocator, cuBLAS, cuDNN, ...); '' = none\n"
    "  --progress     show progress on stderr even when it is not a terminal (a line every\n"
    "                 2 s and a summary); by default it shows only on a terminal, updated in\n"
    "                 place: bytes read, records per second, time left\n"
    "  -q, --quiet    no progress\n"
    "  -o, --output OUT  write to OUT instead of standard output; OUT is replaced only once the\n"
    "                 report is complete, and never when it is one of the traces\n"
    "  -h, --help     show this help\n"
    "  --version      show the version and the trace format this reader reads\n"
    "\n"
    "TRACE may be - for standard input. A truncated or partly corrupt trace is reported up to its\n"
    "last whole chunk, with a warning on standard error.\n"
    "\n"
    "Several processes (ranks): give several traces, or a directory (its regular files whose\n"
    "header is a gputrace trace, by name; other files are skipped with a note). Each process\n"
    "is reported in turn, then a view across them on a common clock (each trace's header maps\n"
    "its monotonic times to realtime): per rank start, GPU busy and idle share, host time\n"
    "blocked in synchronizing calls and the part spent waiting, peak device memory, top GPU\n"
    "idle cause, and the straggler, the rank the others wait for (docs/ANALYSES.md, \"Several\n"
    "processes\"). Options apply to each process.\n"
    "--json then gives {schema_version, generator, processes: [one report per trace], cross};\n"
    "--dump dumps each trace after a \"==== process I of N: TRACE ====\" line. Every trace is\n"
    "checked before anything is written: one that cannot be read stops the run (exit 2).\n"
    "A trace named twice (by a link, or in a directory given too) is reported once.\n"
    "\n"
    "Exit status: 0 report written (also for a truncated trace), 1 usage error or output not\n"
    "writable, 2 trace unreadable or not a valid gputrace trace.\n";

static void usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s\nTry '%s --help'.\n", GA_PROG, what, arg, GA_PROG);
    exit(1);
}

static void set_mode(struct opts *o, enum mode m, const char *arg)
{
    if (o->mode != MODE_TEXT && o->mode != m)
        usage_error("choose one of --json, --dump, --html, --chrome-trace and --folded: ", arg);
    o->mode = m;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            o->traces = ga_xgrow(o->traces, &o->traces_cap, o->n_traces, sizeof(*o->traces));
            o->traces[o->n_traces++] = a;
        } else if (strcmp(a, "--") == 0) {
            only_files = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("%s %s (reads trace format up to %u)\n", GA_PROG, GT_VERSION, GT_FORMAT_VERSION);
            exit(0);
        } else if (strcmp(a, "--json") == 0) {
            set_mode(o, MODE_JSON, a);
        } else if (strcmp(a, "--dump") == 0) {
            set_mode(o, MODE_DUMP, a);
        } else if (strcmp(a, "--chrome-trace") == 0 || strcmp(a, "--html") == 0) {
            if (++i >= argc) usage_error("a file name must follow ", a);
            set_mode(o, a[2] == 'h' ? MODE_HTML : MODE_CHROME, a);
            o->export_path = argv[i];
        } else if (strcmp(a, "--folded") == 0) {
            if (++i >= argc) usage_error("peak, alloc, leak, launch, sync or idle must follow ", a);
            set_mode(o, MODE_FOLDED, a);
            if ((o->folded = ga_folded_what(argv[i])) < 0)
                usage_error("--folded takes peak, alloc, leak, launch, sync or idle, not ",
                            argv[i]);
        } else if (strcmp(a, "--stacks") == 0) {
            o->show_stacks = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->progress = GA_PROGRESS_OFF;
        } else if (strcmp(a, "--progress") == 0) {
            o->progress = GA_PROGRESS_ON;
        } else if (strcmp(a, "--all-gaps") == 0) {
            o->all_gaps = 1;
        } else if (strcmp(a, "--ignore-frames") == 0) {
            if (++i >= argc) usage_error("a regular expression must follow ", a);
            o->ignore_frames = argv[i];
        } else if (strncmp(a, "--ignore-frames=", 16) == 0) {
            o->ignore_frames = a + 16;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (++i >= argc) usage_error("a file name must follow ", a);
            o->out = argv[i];
        } else if (strncmp(a, "--output=", 9) == 0) {
            o->out = a + 9;
        } else if (strncmp(a, "-o", 2) == 0) {
            o->out = a + 2;
        } else {
            usage_error("unknown option: ", a);
        }
    }
    if (!o->n_traces) usage_error("no trace file given", "");
    if (o->export_path && o->out)
        usage_error("--html and --chrome-trace name their own output, not -o ", o->out);
    if (o->all_gaps && o->mode != MODE_JSON)
        fprintf(stderr,
                "%s: --all-gaps lists every gap in the JSON report (--json); the text report "
                "shows the %d longest gaps per device\n",
                GA_PROG, GA_VGPU_GAPS_KEPT);
    for (size_t i = 0; o->n_traces > 1 && i < o->n_traces; i++)
        if (strcmp(o->traces[i], "-") == 0)
            usage_error("standard input can only be read as the one trace: ", "-");
}

/* Figures the report gives as bounds, said where the user looks first too. */
static void warn_report(const char *path, const struct ga_report *r)
{
    char caveat[400];
    if (ga_report_gpu_caveat(r, caveat, sizeof(caveat)))
        fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, caveat);
}

static void warn_reading(const char *path, const struct ga_read_notes *s)
{
    if (s->truncated) fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, s->stop_reason);
    if (s->malformed_records)
        fprintf(stderr, "%s: %s: skipped %" PRIu64 " malformed record%s\n", GA_PROG, path,
                s->malformed_records, s->malformed_records == 1 ? "" : "s");
    if (s->duplicate_chunks)
        fprintf(stderr,
                "%s: %s: skipped %" PRIu64 " chunk%s written twice (same thread, sequence "
                "number and bytes); each counted once\n",
                GA_PROG, path, s->duplicate_chunks, s->duplicate_chunks == 1 ? "" : "s");
    if (s->late_records)
        fprintf(stderr,
                "%s: %s: %" PRIu64 " record%s came after a watermark that had passed them; "
                "time order may be off there\n",
                GA_PROG, path, s->late_records, s->late_records == 1 ? "" : "s");
}

/* ---- the output: never destroys data ----------------------------------------------------------
 * -o OUT is written to a temporary file in OUT's folder and renamed onto OUT only once the report
 * is complete, so a trace that cannot be read, a full disk or a crash leaves OUT as it was. An OUT
 * that is one of the traces is refused before anything is opened. OUT that exists and is not a
 * regular file (/dev/null, a FIFO) is written in place: there is nothing to replace. */
struct output {
    FILE *f;
    const char *path; /* as given; NULL: standard output */
    char *target; /* OUT with symbolic links resolved: the rename replaces the file, not the link */
    char *tmp;    /* the temporary file, NULL when writing in place */
};

/* The temporary file while it exists: a user who stops the report (Ctrl-C, kill) leaves no
 * half-written file behind, and OUT as it was. */
static char *volatile tmp_to_remove;

static void remove_tmp_and_die(int sig)
{
    char *p = tmp_to_remove;
    if (p) unlink(p);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void guard_tmp(char *tmp)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = remove_tmp_and_die;
    sigemptyset(&sa.sa_mask);
    tmp_to_remove = tmp;
    for (size_t i = 0; tmp && i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction old;
        /* a signal the caller ignores (nohup) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

static void output_fail(const char *path, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, what);
    exit(1);
}

/* Exits 1 when OUT is the same file as one of the traces (standard input included). */
static void refuse_input_as_output(const char *out, char *const *traces, size_t n)
{
    struct stat so, si;
    if (!out || strcmp(out, "-") == 0 || stat(out, &so) != 0) return;
    for (size_t i = 0; i < n; i++) {
        int ok = strcmp(traces[i], "-") == 0 ? fstat(0, &si) : stat(traces[i], &si);
        if (ok == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            fprintf(stderr, "%s: %s: the output is the trace %s; refusing to overwrite it\n",
                    GA_PROG, out, traces[i]);
            exit(1);
        }
    }
}

static void open_output(struct output *o, const char *path)
{
    struct stat st;
    memset(o, 0, sizeof(*o));
    o->f = stdout;
    if (!path || strcmp(path, "-") == 0) return;
    o->path = path;
    char *real = realpath(path, NULL);
    o->target = real ? real : ga_xstrdup(path);
    int exists = stat(o->target, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) output_fail(path, "is a directory");
    if (exists && !S_ISREG(st.st_mode)) {
        if (!(o->f = fopen(o->target, "w"))) output_fail(path, strerror(errno));
        return;
    }
    char *d = ga_xstrdup(o->target), *b = ga_xstrdup(o->target);
    size_t n = strlen(d) + strlen(b) + 16;
    o->tmp = ga_xmalloc(n);
    snprintf(o->tmp, n, "%s/.%s.XXXXXX", dirname(d), basename(b));
    free(d);
    free(b);
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) output_fail(path, strerror(errno));
    guard_tmp(o->tmp);
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        tmp_to_remove = NULL;
        output_fail(path, strerror(e));
    }
}

/* Completes the output: with keep, the temporary file replaces OUT; else it is removed and OUT
 * stays as it was. 1 after a message when writing failed. */
static int close_output(struct output *o, int keep)
{
    const char *name = o->path ? o->path : "standard output";
    int bad = ferror(o->f);
    bad |= o->f == stdout ? fflush(o->f) != 0 : fclose(o->f) != 0;
    if (bad) fprintf(stderr, "%s: %s: write error\n", GA_PROG, name);
    if (o->tmp && (bad || !keep || rename(o->tmp, o->target) != 0)) {
        if (!bad && keep) {
            fprintf(stderr, "%s: %s: %s\n", GA_PROG, name, strerror(errno));
            bad = 1;
        }
        unlink(o->tmp);
    }
    tmp_to_remove = NULL; /* renamed or removed: nothing to clean up any more */
    free(o->tmp);
    free(o->target);
    return bad;
}

static int dump_one(const char *path, FILE *out)
{
    struct ga_read_notes st;
    uint64_t late = 0;
    ga_progress_begin(path);
    int rc = ga_dump_trace(path, out, &st, &late);
    ga_progress_end();
    if (rc != 0) {
        fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, st.error);
        return 2;
    }
    warn_reading(path, &st);
    if (late)
        fprintf(stderr,
                "%s: %s: %" PRIu64 " GPU record%s arrived more than 1 s of trace time after their "
                "place and %s printed out of time order\n",
                GA_PROG, path, late, late == 1 ? "" : "s", late == 1 ? "is" : "are");
    return 0;
}

/* A report model for path with the options applied; NULL (and a message) when --ignore-frames
 * does not compile. */
static struct ga_report *prepare(const struct opts *o, const char *path)
{
    char err[200];
    struct ga_report *r = ga_report_new(path);
    ga_report_model(r)->show_stacks = o->show_stacks;
    if (o->all_gaps && o->mode == MODE_JSON) ga_report_keep_all_gaps(r);
    if (o->ignore_frames && ga_report_ignore_frames(r, o->ignore_frames, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: --ignore-frames: %s\n", GA_PROG, err);
        ga_report_delete(r);
        return NULL;
    }
    return r;
}

/* After a pass: 2 and the reader's error when it failed, else its warnings and the report's. */
static int read_outcome(const char *path, const struct ga_report *r, int failed)
{
    struct ga_read_notes notes;
    ga_report_read_notes(r, &notes);
    if (failed) {
        fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, notes.error);
        return 2;
    }
    warn_reading(path, &notes);
    warn_report(path, r);
    return 0;
}

static int run(const struct opts *o, const char *trace, FILE *out)
{
    if (o->mode == MODE_DUMP) return dump_one(trace, out);
    struct ga_report *r = prepare(o, trace);
    if (!r) return 1;
    ga_progress_begin(trace);
    int rc = o->mode == MODE_CHROME ? ga_chrome_trace(r, 0, 0, out) : ga_report_run(r);
    ga_progress_end();
    if (read_outcome(trace, r, rc != 0) != 0) {
        ga_report_delete(r);
        return 2;
    }
    if (o->mode == MODE_JSON)
        ga_render_json(ga_report_model(r), out);
    else if (o->mode == MODE_FOLDED)
        ga_render_folded(ga_report_folded(r, o->folded), out);
    else if (o->mode == MODE_TEXT)
        ga_render_text(ga_report_model(r), out);
    ga_report_delete(r);
    return 0;
}

/* ---- several traces -------------------------------------------------------------------------- */

struct trace_list {
    char **paths;
    size_t n, cap;
};

static void list_add(struct trace_list *l, char *path)
{
    l->paths = ga_xgrow(l->paths, &l->cap, l->n, sizeof(*l->paths));
    l->paths[l->n++] = path;
}

static void list_free(struct trace_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
}

/* A trace named twice (the same path, a link to it, a directory holding it) is reported once: a
 * second copy would double every figure of the cross-process view. */
static void drop_repeats(struct trace_list *l)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct stat si, sk;
        size_t k = kept;
        if (stat(l->paths[i], &si) == 0)
            for (k = 0; k < kept; k++)
                if (stat(l->paths[k], &sk) == 0 && sk.st_dev == si.st_dev && sk.st_ino == si.st_ino)
                    break;
        if (k < kept) {
            fprintf(stderr, "%s: %s: the same trace as %s; reported once\n", GA_PROG, l->paths[i],
                    l->paths[k]);
            free(l->paths[i]);
        } else {
            l->paths[kept++] = l->paths[i];
        }
    }
    l->n = kept;
}

static int is_dir(const char *path)
{
    struct stat st;
    return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The traces to report: files as given, directories expanded. Every one is probed before
 * anything is written, so a report never silently lacks a rank. 0, or 2 after one line per
 * trace that cannot be read. */
static int expand(struct opts *o, struct trace_list *l)
{
    char why[200];
    int rc = 0;
    for (size_t i = 0; i < o->n_traces; i++) {
        const char *a = o->traces[i];
        char **found = NULL;
        size_t n = 0;
        if (!is_dir(a)) {
            list_add(l, ga_xstrdup(a));
            continue;
        }
        o->dirs_given = 1;
        if (ga_multi_list_dir(a, &found, &n, stderr, why, sizeof(why)) != 0) {
            fprintf(stderr, "%s: %s: %s\n", GA_PROG, a, why);
            rc = 2;
            continue;
        }
        if (!n) {
            fprintf(stderr, "%s: %s: no gputrace traces in this directory\n", GA_PROG, a);
            rc = 2;
        }
        for (size_t k = 0; k < n; k++)
            list_add(l, found[k]);
        free(found);
    }
    drop_repeats(l);
    for (size_t i = 0; i < l->n; i++)
        if (ga_multi_probe(l->paths[i], why, sizeof(why)) != 1) {
            fprintf(stderr, "%s: %s: %s\n", GA_PROG, l->paths[i], why);
            rc = 2;
        }
    return rc;
}

/* Analyzes and renders one trace, then keeps only its summary in m. */
static int run_rank(const struct opts *o, struct ga_multi *m, size_t i, size_t n, const char *path,
                    FILE *out)
{
    if (o->mode == MODE_DUMP) {
        ga_text_multi_banner(i, n, path, out);
        return dump_one(path, out);
    }
    struct ga_report *r = prepare(o, path);
    if (!r) return 1;
    ga_progress_begin(path);
    int rc = ga_multi_run(m, r);
    ga_progress_end();
    if (read_outcome(path, r, rc != 0) != 0) {
        ga_report_delete(r);
        return 2;
    }
    if (o->mode == MODE_JSON) {
        ga_json_multi_process(ga_report_model(r), i, out);
    } else {
        ga_text_multi_banner(i, n, path, out);
        ga_render_text(ga_report_model(r), out);
    }
    ga_report_delete(r);
    return 0;
}

static int run_multi(const struct opts *o, const struct trace_list *l, FILE *out)
{
    struct ga_multi m;
    int rc = 0;
    ga_multi_init(&m);
    if (o->mode == MODE_JSON) ga_json_multi_begin(out);
    for (size_t i = 0; i < l->n && rc == 0; i++)
        rc = run_rank(o, &m, i, l->n, l->paths[i], out);
    if (rc == 0 && o->mode != MODE_DUMP) {
        ga_multi_finish(&m);
        if (o->mode == MODE_JSON)
            ga_json_multi_end(&m, out);
        else
            ga_text_multi(&m, out);
    }
    ga_multi_free(&m);
    return rc;
}

/* --html: one page for all the traces (one: its report; several: the several-process report),
 * written only once every trace was read. */
static int run_html(const struct opts *o, char *const *paths, size_t n, int multi)
{
    struct ga_html h;
    struct ga_multi m;
    struct output out;
    int rc = 0;
    ga_html_begin(&h);
    ga_multi_init(&m);
    if (multi) ga_json_multi_begin(h.data_f);
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct ga_vpage v;
        struct ga_report *r = prepare(o, paths[i]);
        if (!r) {
            rc = 1;
            break;
        }
        ga_vpage_attach(&v, r);
        ga_progress_begin(paths[i]);
        int bad = multi ? ga_multi_run(&m, r) : ga_report_run(r);
        ga_progress_end();
        rc = read_outcome(paths[i], r, bad != 0);
        if (rc == 0) {
            if (multi)
                ga_json_multi_process(ga_report_model(r), i, h.data_f);
            else
                ga_render_json(ga_report_model(r), h.data_f);
            ga_vpage_build(&v, r);
            ga_html_rank(&h, &v);
        }
        ga_vpage_free(&v);
        ga_report_delete(r);
    }
    if (multi && rc == 0) {
        ga_multi_finish(&m);
        ga_json_multi_end(&m, h.data_f);
    }
    ga_multi_free(&m);
    if (rc != 0) {
        ga_html_discard(&h);
        return rc;
    }
    open_output(&out, o->export_path);
    rc = ga_html_end(&h, n == 1 ? paths[0] : "several processes", out.f) != 0;
    if (close_output(&out, rc == 0)) rc = 1;
    return rc;
}

/* The earliest trace start (CLOCK_REALTIME) of the traces: time zero of the exports. */
static uint64_t origin_of(const struct trace_list *l)
{
    uint64_t origin = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct gt_file_header h;
        FILE *f = fopen(l->paths[i], "rb");
        if (!f) continue;
        if (fread(&h, sizeof(h), 1, f) == 1 && (!origin || h.start_realtime_ns < origin))
            origin = h.start_realtime_ns;
        fclose(f);
    }
    return origin;
}

/* --chrome-trace with several traces: dir/rank-<i>.json each, on one clock. */
static int export_multi(const struct opts *o, const struct trace_list *l)
{
    const char *dir = o->export_path;
    uint64_t origin = origin_of(l);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", GA_PROG, dir, strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < l->n; i++) {
        char path[4096];
        struct output out;
        snprintf(path, sizeof(path), "%s/rank-%zu.json", dir, i);
        struct ga_report *r = prepare(o, l->paths[i]);
        if (!r) return 1;
        open_output(&out, path);
        ga_progress_begin(l->paths[i]);
        int rc = ga_chrome_trace(r, (int)i, origin, out.f) != 0 ? 2 : 0;
        ga_progress_end();
        struct ga_read_notes notes;
        ga_report_read_notes(r, &notes);
        if (rc)
            fprintf(stderr, "%s: %s: %s\n", GA_PROG, l->paths[i], notes.error);
        else
            warn_reading(l->paths[i], &notes);
        ga_report_delete(r);
        if (close_output(&out, rc == 0) && rc == 0) rc = 1;
        if (rc) return rc;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.mode = MODE_TEXT};
    struct trace_list l = {0};
    struct output out;
    int rc = 0, single;
    parse_args(argc, argv, &o);
    /* a dump to the terminal streams while reading: a progress line would cut into it */
    if (o.mode == MODE_DUMP && o.progress == GA_PROGRESS_AUTO && (!o.out || !strcmp(o.out, "-")) &&
        isatty(1))
        o.progress = GA_PROGRESS_OFF;
    ga_progress_setup(o.progress);
    ga_report_set_progress(ga_progress_update, NULL);
    single = o.n_traces == 1 && !is_dir(o.traces[0]); /* one trace: the single-process report */
    if (single)
        list_add(&l, ga_xstrdup(o.traces[0]));
    else if ((rc = expand(&o, &l)) == 0)
        single = l.n == 1 && !o.dirs_given; /* the same trace given twice */
    if (rc == 0 && o.mode == MODE_FOLDED && !single)
        usage_error("--folded reads one trace, not several: ", l.paths[l.n - 1]);
    if (rc == 0 && o.mode == MODE_HTML) {
        refuse_input_as_output(o.export_path, l.paths, l.n);
        rc = run_html(&o, l.paths, l.n, !single);
    } else if (rc == 0 && o.mode == MODE_CHROME && !single) {
        rc = export_multi(&o, &l);
    } else if (rc == 0) {
        const char *path = o.mode == MODE_CHROME ? o.export_path : o.out;
        refuse_input_as_output(path, l.paths, l.n);
        open_output(&out, path);
        rc = single ? run(&o, l.paths[0], out.f) : run_multi(&o, &l, out.f);
        if (close_output(&out, rc == 0) && rc == 0) rc = 1;
    }
    list_free(&l);
    free(o.traces);
    return rc;
}
