/* Builds synthetic gputrace traces in memory for the unit tests, with the format header's structs
 * and common/format.c (the same code the shim uses for headers and checksums). */
#ifndef GT_TEST_TRACEBUILD_H
#define GT_TEST_TRACEBUILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "gputrace/trace_api.h"
#include "gputrace/trace_format.h"

struct tb {
    unsigned char *buf; /* the whole file */
    size_t len, cap;
    unsigned char *chunk; /* payload of the open chunk */
    size_t clen, ccap;
    uint16_t kind;
    uint32_t tid, seq;
    int open;
    size_t chunk_ends[256]; /* file offset after each chunk */
    size_t chunk_recs[256]; /* records in each chunk */
    size_t n_chunks, recs_in_open;
    uint64_t t0;
};

static inline void tb_put(unsigned char **b, size_t *len, size_t *cap, const void *p, size_t n)
{
    if (*len + n > *cap) {
        *cap = (*len + n) * 2 + 256;
        *b = realloc(*b, *cap);
        if (!*b) abort();
    }
    memcpy(*b + *len, p, n);
    *len += n;
}

/* A file header like the shim writes; t0 = start_monotonic_ns. */
static inline void tb_init(struct tb *t, uint32_t pid, uint64_t t0)
{
    struct gt_file_header h;
    memset(t, 0, sizeof(*t));
    gt_header_init(&h, pid, 1, 1700000000000000000ull, t0);
    t->t0 = t0;
    tb_put(&t->buf, &t->len, &t->cap, &h, sizeof(h));
}

static inline void tb_begin(struct tb *t, uint16_t kind, uint32_t tid)
{
    t->kind = kind;
    t->tid = tid;
    t->clen = 0;
    t->open = 1;
    t->recs_in_open = 0;
}

static inline void tb_end(struct tb *t)
{
    struct gt_chunk_header c;
    gt_chunk_header_init(&c, t->kind, t->tid, t->seq++, t->chunk, (uint32_t)t->clen);
    tb_put(&t->buf, &t->len, &t->cap, &c, sizeof(c));
    tb_put(&t->buf, &t->len, &t->cap, t->chunk, t->clen);
    t->chunk_recs[t->n_chunks] = t->recs_in_open;
    t->chunk_ends[t->n_chunks++] = t->len;
    t->open = 0;
}

/* Appends raw record bytes to the open chunk (the caller framed them). */
static inline void tb_raw(struct tb *t, const void *p, size_t n)
{
    tb_put(&t->chunk, &t->clen, &t->ccap, p, n);
    t->recs_in_open++;
}

/* Appends a record: fixed part `rec` of `fixed` bytes (its header is filled in here), then up to
 * three strings, padded with NULs to a multiple of 8. */
static inline void tb_rec3(struct tb *t, uint16_t type, uint16_t sub, void *rec, size_t fixed,
                           const char *s0, size_t n0, const char *s1, size_t n1, const char *s2,
                           size_t n2)
{
    static const unsigned char zeros[8];
    struct gt_rec_header *h = rec;
    size_t tail = n0 + n1 + n2;
    h->type = type;
    h->sub = sub;
    h->size = gt_rec_size(fixed, tail);
    tb_put(&t->chunk, &t->clen, &t->ccap, rec, fixed);
    if (n0) tb_put(&t->chunk, &t->clen, &t->ccap, s0, n0);
    if (n1) tb_put(&t->chunk, &t->clen, &t->ccap, s1, n1);
    if (n2) tb_put(&t->chunk, &t->clen, &t->ccap, s2, n2);
    tb_put(&t->chunk, &t->clen, &t->ccap, zeros, h->size - fixed - tail);
    t->recs_in_open++;
}

static inline void tb_rec(struct tb *t, uint16_t type, uint16_t sub, void *rec, size_t fixed,
                          const char *s, size_t n)
{
    tb_rec3(t, type, sub, rec, fixed, s, n, NULL, 0, NULL, 0);
}

/* ---- one helper per common record (times are ns after t0) --------------------------------- */

