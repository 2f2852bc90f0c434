/* Memory by category (tiers.h). Per role record O(entries); per step record O(devices); at a
 * snapshot's end one walk of its blocks with a binary search in each optimizer's set per live
 * block (O(blocks * optimizers * log set)), plus, with frames, one scan of the block's stack.
 * Memory: the optimizers' latest sets, the series and the snapshots' points (bounded), one
 * breakdown per device.
 *
 * A block's category, first rule that applies (docs/ANALYSES.md, "Memory by category"):
 *   1. inactive (free in a segment PyTorch reserved)                  -> cache, exact
 *   2. active_pending_free (freed, awaiting another stream)           -> temporary, exact
 *   3. an optimizer's storage starts at its address (the set read right before the snapshot)
 *                                                  -> weights / gradients / optimizer_state, exact
 *   4. its Python frames (history), innermost first: torch/optim/ -> optimizer_state; torch's
 *      autograd or Tensor.backward -> gradients; Module.__init__/_apply/to/cuda/load_state_dict
 *      -> weights; torch/utils/checkpoint.py or a Module's __call__ -> activations; else other
 *   5. no frames: activations, as the remainder (activations, temporaries, inputs, buffers). */
#include "analyses/tiers.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

const char *ga_cat_name(enum ga_cat c)
{
    static const char *const n[GA_CATS] = {"weights",     "gradients", "optimizer_state",
                                           "activations", "temporary", "workspace",
                                           "cache",       "other"};
    return (unsigned)c < GA_CATS ? n[c] : "unknown";
}

const char *ga_cat_label(enum ga_cat c)
{
    return c == GA_CAT_OPTIMIZER_STATE ? "optimizer state" : ga_cat_name(c);
}

const char *ga_tiers_role_name(unsigned role)
{
    return role <= GT_ROLE_OPTIMIZER_STATE ? ga_cat_name((enum ga_cat)role) : "unknown";
}

const char *ga_cat_basis_name(enum ga_cat_basis b)
{
    static const char *const n[] = {"none", "remainder", "frames", "exact"};
    return (unsigned)b < sizeof(n) / sizeof(n[0]) ? n[b] : "unknown";
}

void ga_tiers_init(struct ga_tiers *t)
{
    memset(t, 0, sizeof(*t));
}

static struct ga_tiers_opt *opt_of(struct ga_tiers *t, uint32_t num)
{
    for (size_t i = 0; i < t->n_opts; i++)
        if (t->opts[i].num == num) return &t->opts[i];
    t->opts = ga_xgrow(t->opts, &t->opts_cap, t->n_opts, sizeof(*t->opts));
    struct ga_tiers_opt *o = &t->opts[t->n_opts++];
    memset(o, 0, sizeof(*o));
    o->num = num;
    return o;
}

static struct ga_tiers_dev *dev_of(struct ga_tiers *t, int32_t device)
{
    for (size_t i = 0; i < t->n_devs; i++)
        if (t->devs[i].device == device) return &t->devs[i];
    t->devs = ga_xgrow(t->devs, &t->devs_cap, t->n_devs, sizeof(*t->devs));
    struct ga_tiers_dev *d = &t->devs[t->n_devs++];
    memset(d, 0, sizeof(*d));
    d->device = device;
    d->series_stride = 1;
    d->snaps_stride = 1;
    return d;
}

const struct ga_tiers_dev *ga_tiers_dev_of(const struct ga_tiers *t, int32_t device)
{
    for (size_t i = 0; i < t->n_devs; i++)
        if (t->devs[i].device == device) return &t->devs[i];
    return NULL;
}

/* ---- role sets --------------------------------------------------------------------------------
 */

/* The element size holding the most bytes of one role (fp32 = 4, bf16 = 2, ...). */
static uint16_t main_elem(const struct ga_tiers_opt *o, unsigned role)
{
    uint64_t by[9] = {0};
    for (size_t i = 0; i < o->n_set; i++)
        if (o->set[i].role == role && o->set[i].elem_size <= 8)
            by[o->set[i].elem_size] += o->set[i].bytes;
    uint16_t best = 0;
    for (uint16_t e = 1; e <= 8; e++)
        if (by[e] > by[best]) best = e;
    return best;
}

