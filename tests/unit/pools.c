/* The pool model (analyzer/analyses/pools.c) fed by hand-made events: an annotated sub-allocator left
 * fragmented, annotation errors, a stream-ordered pool between and at samples, VMM reserve /
 * create / map / unmap / release, the OOM evidence, the snapshot at the process peak. Every
 * figure is derived from the construction in the comments. */
#include <stdlib.h>
#include <string.h>

#include "analyses/memory.h"
#include "analyses/pools.h"
#include "check.h"

#define T0  1000000000ull
#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static uint64_t now_ts = T0;

static struct ga_event ev_new(uint16_t type, uint16_t sub)
{
    struct ga_event e;
    memset(&e, 0, sizeof(e));
    e.type = type;
    e.sub = sub;
    e.ts = (now_ts += 1000);
    return e;
}

/* The event's record is its own copy (ev_new returns it by value, so r is set here). */
static void send(struct ga_pools *p, struct ga_event *e)
{
    e->r = &e->own;
    ga_pools_event(p, e);
}

static void pool_op(struct ga_pools *p, unsigned op, uint64_t pool, uint64_t addr, uint64_t size,
                    const char *name)
{
    struct ga_event e = ev_new(GT_REC_POOL, (uint16_t)op);
    e.own.pool = (struct gt_rec_pool){.ts = e.ts, .pool = pool, .addr = addr, .size = size};
    if (name) {
        e.str[0] = name;
        e.str_len[0] = (uint32_t)strlen(name);
    }
    send(p, &e);
}

static void block(struct ga_pools *p, unsigned op, uint64_t pool, uint64_t addr, uint64_t size)
{
    struct ga_event e = ev_new(GT_REC_BLOCK, (uint16_t)op);
    e.own.block = (struct gt_rec_block){.ts = e.ts, .pool = pool, .addr = addr, .size = size};
    send(p, &e);
}

static void alloc(struct ga_pools *p, unsigned api, uint64_t addr, uint64_t size, uint64_t aux)
{
    struct ga_event e = ev_new(GT_REC_ALLOC, (uint16_t)api);
    e.own.alloc = (struct gt_rec_alloc){.ts = e.ts, .addr = addr, .size = size, .aux = aux};
    send(p, &e);
}

static void gfree(struct ga_pools *p, unsigned api, uint64_t addr)
{
    struct ga_event e = ev_new(GT_REC_FREE, (uint16_t)api);
    e.own.free = (struct gt_rec_free){.ts = e.ts, .addr = addr};
    send(p, &e);
}

static void usage(struct ga_pools *p, uint64_t pool, uint64_t reserved, uint64_t used)
{
    struct ga_event e = ev_new(GT_REC_POOL_USAGE, 0);
    e.own.pool_usage = (struct gt_rec_pool_usage){
        .ts = e.ts, .pool = pool, .reserved_current = reserved, .used_current = used};
    send(p, &e);
}

static void object(struct ga_pools *p, unsigned api, uint64_t handle)
{
    struct ga_event e = ev_new(GT_REC_OBJECT, (uint16_t)api);
    e.own.object = (struct gt_rec_object){.ts = e.ts, .handle = handle};
    send(p, &e);
}

static void vmm(struct ga_pools *p, unsigned api, uint64_t addr, uint64_t size, uint64_t handle)
{
    struct ga_event e = ev_new(GT_REC_VMM_MAP, (uint16_t)api);
    e.own.vmm_map =
        (struct gt_rec_vmm_map){.ts = e.ts, .addr = addr, .size = size, .handle = handle};
    send(p, &e);
}

static void fail(struct ga_pools *p, uint64_t size)
{
    struct ga_event e = ev_new(GT_REC_ALLOC_FAIL, GT_API_cuMemAlloc_v2);
    e.own.alloc_fail = (struct gt_rec_alloc_fail){.ts = e.ts, .size = size, .result = 2};
    send(p, &e);
}

static const struct ga_pool *pool_named(const struct ga_pools *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->pools[i].name, name) == 0) return &p->pools[i];
    static const struct ga_pool none;
    return &none;
}

#define ARENA 0x77
#define BASE  0x10000ull

