/* Memory by category on synthetic traces: each rule of analyses/tiers.c and their precedence
 * (block state, an optimizer's storage, frames, the remainder), the fullest snapshot kept, the
 * series summing several optimizers, and role records that are cut, damaged or out of order
 * (never used, never a crash). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/state.h"
#include "collect.h"
#include "tracebuild.h"

#define T0  5000000000ull
#define MS  1000000ull
#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define SEG 0x10000000ull

static void run_report(struct tb *t, struct ga_report *r, const char *name)
{
    char path[256];
    tmp_path(path, name);
    tb_write(t, path, (size_t)-1);
    tb_free_all(t);
    ga_report_init(r, path);
    if (ga_report_run(r) != 0) printf("     read error: %s\n", r->read.error);
}

static uint32_t snap_flags; /* of the snapshots written next */

static void snap(struct tb *t, uint64_t ts, unsigned op, uint32_t id, uint32_t segs,
                 uint64_t blocks)
{
    struct gt_rec_torch_snap r = {.ts = t->t0 + ts,
                                  .id = id,
                                  .why = GT_TORCH_PEAK,
                                  .segments = segs,
                                  .flags = snap_flags,
                                  .blocks = blocks};
    tb_rec(t, GT_REC_TORCH_SNAP, (uint16_t)op, &r, sizeof(r), NULL, 0);
}

static void segment(struct tb *t, uint64_t ts, uint32_t id, uint64_t addr, uint64_t size,
                    uint32_t blocks)
{
    struct gt_rec_torch_segment r = {
        .ts = t->t0 + ts, .addr = addr, .size = size, .snap = id, .blocks = blocks};
    tb_rec(t, GT_REC_TORCH_SEGMENT, GT_TORCH_POOL_LARGE, &r, sizeof(r), NULL, 0);
}

static void block(struct tb *t, uint64_t ts, uint32_t id, unsigned state, uint64_t addr,
                  uint64_t size, uint64_t requested, uint32_t stack)
{
    struct gt_rec_torch_block r = {.ts = t->t0 + ts,
                                   .addr = addr,
                                   .size = size,
                                   .requested = requested,
                                   .stack = stack,
                                   .snap = id};
    tb_rec(t, GT_REC_TORCH_BLOCK, (uint16_t)state, &r, sizeof(r), NULL, 0);
}

static void frame(struct tb *t, uint32_t id, const char *file, const char *name)
{
    struct gt_rec_torch_frame r = {.ts = t->t0,
                                   .id = id,
                                   .line = 7,
                                   .file_len = (uint32_t)strlen(file),
                                   .name_len = (uint32_t)strlen(name)};
    tb_rec3(t, GT_REC_TORCH_FRAME, 0, &r, sizeof(r), file, r.file_len, name, r.name_len, NULL, 0);
}

static void stack(struct tb *t, uint32_t id, const uint32_t *frames, uint32_t n)
{
    struct gt_rec_torch_stack r = {.ts = t->t0, .id = id, .frames_len = 4 * n};
    tb_rec(t, GT_REC_TORCH_STACK, 0, &r, sizeof(r), (const char *)frames, 4 * n);
}

/* Role records of optimizer `opt`: entries [0, n) announced as a set of `set_entries`. */
static void roles(struct tb *t, uint64_t ts, unsigned op, uint32_t opt, uint32_t set_entries,
                  const struct gt_torch_role_entry *e, uint32_t n)
{
    struct gt_rec_torch_roles r = {.ts = t->t0 + ts,
                                   .step = 1,
                                   .optimizer = opt,
                                   .entries_len = n * (uint32_t)sizeof(*e),
                                   .set_entries = set_entries};
    tb_rec(t, GT_REC_TORCH_ROLES, (uint16_t)op, &r, sizeof(r), (const char *)e, n * sizeof(*e));
}

static void step(struct tb *t, uint64_t ts, uint32_t opt, uint64_t n, uint64_t w, uint64_t g,
                 uint64_t s, uint64_t allocated)
{
    struct gt_rec_torch_step r = {.ts = t->t0 + ts,
                                  .step = n,
                                  .weights = w,
                                  .gradients = g,
                                  .optimizer_state = s,
                                  .allocated = allocated,
                                  .reserved = 64 * MiB,
                                  .optimizer = opt,
                                  .weight_tensors = 1,
                                  .gradient_tensors = 1,
                                  .state_tensors = 2,
                                  .name_len = 5};
    tb_rec(t, GT_REC_TORCH_STEP, 0, &r, sizeof(r), "AdamW", 5);
}

static const struct ga_tiers_cat *cat(const struct ga_report *r, enum ga_cat c)
{
    const struct ga_tiers_dev *d = ga_tiers_dev_of(&r->tiers, 0);
    return d && d->peak.have ? &d->peak.cat[c] : NULL;
}

static uint64_t bytes_of(const struct ga_report *r, enum ga_cat c)
{
    const struct ga_tiers_cat *x = cat(r, c);
    return x ? x->bytes : UINT64_MAX;
}

static unsigned basis_of(const struct ga_report *r, enum ga_cat c)
{
    const struct ga_tiers_cat *x = cat(r, c);
    return x ? x->basis : 99;
}

static const struct gt_torch_role_entry SET[3] = {
    {.addr = SEG, .bytes = 1000000, .elem_size = 4, .role = GT_ROLE_WEIGHT},
    {.addr = SEG + 1 * MiB, .bytes = 1000000, .elem_size = 4, .role = GT_ROLE_GRADIENT},
    {.addr = SEG + 2 * MiB, .bytes = 2 * MiB, .elem_size = 4, .role = GT_ROLE_OPTIMIZER_STATE},
};