/* A whole set's storages, kept with its time until the next snapshot (tiers_replay.c). */
static void seen_add(struct ga_tiers *t, const struct ga_tiers_opt *o, uint64_t ts)
{
    uint64_t us = (ts + (uint64_t)t->real_minus_mono) / 1000; /* unsigned: wraps, never UB */
    for (size_t i = 0; i < o->n_set; i++) {
        if (t->n_seen == GA_TIERS_SEEN_MAX) {
            t->seen_dropped += o->n_set - i;
            return;
        }
        t->seen = ga_xgrow(t->seen, &t->seen_cap, t->n_seen, sizeof(*t->seen));
        t->seen[t->n_seen++] = (struct ga_tiers_seen){
            .addr = o->set[i].addr, .us = us, .device = o->set[i].device, .role = o->set[i].role};
    }
}

static void on_roles(struct ga_tiers *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_roles *r = &ev->r->torch_roles;
    struct ga_tiers_opt *o = opt_of(t, r->optimizer);
    uint32_t n = ev->str_len[0] / (uint32_t)sizeof(struct gt_torch_role_entry);
    if (ev->sub == GT_ROLES_FIRST) {
        if (o->set_expected && !o->whole) t->incomplete_sets++;
        o->n_set = 0;
        o->set_expected = r->set_entries;
        o->whole = 0;
    } else if (o->whole || !o->set_expected) { /* its first record was lost */
        return;
    }
    if (n > o->set_expected - o->n_set) { /* more than announced: damaged */
        o->set_expected = 0;
        return;
    }
    if (n) {
        o->set = ga_xgrow(o->set, &o->set_cap, o->n_set + n - 1, sizeof(*o->set));
        memcpy(o->set + o->n_set, ev->str[0], (size_t)n * sizeof(*o->set));
        o->n_set += n;
    }
    if (o->n_set == o->set_expected) {
        o->whole = 1;
        if (o->n_set) qsort(o->set, o->n_set, sizeof(*o->set), ga_tiers_entry_cmp);
        seen_add(t, o, ev->ts);
        uint16_t w = main_elem(o, GT_ROLE_WEIGHT), st = main_elem(o, GT_ROLE_OPTIMIZER_STATE);
        if (w) o->weight_elem = w; /* an emptied set (a collected optimizer) keeps the last */
        if (st) o->state_elem = st;
    }
}

/* ---- steps and the series ---------------------------------------------------------------------
 */

static void series_add(struct ga_tiers_dev *d, const struct ga_tiers_point *p)
{
    if (d->series_seen++ % d->series_stride) return;
    if (d->n_series == GA_TIERS_SERIES_MAX) { /* keep every other point, then half as many */
        for (size_t i = 0; i < d->n_series / 2; i++)
            d->series[i] = d->series[2 * i];
        d->n_series /= 2;
        d->series_stride *= 2;
    }
    d->series = ga_xgrow(d->series, &d->series_cap, d->n_series, sizeof(*d->series));
    d->series[d->n_series++] = *p;
}

static struct ga_tiers_role_dev *role_dev(struct ga_tiers_opt *o, int32_t device)
{
    for (size_t i = 0; i < o->n_devs; i++)
        if (o->devs[i].device == device) return &o->devs[i];
    if (o->n_devs == GA_TIERS_DEVS_MAX) return NULL;
    struct ga_tiers_role_dev *r = &o->devs[o->n_devs++];
    memset(r, 0, sizeof(*r));
    r->device = device;
    return r;
}

static void on_step(struct ga_tiers *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_step *r = &ev->r->torch_step;
    struct ga_tiers_opt *o = opt_of(t, r->optimizer);
    size_t len = ev->str_len[0] < sizeof(o->name) - 1 ? ev->str_len[0] : sizeof(o->name) - 1;
    char *name = ga_utf8_clean(ev->str[0], len);
    snprintf(o->name, sizeof(o->name), "%s", name);
    free(name);
    if (r->step > o->steps) o->steps = r->step;
    if (t->n_steps < GA_TIERS_SEEN_MAX) { /* the steps' times, for the replay (tiers_replay.c) */
        t->steps_us = ga_xgrow(t->steps_us, &t->steps_cap, t->n_steps, sizeof(*t->steps_us));
        t->steps_us[t->n_steps++] = (r->ts + (uint64_t)t->real_minus_mono) / 1000;
    }
    if (!o->first_step_ts) o->first_step_ts = r->ts;
    o->last_step_ts = r->ts;
    struct ga_tiers_role_dev *rd = role_dev(o, r->device);
    if (!rd) return;
    rd->bytes[0] = r->weights, rd->bytes[1] = r->gradients, rd->bytes[2] = r->optimizer_state;
    rd->tensors[0] = r->weight_tensors, rd->tensors[1] = r->gradient_tensors;
    rd->tensors[2] = r->state_tensors;
    struct ga_tiers_point p = {
        .ts = r->ts, .step = r->step, .allocated = r->allocated, .reserved = r->reserved};
    for (size_t i = 0; i < t->n_opts; i++)
        for (size_t k = 0; k < t->opts[i].n_devs; k++) {
            const struct ga_tiers_role_dev *x = &t->opts[i].devs[k];
            if (x->device != r->device) continue;
            p.weights += x->bytes[0], p.gradients += x->bytes[1];
            p.optimizer_state += x->bytes[2];
        }
    /* the series has the steps whose hook read memory_stats (the bridge skips the read at
     * short steps: GT_TORCH_STEP_UNREAD) */
    if (r->allocated != GT_TORCH_STEP_UNREAD && r->reserved != GT_TORCH_STEP_UNREAD)
        series_add(dev_of(t, r->device), &p);
}

