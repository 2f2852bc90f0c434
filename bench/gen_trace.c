/* gen_trace [--gpu] [--threads T] [--compress LEVEL [--pack]] EVENTS OUT: writes a synthetic but
 * valid gputrace trace of about EVENTS records, fast, for the analyzer benchmarks (the shim would
 * take minutes for 100 M).
 *
 * It lays the file out the way the shim does (runtime.c): the file header, a tracer chunk (tid 0)
 * with the process, driver, device and CUPTI-status records, then rounds; in each round every
 * thread appends records in time order to its own 256 KiB buffer, written out as host chunks when
 * full and at the end of the round, followed by a tracer chunk with a watermark that covers the
 * round (the shim's flush period). The CUPTI variant (--gpu) adds, per launch, the GPU kernel
 * record and the external-correlation record, written as GPU chunks of up to 1 MiB after each
 * round (CUPTI delivers late).
 *
 * The mix keeps live state bounded whatever EVENTS is: per thread, a cycle of
 *   alloc, launch, launch, free (of the allocation made 64 cycles earlier)
 * so each thread holds 64 live allocations at any time; 16 kernel handles; 4 threads.
 * EVENTS counts the records of the mix (host, plus GPU with --gpu); the few fixed records
 * (process, driver, device, thread, function names, watermarks, end) come on top and are
 * reported on stdout with the totals: "records=N bytes=B launches=L allocs=A".
 *
 * --mem (the memory analysis' scaling, issue 5): only allocations and frees, EVENTS of them. Each
 * thread first fills --live L slots (default 1024), then alternates: free a pseudo-random live
 * slot, allocate into it again with a new size (512 B to 32 MiB, powers of two), so live state is
 * L allocations per thread whatever EVENTS is. Every second allocation carries one of --stacks K
 * host stacks (default 64, 32 frames each, a shared 16-frame trunk; written once as stack nodes).
 * --pool P: P % of the pairs are blocks of an annotated pool (one per thread, 1,024 slots of
 * 2 MiB, blocks 256 B to 2 MiB) instead of driver allocations.
 *
 * --timeline (the GPU timeline and idle-gap analyses, issue 6): EVENTS counts GPU kernel records.
 * 4 threads on 2 devices, two streams each (8 streams). Each thread launches bursts of 1-16
 * kernels (2 us to 512 us each, about log-uniform; a launch costs the host 5 us), every launch with
 * its kernel and external-correlation records, one in four bursts followed by a cuStreamSynchronize
 * that waits for both streams, then host work of 1 us to 2 ms (one in 64: 5-50 ms): so the GPUs
 * have gaps of every length, with host-busy, sync and allocation causes (one burst in 16 is
 * bracketed by an allocation and its free). Launches carry host stacks (--stacks K, default 32).
 * Threads are stepped in time order, so watermarks keep the reader's re-ordering buffer small.
 * --samples HZ: each thread also has host stack samples (record 73) at HZ, written at its next
 * step as the shim writes them, on CPU two in three, with one of the launch stacks.
 *
 * --compress LEVEL (any mode): every chunk goes through the shim's packer (common/codec.c,
 * gt_chunk_pack with its default codec at that zstd level), as the shim writes them by default;
 * a chunk that does not shrink stays as it is. 0 (the default): no chunk is compressed. --pack:
 * the threads' host chunks use GT_CODEC_PACK_DELTA instead, as the shim writes them (format 3). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "gputrace/trace_api.h"

#define THREAD_BUF   (256u << 10) /* the shim's per-thread buffer (runtime.c GT_BUF_SIZE) */
#define GPU_BUF      (1u << 20)   /* the shim's GPU staging buffer (cupti.c) */
#define ROUND_EVENTS 25000u       /* mix records per round over all threads: one "flush period" */
#define LIVE_PER_THR 64u
#define KERNELS      16u
#define MAX_THREADS  64
#define T0           1000000000000ull /* trace start, CLOCK_MONOTONIC ns */
#define STEP_NS      400u             /* time between two records of one thread */
#define MAX_LIVE     65536u
#define POOL_SLOTS   1024u
#define POOL_SLOT    (2ull << 20)
#define STACK_TRUNK  16u /* frames shared by all synthetic stacks */
#define STACK_BRANCH 16u /* frames of each stack's own branch */
#define TL_DEVICES   2u
#define TL_STREAMS   2u /* per thread */