/* One 16 MiB segment: the three roles, a block of each frames rule, one without frames, one
 * awaiting a stream, a free one; a role's frames do not outrank its role. */
static void one_snapshot(struct tb *t, uint64_t ts, uint32_t id)
{
    snap(t, ts, GT_SNAP_BEGIN, id, 1, 9);
    segment(t, ts, id, SEG, 16 * MiB, 9);
    block(t, ts, id, GT_TORCH_ACTIVE, SEG, 1 * MiB, 1000000, 3); /* frames say other */
    block(t, ts, id, GT_TORCH_ACTIVE, SEG + 1 * MiB, 1 * MiB, 1000000, 0);
    block(t, ts, id, GT_TORCH_ACTIVE, SEG + 2 * MiB, 2 * MiB, 0, 0);
    block(t, ts, id, GT_TORCH_ACTIVE, SEG + 4 * MiB, 512 * KiB, 0, 1);             /* torch/optim */
    block(t, ts, id, GT_TORCH_ACTIVE, SEG + 4 * MiB + 512 * KiB, 512 * KiB, 0, 2); /* forward */
    block(t, ts, id, GT_TORCH_ACTIVE, SEG + 5 * MiB, 1 * MiB, 0, 3);               /* <module> */
    block(t, ts, id, GT_TORCH_ACTIVE, SEG + 6 * MiB, 3 * MiB, 0, 0);               /* no frames */
    block(t, ts, id, GT_TORCH_AWAITING_FREE, SEG + 9 * MiB, 1 * MiB, 0, 0);
    block(t, ts, id, GT_TORCH_INACTIVE, SEG + 10 * MiB, 6 * MiB, 0, 0);
    snap(t, ts, GT_SNAP_END, id, 1, 9);
}

static void frames(struct tb *t)
{
    frame(t, 1, "/v/lib/python3/site-packages/torch/optim/adamw.py", "_init_group");
    frame(t, 2, "/home/u/model.py", "forward");
    frame(t, 3, "/v/lib/python3/site-packages/torch/nn/modules/module.py", "_call_impl");
    frame(t, 4, "/home/u/train.py", "<module>");
    frame(t, 5, "/v/lib/python3/site-packages/torch/_tensor.py", "backward");
    uint32_t optim[] = {1, 4}, fwd[] = {2, 3, 4}, top[] = {4}, seed[] = {5, 4};
    stack(t, 1, optim, 2);
    stack(t, 2, fwd, 3);
    stack(t, 3, top, 1);
    stack(t, 4, seed, 2);
}

static void test_rules(void)
{
    struct tb t;
    struct ga_report r;
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    one_snapshot(&t, 1 * MS, 1); /* before any step: no roles known */
    roles(&t, 2 * MS, GT_ROLES_FIRST, 1, 3, SET, 3);
    step(&t, 2 * MS, 1, 1, 1000000, 1000000, 2 * MiB, 9 * MiB);
    one_snapshot(&t, 3 * MS, 2); /* the same blocks: not fuller, the first is kept */
    tb_end(&t);
    run_report(&t, &r, "tiers_rules");
    const struct ga_tiers_dev *d = ga_tiers_dev_of(&r.tiers, 0);
    CHECK("device 0 has a breakdown", d && d->peak.have);
    CHECK_U64("the first of two equally full snapshots is kept", d ? d->peak.snap : 0, 1);
    CHECK_U64("... it came before the roles: not known", d ? (uint64_t)d->peak.roles_known : 9, 0);
    CHECK_U64("... the role blocks without frames are the remainder (1 + 2 + 3 MiB)",
              bytes_of(&r, GA_CAT_ACTIVATIONS), 6 * MiB + 512 * KiB);
    CHECK_U64("both snapshots are points", d ? d->n_snaps : 0, 2);
    if (d && d->n_snaps == 2) {
        CHECK("... roles unknown, then known", !d->snaps[0].roles_known && d->snaps[1].roles_known);
        CHECK_U64("... the second's weights", d->snaps[1].bytes[GA_CAT_WEIGHTS], 1 * MiB);
        CHECK_U64("... its activations", d->snaps[1].bytes[GA_CAT_ACTIVATIONS],
                  512 * KiB + 3 * MiB);
    }
    ga_report_free(&r);

    /* the roles before the only snapshot */
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    roles(&t, 2 * MS, GT_ROLES_FIRST, 1, 3, SET, 3);
    step(&t, 2 * MS, 1, 1, 1000000, 1000000, 2 * MiB, 9 * MiB);
    one_snapshot(&t, 3 * MS, 1);
    tb_end(&t);
    run_report(&t, &r, "tiers_rules2");
    CHECK_U64("weights: the optimizer's storage, though its frames say other",
              bytes_of(&r, GA_CAT_WEIGHTS), 1 * MiB);
    CHECK_U64("... requested: the block's requested size", cat(&r, GA_CAT_WEIGHTS)->requested,
              1000000);
    CHECK_U64("gradients", bytes_of(&r, GA_CAT_GRADIENTS), 1 * MiB);
    CHECK_U64("optimizer state: its storage + a block under torch/optim (frames)",
              bytes_of(&r, GA_CAT_OPTIMIZER_STATE), 2 * MiB + 512 * KiB);
    CHECK_U64("... requested: the storage's bytes where the block did not say",
              cat(&r, GA_CAT_OPTIMIZER_STATE)->requested, 2 * MiB + 512 * KiB);
    CHECK_U64("... basis: exact (the strongest of its blocks)",
              basis_of(&r, GA_CAT_OPTIMIZER_STATE), GA_BASIS_EXACT);
    CHECK_U64("activations: the forward's block (frames) + the block without frames",
              bytes_of(&r, GA_CAT_ACTIVATIONS), 512 * KiB + 3 * MiB);
    CHECK_U64("... basis frames", basis_of(&r, GA_CAT_ACTIVATIONS), GA_BASIS_FRAMES);
    CHECK_U64("other: frames outside modules", bytes_of(&r, GA_CAT_OTHER), 1 * MiB);
    CHECK_U64("temporary: awaiting a stream", bytes_of(&r, GA_CAT_TEMPORARY), 1 * MiB);
    CHECK_U64("cache: the free block", bytes_of(&r, GA_CAT_CACHE), 6 * MiB);
    CHECK_U64("workspace: none", bytes_of(&r, GA_CAT_WORKSPACE), 0);
    uint64_t sum = 0;
    for (int c = 0; c < GA_CATS; c++)
        sum += bytes_of(&r, (enum ga_cat)c);
    CHECK_U64("the categories sum to the segment", sum, 16 * MiB);
    const struct ga_tiers_dev *d2 = ga_tiers_dev_of(&r.tiers, 0);
    CHECK_U64("allocated: the active blocks", d2 ? d2->peak.allocated : 0, 9 * MiB);
    CHECK_U64("every storage found", d2 ? d2->peak.roles_unmatched : 9, 0);
    const struct ga_tiers_cat *a = cat(&r, GA_CAT_ACTIVATIONS);
    CHECK_U64("activations' top site: the forward's stack", a && a->n_top ? a->top[0].stack : 0, 2);
    char buf[128];
    CHECK_STR("labelled by its frame outside torch",
              ga_torch_site_label(&r.torch, 2, buf, sizeof(buf)), "model.py:7 (forward)");
    const struct ga_tv_dev *v = r.tierview.n_devs ? &r.tierview.devs[0] : NULL;
    CHECK("the view orders the categories largest first",
          v && v->cats[0].cat == GA_CAT_CACHE && v->cats[1].cat == GA_CAT_ACTIVATIONS);
    CHECK_STR("the optimizer's meaning", v && v->n_opts ? v->opts[0].meaning : "",
              "AdamW keeps 2 fp32 tensors per parameter");
    ga_report_free(&r);
}

