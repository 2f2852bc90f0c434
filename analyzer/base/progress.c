/* Progress display (see progress.h). */
#include "base/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/stat.h>

#include "base/util.h"

#define TTY_EVERY_NS 100000000ull  /* a terminal line is redrawn this often */
#define LOG_EVERY_NS 2000000000ull /* a log line (--progress, not a terminal) this often */

static struct {
    int on, tty, shown;
    const char *path;
    uint64_t total; /* bytes of the trace, 0 unknown */
    uint64_t start, last, bytes, records;
} P;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ga_progress_setup(enum ga_progress_mode mode)
{
    P.tty = isatty(2);
    P.on = mode == GA_PROGRESS_ON || (mode == GA_PROGRESS_AUTO && P.tty);
}

void ga_progress_begin(const char *path)
{
    struct stat st;
    if (!P.on) return;
    P.path = path;
    P.total = strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)
                  ? (uint64_t)st.st_size
                  : 0;
    P.start = P.last = now_ns();
    P.bytes = P.records = 0;
    P.shown = 0;
}

/* "12.3 MiB of 185 MiB (6%), 21.4 M records/s, 8 s left" */
static void put_line(uint64_t t, const char *end)
{
    char b[2][32];
    double s = (double)(t - P.start) / 1e9;
    fprintf(stderr, "%s: %s: %s", GA_PROG, P.path, ga_fmt_bytes(b[0], P.bytes));
    if (P.total && P.bytes <= P.total)
        fprintf(stderr, " of %s (%" PRIu64 "%%)", ga_fmt_bytes(b[1], P.total),
                P.bytes * 100 / P.total);
    if (s > 0) fprintf(stderr, ", %.1f M records/s", (double)P.records / s / 1e6);
    if (P.total && P.bytes && P.bytes < P.total && s > 0)
        fprintf(stderr, ", %.0f s left", s * (double)(P.total - P.bytes) / (double)P.bytes);
    fputs(end, stderr);
}

void ga_progress_update(void *ctx, uint64_t bytes, uint64_t records)
{
    (void)ctx;
    if (!P.on || !P.path) return;
    P.bytes = bytes;
    P.records = records;
    uint64_t t = now_ns();
    if (t - P.last < (P.tty ? TTY_EVERY_NS : LOG_EVERY_NS)) return;
    P.last = t;
    P.shown = 1;
    if (P.tty) fputs("\r\033[K", stderr); /* back to the start of the line, erased */
    put_line(t, P.tty ? "" : "\n");
    fflush(stderr);
}

void ga_progress_end(void)
{
    if (!P.on || !P.path) return;
    if (P.tty && P.shown) fputs("\r\033[K", stderr);
    if (!P.tty) put_line(now_ns(), ", done\n");
    fflush(stderr);
    P.path = NULL;
}