enum mode { MODE_MIX, MODE_MEM, MODE_TIMELINE };

/* A live allocation slot (--mem, --timeline). */
struct slot {
    uint64_t addr, size;
};

struct buf {
    uint8_t *p;
    uint32_t used, cap;
    uint32_t seq;
};

struct thr {
    struct buf b;
    uint32_t tid;
    uint64_t index; /* shim thread index, for correlation ids */
    uint64_t cycle, step, corr;
    uint64_t ts;
    uint64_t rng;
    /* --mem */
    uint32_t filled, pending; /* slots filled so far; slot freed last (to be refilled) + 1 */
    int pending_pool;
    struct slot *live, *blocks;
    uint32_t bfilled;
    /* --timeline */
    uint32_t burst, state;
    uint64_t stream_free[TL_STREAMS];
    int alloc_open;
    uint64_t next_sample; /* --samples */
};

static struct {
    int fd;
    uint64_t bytes, records, launches, allocs, mix;
    uint64_t frees, blocks, kernels, spans;
    struct buf own, gpu;
    uint32_t cupti_corr;
    int gpu_on;
    enum mode mode;
    uint32_t live, stacks, pool_pct, ndev;
    uint32_t sample_hz; /* --samples (--timeline) */
    uint64_t samples;
    int level;                /* --compress */
    struct gt_packer pk, hpk; /* hpk: threads' host chunks (--pack: GT_CODEC_PACK_DELTA) */
} G;

static void die(const char *what)
{
    fprintf(stderr, "gen_trace: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void out(const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(G.fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write");
        b += w, n -= (size_t)w;
        G.bytes += (uint64_t)w;
    }
}

static void chunk_out(struct buf *b, uint16_t kind, uint32_t tid)
{
    if (!b->used) return;
    struct gt_chunk_header ch;
    const void *payload = b->p;
    if (G.level)
        payload = gt_chunk_pack(kind == GT_CHUNK_HOST && tid ? &G.hpk : &G.pk, &ch, kind, tid,
                                b->seq++, b->p, b->used);
    else
        gt_chunk_header_init(&ch, kind, tid, b->seq++, b->p, b->used);
    out(&ch, sizeof(ch));
    out(payload, ch.payload_size);
    b->used = 0;
}

static void buf_init(struct buf *b, uint32_t cap)
{
    b->p = calloc(1, cap);
    if (!b->p) die("calloc");
    b->cap = cap;
}

/* Room for a record of `size` bytes: a full buffer is written out first, as the shim does. */
static void *rec(struct buf *b, uint16_t kind, uint32_t tid, uint16_t type, uint16_t sub,
                 uint32_t size)
{
    if (b->used + size > b->cap) chunk_out(b, kind, tid);
    struct gt_rec_header *h = (struct gt_rec_header *)(b->p + b->used);
    memset(h, 0, size);
    h->type = type, h->sub = sub, h->size = size;
    b->used += size;
    G.records++;
    return h;
}

/* A record with text after its fixed part. */
static void *rec_text(struct buf *b, uint16_t kind, uint32_t tid, uint16_t type, uint16_t sub,
                      size_t fixed, const char *text, uint32_t len)
{
    uint8_t *r = rec(b, kind, tid, type, sub, gt_rec_size(fixed, len));
    memcpy(r + fixed, text, len);
    return r;
}

#define OWN(type, sub, T) ((T *)rec(&G.own, GT_CHUNK_HOST, 0, type, sub, sizeof(T)))