/* An arena of 1000 bytes cut into ten 100-byte blocks; blocks 1, 3, 5 freed: 300 bytes free in
 * three holes of 100. */
static void build_fragmented(struct ga_pools *p)
{
    pool_op(p, GT_POOL_CREATE, ARENA, 0, 0, "arena");
    pool_op(p, GT_POOL_ADD_RANGE, ARENA, BASE, 1000, NULL);
    for (uint64_t i = 0; i < 10; i++)
        block(p, GT_BLOCK_ALLOC, ARENA, BASE + 100 * i, 100);
    for (uint64_t i = 1; i <= 5; i += 2)
        block(p, GT_BLOCK_FREE, ARENA, BASE + 100 * i, 100);
}

static void test_annotated(void)
{
    struct ga_pools p;
    ga_pools_init(&p);
    p.t0 = T0;
    build_fragmented(&p);
    const struct ga_pool *q = pool_named(&p, "arena");
    CHECK_U64("arena: reserved 1000", q->now.reserved, 1000);
    CHECK_U64("arena: used 700", q->now.used, 700);
    CHECK_U64("arena: free 300", q->now.free, 300);
    CHECK_U64("arena: 3 free extents", q->now.extents, 3);
    CHECK_U64("arena: largest 100", q->now.largest, 100);
    CHECK("arena: fragmentation 1 - 100/300",
          ga_frag_ratio(&q->now) > 0.6666 && ga_frag_ratio(&q->now) < 0.6667);
    CHECK_U64("arena: peak used 1000 (all ten blocks)", q->peak_used, 1000);
    block(&p, GT_BLOCK_FAIL, ARENA, 0, 200); /* 300 free >= 200 > 100 largest */
    block(&p, GT_BLOCK_FAIL, ARENA, 0, 400); /* 300 free < 400 */
    block(&p, GT_BLOCK_FAIL, ARENA, 0, 50);  /* a hole of 100 would have served it */
    CHECK_U64("pool ooms: 3", p.n_ooms, 3);
    CHECK_STR("pool oom 200: fragmentation", ga_pool_verdict_name(p.ooms[0].verdict),
              "fragmentation");
    CHECK_U64("pool oom 200: free 300", p.ooms[0].f.free, 300);
    CHECK_U64("pool oom 200: largest 100", p.ooms[0].f.largest, 100);
    CHECK_STR("pool oom 400: exhausted", ga_pool_verdict_name(p.ooms[1].verdict), "exhausted");
    CHECK_STR("pool oom 50: unexplained", ga_pool_verdict_name(p.ooms[2].verdict), "unexplained");
    /* map: used [0,100) free [100,200) used [200,300) free [300,400) used [400,500) free
     * [500,600) used [600,1000) = 7 extents */
    const struct ga_pool_map *m = &p.ooms[0].map;
    CHECK_U64("map: 7 extents", m->n, 7);
    CHECK("map: second is free [100,200)",
          m->n >= 2 && !m->ext[1].used && m->ext[1].addr == BASE + 100 && m->ext[1].size == 100);
    CHECK("map: last is used [600,1000)",
          m->n == 7 && m->ext[6].used && m->ext[6].addr == BASE + 600 && m->ext[6].size == 400);
    CHECK("map: not truncated", !m->truncated);
    /* freeing block 2 joins holes 1..3: [100,400) + [500,600) */
    block(&p, GT_BLOCK_FREE, ARENA, BASE + 200, 0);
    CHECK_U64("after free of block 2: 2 extents", q->now.extents, 2);
    CHECK_U64("after free of block 2: largest 300", q->now.largest, 300);
    CHECK_U64("after free of block 2: free 400", q->now.free, 400);
    CHECK_U64("worst: 200 bytes stranded (free 300, largest 100)", q->worst.free - q->worst.largest,
              200);
    /* errors: none of them changes the state */
    block(&p, GT_BLOCK_FREE, ARENA, BASE + 100, 100);              /* free again */
    block(&p, GT_BLOCK_ALLOC, ARENA, BASE + 5000, 100);            /* outside the range */
    block(&p, GT_BLOCK_ALLOC, ARENA, BASE + 950, 100);             /* runs past the range */
    block(&p, GT_BLOCK_ALLOC, ARENA, BASE, 100);                   /* block 0 is live */
    pool_op(&p, GT_POOL_ADD_RANGE, ARENA, BASE + 500, 1000, NULL); /* overlaps the range */
    block(&p, GT_BLOCK_ALLOC, 0x99, BASE, 100);                    /* pool never created */
    CHECK_U64("errors: double free", p.errors[GA_PERR_DOUBLE_FREE], 1);
    CHECK_U64("errors: outside", p.errors[GA_PERR_BLOCK_OUTSIDE], 3); /* + the unknown pool's */
    CHECK_U64("errors: overlap", p.errors[GA_PERR_BLOCK_OVERLAP], 1);
    CHECK_U64("errors: range overlap", p.errors[GA_PERR_RANGE_OVERLAP], 1);
    CHECK_U64("errors: unknown pool", p.errors[GA_PERR_UNKNOWN_POOL], 1);
    CHECK_U64("errors left the state: free 400", q->now.free, 400);
    CHECK_U64("errors left the state: reserved 1000", q->now.reserved, 1000);
    block(&p, GT_BLOCK_FREE, ARENA, BASE, 50); /* block 0 was 100 */
    CHECK_U64("errors: size mismatch", p.errors[GA_PERR_SIZE_MISMATCH], 1);
    CHECK_U64("size mismatch still frees 100: free 500", q->now.free, 500);
    /* device 0: the arena only (the made-up pool 0x99 has no device) */
    struct ga_pool_evidence ev;
    ga_pools_oom_evidence(&p, 0, 1000, &ev);
    CHECK_U64("evidence: U = 500 free in the arena", ev.reserved_unused, 500);
    CHECK_U64("evidence: F = 400 ([0,400) after block 0 went)", ev.largest_free, 400);
    CHECK_U64("evidence: 1 pool", ev.pools, 1);
    CHECK_STR("evidence: arena holds the most", ev.pool_name, "arena");
    /* removing [0,500) drops blocks 4 and the rest stays */
    pool_op(&p, GT_POOL_REMOVE_RANGE, ARENA, BASE, 500, NULL);
    CHECK_U64("remove range: reserved 500", q->now.reserved, 500);
    CHECK_U64("remove range: free 100 ([500,600))", q->now.free, 100);
    CHECK_U64("remove range: blocks in it counted", p.errors[GA_PERR_BLOCK_IN_RANGE], 1);
    pool_op(&p, GT_POOL_DESTROY, ARENA, 0, 0, NULL);
    CHECK("destroyed: not live", !q->live);
    CHECK_U64("destroyed: device sums back to 0", p.devs[0].now.reserved, 0);
    ga_pools_finish(&p, now_ts);
    const struct ga_fseries *s = ga_pools_series(&p, 0);
    uint64_t rmax = 0, umax = 0;
    for (size_t b = 0; s && b < p.buckets; b++) {
        rmax = s->b[b].reserved_max > rmax ? s->b[b].reserved_max : rmax;
        umax = s->b[b].used_max > umax ? s->b[b].used_max : umax;
    }
    CHECK_U64("series: max reserved 1000", rmax, 1000);
    CHECK_U64("series: max used 1000", umax, 1000);
    ga_pools_free(&p);
}