/* A set cut (its second record lost), a continuation without a start, more entries than
 * announced: none is used; a later whole set is. */
static void test_damaged_sets(void)
{
    struct tb t;
    struct ga_report r;
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    roles(&t, 1 * MS, GT_ROLES_MORE, 2, 3, SET, 3);  /* no FIRST before it */
    roles(&t, 1 * MS, GT_ROLES_FIRST, 1, 2, SET, 3); /* 3 entries, 2 announced */
    roles(&t, 1 * MS, GT_ROLES_FIRST, 3, 3, SET, 2); /* its MORE never comes */
    one_snapshot(&t, 2 * MS, 1);
    tb_end(&t);
    run_report(&t, &r, "tiers_damaged");
    CHECK_U64("no weights from a damaged set", bytes_of(&r, GA_CAT_WEIGHTS), 0);
    CHECK_U64("no optimizer state but by frames", bytes_of(&r, GA_CAT_OPTIMIZER_STATE), 512 * KiB);
    const struct ga_tiers_dev *d = ga_tiers_dev_of(&r.tiers, 0);
    CHECK_U64("roles not known", d ? (uint64_t)d->peak.roles_known : 9, 0);
    ga_report_free(&r);

    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    roles(&t, 1 * MS, GT_ROLES_FIRST, 1, 3, SET, 2);
    roles(&t, 1 * MS, GT_ROLES_FIRST, 1, 3, SET, 1); /* a new set: the cut one counted */
    roles(&t, 1 * MS, GT_ROLES_MORE, 1, 3, SET + 1, 2);
    /* another device's storage at the address of device 0's <module> block: not that block */
    struct gt_torch_role_entry other = {
        .addr = SEG + 5 * MiB, .bytes = MiB, .device = 1, .role = GT_ROLE_OPTIMIZER_STATE};
    roles(&t, 1 * MS, GT_ROLES_FIRST, 2, 1, &other, 1);
    /* a role this reader does not know, at the address of the block without frames */
    struct gt_torch_role_entry unknown = {.addr = SEG + 6 * MiB, .bytes = MiB, .role = 200};
    roles(&t, 1 * MS, GT_ROLES_FIRST, 3, 1, &unknown, 1);
    one_snapshot(&t, 2 * MS, 1);
    tb_end(&t);
    run_report(&t, &r, "tiers_damaged2");
    CHECK_U64("a set whole from two records is used", bytes_of(&r, GA_CAT_WEIGHTS), 1 * MiB);
    CHECK_U64("an unknown role claims nothing: the block stays the remainder",
              bytes_of(&r, GA_CAT_ACTIVATIONS), 512 * KiB + 3 * MiB);
    CHECK_U64("the cut set is counted", r.tiers.incomplete_sets, 1);
    d = ga_tiers_dev_of(&r.tiers, 0);
    CHECK_U64("another device's storage does not claim device 0's block",
              bytes_of(&r, GA_CAT_OTHER), 1 * MiB);
    CHECK_U64("... nor is it counted as unmatched on device 0", d ? d->peak.roles_unmatched : 9, 0);
    ga_report_free(&r);
}