static void process_facts(void)
{
    static const char data[] = "gen_trace\0benchhost/bench/gen_trace";
    struct gt_rec_process *p =
        rec_text(&G.own, GT_CHUNK_HOST, 0, GT_REC_PROCESS, 0, sizeof(*p), data, sizeof(data) - 1);
    p->ts = T0, p->pid = 4242, p->ppid = 1, p->start_realtime_ns = 1700000000000000000ull;
    p->argc = 1, p->cmdline_len = 10, p->host_len = 9, p->exe_len = 16;
    struct gt_rec_driver *d = OWN(GT_REC_DRIVER, 0, struct gt_rec_driver);
    d->ts = T0 + 1, d->driver_version = 13000, d->device_count = (int32_t)G.ndev;
    static const char name[] = "gputrace simulated GPU";
    for (uint32_t i = 0; i < G.ndev; i++) {
        struct gt_rec_device *v = rec_text(&G.own, GT_CHUNK_HOST, 0, GT_REC_DEVICE, 0, sizeof(*v),
                                           name, sizeof(name) - 1);
        v->ts = T0 + 2, v->ordinal = (int32_t)i, v->cc_major = 9, v->cc_minor = 0;
        v->name_len = sizeof(name) - 1, v->total_bytes = 80ull << 30;
    }
    static const char off[] = "disabled by GPUTRACE_CUPTI=off";
    static const char lib[] = "/bench/libcupti.so.13";
    const char *text = G.gpu_on ? lib : off;
    uint32_t len = (uint32_t)strlen(text);
    struct gt_rec_cupti *c =
        rec_text(&G.own, GT_CHUNK_HOST, 0, GT_REC_CUPTI,
                 G.gpu_on ? GT_CUPTI_ON : GT_CUPTI_OFF_BY_USER, sizeof(*c), text, len);
    c->ts = T0 + 3, c->version = G.gpu_on ? 130001 : 0;
    c->path_len = G.gpu_on ? len : 0, c->reason_len = G.gpu_on ? 0 : len;
}

static uint64_t kernel_handle(uint64_t k)
{
    return 0x7f0000001000ull + k * 0x100;
}

static void thread_start(struct thr *t, int i)
{
    buf_init(&t->b, THREAD_BUF);
    t->tid = 10000 + (uint32_t)i;
    t->index = (uint64_t)i + 1;
    t->ts = T0 + 1000 + (uint64_t)i * (STEP_NS / 4);
    char name[16];
    int n = snprintf(name, sizeof(name), "worker%d", i);
    struct gt_rec_thread *r =
        rec_text(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_THREAD, 0, sizeof(*r), name, (uint32_t)n);
    r->ts = t->ts, r->tid = t->tid, r->name_len = (uint32_t)n;
    if (i != 0) return;
    for (uint64_t k = 0; k < KERNELS; k++) { /* names once per handle, as the shim does */
        char fn[64];
        int len = snprintf(fn, sizeof(fn), "_Z12bench_kernelILi%uEEvPfS0_i", (unsigned)k);
        struct gt_rec_func *f =
            rec_text(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_FUNC, 0, sizeof(*f), fn, (uint32_t)len);
        f->ts = t->ts, f->handle = kernel_handle(k), f->kind = GT_FUNC_FUNCTION;
        f->name_len = (uint32_t)len;
    }
}

static uint64_t slot_addr(const struct thr *t, uint64_t alloc_no)
{
    return 0x680000000000ull + (t->index << 32) + (alloc_no % (2 * LIVE_PER_THR)) * 0x10000;
}

static void gpu_kernel(uint64_t corr, uint64_t k, uint64_t start, uint64_t end, uint32_t dev,
                       uint32_t stream)
{
    uint32_t cc = ++G.cupti_corr;
    struct gt_rec_gpu_extcorr *e = rec(&G.gpu, GT_CHUNK_GPU, 0, GT_REC_GPU_EXTCORR, 0, sizeof(*e));
    e->ext = corr, e->corr = cc, e->kind = 7; /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 */
    struct gt_rec_gpu_kernel *g = rec(&G.gpu, GT_CHUNK_GPU, 0, GT_REC_GPU_KERNEL, 0, sizeof(*g));
    g->start = start, g->end = end, g->corr = cc;
    g->device = dev, g->context = 1 + dev, g->stream = stream;
    g->name_id = (uint32_t)k + 1;
    G.kernels++;
}