#define POOL 0xabc0
static void test_stream(void)
{
    struct ga_pools p;
    ga_pools_init(&p);
    p.t0 = T0;
    object(&p, GT_API_cuMemPoolCreate, POOL);
    alloc(&p, GT_API_cuMemAllocFromPoolAsync, 0xa0000, 1 * MiB, POOL);
    usage(&p, POOL, 2 * MiB, 1 * MiB);
    alloc(&p, GT_API_cuMemAllocFromPoolAsync, 0xb0000, 512 * KiB, POOL);
    const struct ga_pool *q = &p.pools[0];
    CHECK_U64("stream: reserved 2 MiB (sample)", q->now.reserved, 2 * MiB);
    CHECK_U64("stream: used 1.5 MiB (sample + 512 KiB since)", q->now.used, 1536 * KiB);
    gfree(&p, GT_API_cuMemFreeAsync, 0xa0000);
    CHECK_U64("stream: used 512 KiB after the free", q->now.used, 512 * KiB);
    struct ga_pool_evidence ev;
    ga_pools_oom_evidence(&p, 0, 4 * MiB, &ev);
    CHECK_U64("stream evidence: U = 1.5 MiB", ev.reserved_unused, 1536 * KiB);
    CHECK_U64("stream evidence: all of it layout unknown", ev.unused_layout_unknown, 1536 * KiB);
    CHECK_U64("stream evidence: F = the pool's 1.5 MiB free as one extent", ev.largest_free,
              1536 * KiB);
    alloc(&p, GT_API_cuMemAllocFromPoolAsync, 0xd0000, 4 * MiB, POOL); /* the pool must grow */
    CHECK_U64("stream: grown to serve 4.5 MiB", q->now.reserved, 4608 * KiB);
    gfree(&p, GT_API_cuMemFreeAsync, 0xd0000);
    CHECK_U64("stream: no sample since: reserved stays 4.5 MiB", q->now.reserved, 4608 * KiB);
    CHECK_U64("stream: used back to 512 KiB", q->now.used, 512 * KiB);
    usage(&p, POOL, 512 * KiB, 512 * KiB); /* trimmed */
    CHECK_U64("stream: reserved 512 KiB after trim", q->now.reserved, 512 * KiB);
    CHECK_U64("stream: peak reserved 4.5 MiB", q->peak_reserved, 4608 * KiB);
    alloc(&p, GT_API_cuMemAllocAsync, 0xc0000, 100, 0); /* no pool handle: current pool */
    CHECK_U64("current pool: a second pool", p.n, 2);
    usage(&p, 0xdef0, 1 * MiB, 4 * KiB); /* the shim samples the current pool it looked up */
    const struct ga_pool *cur = &p.pools[1];
    CHECK_U64("current pool: the sample names it, no third pool", p.n, 2);
    CHECK_STR("current pool: renamed after its handle", cur->name, "mempool 0xdef0");
    alloc(&p, GT_API_cuMemAllocAsync, 0xc8000, 4 * KiB, 0);
    CHECK_U64("current pool: later allocations go to it: used 8 KiB", cur->now.used, 8 * KiB);
    CHECK_U64("current pool: reserved 1 MiB", cur->now.reserved, 1 * MiB);
    CHECK_U64("still 2 pools", p.n, 2);
    object(&p, GT_API_cuMemPoolDestroy, POOL);
    CHECK("destroyed", !q->live);
    ga_pools_finish(&p, now_ts);
    ga_pools_free(&p);
}