void ga_tiers_event(struct ga_tiers *t, const struct ga_event *ev)
{
    if (ev->type == GT_REC_TORCH_ROLES) {
        t->present = 1;
        on_roles(t, ev);
    } else if (ev->type == GT_REC_TORCH_STEP) {
        t->present = 1;
        on_step(t, ev);
    }
}

/* ---- a snapshot's blocks ----------------------------------------------------------------------
 */

struct classify {
    struct ga_map sites; /* (stack, category) -> bytes | count << 40 */
    struct ga_tiers_breakdown *b;
};

/* The category of one block and the evidence for it (the rules at the top of this file). */
static enum ga_cat classify_block(const struct ga_tiers *t, const struct ga_torch *torch,
                                  int32_t device, const struct ga_torch_blk *k,
                                  enum ga_cat_basis *basis, uint64_t *requested)
{
    uint64_t bytes;
    *basis = GA_BASIS_EXACT;
    *requested = k->requested ? k->requested : k->size;
    if (k->state == GT_TORCH_INACTIVE) {
        *requested = 0;
        return GA_CAT_CACHE;
    }
    if (k->state != GT_TORCH_ACTIVE) return GA_CAT_TEMPORARY;
    int role = ga_tiers_role_at(t, device, k->addr, &bytes);
    if (role >= 0 && role <= GT_ROLE_OPTIMIZER_STATE) {
        if (!k->requested) *requested = bytes;
        return (enum ga_cat)role;
    }
    enum ga_cat cat = k->stack ? ga_tiers_by_frames(torch, k->stack) : GA_CATS;
    *basis = cat != GA_CATS ? GA_BASIS_FRAMES : GA_BASIS_REMAINDER;
    return cat != GA_CATS ? cat : GA_CAT_ACTIVATIONS;
}

static void block(struct classify *c, const struct ga_tiers *t, const struct ga_torch *torch,
                  int32_t device, const struct ga_torch_blk *k)
{
    enum ga_cat_basis basis;
    uint64_t requested;
    enum ga_cat cat = classify_block(t, torch, device, k, &basis, &requested);
    if (k->state == GT_TORCH_ACTIVE) c->b->allocated += k->size;
    ga_tiers_count(c->b, &c->sites, cat, basis, k, requested);
}

/* The optimizers' storages on the device that no live block of the snapshot starts at. */
static void unmatched(const struct ga_tiers *t, const struct ga_torch *torch, int32_t device,
                      struct ga_tiers_breakdown *b)
{
    struct ga_map starts = {0};
    for (size_t i = 0; i < torch->n_segs; i++) {
        const struct ga_torch_seg *g = &torch->segs[i];
        if (g->device != device) continue;
        for (uint32_t k = 0; k < g->n; k++)
            if (torch->blks[g->first + k].state == GT_TORCH_ACTIVE)
                ga_map_upsert(&starts, torch->blks[g->first + k].addr, 0, 0, NULL);
    }
    for (size_t i = 0; i < t->n_opts; i++) {
        const struct ga_tiers_opt *o = &t->opts[i];
        if (!o->whole) continue;
        b->roles_known = 1;
        for (size_t k = 0; k < o->n_set; k++)
            if (o->set[k].device == device && !ga_map_find(&starts, o->set[k].addr, 0)) {
                b->roles_unmatched++;
                b->roles_unmatched_bytes += o->set[k].bytes;
            }
    }
    ga_map_free(&starts);
}

static void breakdown(const struct ga_tiers *t, const struct ga_torch *torch, int32_t device,
                      uint64_t ts, const struct gt_rec_torch_snap *r, struct ga_tiers_breakdown *b)
{
    struct classify c = {.b = b};
    memset(b, 0, sizeof(*b));
    b->have = 1, b->ts = ts, b->snap = r->id, b->why = r->why;
    for (size_t i = 0; i < torch->n_segs; i++) {
        const struct ga_torch_seg *g = &torch->segs[i];
        if (g->device != device) continue;
        b->reserved += g->size;
        for (uint32_t k = 0; k < g->n; k++)
            block(&c, t, torch, device, &torch->blks[g->first + k]);
    }
    ga_tiers_top_sites(b, &c.sites);
    ga_map_free(&c.sites);
    unmatched(t, torch, device, b);
}