static void gpu_records(const struct thr *t, uint64_t corr, uint64_t k, uint64_t ts)
{
    gpu_kernel(corr, k, ts + 2000, ts + 2000 + 300, 0, 10 + (uint32_t)t->index);
    G.mix += 2;
}

static void launch(struct thr *t)
{
    uint64_t k = (t->cycle * 7 + t->step) % KERNELS;
    struct gt_rec_launch *l =
        rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_LAUNCH, GT_API_cuLaunchKernel, sizeof(*l));
    uint64_t corr = (t->index << 40) | ++t->corr;
    l->ts = t->ts, l->func = kernel_handle(k), l->stream = 0x550000000000ull + t->index;
    l->corr = corr;
    l->grid[0] = 1024, l->grid[1] = l->grid[2] = 1;
    l->block[0] = 256, l->block[1] = l->block[2] = 1;
    l->dur_ns = 350;
    G.launches++;
    if (G.gpu_on) gpu_records(t, corr, k, t->ts);
}

/* One record of the thread's cycle. */
static void step(struct thr *t)
{
    switch (t->step) {
    case 0: {
        struct gt_rec_alloc *a =
            rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, sizeof(*a));
        a->ts = t->ts, a->addr = slot_addr(t, t->cycle);
        a->size = 4096u << (t->cycle % 5), a->ctx = 0x5a0000001000ull, a->device = 0;
        G.allocs++;
        break;
    }
    case 1:
    case 2:
        launch(t);
        break;
    case 3:
        if (t->cycle >= LIVE_PER_THR) {
            struct gt_rec_free *f =
                rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_FREE, GT_API_cuMemFree_v2, sizeof(*f));
            f->ts = t->ts, f->addr = slot_addr(t, t->cycle - LIVE_PER_THR);
        } else { /* the first cycles have nothing old enough to free yet: launch instead */
            launch(t);
        }
        break;
    }
    G.mix++;
    t->ts += STEP_NS;
    if (++t->step == 4) t->step = 0, t->cycle++;
}

/* ---- --mem and --timeline ------------------------------------------------------------------ */

static uint64_t rnd(struct thr *t) /* xorshift64*: the same file for the same arguments */
{
    t->rng ^= t->rng >> 12, t->rng ^= t->rng << 25, t->rng ^= t->rng >> 27;
    return t->rng * 0x2545f4914f6cdd1dull;
}

/* Innermost node of synthetic stack k (ids: trunk 1..16, then 16 per branch). */
static uint32_t stack_id(uint64_t k)
{
    return G.stacks ? STACK_TRUNK + (uint32_t)(k % G.stacks) * STACK_BRANCH + STACK_BRANCH : 0;
}

/* The stack tree, once, in the tracer's chunk: a shared trunk, then one branch per stack. */
static void write_stacks(void)
{
    uint64_t ips[STACK_TRUNK];
    for (uint32_t i = 0; i < STACK_TRUNK; i++)
        ips[i] = 0x401000 + i * 0x40;
    struct gt_rec_stack *r = rec_text(&G.own, GT_CHUNK_HOST, 0, GT_REC_STACK, 0, sizeof(*r),
                                      (const char *)ips, sizeof(ips));
    r->ts = T0 + 4, r->first_id = 1, r->parent = 0, r->ips_len = sizeof(ips);
    for (uint32_t k = 0; k < G.stacks; k++) {
        uint64_t b[STACK_BRANCH];
        for (uint32_t i = 0; i < STACK_BRANCH; i++)
            b[i] = 0x500000 + (uint64_t)k * 0x1000 + i * 0x40;
        r = rec_text(&G.own, GT_CHUNK_HOST, 0, GT_REC_STACK, 0, sizeof(*r), (const char *)b,
                     sizeof(b));
        r->ts = T0 + 4, r->first_id = STACK_TRUNK + 1 + k * STACK_BRANCH;
        r->parent = STACK_TRUNK, r->ips_len = sizeof(b);
        if (G.own.used > G.own.cap / 2) chunk_out(&G.own, GT_CHUNK_HOST, 0);
    }
}

