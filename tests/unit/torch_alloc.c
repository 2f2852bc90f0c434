/* The PyTorch allocator analysis on synthetic traces: an allocator OOM merged with the driver
 * failures of its allocation (and only those), its block-level evidence from the snapshot, the
 * site of blocks without frames (their segment's driver allocation), the verdict rules one by
 * one, a driver failure PyTorch resolved from its cache, cached segments at exit, and snapshots
 * that are cut or malformed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/state.h"
#include "collect.h"
#include "tracebuild.h"

#define T0  5000000000ull
#define MS  1000000ull
#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void run_report(struct tb *t, struct ga_report *r, const char *name)
{
    char path[256];
    tmp_path(path, name);
    tb_write(t, path, (size_t)-1);
    ga_report_init(r, path);
    if (ga_report_run(r) != 0) printf("     read error: %s\n", r->read.error);
}

static void stats(struct tb *t, uint64_t ts, unsigned why, uint64_t alloc, uint64_t reserved)
{
    struct gt_rec_torch_stats r = {.ts = t->t0 + ts,
                                   .allocated = alloc,
                                   .allocated_peak = alloc,
                                   .reserved = reserved,
                                   .reserved_peak = reserved};
    tb_rec(t, GT_REC_TORCH_STATS, (uint16_t)why, &r, sizeof(r), NULL, 0);
}

static void oom_on(struct tb *t, uint64_t ts, int dev, uint64_t req, uint64_t limit, uint64_t dfree,
                   uint64_t total, uint64_t alloc, uint64_t reserved, uint32_t snap)
{
    struct gt_rec_torch_oom r = {.ts = t->t0 + ts,
                                 .requested = req,
                                 .limit = limit,
                                 .device_free = dfree,
                                 .device_total = total,
                                 .allocated = alloc,
                                 .reserved = reserved,
                                 .snap = snap,
                                 .device = dev,
                                 .fraction_set = limit < total};
    tb_rec(t, GT_REC_TORCH_OOM, 0, &r, sizeof(r), NULL, 0);
}

/* On a 1 GiB device. */
static void oom(struct tb *t, uint64_t ts, int dev, uint64_t req, uint64_t limit, uint64_t dfree,
                uint64_t alloc, uint64_t reserved, uint32_t snap)
{
    oom_on(t, ts, dev, req, limit, dfree, GiB, alloc, reserved, snap);
}

static void snap(struct tb *t, uint64_t ts, unsigned op, uint32_t id, unsigned why, uint32_t segs,
                 uint64_t blocks)
{
    struct gt_rec_torch_snap r = {
        .ts = t->t0 + ts, .id = id, .why = why, .segments = segs, .blocks = blocks};
    tb_rec(t, GT_REC_TORCH_SNAP, (uint16_t)op, &r, sizeof(r), NULL, 0);
}

static void segment(struct tb *t, uint64_t ts, uint32_t id, int dev, uint64_t addr, uint64_t size,
                    uint32_t blocks)
{
    struct gt_rec_torch_segment r = {
        .ts = t->t0 + ts, .addr = addr, .size = size, .snap = id, .device = dev, .blocks = blocks};
    tb_rec(t, GT_REC_TORCH_SEGMENT, GT_TORCH_POOL_LARGE, &r, sizeof(r), NULL, 0);
}

static void block(struct tb *t, uint64_t ts, uint32_t id, unsigned state, uint64_t addr,
                  uint64_t size, uint32_t stack)
{
    struct gt_rec_torch_block r = {
        .ts = t->t0 + ts, .addr = addr, .size = size, .stack = stack, .snap = id};
    tb_rec(t, GT_REC_TORCH_BLOCK, (uint16_t)state, &r, sizeof(r), NULL, 0);
}

static void frame(struct tb *t, uint64_t ts, uint32_t id, const char *file, uint32_t line,
                  const char *name)
{
    struct gt_rec_torch_frame r = {.ts = t->t0 + ts,
                                   .id = id,
                                   .line = line,
                                   .file_len = (uint32_t)strlen(file),
                                   .name_len = (uint32_t)strlen(name)};
    tb_rec3(t, GT_REC_TORCH_FRAME, 0, &r, sizeof(r), file, r.file_len, name, r.name_len, NULL, 0);
}

static void stack(struct tb *t, uint64_t ts, uint32_t id, const uint32_t *frames, uint32_t n)
{
    struct gt_rec_torch_stack r = {.ts = t->t0 + ts, .id = id, .frames_len = 4 * n};
    tb_rec(t, GT_REC_TORCH_STACK, 0, &r, sizeof(r), (const char *)frames, 4 * n);
}