static void snaps_add(struct ga_tiers_dev *d, const struct ga_tiers_breakdown *b)
{
    if (d->snaps_seen++ % d->snaps_stride) return;
    if (d->n_snaps == GA_TIERS_SERIES_MAX) { /* keep every other point, then half as many */
        for (size_t i = 0; i < d->n_snaps / 2; i++)
            d->snaps[i] = d->snaps[2 * i];
        d->n_snaps /= 2;
        d->snaps_stride *= 2;
    }
    d->snaps = ga_xgrow(d->snaps, &d->snaps_cap, d->n_snaps, sizeof(*d->snaps));
    struct ga_tiers_snappoint *p = &d->snaps[d->n_snaps++];
    p->ts = b->ts, p->why = b->why, p->allocated = b->allocated, p->reserved = b->reserved;
    p->roles_known = b->roles_known;
    for (int c = 0; c < GA_CATS; c++)
        p->bytes[c] = b->cat[c].bytes;
}

/* The process-wide point of one snapshot; a snapshot whose segments exceed what the process held
 * at the driver (records out of step) gives none. */
static void procs_add(struct ga_tiers *t, const struct ga_tiers_procpoint *p)
{
    if (p->reserved > p->live) {
        t->procs_short++;
        return;
    }
    if (!t->procs_stride) t->procs_stride = 1;
    if (t->procs_seen++ % t->procs_stride) return;
    if (t->n_procs == GA_TIERS_SERIES_MAX) { /* keep every other point, then half as many */
        for (size_t i = 0; i < t->n_procs / 2; i++)
            t->procs[i] = t->procs[2 * i];
        t->n_procs /= 2;
        t->procs_stride *= 2;
    }
    t->procs = ga_xgrow(t->procs, &t->procs_cap, t->n_procs, sizeof(*t->procs));
    t->procs[t->n_procs++] = *p;
}

void ga_tiers_snap_end(struct ga_tiers *t, const struct ga_torch *torch, const struct ga_event *ev,
                       uint64_t live)
{
    const struct gt_rec_torch_snap *r = &ev->r->torch_snap;
    if (ev->sub != GT_SNAP_END) return;
    if (torch->in_snap || r->id != torch->cur_snap || torch->n_segs != r->segments ||
        torch->n_blks != r->blocks) { /* not a whole snapshot: ga_torch ignored it too */
        ga_tiers_replay_snap(t, torch, r->id, 0, 0, NULL);
        return;
    }
    int32_t devs[64];
    size_t nd = 0;
    for (size_t i = 0; i < torch->n_segs && nd < 64; i++) {
        size_t k = 0;
        while (k < nd && devs[k] != torch->segs[i].device)
            k++;
        if (k == nd) devs[nd++] = torch->segs[i].device;
    }
    struct ga_tiers_breakdown *b = ga_xmalloc(sizeof(*b));
    struct ga_tiers_procpoint p = {.ts = r->ts, .live = live, .roles_known = 1};
    for (size_t i = 0; i < nd; i++) {
        struct ga_tiers_dev *d = dev_of(t, devs[i]);
        breakdown(t, torch, devs[i], r->ts, r, b);
        snaps_add(d, b);
        p.reserved += b->reserved;
        p.roles_known &= b->roles_known;
        for (int c = 0; c < GA_CATS; c++)
            p.bytes[c] += b->cat[c].bytes;
        if (!d->peak.have || b->allocated > d->peak.allocated) /* the first fullest, as ga_torch */
            d->peak = *b;
    }
    free(b);
    if (nd < 64) procs_add(t, &p); /* past 64 devices the sums would miss some */
    ga_tiers_replay_snap(t, torch, r->id, 1,
                         (r->flags & (GT_TORCH_HISTORY_OURS | GT_TORCH_HISTORY_USER)) != 0,
                         r);
}

void ga_tiers_free(struct ga_tiers *t)
{
    for (size_t i = 0; i < t->n_opts; i++)
        free(t->opts[i].set);
    free(t->opts);
    for (size_t i = 0; i < t->n_devs; i++) {
        free(t->devs[i].series);
        free(t->devs[i].snaps);
    }
    free(t->devs);
    free(t->procs);
    ga_tiers_replay_free(t);
    memset(t, 0, sizeof(*t));
}
