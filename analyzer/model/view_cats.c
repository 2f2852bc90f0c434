/* Device memory at the process peak by category (view_cats.h). O(libraries + devices *
 * snapshots kept) once after the pass. */
#include "model/view_cats.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

const char *ga_vc_cat_name(unsigned cat)
{
    return cat == GA_VC_PYTORCH ? "pytorch_reserved" : ga_cat_name((enum ga_cat)cat);
}

const char *ga_vc_source_name(enum ga_vc_source s)
{
    return s == GA_VC_SNAPSHOT ? "snapshot" : s == GA_VC_REPLAY ? "replay" : "library";
}

const char *ga_vc_at_name(enum ga_vc_at at)
{
    return at == GA_VC_AT_PEAK ? "peak" : "snapshot";
}

unsigned ga_vc_library_cat(const char *name)
{
    /* NVIDIA's libraries that allocate their own device buffers (workspaces, communication
     * buffers, plans); a prefix also covers cublasLt, cudnn_ops/_cnn/..., cufftw */
    static const char *const ws[] = {"libnccl",     "libcublas",   "libcudnn",  "libcufft",
                                     "libcusparse", "libcusolver", "libcurand", "libcutensor",
                                     "libnvshmem",  NULL};
    if (!name) return GA_CAT_OTHER;
    if (strncmp(name, "libc10_cuda.", 12) == 0) return GA_VC_PYTORCH;
    for (const char *const *p = ws; *p; p++)
        if (strncmp(name, *p, strlen(*p)) == 0) return GA_CAT_WORKSPACE;
    return GA_CAT_OTHER;
}

static void add(struct ga_vcats *v, unsigned cat, enum ga_vc_source src, uint64_t bytes,
                uint64_t count)
{
    if (!bytes && !count) return;
    for (size_t i = 0; i < v->n; i++)
        if (v->lines[i].cat == cat && v->lines[i].source == src) {
            v->lines[i].bytes += bytes, v->lines[i].count += count;
            return;
        }
    v->lines[v->n++] =
        (struct ga_vc_line){.cat = cat, .source = src, .bytes = bytes, .count = count};
}

/* The snapshot of d nearest to ts (the earlier one on a tie) among those whose reserved bytes
 * are `reserved`, NULL none. */
static const struct ga_tiers_snappoint *nearest(const struct ga_tiers_dev *d, uint64_t ts,
                                                uint64_t reserved)
{
    const struct ga_tiers_snappoint *best = NULL;
    uint64_t best_d = UINT64_MAX;
    for (size_t i = 0; i < d->n_snaps; i++) {
        uint64_t x = d->snaps[i].ts, dist = x > ts ? x - ts : ts - x;
        if (d->snaps[i].reserved == reserved && dist < best_d) best = &d->snaps[i], best_d = dist;
    }
    return best;
}

/* The category of the library that made the allocations of `stack`. */
static unsigned stack_cat(const struct ga_stacks *st, const struct ga_sites *sites, uint32_t stack)
{
    const struct ga_site *x = stack ? ga_sites_of_stack(sites, stack) : NULL;
    if (!x || x->library == GA_NO_MODULE || x->library >= st->n_mods) return GA_CAT_OTHER;
    return ga_vc_library_cat(st->mods[x->library].name);
}

/* PyTorch's segments live at the process peak on each device (the peak's buckets whose stack's
 * library is PyTorch's allocator); their number, 0 when they do not add up to the PyTorch line
 * (then nothing is split). */
static size_t pytorch_by_device(const struct ga_vcats *v, const struct ga_memory *m,
                                const struct ga_stacks *st, const struct ga_sites *sites,
                                struct ga_vc_split *out)
{
    size_t n = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_buckets; i++) {
        const struct ga_bucket *b = &m->buckets[i];
        struct ga_amount a;
        ga_peak_bucket_value(m, b, &a);
        if (!a.bytes || stack_cat(st, sites, b->stack) != GA_VC_PYTORCH) continue;
        size_t k = 0;
        while (k < n && out[k].device != b->device)
            k++;
        if (k == n) {
            if (n == GA_VC_SPLITS) return 0; /* a corrupt trace naming thousands of devices */
            out[n++] = (struct ga_vc_split){.device = b->device};
        }
        out[k].reserved += a.bytes, out[k].count += a.count, sum += a.bytes;
    }
    return sum == v->pytorch_bytes ? n : 0;
}