static uint64_t pool_handle(const struct thr *t)
{
    return 0x900000ull + t->index * 0x100;
}

static uint64_t pool_base(const struct thr *t)
{
    return 0x7e0000000000ull + (t->index << 36);
}

static void pool_start(struct thr *t)
{
    char name[32];
    int n = snprintf(name, sizeof(name), "bench_pool%u", (unsigned)t->index);
    struct gt_rec_pool *p = rec_text(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_POOL, GT_POOL_CREATE,
                                     sizeof(*p), name, (uint32_t)n);
    p->ts = t->ts, p->pool = pool_handle(t), p->device = 0, p->name_len = (uint32_t)n;
    p = rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_POOL, GT_POOL_ADD_RANGE, sizeof(*p));
    p->ts = t->ts, p->pool = pool_handle(t), p->device = 0;
    p->addr = pool_base(t), p->size = POOL_SLOTS * POOL_SLOT;
}

static void mem_alloc(struct thr *t, uint32_t j, uint64_t size, uint64_t addr, uint32_t stack)
{
    struct gt_rec_alloc *a =
        rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, sizeof(*a));
    a->ts = t->ts, a->addr = addr, a->size = size, a->ctx = 0x5a0000001000ull, a->device = 0;
    a->stack = stack, a->dur_ns = 1500;
    t->live[j].addr = addr, t->live[j].size = size;
    G.allocs++;
}

static void mem_free(struct thr *t, uint64_t addr)
{
    struct gt_rec_free *f =
        rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_FREE, GT_API_cuMemFree_v2, sizeof(*f));
    f->ts = t->ts, f->addr = addr, f->dur_ns = 800;
    G.frees++;
}

static void block_op(struct thr *t, uint16_t op, uint32_t j, uint64_t size, uint32_t stack)
{
    struct gt_rec_block *b = rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_BLOCK, op, sizeof(*b));
    b->ts = t->ts, b->pool = pool_handle(t), b->addr = pool_base(t) + j * POOL_SLOT;
    b->size = size, b->stack = stack;
    if (op == GT_BLOCK_ALLOC) t->blocks[j].size = size, G.blocks++;
}

/* One record of a --mem thread: fill the live slots, then free a random one and refill it. */
static void mem_step(struct thr *t)
{
    uint64_t r = rnd(t);
    uint32_t stack = (t->cycle++ & 1) ? stack_id(r >> 40) : 0;
    if (t->pending) {
        uint32_t j = t->pending - 1;
        t->pending = 0;
        if (t->pending_pool)
            block_op(t, GT_BLOCK_ALLOC, j, 256ull << (r % 14), stack);
        else
            mem_alloc(t, j, 512ull << (r % 17), t->live[j].addr, stack);
    } else if (G.pool_pct && (r >> 20) % 100 < G.pool_pct) {
        if (t->bfilled < POOL_SLOTS / 2) {
            block_op(t, GT_BLOCK_ALLOC, t->bfilled++, 256ull << (r % 14), stack);
        } else {
            uint32_t j = (uint32_t)((r >> 8) % t->bfilled);
            block_op(t, GT_BLOCK_FREE, j, t->blocks[j].size, 0);
            t->pending = j + 1, t->pending_pool = 1;
        }
    } else if (t->filled < G.live) {
        uint32_t j = t->filled++;
        mem_alloc(t, j, 512ull << (r % 17),
                  0x680000000000ull + (t->index << 44) + (uint64_t)j * (64ull << 20), stack);
    } else {
        uint32_t j = (uint32_t)((r >> 8) % G.live);
        mem_free(t, t->live[j].addr);
        t->pending = j + 1, t->pending_pool = 0;
    }
    G.mix++;
    t->ts += STEP_NS;
}

static uint64_t stream_handle(const struct thr *t, uint32_t s)
{
    return 0x550000000000ull + t->index * 16 + s;
}