#define VA 0x700000000ull
static void test_vmm(void)
{
    struct ga_pools p;
    ga_pools_init(&p);
    p.t0 = T0;
    alloc(&p, GT_API_cuMemAddressReserve, VA, 8 * MiB, 0);
    alloc(&p, GT_API_cuMemCreate, 0x1, 2 * MiB, 0);
    alloc(&p, GT_API_cuMemCreate, 0x2, 2 * MiB, 0);
    vmm(&p, GT_API_cuMemMap, VA, 2 * MiB, 0x1);
    vmm(&p, GT_API_cuMemMap, VA + 4 * MiB, 2 * MiB, 0x2);
    const struct ga_pool *q = &p.pools[0];
    CHECK_U64("vmm: reserved 8 MiB", q->now.reserved, 8 * MiB);
    CHECK_U64("vmm: mapped 4 MiB", q->now.used, 4 * MiB);
    CHECK_U64("vmm: 2 unmapped holes", q->now.extents, 2);
    CHECK_U64("vmm: largest hole 2 MiB", q->now.largest, 2 * MiB);
    CHECK_U64("vmm: physical 4 MiB", p.devs[0].phys_created, 4 * MiB);
    CHECK_U64("vmm: all of it mapped", p.devs[0].phys_unused, 0);
    alloc(&p, GT_API_cuMemCreate, 0x3, 2 * MiB, 0);
    CHECK_U64("vmm: a handle not mapped: 2 MiB unused", p.devs[0].phys_unused, 2 * MiB);
    vmm(&p, GT_API_cuMemUnmap, VA + 4 * MiB, 2 * MiB, 0);
    CHECK_U64("vmm: unmapped: mapped 2 MiB", q->now.used, 2 * MiB);
    CHECK_U64("vmm: unmapped: 4 MiB physical unused", p.devs[0].phys_unused, 4 * MiB);
    gfree(&p, GT_API_cuMemRelease, 0x2);
    CHECK_U64("vmm: released: 4 MiB physical", p.devs[0].phys_created, 4 * MiB);
    CHECK_U64("vmm: released: 2 MiB unused", p.devs[0].phys_unused, 2 * MiB);
    gfree(&p, GT_API_cuMemRelease, 0x1); /* still mapped: stays */
    CHECK_U64("vmm: released while mapped: still 4 MiB", p.devs[0].phys_created, 4 * MiB);
    vmm(&p, GT_API_cuMemUnmap, VA, 2 * MiB, 0);
    CHECK_U64("vmm: unmapped after release: 2 MiB physical", p.devs[0].phys_created, 2 * MiB);
    struct ga_pool_evidence ev;
    ga_pools_oom_evidence(&p, 0, 1, &ev);
    CHECK_U64("vmm evidence: U = handle 3 (2 MiB)", ev.unused_vmm, 2 * MiB);
    gfree(&p, GT_API_cuMemAddressFree, VA);
    CHECK("vmm: address freed", !q->live);
    vmm(&p, GT_API_cuMemMap, VA, 2 * MiB, 0x3); /* outside any reservation now */
    CHECK_U64("vmm: a map outside reservations is counted", p.vmm_unmatched, 1);
    ga_pools_finish(&p, now_ts);
    ga_pools_free(&p);
}