/* Two optimizers: each step point sums both as of their latest steps. */
static void test_series(void)
{
    struct tb t;
    struct ga_report r;
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    step(&t, 1 * MS, 1, 1, 100, 100, 200, 1000);
    step(&t, 2 * MS, 2, 1, 10, 0, 0, 1000);
    step(&t, 3 * MS, 1, 2, 100, 0, 200, 900);
    tb_end(&t);
    run_report(&t, &r, "tiers_series");
    const struct ga_tiers_dev *d = ga_tiers_dev_of(&r.tiers, 0);
    CHECK_U64("three points", d ? d->n_series : 0, 3);
    if (d && d->n_series == 3) {
        CHECK_U64("point 2: weights of both", d->series[1].weights, 110);
        CHECK_U64("point 3: gradients freed in optimizer 1", d->series[2].gradients, 0);
        CHECK_U64("point 3: state", d->series[2].optimizer_state, 200);
        CHECK_U64("point 3: allocated as the hook read it", d->series[2].allocated, 900);
    }
    CHECK_U64("no snapshot: no breakdown", d ? (uint64_t)d->peak.have : 9, 0);
    ga_report_free(&r);
}

/* memory.category_series (model/view_cats.c): a snapshot before any step gives no point; one
 * after it adds the process's memory outside PyTorch's segments as other and sums to the live
 * bytes; the peak's point comes in time order and sums to the peak; a snapshot whose segments
 * exceed the live bytes gives none. */
static void test_process_series(void)
{
    struct tb t;
    struct ga_report r;
    const uint64_t OUTSIDE = 0x90000000ull;
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    tb_alloc(&t, 1 * MS, GT_API_cuMemAlloc_v2, SEG, 16 * MiB, 0, 0);
    tb_alloc(&t, 1 * MS, GT_API_cuMemAlloc_v2, OUTSIDE, 4 * MiB, 0, 0); /* the peak: 20 MiB */
    one_snapshot(&t, 2 * MS, 1);                                         /* no roles yet */
    roles(&t, 3 * MS, GT_ROLES_FIRST, 1, 3, SET, 3);
    step(&t, 3 * MS, 1, 1, 1000000, 1000000, 2 * MiB, 9 * MiB);
    one_snapshot(&t, 4 * MS, 2);
    tb_free(&t, 5 * MS, GT_API_cuMemFree_v2, OUTSIDE, 0);
    tb_free(&t, 5 * MS, GT_API_cuMemFree_v2, SEG, 0);
    one_snapshot(&t, 6 * MS, 3); /* its segment is gone at the driver */
    tb_end(&t);
    run_report(&t, &r, "tiers_process_series");
    const struct ga_vcats *v = &r.peakcats;
    CHECK_U64("two points: the peak, the snapshot after the step", v->n_points, 2);
    CHECK_U64("one snapshot out of step with the driver", r.tiers.procs_short, 1);
    if (v->n_points == 2) {
        const struct ga_vc_point *pk = &v->points[0], *sn = &v->points[1];
        CHECK("the peak first (time order)", pk->at == GA_VC_AT_PEAK && sn->at == GA_VC_AT_SNAPSHOT);
        CHECK_U64("... at the peak's time", pk->ts, r.mem.peak_ts);
        CHECK_U64("... its total: the peak", pk->total, 20 * MiB);
        uint64_t sum = 0;
        for (unsigned c = 0; c < GA_VC_KINDS; c++)
            sum += pk->bytes[c];
        CHECK_U64("... its categories add up to it", sum, 20 * MiB);
        CHECK_U64("the snapshot: the live bytes then", sn->total, 20 * MiB);
        CHECK_U64("... weights: the optimizer's storage", sn->bytes[GA_CAT_WEIGHTS], 1 * MiB);
        CHECK_U64("... other: frames outside modules + the allocation outside PyTorch",
                  sn->bytes[GA_CAT_OTHER], 1 * MiB + 4 * MiB);
        CHECK_U64("... cache", sn->bytes[GA_CAT_CACHE], 6 * MiB);
        sum = 0;
        for (unsigned c = 0; c < GA_VC_KINDS; c++)
            sum += sn->bytes[c];
        CHECK_U64("... its categories add up to it", sum, 20 * MiB);
    }
    ga_report_free(&r);

    /* no role records: no series */
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    tb_alloc(&t, 1 * MS, GT_API_cuMemAlloc_v2, SEG, 16 * MiB, 0, 0);
    one_snapshot(&t, 2 * MS, 1);
    tb_end(&t);
    run_report(&t, &r, "tiers_process_series2");
    CHECK_U64("without optimizer records: no points", r.peakcats.n_points, 0);
    ga_report_free(&r);
}

static void trace(struct tb *t, uint64_t ts, uint32_t snap_id, uint32_t flags,
                  const struct gt_torch_trace_entry *e, uint32_t n)
{
    struct gt_rec_torch_trace r = {
        .ts = t->t0 + ts, .entries_len = n * (uint32_t)sizeof(*e), .snap = snap_id, .flags = flags};
    tb_rec(t, GT_REC_TORCH_TRACE, 0, &r, sizeof(r), (const char *)e, n * sizeof(*e));
}

/* PyTorch's clock (realtime microseconds) at ts ns after t0 (tb_init's realtime start). */
#define US(ts) ((1700000000000000000ull + (ts)) / 1000)

