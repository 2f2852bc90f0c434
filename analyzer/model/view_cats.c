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

/* PyTorch's segments split by their blocks' categories (one device only: the libraries' bytes at
 * the peak are not kept per device). First the replay of PyTorch's block events at its own peak
 * (tiers_replay.c; trusted batches only), when its segments held exactly the bytes they held at
 * the driver-level peak: live bytes stay at the peak until some allocation is freed, and between
 * two moments PyTorch's reserved bytes change only when it allocates or frees a segment, so the
 * same total means the same segments, with the blocks inside them as they were at PyTorch's
 * highest allocated memory. Else the snapshot nearest the peak that reserved exactly those bytes
 * (the blocks of that moment). Returns whether it split them. */
static int expand(struct ga_vcats *v, const struct ga_tiers *t, uint64_t peak_ts)
{
    if (t->n_devs != 1) return 0;
    const struct ga_tiers_replay *rp = ga_tiers_replay_of(t, t->devs[0].device);
    if (rp && rp->peak.have && rp->peak.reserved == v->pytorch_bytes) {
        v->replay_ts = rp->peak.ts, v->replay_allocated = rp->peak.allocated;
        for (unsigned c = 0; c < GA_CATS; c++)
            add(v, c, GA_VC_REPLAY, rp->peak.cat[c].bytes, 0);
        return 1;
    }
    const struct ga_tiers_snappoint *s = nearest(&t->devs[0], peak_ts, v->pytorch_bytes);
    if (!s) return 0;
    v->snapshot_ts = s->ts, v->snapshot_reserved = s->reserved;
    for (unsigned c = 0; c < GA_CATS; c++)
        add(v, c, GA_VC_SNAPSHOT, s->bytes[c], 0);
    return 1;
}

static int by_bytes(const void *a, const void *b)
{
    const struct ga_vc_line *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    return (int)x->source - (int)y->source;
}

/* The category of the library that made the allocations of `stack`. */
static unsigned stack_cat(const struct ga_stacks *st, const struct ga_sites *sites, uint32_t stack)
{
    const struct ga_site *x = stack ? ga_sites_of_stack(sites, stack) : NULL;
    if (!x || x->library == GA_NO_MODULE || x->library >= st->n_mods) return GA_CAT_OTHER;
    return ga_vc_library_cat(st->mods[x->library].name);
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
    if (v->pytorch_bytes) v->expanded = expand(v, t, m->peak_ts);
    if (!v->expanded)
        add(v, GA_VC_PYTORCH, GA_VC_LIBRARY, bytes[GA_VC_PYTORCH], count[GA_VC_PYTORCH]);
    qsort(v->lines, v->n, sizeof(*v->lines), by_bytes);
    for (size_t i = 0; i < v->n; i++)
        v->total += v->lines[i].bytes;
    build_points(v, t, m->peak_ts);
}