/* A driver allocation made at host stack `stack`. */
static void alloc_at(struct tb *t, uint64_t ts, uint64_t addr, uint64_t size, uint32_t stack)
{
    struct gt_rec_alloc r = {
        .ts = t->t0 + ts, .addr = addr, .size = size, .ctx = 0xc1, .device = 0, .stack = stack};
    tb_rec(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, &r, sizeof(r), NULL, 0);
}

/* The fragmentation OOM of the reference, shrunk to two segments of a 48 MiB device and a
 * 20 MiB request: thread 1's two driver failures
 * belong to the allocator's OOM; thread 2's failure, and thread 1's earlier one (a successful
 * allocation came after it), do not. */
static void test_merge(void)
{
    struct tb t;
    struct ga_report r;
    tb_init(&t, 17, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_fail(&t, 1 * MS, GT_API_cuMemAlloc_v2, 20 * MiB, 0, 4 * MiB, GiB, 2);
    tb_alloc(&t, 2 * MS, GT_API_cuMemAlloc_v2, 0x100000, 20 * MiB, 0, 0xc1);
    alloc_at(&t, 3 * MS, 0x2000000, 20 * MiB, 42); /* made at host stack 42 */
    stats(&t, 4 * MS, GT_TORCH_START, 12 * MiB, 40 * MiB);
    tb_fail(&t, 5 * MS, GT_API_cuMemAlloc_v2, 20 * MiB, 0, 4 * MiB, 48 * MiB, 2);
    tb_fail(&t, 7 * MS, GT_API_cuMemAlloc_v2, 20 * MiB, 0, 4 * MiB, 48 * MiB, 2);
    oom_on(&t, 8 * MS, 0, 20 * MiB, 48 * MiB, 4 * MiB, 48 * MiB, 12 * MiB, 40 * MiB, 1);
    frame(&t, 9 * MS, 1, "/x/torch/nn/modules/module.py", 10, "forward");
    frame(&t, 9 * MS, 2, "/home/u/train.py", 88, "step");
    uint32_t ids[2] = {1, 2};
    stack(&t, 9 * MS, 1, ids, 2);
    snap(&t, 9 * MS, GT_SNAP_BEGIN, 1, GT_TORCH_OOM, 2, 4);
    segment(&t, 9 * MS, 1, 0, 0x100000, 20 * MiB, 2);
    block(&t, 9 * MS, 1, GT_TORCH_ACTIVE, 0x100000, 6 * MiB, 1);
    block(&t, 9 * MS, 1, GT_TORCH_INACTIVE, 0x700000, 14 * MiB, 0);
    segment(&t, 9 * MS, 1, 0, 0x2000000, 20 * MiB, 2);
    block(&t, 9 * MS, 1, GT_TORCH_INACTIVE, 0x2000000, 12 * MiB, 0);
    block(&t, 9 * MS, 1, GT_TORCH_ACTIVE, 0x2c00000, 6 * MiB, 0);
    snap(&t, 9 * MS, GT_SNAP_END, 1, GT_TORCH_OOM, 2, 4);
    /* PyTorch's cache served a later failure: frees, then the retry succeeds */
    tb_fail(&t, 20 * MS, GT_API_cuMemAlloc_v2, 30 * MiB, 0, 4 * MiB, GiB, 2);
    tb_free(&t, 21 * MS, GT_API_cuMemFree_v2, 0x2000000, 0);
    tb_alloc(&t, 22 * MS, GT_API_cuMemAlloc_v2, 0x4000000, 30 * MiB, 0, 0xc1);
    /* the exit snapshot names the first segment: cached, not leaked */
    stats(&t, 30 * MS, GT_TORCH_EXIT, 6 * MiB, 50 * MiB);
    snap(&t, 31 * MS, GT_SNAP_BEGIN, 2, GT_TORCH_EXIT, 1, 1);
    segment(&t, 31 * MS, 2, 0, 0x100000, 20 * MiB, 1);
    block(&t, 31 * MS, 2, GT_TORCH_ACTIVE, 0x100000, 6 * MiB, 1);
    snap(&t, 31 * MS, GT_SNAP_END, 2, GT_TORCH_EXIT, 1, 1);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 2);
    tb_fail(&t, 6 * MS, GT_API_cuMemAlloc_v2, 20 * MiB, 0, 4 * MiB, 48 * MiB, 2);
    tb_end(&t);
    run_report(&t, &r, "torch_merge");
    const struct ga_memory *m = &r.mem;
    CHECK_U64("ooms: thread 1's first failure, thread 2's, the allocator's, the cached one",
              m->n_ooms, 4);
    const struct ga_oom *a = NULL;
    size_t n_alloc = 0;
    for (size_t i = 0; i < m->n_ooms; i++)
        if (m->ooms[i].alloc) a = &m->ooms[i], n_alloc++;
    CHECK_U64("one allocator-level OOM", n_alloc, 1);
    if (!a) return;
    CHECK_U64("merged: thread 1's two failures after its last allocation",
              a->alloc->driver_failures, 2);
    CHECK_U64("its time: the observer's", ga_report_rel(&r, a->ts), 8 * MS);
    CHECK_U64("its api: the first merged call's", a->api, GT_API_cuMemAlloc_v2);
    CHECK_U64("thread 2's failure stays a driver one", m->ooms[1].tid == 2 && !m->ooms[1].alloc, 1);
    CHECK_U64("thread 1's earlier failure stays (an allocation came after)",
              m->ooms[0].alloc == NULL, 1);
    CHECK_STR("verdict: fragmentation (U = 28 MiB >= R, F = 14 MiB < R = 20 MiB)",
              ga_verdict_name(a->verdict), "fragmentation");
    CHECK_U64("largest free block of the large pool", a->alloc->largest_fit, 14 * MiB);
    CHECK_U64("partly used segments", a->alloc->frag.partly_used, 2);
    CHECK_U64("pinning blocks", a->alloc->frag.pinning_blocks, 2);
    CHECK_U64("pinning bytes", a->alloc->frag.pinning_bytes, 12 * MiB);
    CHECK_U64("pinned by: two sites (one without frames)", a->alloc->pinning.n, 2);
    const struct ga_torch_site *own = NULL, *seg = NULL;
    for (size_t i = 0; i < a->alloc->pinning.n; i++) {
        const struct ga_torch_site *x = &a->alloc->pinning.s[i];
        if (x->source == GA_TORCH_SITE_BLOCK) own = x;
        if (x->source == GA_TORCH_SITE_SEGMENT) seg = x;
    }
    CHECK("the block with frames: its own site", own && own->stack == 1 && own->seg_stack == 0);
    CHECK("the block without frames: its segment's", seg && seg->stack == 0);
    CHECK_U64("... the driver allocation's stack at the segment's address",
              seg ? seg->seg_stack : 0, 42);
    CHECK_U64("... its bytes", seg ? seg->bytes : 0, 6 * MiB);
    CHECK_STR("source names", ga_torch_site_source_name(GA_TORCH_SITE_SEGMENT), "segment");
    char label[256];
    const char *l = ga_torch_site_label(&r.torch, 1, label, sizeof(label));
    CHECK_STR("site: the innermost frame outside torch", l, "train.py:88 (step)");
    const struct ga_oom *c = &m->ooms[3];
    CHECK_STR("the retried failure: cached", ga_verdict_name(c->verdict), "cached");
    CHECK_U64("... by PyTorch's allocator", c->allocator_cached, 1);
    CHECK_U64("cached at exit: the exit snapshot's segment", m->cached_bytes, 20 * MiB);
    CHECK_U64("leaked: the other live segment only (30 MiB)", m->leaked_bytes, 30 * MiB);
    const struct ga_torch_dev *d = ga_torch_dev_of(&r.torch, 0);
    CHECK("device 0 seen", d != NULL);
    if (d) {
        CHECK_U64("peak reserved", d->peak_reserved, 50 * MiB);
        CHECK_U64("cached at exit (stats)", d->cached_at_exit, 50 * MiB);
        CHECK_U64("fullest snapshot: the OOM's (12 MiB allocated)", d->at_peak.allocated, 12 * MiB);
    }
    ga_report_free(&r);
    tb_free_all(&t);
}