/* One segment of 16 MiB with a 1 MiB weight at SEG (the optimizer's) and the rest free. */
static void base_snapshot(struct tb *t, uint64_t ts, uint32_t id, uint64_t act)
{
    snap(t, ts, GT_SNAP_BEGIN, id, 1, act ? 3 : 2);
    segment(t, ts, id, SEG, 16 * MiB, act ? 3 : 2);
    block(t, ts, id, GT_TORCH_ACTIVE, SEG, 1 * MiB, 1 * MiB, 0);
    if (act) block(t, ts, id, GT_TORCH_ACTIVE, SEG + 1 * MiB, act, act, 2);
    block(t, ts, id, GT_TORCH_INACTIVE, SEG + 1 * MiB + act, 15 * MiB - act, 0, 0);
    snap(t, ts, GT_SNAP_END, id, 1, act ? 3 : 2);
}

/* The replay of block events between two snapshots (tiers_replay.c): the peak between them,
 * exact, with a block freed right after it was made as temporary, a gradient found in the set
 * read while it lived, the forward's block by its frames and the cache; a batch that does not
 * end in its snapshot's state, and one after lost events, are not used. */
static void test_replay(void)
{
    static const struct gt_torch_role_entry set[2] = {
        {.addr = SEG, .bytes = 1 * MiB, .elem_size = 4, .role = GT_ROLE_WEIGHT},
        {.addr = SEG + 3 * MiB, .bytes = 1 * MiB, .elem_size = 4, .role = GT_ROLE_GRADIENT}};
#define EV(ms, addr, size, stack, action) {US((ms) * MS), (addr), (size), (stack), (action), 0}
#define FREE(ms, addr, size)                                                                       \
    EV(ms, addr, size, 0, GT_TRACE_FREE_REQUESTED), EV(ms, addr, size, 0, GT_TRACE_FREE_COMPLETED)
    /* the peak at a gradient inside backward: the forward's block still held */
    struct gt_torch_trace_entry ev[] = {
        EV(3, SEG + 1 * MiB, 2 * MiB, 2, GT_TRACE_ALLOC), /* forward: frames */
        EV(5, SEG + 7 * MiB, 4, 4, GT_TRACE_ALLOC),       /* Tensor.backward's seed: 512 */
        EV(5, SEG + 3 * MiB, 1 * MiB, 0, GT_TRACE_ALLOC), /* the gradient: the peak */
        FREE(6, SEG + 1 * MiB, 2 * MiB),
        FREE(6, SEG + 7 * MiB, 4),
        FREE(7, SEG + 3 * MiB, 1 * MiB), /* zero_grad */
    };
    /* the peak inside the forward, at a temporary (freed right after), with a scratch block
     * freed before the backward began (temporary) and the forward's block held across it */
    struct gt_torch_trace_entry ev2[] = {
        EV(3, SEG + 1 * MiB, 2 * MiB, 2, GT_TRACE_ALLOC),
        EV(3, SEG + 6 * MiB, 1 * MiB, 2, GT_TRACE_ALLOC), /* scratch */
        EV(4, SEG + 4 * MiB, 2 * MiB, 0, GT_TRACE_ALLOC), /* the peak */
        FREE(4, SEG + 4 * MiB, 2 * MiB),
        FREE(4, SEG + 6 * MiB, 1 * MiB),
        EV(5, SEG + 7 * MiB, 4, 4, GT_TRACE_ALLOC),
        FREE(6, SEG + 1 * MiB, 2 * MiB),
        FREE(6, SEG + 7 * MiB, 4),
    };
    struct tb t;
    struct ga_report r;
    snap_flags = GT_TORCH_HISTORY_OURS;
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    roles(&t, 1 * MS, GT_ROLES_FIRST, 1, 1, set, 1);
    base_snapshot(&t, 2 * MS, 1, 0);
    roles(&t, 6500000, GT_ROLES_FIRST, 1, 2, set, 2); /* the step: weight and gradient */
    step(&t, 6500000, 1, 1, 1 * MiB, 1 * MiB, 0, 3 * MiB);
    roles(&t, 8 * MS, GT_ROLES_FIRST, 1, 1, set, 1); /* before the snapshot: the weight */
    trace(&t, 8 * MS, 2, 0, ev, sizeof(ev) / sizeof(ev[0]));
    base_snapshot(&t, 8 * MS, 2, 0);
    tb_end(&t);
    run_report(&t, &r, "tiers_replay");
    const struct ga_tiers_replay *d = ga_tiers_replay_of(&r.tiers, 0);
    CHECK("a replay on device 0", d != NULL);
    if (d) {
        const struct ga_tiers_breakdown *b = &d->peak;
        CHECK_U64("one batch, replayed", d->replayed, 1);
        CHECK_U64("the peak: weight + forward + seed + gradient", b->allocated, 4 * MiB + 512);
        CHECK_U64("... at the gradient's allocation", b->ts, T0 + 5 * MS);
        CHECK_U64("weights", b->cat[GA_CAT_WEIGHTS].bytes, 1 * MiB);
        CHECK_U64("gradients: in the step's set, freed after the step",
                  b->cat[GA_CAT_GRADIENTS].bytes, 1 * MiB);
        CHECK_U64("... exact", b->cat[GA_CAT_GRADIENTS].basis, GA_BASIS_EXACT);
        CHECK_U64("activations: the forward's block, held across the backward's start",
                  b->cat[GA_CAT_ACTIVATIONS].bytes, 2 * MiB);
        CHECK_U64("temporary: the seed, freed within the step", b->cat[GA_CAT_TEMPORARY].bytes,
                  512);
        CHECK_U64("cache: reserved - allocated", b->cat[GA_CAT_CACHE].bytes, 12 * MiB - 512);
        const struct ga_tv_dev *v = r.tierview.n_devs ? &r.tierview.devs[0] : NULL;
        CHECK("the view's peak is the replay's", v && v->replayed && v->peak == b);
    }
    ga_report_free(&r);

    /* the peak at temporaries inside the forward */
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    roles(&t, 1 * MS, GT_ROLES_FIRST, 1, 1, set, 1);
    base_snapshot(&t, 2 * MS, 1, 0);
    trace(&t, 8 * MS, 2, 0, ev2, sizeof(ev2) / sizeof(ev2[0]));
    base_snapshot(&t, 8 * MS, 2, 0);
    tb_end(&t);
    run_report(&t, &r, "tiers_replay_temp");
    d = ga_tiers_replay_of(&r.tiers, 0);
    if (d) {
        const struct ga_tiers_breakdown *b = &d->peak;
        CHECK_U64("the peak inside the forward", b->allocated, 6 * MiB);
        CHECK_U64("temporary: freed right after + the scratch freed before the backward",
                  b->cat[GA_CAT_TEMPORARY].bytes, 3 * MiB);
        CHECK_U64("activations: the forward's block", b->cat[GA_CAT_ACTIVATIONS].bytes, 2 * MiB);
    }
    ga_report_free(&r);

    /* the same batch leading to a snapshot that still holds the forward's block: it does not
     * end there, and a batch after lost events: neither is used */
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    base_snapshot(&t, 2 * MS, 1, 0);
    trace(&t, 8 * MS, 2, 0, ev, sizeof(ev) / sizeof(ev[0]));
    base_snapshot(&t, 8 * MS, 2, 2 * MiB);
    trace(&t, 9 * MS, 3, GT_TRACE_GAP, ev, 3);
    base_snapshot(&t, 9 * MS, 3, 0);
    tb_end(&t);
    run_report(&t, &r, "tiers_replay2");
    d = ga_tiers_replay_of(&r.tiers, 0);
    CHECK_U64("two batches", d ? d->batches : 0, 2);
    CHECK_U64("one not ending in its snapshot's state", d ? d->inconsistent : 0, 1);
    CHECK_U64("none replayed", d ? d->replayed : 9, 0);
    CHECK_U64("no peak from them", d ? (uint64_t)d->peak.have : 9, 0);
    ga_report_free(&r);

    /* garbage events (unknown actions, frees of unknown blocks, sizes and times at the limits,
     * a tail that is not a whole entry): no crash, and the batch is not trusted */
    struct gt_torch_trace_entry junk[] = {
        {UINT64_MAX, SEG, UINT64_MAX, 99, GT_TRACE_ALLOC, 0},
        {0, 0x1234, UINT64_MAX, 0, GT_TRACE_FREE_COMPLETED, 0},
        {UINT64_MAX / 1000, SEG + 1, 1, 0, 77, 0},
        {1, SEG, UINT64_MAX, 0, GT_TRACE_SEGMENT_FREE, 0},
        {2, SEG, UINT64_MAX, 0, GT_TRACE_SEGMENT_ALLOC, 0},
    };
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    base_snapshot(&t, 2 * MS, 1, 0);
    struct gt_rec_torch_trace tr = {.ts = T0 + 3 * MS, .entries_len = sizeof(junk) - 8, .snap = 2};
    tb_rec(&t, GT_REC_TORCH_TRACE, 0, &tr, sizeof(tr), (const char *)junk, sizeof(junk) - 8);
    base_snapshot(&t, 4 * MS, 2, 0);
    tb_end(&t);
    run_report(&t, &r, "tiers_replay_junk");
    d = ga_tiers_replay_of(&r.tiers, 0);
    CHECK_U64("garbage: one batch, not trusted", d ? d->inconsistent : 0, 1);
    ga_report_free(&r);

    /* snapshots without history keep no base: the batch is not replayed */
    snap_flags = 0;
    tb_init(&t, 21, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    frames(&t);
    base_snapshot(&t, 2 * MS, 1, 0);
    trace(&t, 8 * MS, 2, 0, ev, sizeof(ev) / sizeof(ev[0]));
    base_snapshot(&t, 8 * MS, 2, 0);
    tb_end(&t);
    run_report(&t, &r, "tiers_replay3");
    d = ga_tiers_replay_of(&r.tiers, 0);
    CHECK_U64("without history: nothing replayed", d ? d->replayed : 0, 0);
    ga_report_free(&r);
}

/* A snapshot of segments given as {addr, size, then blocks as {state, addr, size}}; each a
 * uint64_t array: n_segs, then per segment addr, size, n_blocks, blocks... */
static void snapshot_of(struct tb *t, uint64_t ts, uint32_t id, uint64_t max_split,
                        const uint64_t *d)
{
    uint64_t n_segs = d[0], n_blocks = 0;
    const uint64_t *p = d + 1;
    for (uint64_t i = 0; i < n_segs; i++)
        n_blocks += p[2], p += 3 + 3 * p[2];
    struct gt_rec_torch_snap r = {.ts = t->t0 + ts,
                                  .id = id,
                                  .why = GT_TORCH_PEAK,
                                  .segments = (uint32_t)n_segs,
                                  .flags = GT_TORCH_HISTORY_OURS,
                                  .blocks = n_blocks,
                                  .max_split_size = max_split};
    tb_rec(t, GT_REC_TORCH_SNAP, GT_SNAP_BEGIN, &r, sizeof(r), NULL, 0);
    p = d + 1;
    for (uint64_t i = 0; i < n_segs; i++) {
        segment(t, ts, id, p[0], p[1], (uint32_t)p[2]);
        for (uint64_t k = 0; k < p[2]; k++)
            block(t, ts, id, (unsigned)p[3 + 3 * k], p[4 + 3 * k], p[5 + 3 * k], p[5 + 3 * k], 0);
        p += 3 + 3 * p[2];
    }
    tb_rec(t, GT_REC_TORCH_SNAP, GT_SNAP_END, &r, sizeof(r), NULL, 0);
}

/* Blocks PyTorch does not split (tiers_replay.c): a large request that leaves 1 MiB or less of
 * its free block takes all of it, a request at or above max_split_size takes all of it, a freed
 * block merges with its free neighbours but never across a segment's edge (the second segment
 * starts where the first ends). Each batch is trusted only when the replay follows these
 * rules: the same events leading to a snapshot of split blocks are not. */
static void test_replay_blocks(void)
{
    enum { A = GT_TORCH_ACTIVE, I = GT_TORCH_INACTIVE };
    const uint64_t S2 = SEG + 16 * MiB;
    /* n_segs; per segment: addr, size, n_blocks, then {state, addr, size} per block */
    static const uint64_t base[] = {
        1, SEG, 16 * MiB, 2, A, SEG, 1 * MiB, I, SEG + 1 * MiB, 15 * MiB, /* */
    };
    const uint64_t end[] = {
        2,  SEG,      16 * MiB, 2, A,  SEG,      1 * MiB, A, SEG + 1 * MiB, 15 * MiB, /* */
        S2, 20 * MiB, 1,        I, S2, 20 * MiB,                                      /* */
    };
    struct gt_torch_trace_entry ev[] = {
        EV(3, S2, 20 * MiB, 0, GT_TRACE_SEGMENT_ALLOC),
        EV(3, S2, 2 * MiB, 0, GT_TRACE_ALLOC),
        FREE(3, S2, 2 * MiB), /* 20 MiB free, right after the first segment's 15 free MiB */
        EV(4, SEG + 1 * MiB, 13 * MiB + 512 * KiB, 0, GT_TRACE_ALLOC), /* split: 1.5 MiB left */
        EV(4, SEG + 14 * MiB + 512 * KiB, 1 * MiB + 256 * KiB, 0, GT_TRACE_ALLOC), /* all 1.5 */
        FREE(5, SEG + 1 * MiB, 13 * MiB + 512 * KiB),
        FREE(5, SEG + 14 * MiB + 512 * KiB, 1 * MiB + 256 * KiB),      /* merged: 15 MiB free */
        EV(7, SEG + 1 * MiB, 14 * MiB + 512 * KiB, 0, GT_TRACE_ALLOC), /* all 15 MiB */
    };
    /* a request above max_split_size (8 MiB) with 1.5 MiB left: not split either */
    const uint64_t end2[] = {1, SEG, 16 * MiB, 2, A, SEG, 1 * MiB, A, SEG + 1 * MiB, 15 * MiB};
    struct gt_torch_trace_entry ev2[] = {
        EV(3, SEG + 1 * MiB, 13 * MiB + 512 * KiB, 0, GT_TRACE_ALLOC),
    };
    static const char *const what[] = {"unsplit large blocks, merges", "above max_split_size",
                                       "the same without max_split_size (doctored)"};
    for (int c = 0; c < 3; c++) {
        struct tb t;
        struct ga_report r;
        tb_init(&t, 21, T0);
        tb_begin(&t, GT_CHUNK_HOST, 1);
        snapshot_of(&t, 2 * MS, 1, 0, base);
        if (c == 0)
            trace(&t, 8 * MS, 2, 0, ev, sizeof(ev) / sizeof(ev[0]));
        else
            trace(&t, 8 * MS, 2, 0, ev2, 1);
        snapshot_of(&t, 8 * MS, 2, c == 1 ? 8 * MiB : 0, c == 0 ? end : end2);
        tb_end(&t);
        run_report(&t, &r, "tiers_replay_blocks");
        const struct ga_tiers_replay *d = ga_tiers_replay_of(&r.tiers, 0);
        printf("     %s:\n", what[c]);
        CHECK_U64("the batch replayed to its snapshot's state", d ? d->replayed : 9, c < 2);
        if (c == 0) {
            CHECK_U64("the peak: 1 + 13.5 + 1.5 MiB", d ? d->peak.allocated : 0, 16 * MiB);
            CHECK_U64("... at the unsplit block", d ? d->peak.ts : 0, T0 + 4 * MS);
            CHECK_U64("... reserved then", d ? d->peak.reserved : 0, 36 * MiB);
        }
        ga_report_free(&r);
    }
}

/* PyTorch's round_size with roundup_power2_divisions (tiers_replay.c): the block sizes PyTorch
 * 2.15 gave a 1,228,800-byte request on the simulated stack (default 1,228,800; 4 divisions
 * 1,310,720; 2 divisions 1,572,864; 1 division: as the default), then random requests and
 * divisions per interval against an oracle that walks the N steps of the request's power-of-2
 * interval one by one. */
static uint64_t oracle_round(const uint32_t *div, uint64_t size)
{
    uint64_t p = 1;
    while (p <= size / 2)
        p *= 2; /* the power of 2 at or below size */
    unsigned k = 0;
    while ((1ull << (k + 1)) <= p)
        k++;
    uint64_t n = div[k <= 20 ? 0 : (k - 20 > 15 ? 15 : k - 20)];
    if (size < 512) return 512;
    if (n > 1 && size > 512 * n) {
        for (uint64_t j = 0; j <= n; j++)
            if (p + j * (p / n) >= size) return p + j * (p / n);
    }
    return (size + 511) / 512 * 512;
}

static void test_round_size(void)
{
    uint32_t div[GT_TORCH_ROUNDUP_INTERVALS] = {0};
    CHECK_U64("default", ga_tiers_round_size(div, 1228800), 1228800);
    CHECK_U64("default: 512-byte multiples", ga_tiers_round_size(div, 1200000), 1200128);
    CHECK_U64("under 512", ga_tiers_round_size(div, 1), 512);
    div[0] = 4;
    CHECK_U64("4 divisions", ga_tiers_round_size(div, 1228800), 1310720);
    CHECK_U64("... not above 512 x 4 bytes", ga_tiers_round_size(div, 2000), 2048);
    CHECK_U64("... a power of 2 stays", ga_tiers_round_size(div, 1 << 20), 1 << 20);
    CHECK_U64("... the interval's own divisions (2 MiB up: none)",
              ga_tiers_round_size(div, 2400000), 2400256);
    div[1] = 2;
    CHECK_U64("... 2 from 2 MiB", ga_tiers_round_size(div, 2400000), 3 * MiB);
    div[0] = 2;
    CHECK_U64("2 divisions", ga_tiers_round_size(div, 1228800), 1572864);
    div[0] = 1;
    CHECK_U64("1 division: as the default", ga_tiers_round_size(div, 1228800), 1228800);
    uint64_t seed = 0x9E3779B97F4A7C15ull, bad = 0;
    for (int i = 0; i < 200000; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        if (i % 1000 == 0)
            for (int j = 0; j < GT_TORCH_ROUNDUP_INTERVALS; j++)
                div[j] = (seed >> (4 * j)) % 5 ? 1u << ((seed >> (4 * j + 2)) % 6) : 0;
        uint64_t size = (seed >> 20) % ((seed & 1) ? 64 * MiB : 4096ull * MiB);
        if (ga_tiers_round_size(div, size) != oracle_round(div, size) && bad++ < 3)
            printf("     size %llu: %llu, oracle %llu\n", (unsigned long long)size,
                   (unsigned long long)ga_tiers_round_size(div, size),
                   (unsigned long long)oracle_round(div, size));
    }
    CHECK_U64("200,000 random requests as the oracle", bad, 0);
}

/* A device the bridge's start sample did not cover (it held nothing then): its first batch says
 * GT_TRACE_FROM_EMPTY and is replayed from zero bytes; without the flag it has no base. */
static void test_replay_from_empty(void)
{
    struct gt_torch_trace_entry ev[] = {
        EV(3, SEG, 2 * MiB, 0, GT_TRACE_SEGMENT_ALLOC),
        EV(3, SEG, 1 * MiB, 0, GT_TRACE_ALLOC),
        EV(4, SEG + 1 * MiB, 512 * KiB, 0, GT_TRACE_ALLOC),
        FREE(5, SEG + 1 * MiB, 512 * KiB),
    };
    for (int flagged = 0; flagged < 2; flagged++) {
        struct tb t;
        struct ga_report r;
        tb_init(&t, 21, T0);
        tb_begin(&t, GT_CHUNK_HOST, 1);
        struct gt_rec_torch_trace tr = {.ts = T0 + 8 * MS,
                                        .device = 1,
                                        .entries_len = sizeof(ev),
                                        .snap = 1,
                                        .flags = flagged ? GT_TRACE_FROM_EMPTY : 0};
        tb_rec(&t, GT_REC_TORCH_TRACE, 0, &tr, sizeof(tr), (const char *)ev, sizeof(ev));
        struct gt_rec_torch_snap sn = {.ts = T0 + 8 * MS,
                                       .id = 1,
                                       .why = GT_TORCH_PEAK,
                                       .segments = 1,
                                       .flags = GT_TORCH_HISTORY_OURS,
                                       .blocks = 2};
        struct gt_rec_torch_segment sg = {
            .ts = T0 + 8 * MS, .addr = SEG, .size = 2 * MiB, .snap = 1, .device = 1, .blocks = 2};
        tb_rec(&t, GT_REC_TORCH_SNAP, GT_SNAP_BEGIN, &sn, sizeof(sn), NULL, 0);
        tb_rec(&t, GT_REC_TORCH_SEGMENT, GT_TORCH_POOL_SMALL, &sg, sizeof(sg), NULL, 0);
        block(&t, 8 * MS, 1, GT_TORCH_ACTIVE, SEG, 1 * MiB, 1 * MiB, 0);
        block(&t, 8 * MS, 1, GT_TORCH_INACTIVE, SEG + 1 * MiB, 1 * MiB, 0, 0);
        tb_rec(&t, GT_REC_TORCH_SNAP, GT_SNAP_END, &sn, sizeof(sn), NULL, 0);
        tb_end(&t);
        run_report(&t, &r, "tiers_replay_empty");
        const struct ga_tiers_replay *d = ga_tiers_replay_of(&r.tiers, 1);
        printf("     %s:\n", flagged ? "from an empty device" : "without the flag");
        CHECK_U64("device 1's batch replayed", d ? d->replayed : 9, (uint64_t)flagged);
        CHECK_U64("its peak", d ? d->peak.allocated : 9, flagged ? 1 * MiB + 512 * KiB : 0);
        ga_report_free(&r);
    }
}

int main(void)
{
    test_rules();
    test_damaged_sets();
    test_series();
    test_process_series();
    test_replay();
    test_replay_blocks();
    test_round_size();
    test_replay_from_empty();
    return check_done();
}
