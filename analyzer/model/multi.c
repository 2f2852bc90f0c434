/* Several processes: per-rank summaries, clock alignment, the straggler (see multi.h and
 * docs/ANALYSES.md, "Several processes"). */
#include "model/multi.h"
#include "model/state.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "gputrace/trace_api.h"
#include "base/util.h"

#define STRAGGLER_MIN_NS 1000000u /* every other rank waited at least 1 ms longer ... */
#define STRAGGLER_RATIO  2u       /* ... and at least twice as long */

/* ---- probing and listing ------------------------------------------------------------------- */

static void ignore(void *ctx, const struct ga_event *ev) {}

int ga_multi_probe(const char *path, char *why, size_t n)
{
    unsigned char hb[4096];
    const char *msg = "";
    size_t got = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, n, "%s", strerror(errno));
        return -1;
    }
    while (got < sizeof(hb)) {
        ssize_t k = read(fd, hb + got, sizeof(hb) - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            snprintf(why, n, "read error: %s", strerror(errno));
            close(fd);
            return -1;
        }
        if (k == 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (got < 8 || memcmp(hb, GT_MAGIC, 8) != 0) {
        snprintf(why, n, "%s", got ? "not a gputrace trace (bad magic)" : "empty file");
        return 0;
    }
    if (gt_header_check(hb, got, &msg) != 0) { /* the reader stops at the header and says why */
        struct ga_read_stats st;
        snprintf(why, n, "%s", ga_read_trace(path, ignore, NULL, &st) != 0 ? st.error : msg);
        return -1;
    }
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = ga_xmalloc(a + b + 2);
    memcpy(p, dir, a);
    size_t at = a && dir[a - 1] == '/' ? a : a + 1;
    p[a] = '/';
    memcpy(p + at, name, b + 1);
    return p;
}

/* Keeps path when it is a regular file that starts like a trace (a broken header is kept too:
 * reading it later says what is wrong); else a note says why it is skipped. */
static int keep(const char *path, FILE *notes)
{
    struct stat st;
    char why[200];
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(notes, "%s: %s: skipped (not a regular file)\n", GA_PROG, path);
        return 0;
    }
    if (ga_multi_probe(path, why, sizeof(why)) != 0) return 1;
    fprintf(notes, "%s: %s: skipped (%s)\n", GA_PROG, path, why);
    return 0;
}

int ga_multi_list_dir(const char *dir, char ***paths, size_t *n, FILE *notes, char *why,
                      size_t why_n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL, **out = NULL;
    size_t cap = 0, count = 0, kept = 0, out_cap = 0;
    if (!d) {
        snprintf(why, why_n, "%s", strerror(errno));
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        names = ga_xgrow(names, &cap, count, sizeof(*names));
        names[count++] = ga_xstrdup(e->d_name);
    }
    closedir(d);
    if (count > 1) qsort(names, count, sizeof(*names), by_name);
    for (size_t i = 0; i < count; i++) {
        char *p = join(dir, names[i]);
        free(names[i]);
        if (!keep(p, notes)) {
            free(p);
            continue;
        }
        out = ga_xgrow(out, &out_cap, kept, sizeof(*out));
        out[kept++] = p;
    }
    free(names);
    *paths = out;
    *n = kept;
    return 0;
}

/* ---- host time blocked in synchronizing calls ---------------------------------------------- */

struct span {
    uint64_t a, b;
};

struct spans {
    struct span *s;
    size_t n, cap;
    int unsorted;
};

/* Appends [a, b), merging with the last span when the input comes in order (host records do,
 * but for the few that arrive late), so overlapping calls of several threads cost one span. */
static void spans_add(struct spans *v, uint64_t a, uint64_t b)
{
    struct span *last = v->n ? &v->s[v->n - 1] : NULL;
    if (last && !v->unsorted && a >= last->a && a <= last->b) {
        if (b > last->b) last->b = b;
        return;
    }
    if (last && a < last->a) v->unsorted = 1;
    v->s = ga_xgrow(v->s, &v->cap, v->n, sizeof(*v->s));
    v->s[v->n++] = (struct span){a, b};
}