/* The snapshot at the process peak is the state when the peak was reached, not later. */
static void test_peak(void)
{
    struct ga_pools p;
    struct ga_memory m;
    memset(&m, 0, sizeof(m));
    ga_pools_init(&p);
    p.t0 = T0;
    p.mem = &m;
    pool_op(&p, GT_POOL_CREATE, ARENA, 0, 0, "arena");
    pool_op(&p, GT_POOL_ADD_RANGE, ARENA, BASE, 1000, NULL);
    block(&p, GT_BLOCK_ALLOC, ARENA, BASE, 300);
    m.peak_total = 5000; /* the driver level reaches its peak at the next record */
    block(&p, GT_BLOCK_ALLOC, ARENA, BASE + 300, 200);
    block(&p, GT_BLOCK_FREE, ARENA, BASE, 300); /* after the peak */
    const struct ga_pool *q = &p.pools[0];
    CHECK("peak: snapshot taken", q->have_at_peak);
    CHECK_U64("peak: used 500 at the peak", q->at_peak.used, 500);
    CHECK_U64("peak: one free extent [500,1000)", q->at_peak.extents, 1);
    CHECK_U64("peak: map used [0,500) free [500,1000)", q->map_at_peak.n, 2);
    CHECK_U64("now: used 200", q->now.used, 200);
    fail(&p, 900);
    CHECK_U64("failure kept", p.n_fails, 1);
    CHECK_U64("failure: U 800", p.fails[0].ev.reserved_unused, 800);
    CHECK_U64("failure: F 500", p.fails[0].ev.largest_free, 500);
    CHECK_U64("failure: map [0,300) free, used, free", p.fails[0].map.n, 3);
    ga_pools_finish(&p, now_ts);
    ga_pools_free(&p);
}

/* Bounded: pools past GA_POOLS_MAX are counted, not kept. */
static void test_bounds(void)
{
    struct ga_pools p;
    ga_pools_init(&p);
    for (uint64_t i = 1; i <= GA_POOLS_MAX + 10; i++)
        pool_op(&p, GT_POOL_CREATE, i, 0, 0, NULL);
    CHECK_U64("pools kept", p.n, GA_POOLS_MAX);
    CHECK_U64("pools counted only", p.pools_untracked, 10);
    pool_op(&p, GT_POOL_ADD_RANGE, 5, UINT64_MAX - 10, 100, NULL); /* wraps */
    CHECK_U64("wrapping range refused", p.errors[GA_PERR_BAD_RANGE], 1);
    ga_pools_finish(&p, now_ts);
    ga_pools_free(&p);
}