/* One device's PyTorch segments split by their blocks' categories. First the replay of
 * PyTorch's block events at its own peak on that device (tiers_replay.c; trusted batches only),
 * when its segments there held exactly the bytes they held at the driver-level peak: live bytes
 * stay at the peak until some allocation is freed, and between two moments PyTorch's reserved
 * bytes change only when it allocates or frees a segment, so the same total means the same
 * segments, with the blocks inside them as they were at PyTorch's highest allocated memory. Else
 * the device's snapshot nearest the peak that reserved exactly those bytes (the blocks of that
 * moment). Else they stay in the pytorch_reserved line (source library). */
static void expand_device(struct ga_vcats *v, const struct ga_tiers *t, uint64_t peak_ts,
                          struct ga_vc_split *x)
{
    const struct ga_tiers_replay *rp = ga_tiers_replay_of(t, x->device);
    const struct ga_tiers_dev *d = ga_tiers_dev_of(t, x->device);
    const struct ga_tiers_snappoint *s;
    if (rp && rp->peak.have && rp->peak.reserved == x->reserved) {
        x->source = GA_VC_REPLAY, x->ts = rp->peak.ts, x->allocated = rp->peak.allocated;
        for (unsigned c = 0; c < GA_CATS; c++)
            add(v, c, GA_VC_REPLAY, rp->peak.cat[c].bytes, 0);
    } else if (d && (s = nearest(d, peak_ts, x->reserved))) {
        x->source = GA_VC_SNAPSHOT, x->ts = s->ts;
        for (unsigned c = 0; c < GA_CATS; c++)
            add(v, c, GA_VC_SNAPSHOT, s->bytes[c], 0);
    } else {
        x->source = GA_VC_LIBRARY;
    }
}

/* PyTorch's segments split by device (each device by its own replay or snapshots); the summary
 * of each source: the latest moment among its devices, the bytes summed. Returns whether some
 * device's segments were split; the pytorch_reserved line then holds the others'. */
static int expand(struct ga_vcats *v, const struct ga_memory *m, const struct ga_stacks *st,
                  const struct ga_sites *sites, const struct ga_tiers *t)
{
    size_t n = pytorch_by_device(v, m, st, sites, v->splits);
    uint64_t rest = 0, rest_n = 0;
    int split = 0;
    for (size_t i = 0; i < n; i++) {
        struct ga_vc_split *x = &v->splits[i];
        expand_device(v, t, m->peak_ts, x);
        if (x->source == GA_VC_REPLAY) {
            if (x->ts > v->replay_ts) v->replay_ts = x->ts;
            v->replay_allocated += x->allocated, v->replay_reserved += x->reserved;
        } else if (x->source == GA_VC_SNAPSHOT) {
            if (x->ts > v->snapshot_ts) v->snapshot_ts = x->ts;
            v->snapshot_reserved += x->reserved;
        } else
            rest += x->reserved, rest_n += x->count;
        split |= x->source != GA_VC_LIBRARY;
    }
    v->n_splits = split ? n : 0;
    if (split) add(v, GA_VC_PYTORCH, GA_VC_LIBRARY, rest, rest_n);
    return split; /* else the caller adds the whole line */
}

static int by_bytes(const void *a, const void *b)
{
    const struct ga_vc_line *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    return (int)x->source - (int)y->source;
}

/* The snapshots' points and the peak's, in time order. A snapshot before any optimizer stepped
 * is left out: its parameters could not be told from the activations (tiers.c, rule 5). */
