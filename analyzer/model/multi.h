/* Several processes (ranks) in one report: each trace is analyzed and rendered on its own, one at
 * a time, and leaves a small summary (struct ga_rank) behind; the cross-process view is made from
 * the summaries only, so memory is one report plus a few hundred bytes per rank.
 *
 * Clock alignment: every trace's file header holds CLOCK_REALTIME and CLOCK_MONOTONIC read at the
 * same instant; record times are that host's CLOCK_MONOTONIC. A time t of rank k maps to
 * realtime t - start_monotonic_k + start_realtime_k, and to the common timeline by subtracting the
 * origin, the earliest start_realtime of all ranks (docs/ANALYSES.md, "Several processes"). */
#ifndef GA_MULTI_H
#define GA_MULTI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The renderers of several traces read only this file's structs; ga_multi_run and the process
 * object take one trace's report (model/report.h), which only its callers need in full. */
struct ga_report;
struct ga_model;

struct ga_rank {
    char *path;
    uint32_t pid;
    char *host; /* NULL when the trace has no process record */
    uint64_t start_realtime_ns, start_monotonic_ns;
    uint64_t duration_ns; /* trace start to the last host record */
    int truncated, clean_end;
    /* GPU timeline, summed over the process's devices (ga_gpu_device) */
    int have_gpu;                 /* 1: GPU activity was recorded and analyzed */
    uint64_t gpu_first, gpu_last; /* monotonic: earliest first, latest last over devices */
    uint64_t gpu_span_ns;         /* sum over devices of last - first */
    uint64_t gpu_busy_ns;         /* sum over devices of busy_ns */
    uint64_t gpu_dropped;         /* GPU activity records CUPTI dropped: busy and idle are bounds */
    /* waiting: host time blocked in synchronizing calls and blocking copies */
    uint64_t sync_calls;
    uint64_t sync_ns;       /* union over threads of those calls' [enter, exit) */
    uint64_t own_work_ns;   /* the part of sync_ns while own non-collective GPU work ran */
    uint64_t wait_ns;       /* sync_ns - own_work_ns (= sync_ns without a GPU timeline) */
    uint64_t collective_ns; /* GPU time of collective kernels (name has nccl/rccl) */
    /* idle gaps (ga_gaps), summed over devices: the cause with the most idle time, and the
     * (cause, call site) entry of one device that weighs most within it */
    int idle_cause;         /* enum ga_cause, -1 without idle gaps */
    const char *idle_cause_name; /* its name (ga_cause_name), NULL without idle gaps */
    uint64_t idle_cause_ns; /* idle time of that cause */
    uint64_t gaps_idle_ns;  /* idle time of all gaps */
    char *idle_site;        /* label of that call site, NULL when unknown */
    uint64_t idle_site_ns;
    /* memory (ga_memory): device-memory kinds, whole process */
    uint64_t peak_bytes, peak_ts; /* peak_ts monotonic; 0 when the peak is 0 bytes */
    uint64_t leaked_bytes;
};

struct ga_multi {
    struct ga_rank *ranks;
    size_t n, cap;
    uint64_t origin_realtime_ns;  /* earliest start_realtime_ns */
    int same_host;                /* every rank names the same host */
    long straggler;               /* index into ranks, -1 when none stands out */
    uint64_t straggler_margin_ns; /* least (other rank's wait - straggler's wait) */
};

/* What a path is: 1 a gputrace trace, 0 not one (a file of another kind: why says so), -1 it
 * cannot be read or starts like a trace but its header is unusable (why says so). */
int ga_multi_probe(const char *path, char *why, size_t n);

/* The regular files in dir whose header is a gputrace trace, sorted by name (malloc'd paths).
 * Others are skipped with a note on `notes`. -1 with why set when dir cannot be listed. */
int ga_multi_list_dir(const char *dir, char ***paths, size_t *n, FILE *notes, char *why,
                      size_t why_n);

void ga_multi_init(struct ga_multi *m);
/* Reads r->path into r (like ga_report_run) and appends its rank summary to m. 0 or -1 (the
 * trace is unreadable: r->read.error says why; nothing is appended). */
int ga_multi_run(struct ga_multi *m, struct ga_report *r);
/* Origin, same host, straggler: after every rank. */
void ga_multi_finish(struct ga_multi *m);
void ga_multi_free(struct ga_multi *m);

/* A monotonic time of rank k on the common timeline (ns from the origin). */
int64_t ga_multi_at(const struct ga_multi *m, const struct ga_rank *k, uint64_t mono);
/* GPU idle share of rank k: idle / active span summed over its devices (0..1), -1 without a
 * GPU timeline. */
double ga_rank_idle_share(const struct ga_rank *k);

/* render/text_multi.c */
void ga_text_multi_banner(size_t i, size_t n, const char *path, FILE *o);
void ga_text_multi(const struct ga_multi *m, FILE *o);
/* render/json_multi.c: {schema_version, generator, processes: [...], cross: {...}}, streamed:
 * begin, one process object per rank as it is analyzed (render/json_process.c), then the cross
 * object. */
void ga_json_multi_begin(FILE *o);
int ga_json_multi_process(const struct ga_model *m, size_t i, FILE *o);
int ga_json_multi_end(const struct ga_multi *m, FILE *o);
/* Writes lead to o, then runs write(ctx, f) with f a stream into o that puts indent after every
 * newline but the trailing ones (a pretty JSON document nested in another). 0 or -1. */
int ga_json_indented(FILE *o, const char *lead, const char *indent,
                     int (*write)(const void *ctx, FILE *f), const void *ctx);

#endif