static inline void tb_process(struct tb *t, uint32_t pid, const char *argv, size_t argv_len,
                              uint32_t argc, const char *host, const char *exe)
{
    struct gt_rec_process r = {.ts = t->t0,
                               .pid = pid,
                               .ppid = 1,
                               .start_realtime_ns = 1700000000000000000ull,
                               .argc = argc};
    r.cmdline_len = (uint32_t)argv_len;
    r.host_len = (uint32_t)strlen(host);
    r.exe_len = (uint32_t)strlen(exe);
    tb_rec3(t, GT_REC_PROCESS, 0, &r, sizeof(r), argv, argv_len, host, r.host_len, exe, r.exe_len);
}

static inline void tb_alloc(struct tb *t, uint64_t ts, unsigned api, uint64_t addr, uint64_t size,
                            int device, uint64_t ctx)
{
    struct gt_rec_alloc r = {
        .ts = t->t0 + ts, .addr = addr, .size = size, .ctx = ctx, .device = device};
    tb_rec(t, GT_REC_ALLOC, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

static inline void tb_free(struct tb *t, uint64_t ts, unsigned api, uint64_t addr, int result)
{
    struct gt_rec_free r = {.ts = t->t0 + ts, .addr = addr, .result = result};
    tb_rec(t, GT_REC_FREE, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

static inline void tb_fail(struct tb *t, uint64_t ts, unsigned api, uint64_t size, int device,
                           uint64_t free_b, uint64_t total_b, int result)
{
    struct gt_rec_alloc_fail r = {.ts = t->t0 + ts,
                                  .size = size,
                                  .free_bytes = free_b,
                                  .total_bytes = total_b,
                                  .device = device,
                                  .result = result};
    tb_rec(t, GT_REC_ALLOC_FAIL, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

static inline void tb_object(struct tb *t, uint64_t ts, unsigned api, uint64_t handle, uint64_t aux,
                             int device, int result)
{
    struct gt_rec_object r = {
        .ts = t->t0 + ts, .handle = handle, .aux = aux, .device = device, .result = result};
    tb_rec(t, GT_REC_OBJECT, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

static inline void tb_launch(struct tb *t, uint64_t ts, unsigned api, uint64_t func, int result)
{
    struct gt_rec_launch r = {.ts = t->t0 + ts,
                              .func = func,
                              .result = result,
                              .dur_ns = 100,
                              .grid = {1, 1, 1},
                              .block = {32, 1, 1}};
    tb_rec(t, GT_REC_LAUNCH, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

static inline void tb_func(struct tb *t, uint64_t ts, uint64_t handle, const char *name)
{
    struct gt_rec_func r = {.ts = t->t0 + ts, .handle = handle, .kind = GT_FUNC_FUNCTION};
    r.name_len = (uint32_t)strlen(name);
    tb_rec(t, GT_REC_FUNC, 0, &r, sizeof(r), name, r.name_len);
}

static inline void tb_span(struct tb *t, uint64_t ts, uint64_t dur, unsigned api, uint64_t bytes)
{
    struct gt_rec_span r = {.ts_enter = t->t0 + ts, .ts_exit = t->t0 + ts + dur, .bytes = bytes};
    tb_rec(t, GT_REC_SPAN, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

static inline void tb_watermark(struct tb *t, uint64_t ts)
{
    struct gt_rec_watermark r = {.ts = t->t0 + ts};
    tb_rec(t, GT_REC_WATERMARK, 0, &r, sizeof(r), NULL, 0);
}

static inline void tb_end_rec(struct tb *t, uint64_t ts, uint64_t records, uint64_t lost)
{
    struct gt_rec_end r = {.ts = t->t0 + ts, .records = records, .lost = lost};
    tb_rec(t, GT_REC_END, 0, &r, sizeof(r), NULL, 0);
}

/* A launch with its correlation id and stream (tb_launch leaves them 0). */
static inline void tb_launch_corr(struct tb *t, uint64_t ts, unsigned api, uint64_t func,
                                  uint64_t stream, uint64_t corr)
{
    struct gt_rec_launch r = {.ts = t->t0 + ts,
                              .func = func,
                              .stream = stream,
                              .corr = corr,
                              .dur_ns = 100,
                              .grid = {1, 1, 1},
                              .block = {32, 1, 1}};
    tb_rec(t, GT_REC_LAUNCH, (uint16_t)api, &r, sizeof(r), NULL, 0);
}

/* The CUPTI status record: path and reason as the shim writes them (reason often ": ..."). */
static inline void tb_cupti(struct tb *t, uint64_t ts, unsigned status, int64_t offset, int result,
                            const char *path, const char *reason)
{
    struct gt_rec_cupti r = {
        .ts = t->t0 + ts, .clock_offset_ns = offset, .version = 130000, .result = result};
    r.path_len = (uint32_t)strlen(path);
    r.reason_len = (uint32_t)strlen(reason);
    tb_rec3(t, GT_REC_CUPTI, (uint16_t)status, &r, sizeof(r), path, r.path_len, reason,
            r.reason_len, NULL, 0);
}

/* ---- GPU chunk records (times are absolute: GPU records carry CUPTI's times) ------------- */

static inline void tb_gpu_kernel(struct tb *t, uint64_t start, uint64_t end, uint32_t corr,
                                 uint32_t device, uint32_t stream, uint32_t graph_id,
                                 uint32_t name_id)
{
    struct gt_rec_gpu_kernel r = {.start = start,
                                  .end = end,
                                  .corr = corr,
                                  .device = device,
                                  .context = 1,
                                  .stream = stream,
                                  .graph_id = graph_id,
                                  .name_id = name_id,
                                  .graph_node_id = graph_id ? 77 : 0};
    tb_rec(t, GT_REC_GPU_KERNEL, 0, &r, sizeof(r), NULL, 0);
}

static inline void tb_gpu_memcpy(struct tb *t, unsigned kind, uint64_t start, uint64_t end,
                                 uint64_t bytes, uint32_t device, uint32_t stream)
{
    struct gt_rec_gpu_memcpy r = {.start = start,
                                  .end = end,
                                  .bytes = bytes,
                                  .device = device,
                                  .stream = stream,
                                  .dst_device = device};
    tb_rec(t, GT_REC_GPU_MEMCPY, (uint16_t)kind, &r, sizeof(r), NULL, 0);
}

static inline void tb_gpu_memset(struct tb *t, uint64_t start, uint64_t end, uint64_t bytes,
                                 uint32_t device, uint32_t stream)
{
    struct gt_rec_gpu_memset r = {
        .start = start, .end = end, .bytes = bytes, .device = device, .stream = stream};
    tb_rec(t, GT_REC_GPU_MEMSET, 0, &r, sizeof(r), NULL, 0);
}

static inline void tb_gpu_extcorr(struct tb *t, uint64_t ext, uint32_t corr)
{
    struct gt_rec_gpu_extcorr r = {.ext = ext, .corr = corr, .kind = 5 /* CUSTOM2 */};
    tb_rec(t, GT_REC_GPU_EXTCORR, 0, &r, sizeof(r), NULL, 0);
}

static inline void tb_gpu_name(struct tb *t, uint32_t id, const char *name)
{
    struct gt_rec_gpu_name r = {.id = id, .name_len = (uint32_t)strlen(name)};
    tb_rec(t, GT_REC_GPU_NAME, 0, &r, sizeof(r), name, r.name_len);
}

static inline void tb_gpu_dropped(struct tb *t, uint64_t ts, uint64_t count)
{
    struct gt_rec_gpu_dropped r = {.ts = ts, .count = count};
    tb_rec(t, GT_REC_GPU_DROPPED, 0, &r, sizeof(r), NULL, 0);
}

/* Writes the first n bytes of the trace (all of it when n == (size_t)-1) to path. */
static inline void tb_write(const struct tb *t, const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n > t->len) n = t->len;
    if (n && fwrite(t->buf, 1, n, f) != n) abort();
    if (fclose(f) != 0) abort();
}

static inline void tb_free_all(struct tb *t)
{
    free(t->buf);
    free(t->chunk);
    memset(t, 0, sizeof(*t));
}

#endif