static void build_points(struct ga_vcats *v, const struct ga_tiers *t, uint64_t peak_ts)
{
    if (!t->present) return;
    v->points = ga_xmalloc((t->n_procs + 1) * sizeof(*v->points));
    size_t n = 0, i = 0;
    int peak = v->valid;
    while (i < t->n_procs || peak) {
        if (i < t->n_procs && !t->procs[i].roles_known) { /* weights not told from the rest */
            i++;
            continue;
        }
        struct ga_vc_point *p = &v->points[n++];
        memset(p, 0, sizeof(*p));
        if (i < t->n_procs && (!peak || t->procs[i].ts <= peak_ts)) {
            const struct ga_tiers_procpoint *q = &t->procs[i++];
            p->ts = q->ts, p->at = GA_VC_AT_SNAPSHOT, p->total = q->live;
            memcpy(p->bytes, q->bytes, sizeof(q->bytes));
            p->bytes[GA_CAT_OTHER] += q->live - q->reserved; /* procs_add: reserved <= live */
            continue;
        }
        p->ts = peak_ts, p->at = GA_VC_AT_PEAK, p->total = v->total;
        for (size_t k = 0; k < v->n; k++)
            p->bytes[v->lines[k].cat] += v->lines[k].bytes;
        peak = 0;
    }
    v->n_points = n;
}

void ga_vcats_free(struct ga_vcats *v)
{
    free(v->points);
    v->points = NULL, v->n_points = 0;
}

void ga_vcats_build(struct ga_vcats *v, const struct ga_memory *m, const struct ga_stacks *st,
                    const struct ga_sites *sites, const struct ga_library *libs, size_t n_libs,
                    const struct ga_tiers *t)
{
    uint64_t bytes[GA_VC_PYTORCH + 1] = {0}, count[GA_VC_PYTORCH + 1] = {0}, n_peak = 0;
    memset(v, 0, sizeof(*v));
    if (!m->peak.valid) {
        build_points(v, t, 0);
        return;
    }
    for (size_t i = 0; i < m->peak.n_by_device; i++)
        n_peak += m->peak.by_device[i].count;
    for (size_t i = 0; i < n_libs; i++) {
        const char *name = libs[i].module == GA_NO_MODULE || libs[i].module >= st->n_mods
                               ? NULL
                               : st->mods[libs[i].module].name;
        unsigned c = ga_vc_library_cat(name);
        if (c == GA_CAT_OTHER) continue; /* other: the remainder below */
        bytes[c] += libs[i].st.peak_bytes, count[c] += libs[i].st.peak_count;
    }
    /* the libraries' bytes at the peak come from the same buckets as the peak: never more */
    uint64_t known = bytes[GA_CAT_WORKSPACE] + bytes[GA_VC_PYTORCH];
    uint64_t known_n = count[GA_CAT_WORKSPACE] + count[GA_VC_PYTORCH];
    if (known > m->peak_total || known_n > n_peak) { /* inconsistent: no breakdown */
        build_points(v, t, 0);
        return;
    }
    bytes[GA_CAT_OTHER] = m->peak_total - known, count[GA_CAT_OTHER] = n_peak - known_n;
    /* temporaries live at the peak leave their library's line (each was counted in it) */
    for (size_t i = 0; i < m->n_peak_temps; i++) {
        const struct ga_temp *x = &m->peak_temps[i];
        unsigned c = stack_cat(st, sites, x->stack);
        if (x->bytes > bytes[c] || x->count > count[c]) { /* inconsistent */
            build_points(v, t, 0);
            return;
        }
        bytes[c] -= x->bytes, count[c] -= x->count;
        bytes[GA_CAT_TEMPORARY] += x->bytes, count[GA_CAT_TEMPORARY] += x->count;
    }
    v->valid = 1;
    v->temps_left = m->peak_temps_dropped;
    v->pytorch_bytes = bytes[GA_VC_PYTORCH];
    add(v, GA_CAT_WORKSPACE, GA_VC_LIBRARY, bytes[GA_CAT_WORKSPACE], count[GA_CAT_WORKSPACE]);
    add(v, GA_CAT_TEMPORARY, GA_VC_LIBRARY, bytes[GA_CAT_TEMPORARY], count[GA_CAT_TEMPORARY]);
    add(v, GA_CAT_OTHER, GA_VC_LIBRARY, bytes[GA_CAT_OTHER], count[GA_CAT_OTHER]);
    if (v->pytorch_bytes) v->expanded = expand(v, m, st, sites, t);
    if (!v->expanded)
        add(v, GA_VC_PYTORCH, GA_VC_LIBRARY, bytes[GA_VC_PYTORCH], count[GA_VC_PYTORCH]);
    qsort(v->lines, v->n, sizeof(*v->lines), by_bytes);
    for (size_t i = 0; i < v->n; i++)
        v->total += v->lines[i].bytes;
    build_points(v, t, m->peak_ts);
}