static void tl_launch(struct thr *t)
{
    uint64_t r = rnd(t);
    uint32_t s = (uint32_t)(r % TL_STREAMS);
    uint32_t dev = (uint32_t)((t->index - 1) % TL_DEVICES);
    uint64_t k = (r >> 8) % KERNELS;
    uint64_t corr = (t->index << 40) | ++t->corr;
    struct gt_rec_launch *l =
        rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_LAUNCH, GT_API_cuLaunchKernel, sizeof(*l));
    l->ts = t->ts, l->func = kernel_handle(k), l->stream = stream_handle(t, s), l->corr = corr;
    l->grid[0] = 1024, l->grid[1] = l->grid[2] = 1;
    l->block[0] = 256, l->block[1] = l->block[2] = 1;
    l->dur_ns = 5000, l->stack = stack_id(r >> 32);
    G.launches++;
    uint64_t d = 2000ull << ((r >> 16) % 8);
    d += (r >> 24) % d; /* 2 us .. 512 us */
    uint64_t start = t->ts + 4000;
    if (start < t->stream_free[s]) start = t->stream_free[s];
    t->stream_free[s] = start + d;
    gpu_kernel(corr, k, start, start + d, dev, 10 + (uint32_t)t->index * TL_STREAMS + s);
    t->ts += 5000;
}

/* --samples HZ: the host samples the shim's sampler would have taken on the thread up to its
 * clock, written now (as the shim's thread writes them at its next hooked call): on or off CPU,
 * with one of the synthetic stacks. */
static void tl_samples(struct thr *t, uint64_t r)
{
    uint64_t period = 1000000000ull / G.sample_hz;
    if (!t->next_sample) t->next_sample = t->ts + period;
    for (; t->next_sample <= t->ts; t->next_sample += period, r = r * 0x9e3779b97f4a7c15ull + 1) {
        struct gt_rec_host_sample *h =
            rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_HOST_SAMPLE, 0, sizeof(*h));
        h->ts = t->ts, h->sample_ts = t->next_sample, h->interval_ns = period;
        h->tid = t->tid, h->stack = stack_id(r >> 20);
        h->flags = (r >> 33) % 3 ? GT_SAMPLE_ON_CPU : 0;
        h->cpu_ns = h->flags ? period : period / 50;
        G.samples++;
    }
}

/* One host record of a --timeline thread: [alloc] launch x burst [free] [sync] then host work. */
static void tl_step(struct thr *t)
{
    uint64_t r = rnd(t);
    if (G.sample_hz) tl_samples(t, r);
    switch (t->state) {
    case 0: /* a new burst */
        t->burst = 1 + (uint32_t)(r % 16);
        t->state = 1;
        if ((r >> 8) % 16 == 0) {
            uint32_t j = (uint32_t)(t->cycle++ % 64);
            uint64_t dur = 2000 + ((r >> 12) % 4 == 0 ? 200000 : 0); /* a slow one in 4 */
            mem_alloc(t, j, (1ull << 20) << ((r >> 16) % 6),
                      0x680000000000ull + (t->index << 44) + (uint64_t)j * (64ull << 20), 0);
            ((struct gt_rec_alloc *)(t->b.p + t->b.used - sizeof(struct gt_rec_alloc)))->dur_ns =
                (uint32_t)dur;
            t->ts += dur;
            t->alloc_open = (int)j + 1;
            return;
        }
        /* fall through */
    case 1:
        tl_launch(t);
        if (--t->burst == 0) t->state = 2;
        return;
    case 2: /* after the burst */
        if (t->alloc_open) {
            mem_free(t, t->live[t->alloc_open - 1].addr);
            t->alloc_open = 0;
            t->ts += 20000;
            return;
        }
        t->state = 0;
        if ((r >> 8) % 4 == 0) {
            struct gt_rec_span *sp = rec(&t->b, GT_CHUNK_HOST, t->tid, GT_REC_SPAN,
                                         GT_API_cuCtxSynchronize, sizeof(*sp));
            uint64_t until = t->ts;
            for (uint32_t s = 0; s < TL_STREAMS; s++)
                if (t->stream_free[s] > until) until = t->stream_free[s];
            sp->ts_enter = t->ts, sp->ts_exit = until + 3000, sp->object = 0x5a0000001000ull;
            t->ts = until + 3000;
            G.spans++;
        }
        /* host work: 1 us .. 2 ms, one in 64: 5 .. 50 ms */
        if ((r >> 16) % 64 == 0)
            t->ts += 5000000 + (r >> 24) % 45000000;
        else
            t->ts += (1000ull << ((r >> 24) % 12)) + (r >> 40) % 1000;
        return;
    }
}