static int span_by_start(const void *x, const void *y)
{
    const struct span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

/* Sorts and merges into disjoint spans in ascending order; returns their total length. */
static uint64_t spans_union(struct spans *v)
{
    size_t out = 0;
    uint64_t total = 0;
    if (v->n > 1) qsort(v->s, v->n, sizeof(*v->s), span_by_start);
    for (size_t i = 0; i < v->n; i++) {
        if (out && v->s[i].a <= v->s[out - 1].b) {
            if (v->s[i].b > v->s[out - 1].b) v->s[out - 1].b = v->s[i].b;
            continue;
        }
        v->s[out++] = v->s[i];
    }
    v->n = out;
    v->unsorted = 0;
    for (size_t i = 0; i < out; i++)
        total += v->s[i].b - v->s[i].a;
    return total;
}

/* Length of the intersection of two lists of disjoint ascending spans. */
static uint64_t spans_overlap(const struct spans *x, const struct spans *y)
{
    uint64_t total = 0;
    for (size_t i = 0, j = 0; i < x->n && j < y->n;) {
        uint64_t a = x->s[i].a > y->s[j].a ? x->s[i].a : y->s[j].a;
        uint64_t b = x->s[i].b < y->s[j].b ? x->s[i].b : y->s[j].b;
        if (b > a) total += b - a;
        if (x->s[i].b < y->s[j].b)
            i++;
        else
            j++;
    }
    return total;
}

struct collect {
    struct ga_report *r;
    struct spans sync;
    uint64_t calls;
};

/* Synchronizations (cuCtx/Stream/EventSynchronize) and blocking copies: the host waits there
 * for the GPU, and through it for whatever the GPU waits for. cuStreamWaitEvent does not block
 * the host. Failed calls count too: the host was blocked all the same. */
static void sink(void *ctx, const struct ga_event *ev)
{
    struct collect *c = ctx;
    ga_report_event(c->r, ev);
    if (ev->type != GT_REC_SPAN || ev->sub >= GT_API_MAX) return;
    unsigned fam = gt_api_table[ev->sub].family;
    if (fam != GT_FAM_SYNC && fam != GT_FAM_COPY) return;
    if (ev->r->span.ts_exit <= ev->r->span.ts_enter) return;
    c->calls++;
    spans_add(&c->sync, ev->r->span.ts_enter, ev->r->span.ts_exit);
}

/* ---- collective kernels -------------------------------------------------------------------- */

static int has_word(const char *s, const char *w)
{
    size_t n = strlen(w);
    for (; *s; s++)
        if (strncasecmp(s, w, n) == 0) return 1;
    return 0;
}

/* NCCL's and RCCL's kernels (ncclKernel_*, ncclDevKernel_*) wait on the GPU for the other
 * ranks: a rank blocked behind one is waiting for its peers, not for its own work. */
static int is_collective(const struct ga_report *r, const struct ga_gpu_act *a)
{
    if (a->kind != GA_GPU_KERNEL) return 0;
    const char *name = ga_gpu_act_name(&r->gpu, &r->tl, a);
    return has_word(name, "nccl") || has_word(name, "rccl");
}

/* The rank's own GPU work: every kernel, copy and memset on any device, except collectives. */
static void own_work(const struct ga_report *r, struct ga_rank *k, struct spans *own)
{
    const struct ga_gpu *g = &r->gpu;
    for (size_t i = 0; i < g->n_acts; i++) {
        const struct ga_gpu_act *a = &g->acts[i];
        if (is_collective(r, a)) {
            k->collective_ns += a->end - a->start;
            continue;
        }
        if (a->end > a->start) spans_add(own, a->start, a->end);
    }
    spans_union(own);
}

/* ---- per rank ------------------------------------------------------------------------------ */

static void summarize_gpu(const struct ga_report *r, struct ga_rank *k)
{
    const struct ga_gpu *g = &r->gpu;
    k->have_gpu = ga_gpu_has_activity(g);
    k->gpu_dropped = g->dropped;
    for (size_t i = 0; i < g->n_devices; i++) {
        const struct ga_gpu_device *d = &g->devices[i];
        if (!k->gpu_first || d->first < k->gpu_first) k->gpu_first = d->first;
        if (d->last > k->gpu_last) k->gpu_last = d->last;
        k->gpu_span_ns += d->last - d->first;
        k->gpu_busy_ns += d->busy_ns;
    }
}

static void summarize_idle(const struct ga_report *r, struct ga_rank *k)
{
    const struct ga_gaps *x = &r->gaps;
    uint64_t by_cause[GA_CAUSES] = {0};
    const struct ga_idle_site *best = NULL;
    char label[512];
    k->idle_cause = -1;
    for (size_t i = 0; i < x->n_devices; i++)
        for (unsigned c = 0; c < GA_CAUSES; c++) {
            by_cause[c] += x->devices[i].cause_ns[c];
            k->gaps_idle_ns += x->devices[i].cause_ns[c];
        }
    for (unsigned c = 0; c < GA_CAUSES; c++)
        if (by_cause[c] && (k->idle_cause < 0 || by_cause[c] > k->idle_cause_ns)) {
            k->idle_cause = (int)c;
            k->idle_cause_ns = by_cause[c];
            k->idle_cause_name = ga_cause_name(c);
        }
    for (size_t i = 0; i < x->n_devices && k->idle_cause >= 0; i++)
        for (size_t j = 0; j < x->devices[i].n_sites; j++) {
            const struct ga_idle_site *s = &x->devices[i].sites[j];
            if (s->cause == k->idle_cause && (!best || s->idle_ns > best->idle_ns)) best = s;
        }
    if (!best) return;
    k->idle_site_ns = best->idle_ns;
    if (best->site && best->site->frame)
        k->idle_site =
            ga_xstrdup(ga_frame_label(&r->stacks, best->site->frame, label, sizeof(label), 0));
}

static void summarize(const struct ga_report *r, struct collect *c, struct ga_rank *k)
{
    const struct ga_read_stats *s = &r->read;
    k->path = ga_xstrdup(r->m.path);
    k->pid = r->facts.have_process ? r->facts.pid : s->header.pid;
    k->host = r->facts.host ? ga_xstrdup(r->facts.host) : NULL;
    k->start_realtime_ns = s->header.start_realtime_ns;
    k->start_monotonic_ns = s->header.start_monotonic_ns;
    k->duration_ns = ga_report_duration(r);
    k->truncated = s->truncated;
    k->clean_end = r->facts.have_end;
    summarize_gpu(r, k);
    k->sync_calls = c->calls;
    k->sync_ns = spans_union(&c->sync);
    if (k->have_gpu) {
        struct spans own = {0};
        own_work(r, k, &own);
        k->own_work_ns = spans_overlap(&c->sync, &own);
        free(own.s);
    }
    k->wait_ns = k->sync_ns - k->own_work_ns;
    summarize_idle(r, k);
    k->peak_bytes = r->mem.peak_total;
    k->peak_ts = r->mem.peak_total ? r->mem.peak_ts : 0;
    k->leaked_bytes = r->mem.leaked_bytes;
}

void ga_multi_init(struct ga_multi *m)
{
    memset(m, 0, sizeof(*m));
    m->straggler = -1;
}

int ga_multi_run(struct ga_multi *m, struct ga_report *r)
{
    struct collect c = {.r = r};
    r->gpu.keep_acts = 1; /* own_work looks at every activity */
    if (ga_read_trace(r->m.path, sink, &c, &r->read) != 0) {
        free(c.sync.s);
        return -1;
    }
    ga_report_finish(r);
    m->ranks = ga_xgrow(m->ranks, &m->cap, m->n, sizeof(*m->ranks));
    memset(&m->ranks[m->n], 0, sizeof(m->ranks[m->n]));
    summarize(r, &c, &m->ranks[m->n++]);
    free(c.sync.s);
    return 0;
}

/* ---- across ranks -------------------------------------------------------------------------- */

/* The rank the others wait for: the one that waited least, provided every other rank waited at
 * least STRAGGLER_MIN_NS longer and STRAGGLER_RATIO times as long (else none stands out). */
static void find_straggler(struct ga_multi *m)
{
    size_t s = 0;
    uint64_t margin = UINT64_MAX;
    if (m->n < 2) return;
    for (size_t i = 1; i < m->n; i++)
        if (m->ranks[i].wait_ns < m->ranks[s].wait_ns) s = i;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t w = m->ranks[i].wait_ns, ws = m->ranks[s].wait_ns;
        if (i == s) continue;
        if (w - ws < STRAGGLER_MIN_NS || w / STRAGGLER_RATIO < ws) return;
        if (w - ws < margin) margin = w - ws;
    }
    m->straggler = (long)s;
    m->straggler_margin_ns = margin;
}

void ga_multi_finish(struct ga_multi *m)
{
    m->same_host = 1;
    for (size_t i = 0; i < m->n; i++) {
        const struct ga_rank *k = &m->ranks[i];
        if (i == 0 || k->start_realtime_ns < m->origin_realtime_ns)
            m->origin_realtime_ns = k->start_realtime_ns;
        const char *h0 = m->ranks[0].host;
        if (!k->host || !h0 || strcmp(k->host, h0) != 0) m->same_host = 0;
    }
    find_straggler(m);
}

int64_t ga_multi_at(const struct ga_multi *m, const struct ga_rank *k, uint64_t mono)
{
    return (int64_t)(mono - k->start_monotonic_ns) +
           (int64_t)(k->start_realtime_ns - m->origin_realtime_ns);
}

double ga_rank_idle_share(const struct ga_rank *k)
{
    if (!k->have_gpu || !k->gpu_span_ns) return -1;
    return (double)(k->gpu_span_ns - k->gpu_busy_ns) / (double)k->gpu_span_ns;
}

void ga_multi_free(struct ga_multi *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->ranks[i].path);
        free(m->ranks[i].host);
        free(m->ranks[i].idle_site);
    }
    free(m->ranks);
    ga_multi_init(m);
}