/* One allocator OOM per device, each meeting one rule. */
static void test_verdicts(void)
{
    struct tb t;
    struct ga_report r;
    tb_init(&t, 18, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    /* limit: a quarter of the device allowed, reserved + R above it, the device had room */
    oom(&t, 1 * MS, 0, 200 * MiB, GiB / 4, 900 * MiB, 100 * MiB, 100 * MiB, 0);
    /* fragmentation without a snapshot: U = 300 MiB >= R */
    oom(&t, 2 * MS, 1, 64 * MiB, GiB, 4 * MiB, 600 * MiB, 900 * MiB, 0);
    /* exhausted: nothing free inside segments, the device nearly full */
    oom(&t, 3 * MS, 2, 200 * MiB, GiB, 120 * MiB, 900 * MiB, 900 * MiB, 0);
    /* other processes: 700 MiB neither free nor PyTorch's */
    oom(&t, 4 * MS, 3, 200 * MiB, GiB, 20 * MiB, 300 * MiB, 300 * MiB, 0);
    /* fragmentation needs F < R: with a snapshot whose free block fits, it is not */
    oom(&t, 5 * MS, 4, 20 * MiB, GiB, 4 * MiB, 900 * MiB, 1000 * MiB, 7);
    snap(&t, 6 * MS, GT_SNAP_BEGIN, 7, GT_TORCH_OOM, 1, 2);
    segment(&t, 6 * MS, 7, 4, 0x100000, 100 * MiB, 2);
    block(&t, 6 * MS, 7, GT_TORCH_ACTIVE, 0x100000, 70 * MiB, 0);
    block(&t, 6 * MS, 7, GT_TORCH_INACTIVE, 0x4700000, 30 * MiB, 0);
    snap(&t, 6 * MS, GT_SNAP_END, 7, GT_TORCH_OOM, 1, 2);
    tb_end(&t);
    run_report(&t, &r, "torch_verdicts");
    static const char *const want[] = {"limit", "fragmentation", "exhausted", "other_processes",
                                       "exhausted"};
    CHECK_U64("five allocator OOMs", r.mem.n_ooms, 5);
    for (size_t i = 0; i < r.mem.n_ooms && i < 5; i++) {
        char what[64];
        snprintf(what, sizeof(what), "verdict of device %zu", i);
        CHECK_STR(what, ga_verdict_name(r.mem.ooms[i].verdict), want[i]);
    }
    /* device 4's segment has no driver allocation in the trace: its block stays unattributed */
    const struct ga_torch_oom *o4 = NULL;
    for (size_t i = 0; i < r.torch.n_ooms; i++)
        if (r.torch.ooms[i].device == 4) o4 = &r.torch.ooms[i];
    CHECK("device 4's OOM", o4 && o4->pinning.n == 1);
    if (o4 && o4->pinning.n == 1)
        CHECK_U64("no frames, no driver allocation: no site", o4->pinning.s[0].source,
                  GA_TORCH_SITE_NONE);
    ga_report_free(&r);
    tb_free_all(&t);
}

/* A snapshot cut short (no end record), one whose counts disagree, blocks of another snapshot,
 * an empty stack and unknown ids: ignored or counted, never used, never a crash. */
static void test_malformed(void)
{
    struct tb t;
    struct ga_report r;
    tb_init(&t, 19, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    stack(&t, 1 * MS, 5, NULL, 0);
    snap(&t, 2 * MS, GT_SNAP_BEGIN, 1, GT_TORCH_PEAK, 1, 1);
    segment(&t, 2 * MS, 1, 0, 0x100000, 20 * MiB, 1);
    block(&t, 2 * MS, 9, GT_TORCH_ACTIVE, 0x100000, 20 * MiB, 5); /* another snapshot's */
    snap(&t, 2 * MS, GT_SNAP_END, 1, GT_TORCH_PEAK, 1, 1);        /* counts disagree */
    snap(&t, 3 * MS, GT_SNAP_BEGIN, 2, GT_TORCH_PEAK, 1, 1);
    segment(&t, 3 * MS, 2, 0, 0x100000, 20 * MiB, 1);
    block(&t, 3 * MS, 2, GT_TORCH_ACTIVE, 0x100000, 20 * MiB, 77); /* unknown stack */
    tb_end(&t);                                                    /* no end: cut */
    run_report(&t, &r, "torch_malformed");
    CHECK_U64("no whole snapshot", r.torch.snapshots, 0);
    CHECK_U64("the one whose counts disagree is incomplete", r.torch.incomplete_snapshots, 1);
    char label[64];
    CHECK("an empty stack has no site", ga_torch_site_label(&r.torch, 5, label, 64) == NULL);
    CHECK("an unknown stack has no site", ga_torch_site_label(&r.torch, 77, label, 64) == NULL);
    ga_report_free(&r);
    tb_free_all(&t);
}

int main(void)
{
    test_merge();
    test_verdicts();
    test_malformed();
    return check_done();
}