static void watermark(uint64_t w)
{
    struct gt_rec_watermark *m = OWN(GT_REC_WATERMARK, 0, struct gt_rec_watermark);
    m->ts = w;
    chunk_out(&G.own, GT_CHUNK_HOST, 0);
}

static void gpu_names(void)
{
    for (uint32_t k = 0; k < KERNELS; k++) {
        char fn[64];
        int len = snprintf(fn, sizeof(fn), "_Z12bench_kernelILi%uEEvPfS0_i", k);
        struct gt_rec_gpu_name *n =
            rec_text(&G.gpu, GT_CHUNK_GPU, 0, GT_REC_GPU_NAME, 0, sizeof(*n), fn, (uint32_t)len);
        n->id = k + 1, n->name_len = (uint32_t)len;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: gen_trace [--gpu | --mem [--live L] [--pool P] | --timeline "
                    "[--samples HZ]] "
                    "[--stacks K] [--threads T] [--compress LEVEL [--pack]] EVENTS OUT\n");
    exit(2);
}

static void options(int argc, char **argv, int *a, int *nthr)
{
    int pack = 0;
    G.live = 1024, G.stacks = (uint32_t)-1, G.ndev = 1;
    for (; *a < argc && argv[*a][0] == '-'; (*a)++) {
        const char *o = argv[*a];
        int more = *a + 1 < argc;
        if (strcmp(o, "--gpu") == 0)
            G.gpu_on = 1;
        else if (strcmp(o, "--mem") == 0)
            G.mode = MODE_MEM;
        else if (strcmp(o, "--timeline") == 0)
            G.mode = MODE_TIMELINE, G.gpu_on = 1, G.ndev = TL_DEVICES;
        else if (strcmp(o, "--threads") == 0 && more)
            *nthr = atoi(argv[++*a]);
        else if (strcmp(o, "--live") == 0 && more)
            G.live = (uint32_t)atoi(argv[++*a]);
        else if (strcmp(o, "--pool") == 0 && more)
            G.pool_pct = (uint32_t)atoi(argv[++*a]);
        else if (strcmp(o, "--samples") == 0 && more)
            G.sample_hz = (uint32_t)atoi(argv[++*a]);
        else if (strcmp(o, "--stacks") == 0 && more)
            G.stacks = (uint32_t)atoi(argv[++*a]);
        else if (strcmp(o, "--compress") == 0 && more)
            G.level = atoi(argv[++*a]);
        else if (strcmp(o, "--pack") == 0)
            pack = 1;
        else
            usage();
    }
    if (G.stacks == (uint32_t)-1) G.stacks = G.mode == MODE_MEM ? 64 : G.mode ? 32 : 0;
    if (argc - *a != 2 || *nthr < 1 || *nthr > MAX_THREADS || G.live < 1 || G.live > MAX_LIVE ||
        G.pool_pct > 100 || G.stacks > 4096 || G.level < 0 || G.level > 19 ||
        G.sample_hz > 100000 || (G.sample_hz && G.mode != MODE_TIMELINE))
        usage();
    gt_packer_init(&G.pk, G.level);
    gt_packer_init(&G.hpk, G.level);
    if (pack) G.hpk.codec = GT_CODEC_PACK_DELTA;
}

/* The thread whose clock is furthest behind (--timeline: threads step in time order). */
static struct thr *earliest(struct thr *thr, int nthr)
{
    struct thr *t = &thr[0];
    for (int i = 1; i < nthr; i++)
        if (thr[i].ts < t->ts) t = &thr[i];
    return t;
}

/* One round: about ROUND_EVENTS records, then every thread's buffer and a watermark. */
static void round_of(struct thr *thr, int nthr, uint64_t events)
{
    if (G.mode == MODE_TIMELINE) {
        uint64_t end = G.records + ROUND_EVENTS;
        while (G.records < end && G.kernels < events)
            tl_step(earliest(thr, nthr));
    } else {
        /* Threads take turns in small slices, as they would run concurrently. */
        uint64_t end = G.mix + ROUND_EVENTS;
        while (G.mix < end && G.mix < events)
            for (int i = 0; i < nthr && G.mix < events; i++)
                for (int j = 0; j < 8 && G.mix < events; j++)
                    G.mode == MODE_MEM ? mem_step(&thr[i]) : step(&thr[i]);
    }
    uint64_t w = UINT64_MAX;
    for (int i = 0; i < nthr; i++) {
        chunk_out(&thr[i].b, GT_CHUNK_HOST, thr[i].tid);
        if (thr[i].ts < w) w = thr[i].ts;
    }
    watermark(w);
    chunk_out(&G.gpu, GT_CHUNK_GPU, 0);
}

int main(int argc, char **argv)
{
    int nthr = 4, a = 1;
    options(argc, argv, &a, &nthr);
    uint64_t events = strtoull(argv[a], NULL, 10);
    G.fd = open(argv[a + 1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (G.fd < 0) die(argv[a + 1]);
    struct gt_file_header h;
    gt_header_init(&h, 4242, 1, 1700000000000000000ull, T0);
    if (G.level) /* as the shim: older readers refuse the file instead of reporting a prefix */
        h.min_version = G.hpk.codec == GT_CODEC_PACK_DELTA ? GT_FORMAT_MIN_READER_PACK
                                                           : GT_FORMAT_MIN_READER_CODEC;
    gt_header_seal(&h); /* (min_version is under the header's CRC) */
    out(&h, sizeof(h));
    buf_init(&G.own, 64u << 10);
    buf_init(&G.gpu, GPU_BUF);
    process_facts();
    if (G.gpu_on) gpu_names();
    if (G.stacks) write_stacks();
    chunk_out(&G.own, GT_CHUNK_HOST, 0);

    static struct thr thr[MAX_THREADS];
    for (int i = 0; i < nthr; i++) {
        thread_start(&thr[i], i);
        thr[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        if (G.mode == MODE_MIX) continue;
        thr[i].live = calloc(G.mode == MODE_MEM ? G.live : 64, sizeof(struct slot));
        thr[i].blocks = calloc(POOL_SLOTS, sizeof(struct slot));
        if (!thr[i].live || !thr[i].blocks) die("calloc");
        if (G.pool_pct && G.mode == MODE_MEM) pool_start(&thr[i]);
    }
    while (G.mode == MODE_TIMELINE ? G.kernels < events : G.mix < events)
        round_of(thr, nthr, events);
    uint64_t last = 0;
    for (int i = 0; i < nthr; i++)
        if (thr[i].ts > last) last = thr[i].ts;
    struct gt_rec_end *e = OWN(GT_REC_END, 0, struct gt_rec_end);
    e->ts = last, e->records = G.records - 1, e->reason = GT_END_EXIT;
    chunk_out(&G.own, GT_CHUNK_HOST, 0);
    if (close(G.fd) != 0) die("close");
    printf("records=%llu bytes=%llu launches=%llu allocs=%llu mix=%llu frees=%llu blocks=%llu "
           "kernels=%llu spans=%llu span_ns=%llu samples=%llu\n",
           (unsigned long long)G.records, (unsigned long long)G.bytes,
           (unsigned long long)G.launches, (unsigned long long)G.allocs, (unsigned long long)G.mix,
           (unsigned long long)G.frees, (unsigned long long)G.blocks, (unsigned long long)G.kernels,
           (unsigned long long)G.spans, (unsigned long long)(last - T0),
           (unsigned long long)G.samples);
    return 0;
}