/* ---- annotated pools against a brute-force model ----------------------------------------------
 * Three pool ids over 512 addresses, random creates, destroys, ranges, blocks, frees and fails,
 * many of them wrong on purpose; after every step each pool's reserved/used/free/extents/largest
 * and every error counter must equal what a bitmap model following the rules of ANALYSES.md says.
 * Process peaks come at random records; at the end each pool's figures at the latest peak must
 * be the model's snapshot taken then (none for a pool made after it). */
#define MN     512
#define MPOOLS 3

struct mpool {
    int live;
    int at_peak_known; /* lived at the latest peak (and has not been re-created since) */
    struct ga_frag at_peak;
    unsigned char owned[MN];
    uint32_t blk[MN]; /* start + 1 of the live block holding the address, 0 none */
};

static uint32_t mrng;
static uint32_t mrnd(void)
{
    mrng ^= mrng << 13;
    mrng ^= mrng >> 17;
    mrng ^= mrng << 5;
    return mrng;
}

static void m_reset(struct mpool *m)
{
    memset(m, 0, sizeof(*m));
    m->live = 1;
}

/* The model's version of each record; returns the error it counts, or -1. */
static int m_add(struct mpool *m, uint64_t a, uint64_t len)
{
    if (!len) return GA_PERR_BAD_RANGE;
    for (uint64_t i = a; i < a + len; i++)
        if (m->owned[i]) return GA_PERR_RANGE_OVERLAP;
    memset(m->owned + a, 1, len);
    return -1;
}

/* Both errors may apply: memory not owned (returned), and blocks going with the range
 * (counted in errs here). */
static int m_remove(struct mpool *m, uint64_t a, uint64_t len, uint64_t *errs)
{
    int err = -1;
    if (!len) return GA_PERR_BAD_RANGE;
    for (uint64_t i = a; i < a + len; i++)
        if (!m->owned[i]) err = GA_PERR_RANGE_UNKNOWN;
    int dropped = 0;
    for (uint64_t i = a; i < a + len; i++) /* blocks reaching into the range go whole */
        if (m->blk[i]) {
            uint32_t s = m->blk[i];
            for (uint64_t k = 0; k < MN; k++)
                if (m->blk[k] == s) m->blk[k] = 0;
            dropped = 1;
        }
    memset(m->owned + a, 0, len);
    if (dropped) errs[GA_PERR_BLOCK_IN_RANGE]++;
    return err;
}

static int m_alloc(struct mpool *m, uint64_t a, uint64_t len)
{
    if (!len) return GA_PERR_BAD_RANGE;
    for (uint64_t i = a; i < a + len; i++)
        if (!m->owned[i]) return GA_PERR_BLOCK_OUTSIDE;
    for (uint64_t i = a; i < a + len; i++)
        if (m->blk[i]) return GA_PERR_BLOCK_OVERLAP;
    for (uint64_t i = a; i < a + len; i++)
        m->blk[i] = (uint32_t)a + 1;
    return -1;
}

static int m_free(struct mpool *m, uint64_t a, uint64_t size)
{
    uint64_t n = 0;
    if (m->blk[a] != a + 1) return GA_PERR_DOUBLE_FREE;
    for (uint64_t i = a; i < MN && m->blk[i] == a + 1; i++, n++)
        m->blk[i] = 0;
    return size && size != n ? GA_PERR_SIZE_MISMATCH : -1;
}

static struct ga_frag m_frag(const struct mpool *m)
{
    struct ga_frag f = {.layout_known = 1};
    uint64_t run = 0;
    for (uint64_t i = 0; i <= MN; i++) {
        int fr = i < MN && m->owned[i] && !m->blk[i];
        if (i < MN && m->owned[i]) f.reserved++;
        if (i < MN && m->blk[i]) f.used++;
        if (fr) {
            run++;
            continue;
        }
        if (run) f.extents++;
        if (run > f.largest) f.largest = run;
        run = 0;
    }
    f.free = f.reserved - f.used;
    return f;
}

