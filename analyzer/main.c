/* gputrace-report: reads a gputrace trace and prints a report (text, JSON, or a record dump). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

enum mode { MODE_TEXT, MODE_JSON, MODE_DUMP };

struct opts {
    enum mode mode;
    const char *out;
    const char *trace;
    int show_stacks;
    const char *ignore_frames; /* NULL: the built-in list */
};

static const char usage_text[] =
    "Usage: " GA_PROG " [--json|--dump] [-o OUT] TRACE\n"
    "Reads a trace written by libgputrace.so and prints a report.\n"
    "\n"
    "  (default)      a text report that fits a screen: process, devices, memory (allocations,\n"
    "                 peaks, leaks, failed allocations with an OOM verdict), launches, blocking\n"
    "                 calls, the GPU timeline (per device busy/idle/utilization, kernels by GPU\n"
    "                 time, copies) or why it is unavailable, entry-point resolver, lost\n"
    "                 records, notes\n"
    "  --json         the same as one JSON object (schema: docs/REPORT_JSON.md, version 1)\n"
    "  --dump         every record in time order, one line each:\n"
    "                 <ns from trace start> tid=<tid> <TYPE> <api> key=value ...\n"
    "                 (GPU_* records where the file has them, in CUPTI's delivery order)\n"
    "  --stacks       print the full host call stack of each call site listed (text report);\n"
    "                 sites come from the stacks the tracer recorded (GPUTRACE_STACKS)\n"
    "  --ignore-frames REGEX  frames whose function or object file name match this POSIX\n"
    "                 extended regex are allocator internals, never a call site; replaces the\n"
    "                 built-in list (PyTorch's caching allocator, cuBLAS, cuDNN, ...); '' = none\n"
    "  -o, --output OUT  write to OUT instead of standard output\n"
    "  -h, --help     show this help\n"
    "  --version      show the version and the trace format this reader reads\n"
    "\n"
    "TRACE may be - for standard input. A truncated or partly corrupt trace is reported up to its\n"
    "last whole chunk, with a warning on standard error.\n"
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
        usage_error("choose one of --json and --dump, not both: ", arg);
    o->mode = m;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    int only_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || strcmp(a, "-") == 0) {
            if (o->trace) usage_error("one trace at a time; extra argument: ", a);
            o->trace = a;
        } else if (strcmp(a, "--") == 0) {
            only_files = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("%s (reads trace format up to %u)\n", GA_PROG, GT_FORMAT_VERSION);
            exit(0);
        } else if (strcmp(a, "--json") == 0) {
            set_mode(o, MODE_JSON, a);
        } else if (strcmp(a, "--dump") == 0) {
            set_mode(o, MODE_DUMP, a);
        } else if (strcmp(a, "--stacks") == 0) {
            o->show_stacks = 1;
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
    if (!o->trace) usage_error("no trace file given", "");
}

static void warn_reading(const char *path, const struct ga_read_stats *s)
{
    if (s->truncated) fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, s->stop_reason);
    if (s->malformed_records)
        fprintf(stderr, "%s: %s: skipped %" PRIu64 " malformed record%s\n", GA_PROG, path,
                s->malformed_records, s->malformed_records == 1 ? "" : "s");
    if (s->late_records)
        fprintf(stderr,
                "%s: %s: %" PRIu64 " record%s came after a watermark that had passed them; "
                "time order may be off there\n",
                GA_PROG, path, s->late_records, s->late_records == 1 ? "" : "s");
}

static FILE *open_output(const char *path)
{
    if (!path || strcmp(path, "-") == 0) return stdout;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", GA_PROG, path, strerror(errno));
        exit(1);
    }
    return f;
}

static int close_output(FILE *f, const char *path)
{
    int bad = ferror(f);
    bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "%s: %s: write error\n", GA_PROG, path ? path : "standard output");
        return 1;
    }
    return 0;
}

static int run(const struct opts *o, FILE *out)
{
    if (o->mode == MODE_DUMP) {
        struct ga_read_stats st;
        if (ga_dump_trace(o->trace, out, &st) != 0) {
            fprintf(stderr, "%s: %s: %s\n", GA_PROG, o->trace, st.error);
            return 2;
        }
        warn_reading(o->trace, &st);
        return 0;
    }
    struct ga_report r;
    char err[200];
    ga_report_init(&r, o->trace);
    r.show_stacks = o->show_stacks;
    if (o->ignore_frames && ga_report_ignore_frames(&r, o->ignore_frames, err, sizeof(err)) != 0) {
        fprintf(stderr, "%s: --ignore-frames: %s\n", GA_PROG, err);
        ga_report_free(&r);
        return 1;
    }
    if (ga_report_run(&r) != 0) {
        fprintf(stderr, "%s: %s: %s\n", GA_PROG, o->trace, r.read.error);
        ga_report_free(&r);
        return 2;
    }
    warn_reading(o->trace, &r.read);
    if (o->mode == MODE_JSON)
        ga_render_json(&r, out);
    else
        ga_render_text(&r, out);
    ga_report_free(&r);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {MODE_TEXT, NULL, NULL, 0, NULL};
    parse_args(argc, argv, &o);
    FILE *out = open_output(o.out);
    int rc = run(&o, out);
    if (close_output(out, o.out) && rc == 0) rc = 1;
    return rc;
}
