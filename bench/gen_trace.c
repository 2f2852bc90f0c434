/* gen_trace [--gpu] [--threads T] EVENTS OUT: writes a synthetic but valid gputrace trace of about
 * EVENTS records, fast, for the analyzer benchmarks (the shim would take minutes for 100 M).
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
 * reported on stdout with the totals: "records=N bytes=B launches=L allocs=A". */
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
};

static struct {
    int fd;
    uint64_t bytes, records, launches, allocs, mix;
    struct buf own, gpu;
    uint32_t cupti_corr;
    int gpu_on;
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
    gt_chunk_header_init(&ch, kind, tid, b->seq++, b->p, b->used);
    out(&ch, sizeof(ch));
    out(b->p, b->used);
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
    d->ts = T0 + 1, d->driver_version = 13000, d->device_count = 1;
    static const char name[] = "gputrace simulated GPU";
    struct gt_rec_device *v =
        rec_text(&G.own, GT_CHUNK_HOST, 0, GT_REC_DEVICE, 0, sizeof(*v), name, sizeof(name) - 1);
    v->ts = T0 + 2, v->ordinal = 0, v->cc_major = 9, v->cc_minor = 0;
    v->name_len = sizeof(name) - 1, v->total_bytes = 80ull << 30;
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

static void gpu_records(const struct thr *t, uint64_t corr, uint64_t k, uint64_t ts)
{
    uint32_t cc = ++G.cupti_corr;
    struct gt_rec_gpu_extcorr *e = rec(&G.gpu, GT_CHUNK_GPU, 0, GT_REC_GPU_EXTCORR, 0, sizeof(*e));
    e->ext = corr, e->corr = cc, e->kind = 7; /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2 */
    struct gt_rec_gpu_kernel *g = rec(&G.gpu, GT_CHUNK_GPU, 0, GT_REC_GPU_KERNEL, 0, sizeof(*g));
    g->start = ts + 2000, g->end = ts + 2000 + 300, g->corr = cc;
    g->device = 0, g->context = 1, g->stream = 10 + (uint32_t)t->index;
    g->name_id = (uint32_t)k + 1;
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

int main(int argc, char **argv)
{
    int nthr = 4, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "--gpu") == 0)
            G.gpu_on = 1;
        else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc)
            nthr = atoi(argv[++a]);
        else
            break;
    }
    if (argc - a != 2 || nthr < 1 || nthr > MAX_THREADS) {
        fprintf(stderr, "usage: gen_trace [--gpu] [--threads T] EVENTS OUT\n");
        return 2;
    }
    uint64_t events = strtoull(argv[a], NULL, 10);
    G.fd = open(argv[a + 1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (G.fd < 0) die(argv[a + 1]);
    struct gt_file_header h;
    gt_header_init(&h, 4242, 1, 1700000000000000000ull, T0);
    out(&h, sizeof(h));
    buf_init(&G.own, 64u << 10);
    buf_init(&G.gpu, GPU_BUF);
    process_facts();
    if (G.gpu_on) gpu_names();
    chunk_out(&G.own, GT_CHUNK_HOST, 0);

    static struct thr thr[MAX_THREADS];
    for (int i = 0; i < nthr; i++)
        thread_start(&thr[i], i);
    while (G.mix < events) {
        /* One round: threads take turns in small slices, as they would run concurrently. */
        uint64_t round_end = G.mix + ROUND_EVENTS;
        while (G.mix < round_end && G.mix < events)
            for (int i = 0; i < nthr && G.mix < events; i++)
                for (int j = 0; j < 8 && G.mix < events; j++)
                    step(&thr[i]);
        uint64_t w = UINT64_MAX;
        for (int i = 0; i < nthr; i++) {
            chunk_out(&thr[i].b, GT_CHUNK_HOST, thr[i].tid);
            if (thr[i].ts < w) w = thr[i].ts;
        }
        watermark(w);
        chunk_out(&G.gpu, GT_CHUNK_GPU, 0);
    }
    uint64_t last = 0;
    for (int i = 0; i < nthr; i++)
        if (thr[i].ts > last) last = thr[i].ts;
    struct gt_rec_end *e = OWN(GT_REC_END, 0, struct gt_rec_end);
    e->ts = last, e->records = G.records - 1, e->reason = GT_END_EXIT;
    chunk_out(&G.own, GT_CHUNK_HOST, 0);
    if (close(G.fd) != 0) die("close");
    printf("records=%llu bytes=%llu launches=%llu allocs=%llu mix=%llu\n",
           (unsigned long long)G.records, (unsigned long long)G.bytes,
           (unsigned long long)G.launches, (unsigned long long)G.allocs, (unsigned long long)G.mix);
    return 0;
}