static const struct ga_pool *live_pool(const struct ga_pools *p, uint64_t id)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->pools[i].live && p->pools[i].kind == GA_POOL_ANNOTATED && p->pools[i].id == id)
            return &p->pools[i];
    return NULL;
}

static int m_step(struct ga_pools *p, struct mpool *ms, uint64_t *errs, char *why, size_t n)
{
    unsigned k = mrnd() % MPOOLS, op = mrnd() % 100;
    uint64_t id = 0x100 + k, a = mrnd() % MN, len = mrnd() % 10 == 0 ? 0 : 1 + mrnd() % 40;
    struct mpool *m = &ms[k];
    int err = -1;
    if (a + len > MN) len = MN - a;
    if (op < 2) { /* create */
        if (m->live) errs[GA_PERR_DUP_CREATE]++;
        m_reset(m);
        pool_op(p, GT_POOL_CREATE, id, 0, 0, NULL);
    } else if (op < 3) { /* destroy */
        if (!m->live) {
            errs[GA_PERR_UNKNOWN_POOL]++;
        } else {
            for (uint64_t i = 0; i < MN; i++)
                if (m->blk[i]) err = GA_PERR_BLOCK_IN_RANGE;
            memset(m, 0, sizeof(*m));
        }
        pool_op(p, GT_POOL_DESTROY, id, 0, 0, NULL);
    } else {
        if (!m->live) { /* the pool is made, with an error */
            errs[GA_PERR_UNKNOWN_POOL]++;
            m_reset(m);
        }
        if (op < 25) {
            err = m_add(m, a, len);
            pool_op(p, GT_POOL_ADD_RANGE, id, a, len, NULL);
        } else if (op < 32) {
            err = m_remove(m, a, len, errs);
            pool_op(p, GT_POOL_REMOVE_RANGE, id, a, len, NULL);
        } else if (op < 70) {
            err = m_alloc(m, a, len);
            block(p, GT_BLOCK_ALLOC, id, a, len);
        } else if (op < 97) {
            if (mrnd() % 4) /* mostly aim at a live block */
                for (uint64_t i = 0; i < MN; i++)
                    if (m->blk[(a + i) % MN] == (a + i) % MN + 1) {
                        a = (a + i) % MN;
                        break;
                    }
            uint64_t size = mrnd() % 3 == 0 ? 0 : mrnd() % 8 == 0 ? 1 : 0;
            if (m->blk[a] == a + 1 && mrnd() % 2)
                for (uint64_t i = a; i < MN && m->blk[i] == a + 1; i++)
                    size++;
            err = m_free(m, a, size);
            block(p, GT_BLOCK_FREE, id, a, size);
        } else {
            block(p, GT_BLOCK_FAIL, id, 0, len + 1);
        }
    }
    if (err >= 0) errs[err]++;
    for (unsigned e = 0; e < GA_PERR_COUNT; e++)
        if (p->errors[e] != errs[e])
            return snprintf(why, n, "error %s: %" PRIu64 ", model %" PRIu64, ga_pool_err_name(e),
                            p->errors[e], errs[e]),
                   0;
    for (unsigned i = 0; i < MPOOLS; i++) {
        const struct ga_pool *q = live_pool(p, 0x100 + i);
        if (!q != !ms[i].live) return snprintf(why, n, "pool %u liveness", i), 0;
        if (!q) continue;
        struct ga_frag f = m_frag(&ms[i]);
        if (q->now.reserved != f.reserved || q->now.used != f.used || q->now.free != f.free ||
            q->now.extents != f.extents || q->now.largest != f.largest)
            return snprintf(why, n,
                            "pool %u: %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64
                            " vs model %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64,
                            i, q->now.reserved, q->now.used, q->now.free, q->now.extents,
                            q->now.largest, f.reserved, f.used, f.free, f.extents, f.largest),
                   0;
    }
    return 1;
}

/* Mid-run, what the pool will report for the latest peak: saved if it changed since the peak,
 * else its figures now (ga_pools_finish does the same). 1 if it matches the model. */
static int at_peak_ok(const struct ga_pools *p, const struct mpool *ms, char *why, size_t n)
{
    for (unsigned k = 0; p->peak_ver && k < MPOOLS; k++) {
        const struct ga_pool *q = live_pool(p, 0x100 + k);
        if (!q) continue;
        int saved = q->snap_ver == p->peak_ver, have = saved ? q->have_at_peak : 1;
        const struct ga_frag *g = saved ? &q->at_peak : &q->now, *w = &ms[k].at_peak;
        if (have != ms[k].at_peak_known)
            return snprintf(why, n, "pool %u: lived at the peak %d, model %d", k, have,
                            ms[k].at_peak_known),
                   0;
        if (have && (g->reserved != w->reserved || g->used != w->used || g->extents != w->extents ||
                     g->largest != w->largest))
            return snprintf(why, n,
                            "pool %u: figures at the peak (used %" PRIu64 ", model %" PRIu64 ")", k,
                            g->used, w->used),
                   0;
    }
    return 1;
}

static void test_model(uint32_t seed)
{
    struct ga_memory mem;
    struct ga_pools p;
    struct mpool ms[MPOOLS];
    uint64_t errs[GA_PERR_COUNT] = {0};
    char why[200] = "", what[300];
    int ok = 1, step = 0;
    memset(ms, 0, sizeof(ms));
    memset(&mem, 0, sizeof(mem));
    mrng = seed;
    ga_pools_init(&p);
    p.mem = &mem;
    for (; step < 20000 && ok; step++) {
        int peak = mrnd() % 50 == 0; /* memory.c saw a new process peak at this record */
        if (peak) mem.peak_total++;
        ok = m_step(&p, ms, errs, why, sizeof(why));
        for (unsigned k = 0; peak && k < MPOOLS; k++) {
            ms[k].at_peak_known = ms[k].live;
            if (ms[k].live) ms[k].at_peak = m_frag(&ms[k]);
        }
        ok = ok && at_peak_ok(&p, ms, why, sizeof(why));
    }
    ga_pools_finish(&p, now_ts);
    /* each pool live at the end: its figures at the latest peak, or none if it is younger */
    for (unsigned k = 0; ok && k < MPOOLS; k++) {
        const struct ga_pool *q = live_pool(&p, 0x100 + k);
        if (!q) continue;
        const struct ga_frag *w = &ms[k].at_peak, *g = &q->at_peak;
        if (q->have_at_peak != ms[k].at_peak_known)
            ok = 0, snprintf(why, sizeof(why), "pool %u: at peak %d, model %d", k, q->have_at_peak,
                             ms[k].at_peak_known);
        else if (q->have_at_peak && (g->reserved != w->reserved || g->used != w->used ||
                                     g->extents != w->extents || g->largest != w->largest))
            ok = 0, snprintf(why, sizeof(why), "pool %u: figures at the peak", k);
    }
    /* each device's sums equal the sums over its live pools */
    for (size_t d = 0; ok && d < p.ndev; d++) {
        uint64_t r = 0, u = 0, e = 0, l = 0;
        for (size_t i = 0; i < p.n; i++) {
            const struct ga_pool *q = &p.pools[i];
            if (!q->live || q->device != p.devs[d].device) continue;
            r += q->now.reserved, u += q->now.used, e += q->now.extents;
            l = q->now.largest > l ? q->now.largest : l;
        }
        const struct ga_frag *f = &p.devs[d].now;
        if (f->reserved != r || f->used != u || f->extents != e || f->largest != l)
            ok = 0, snprintf(why, sizeof(why), "device %d sums", p.devs[d].device);
    }
    snprintf(what, sizeof(what),
             "model, seed %u: %d steps, every figure and error count as the bitmap model%s%s", seed,
             step, ok ? "" : ": ", why);
    CHECK(what, ok);
    ga_pools_free(&p);
}

int main(void)
{
    test_annotated();
    test_stream();
    test_vmm();
    test_peak();
    test_bounds();
    for (uint32_t seed = 1; seed <= 5; seed++)
        test_model(seed * 2654435761u);
    return check_done();
}
