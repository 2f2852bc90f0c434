/* Reader tests: round trip of every record type, watermark ordering, truncation at every byte,
 * checksums, record framing, header checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collect.h"
#include "model/state.h"
#include "render/dump.h"
#include "tracebuild.h"

#define T0 1000000000ull

static int read_into(const struct tb *t, size_t n, struct coll *c, struct ga_read_stats *st)
{
    char path[256];
    tmp_path(path, "reader");
    tb_write(t, path, n);
    coll_clear(c);
    int rc = ga_read_trace(path, coll_sink, c, st);
    unlink(path);
    return rc;
}

/* One record of every type, all fields distinctive. */
static void build_every_type(struct tb *t)
{
    static const char argv[] = "python\0train.py\0--lr=3\0";
    tb_init(t, 4242, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_process(t, 4242, argv, sizeof(argv) - 1, 3, "node-1", "/usr/bin/python3");
    struct gt_rec_driver drv = {.ts = T0 + 1, .driver_version = 12040, .device_count = 2};
    tb_rec(t, GT_REC_DRIVER, 0, &drv, sizeof(drv), NULL, 0);
    struct gt_rec_device dev = {.ts = T0 + 2,
                                .ordinal = 1,
                                .cc_major = 9,
                                .cc_minor = 0,
                                .name_len = 11,
                                .total_bytes = 80ull << 30,
                                .uuid = {1, 2, 3}};
    tb_rec(t, GT_REC_DEVICE, 0, &dev, sizeof(dev), "NVIDIA H200", 11);
    struct gt_rec_thread th = {.ts = T0 + 3, .tid = 7, .name_len = 4};
    tb_rec(t, GT_REC_THREAD, 0, &th, sizeof(th), "main", 4);
    struct gt_rec_alloc al = {.ts = T0 + 4,
                              .addr = 0x7f0000001000,
                              .size = 4096,
                              .stream = 5,
                              .ctx = 0xc7,
                              .aux = 9,
                              .device = 1,
                              .flags = 3};
    tb_rec(t, GT_REC_ALLOC, GT_API_cuMemAllocAsync, &al, sizeof(al), NULL, 0);
    struct gt_rec_free fr = {
        .ts = T0 + 5, .addr = 0x7f0000001000, .stream = 5, .size = 0, .result = 0};
    tb_rec(t, GT_REC_FREE, GT_API_cuMemFreeAsync, &fr, sizeof(fr), NULL, 0);
    struct gt_rec_alloc_fail af = {.ts = T0 + 6,
                                   .size = 1 << 30,
                                   .stream = 0,
                                   .ctx = 0xc7,
                                   .free_bytes = 100,
                                   .total_bytes = 200,
                                   .device = 1,
                                   .result = 2};
    tb_rec(t, GT_REC_ALLOC_FAIL, GT_API_cuMemAlloc_v2, &af, sizeof(af), NULL, 0);
    struct gt_rec_vmm_map vm = {
        .ts = T0 + 7, .addr = 0x1000, .size = 2 << 20, .offset = 64, .handle = 0xabc, .result = 0};
    tb_rec(t, GT_REC_VMM_MAP, GT_API_cuMemMap, &vm, sizeof(vm), NULL, 0);
    struct gt_rec_func fn = {.ts = T0 + 8, .handle = 0xf00, .kind = GT_FUNC_KERNEL, .name_len = 9};
    tb_rec(t, GT_REC_FUNC, 0, &fn, sizeof(fn), "_Z3fooPf!", 9);
    struct gt_rec_launch la = {.ts = T0 + 9,
                               .func = 0xf00,
                               .stream = 5,
                               .corr = (1ull << 40) | 1,
                               .grid = {2, 3, 4},
                               .block = {128, 1, 1},
                               .shmem = 256,
                               .result = 0,
                               .dur_ns = 1500};
    tb_rec(t, GT_REC_LAUNCH, GT_API_cuLaunchKernel, &la, sizeof(la), NULL, 0);
    struct gt_rec_span sp = {
        .ts_enter = T0 + 10, .ts_exit = T0 + 510, .object = 5, .bytes = 77, .result = 0};
    tb_rec(t, GT_REC_SPAN, GT_API_cuMemcpyHtoD_v2, &sp, sizeof(sp), NULL, 0);
    struct gt_rec_object ob = {.ts = T0 + 11, .handle = 0xc7, .aux = 1, .device = 1, .result = 0};
    tb_rec(t, GT_REC_OBJECT, GT_API_cuCtxCreate_v2, &ob, sizeof(ob), NULL, 0);
    struct gt_rec_meminfo mi = {.ts = T0 + 12, .free_bytes = 10, .total_bytes = 20, .device = 1};
    tb_rec(t, GT_REC_MEMINFO, 0, &mi, sizeof(mi), NULL, 0);
    struct gt_rec_resolve rs = {.ts = T0 + 13,
                                .version = 12000,
                                .flags = 1,
                                .api = GT_API_cuMemAlloc_v2,
                                .status = 0,
                                .name_len = 10};
    tb_rec(t, GT_REC_RESOLVE, GT_RESOLVE_GETPROC2, &rs, sizeof(rs), "cuMemAlloc", 10);
    struct gt_rec_lost lo = {.ts = T0 + 14, .count = 12};
    tb_rec(t, GT_REC_LOST, 0, &lo, sizeof(lo), NULL, 0);
    struct gt_rec_note no = {.ts = T0 + 15, .level = GT_NOTE_WARNING, .text_len = 8};
    tb_rec(t, GT_REC_NOTE, 0, &no, sizeof(no), "hello \"x", 8);
    struct gt_rec_cupti cu = {.ts = T0 + 15,
                              .clock_offset_ns = -3,
                              .version = 24,
                              .result = 0,
                              .path_len = 14,
                              .reason_len = 10};
    tb_rec(t, GT_REC_CUPTI, GT_CUPTI_OWNED, &cu, sizeof(cu), "/x/libcupti.so: Nsight 1", 24);
    tb_watermark(t, 16);
    tb_end_rec(t, 17, 18, 12);
    tb_end(t);
}

static const struct ga_event *find_type(const struct coll *c, unsigned type)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->ev[i].type == type) return &c->ev[i];
    return NULL;
}

static void check_every_type(const struct coll *c)
{
    const struct ga_event *e;
    CHECK_U64("round trip: 19 record types delivered", c->n, 19);
    for (size_t i = 0; i < c->n; i++)
        if (c->ev[i].tid != 7) CHECK("round trip: tid passed along", 0);
    if ((e = find_type(c, GT_REC_PROCESS))) {
        CHECK_U64("process pid", e->r->process.pid, 4242);
        CHECK_U64("process argc", e->r->process.argc, 3);
        CHECK("process argv bytes",
              e->str_len[0] == 23 && memcmp(e->str[0], "python\0train.py", 16) == 0);
        CHECK_STR("process host", e->str[1], "node-1");
        CHECK_STR("process exe", e->str[2], "/usr/bin/python3");
    } else
        CHECK("process record present", 0);
    if ((e = find_type(c, GT_REC_DRIVER)))
        CHECK_U64("driver version", e->r->driver.driver_version, 12040);
    if ((e = find_type(c, GT_REC_DEVICE))) {
        CHECK_STR("device name", e->str[0], "NVIDIA H200");
        CHECK_U64("device total", e->r->device.total_bytes, 80ull << 30);
        CHECK_U64("device ordinal", e->r->device.ordinal, 1);
        CHECK_U64("device uuid", e->r->device.uuid[2], 3);
    }
    if ((e = find_type(c, GT_REC_THREAD))) CHECK_STR("thread name", e->str[0], "main");
    if ((e = find_type(c, GT_REC_ALLOC))) {
        CHECK_U64("alloc sub = api", e->sub, GT_API_cuMemAllocAsync);
        CHECK_U64("alloc addr", e->r->alloc.addr, 0x7f0000001000);
        CHECK_U64("alloc flags", e->r->alloc.flags, 3);
        CHECK_U64("alloc ts", e->ts, T0 + 4);
    }
    if ((e = find_type(c, GT_REC_FREE))) CHECK_U64("free stream", e->r->free.stream, 5);
    if ((e = find_type(c, GT_REC_ALLOC_FAIL)))
        CHECK_U64("alloc_fail total", e->r->alloc_fail.total_bytes, 200);
    if ((e = find_type(c, GT_REC_VMM_MAP)))
        CHECK_U64("vmm_map handle", e->r->vmm_map.handle, 0xabc);
    if ((e = find_type(c, GT_REC_FUNC))) CHECK_STR("func name", e->str[0], "_Z3fooPf!");
    if ((e = find_type(c, GT_REC_LAUNCH))) {
        CHECK_U64("launch grid z", e->r->launch.grid[2], 4);
        CHECK_U64("launch dur", e->r->launch.dur_ns, 1500);
    }
    if ((e = find_type(c, GT_REC_SPAN))) {
        CHECK_U64("span key is ts_enter", e->ts, T0 + 10);
        CHECK_U64("span exit", e->r->span.ts_exit, T0 + 510);
    }
    if ((e = find_type(c, GT_REC_OBJECT))) CHECK_U64("object handle", e->r->object.handle, 0xc7);
    if ((e = find_type(c, GT_REC_MEMINFO))) CHECK_U64("meminfo free", e->r->meminfo.free_bytes, 10);
    if ((e = find_type(c, GT_REC_RESOLVE))) {
        CHECK_STR("resolve name", e->str[0], "cuMemAlloc");
        CHECK_U64("resolve how", e->sub, GT_RESOLVE_GETPROC2);
    }
    if ((e = find_type(c, GT_REC_LOST))) CHECK_U64("lost count", e->r->lost.count, 12);
    if ((e = find_type(c, GT_REC_NOTE))) CHECK_STR("note text", e->str[0], "hello \"x");
    if ((e = find_type(c, GT_REC_WATERMARK))) CHECK_U64("watermark ts", e->ts, T0 + 16);
    if ((e = find_type(c, GT_REC_END))) CHECK_U64("end lost", e->r->end.lost, 12);
    if ((e = find_type(c, GT_REC_CUPTI))) {
        CHECK_STR("cupti path", e->str[0], "/x/libcupti.so");
        CHECK_STR("cupti reason", e->str[1], ": Nsight 1");
        CHECK_U64("cupti clock offset", (uint64_t)e->r->cupti.clock_offset_ns, (uint64_t)-3);
    }
}

static void test_round_trip(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    build_every_type(&t);
    CHECK("round trip: reads", read_into(&t, (size_t)-1, &c, &st) == 0);
    CHECK("round trip: not truncated", !st.truncated);
    check_every_type(&c);
    /* the dump renders every type */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (size_t i = 0; i < c.n; i++) {
        struct ga_vrecord rec;
        ga_vrecord_of(&rec, &c.ev[i]);
        ga_dump_record(f, T0, &rec);
    }
    fclose(f);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    CHECK_U64("dump: one line per record", lines, 19);
    CHECK("dump: alloc line",
          strstr(buf, "4 tid=7 ALLOC cuMemAllocAsync addr=0x7f0000001000 size=4096 device=1") !=
              NULL);
    CHECK("dump: escaped note", strstr(buf, "text=\"hello \\\"x\"") != NULL);
    free(buf);
    coll_free(&c);
    tb_free_all(&t);
}

/* Two threads whose chunks interleave; records between watermarks come out sorted. */
static void test_watermarks(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 11);
    tb_alloc(&t, 10, GT_API_cuMemAlloc_v2, 0x10, 1, 0, 0);
    tb_alloc(&t, 30, GT_API_cuMemAlloc_v2, 0x30, 1, 0, 0);
    tb_alloc(&t, 50, GT_API_cuMemAlloc_v2, 0x50, 1, 0, 0);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 22);
    tb_alloc(&t, 20, GT_API_cuMemAlloc_v2, 0x20, 1, 0, 0);
    tb_alloc(&t, 30, GT_API_cuMemAlloc_v2, 0x31, 1, 0, 0); /* same ts as 0x30: file order */
    tb_alloc(&t, 40, GT_API_cuMemAlloc_v2, 0x40, 1, 0, 0);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 0);
    tb_watermark(&t, 45);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 22);
    tb_alloc(&t, 55, GT_API_cuMemAlloc_v2, 0x55, 1, 0, 0);
    tb_alloc(&t, 46, GT_API_cuMemAlloc_v2, 0x46, 1, 0, 0);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_GPU, 0);
    tb_alloc(&t, 1, GT_API_cuMemAlloc_v2, 0x99, 1, 0, 0); /* GPU chunk: counted, not delivered */
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 11);
    tb_alloc(&t, 60, GT_API_cuMemAlloc_v2, 0x60, 1, 0, 0);
    tb_alloc(&t, 44, GT_API_cuMemAlloc_v2, 0x44, 1, 0, 0); /* breaks the watermark promise */
    tb_end(&t);
    CHECK("watermarks: reads", read_into(&t, (size_t)-1, &c, &st) == 0);
    static const uint64_t want[] = {0x10, 0x20, 0x30, 0x31, 0x40, 0, 0x44, 0x46, 0x50, 0x55, 0x60};
    int ok = c.n == sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; ok && i < c.n; i++) {
        const struct ga_event *e = &c.ev[i];
        ok = want[i] ? e->type == GT_REC_ALLOC && e->r->alloc.addr == want[i]
                     : e->type == GT_REC_WATERMARK;
        if (i && e->ts < c.ev[i - 1].ts && want[i] != 0x44) ok = 0; /* 0x44 came late */
    }
    CHECK("watermarks: global time order, ties in file order", ok);
    CHECK_U64("watermarks: tid of 0x20 is 22", c.n > 1 ? c.ev[1].tid : 0, 22);
    CHECK_U64("watermarks: held at most one interval", st.max_buffered, 6);
    CHECK_U64("watermarks: late record counted", st.late_records, 1);
    CHECK_U64("watermarks: gpu chunk counted", st.gpu_chunks, 1);
    CHECK_U64("watermarks: gpu record counted", st.gpu_records, 1);
    coll_free(&c);
    tb_free_all(&t);
}

/* A small valid trace, cut at every byte: never a crash, always the whole chunks before the cut. */
static void test_truncation(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    int bad_prefix = 0, bad_flag = 0, bad_header = 0, bad_report = 0;
    build_every_type(&t);
    tb_begin(&t, GT_CHUNK_HOST, 8);
    tb_alloc(&t, 20, GT_API_cuMemAlloc_v2, 0x100, 64, 0, 0);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 9);
    tb_free(&t, 21, GT_API_cuMemFree_v2, 0x100, 0);
    tb_end(&t);
    char path[256];
    tmp_path(path, "trunc");
    for (size_t cut = 0; cut <= t.len; cut++) {
        int rc = read_into(&t, cut, &c, &st);
        if (cut < sizeof(struct gt_file_header)) {
            bad_header += rc != -1 || !st.error[0];
            continue;
        }
        size_t whole = 0, recs = 0, at_end = cut == sizeof(struct gt_file_header);
        for (size_t k = 0; k < t.n_chunks && t.chunk_ends[k] <= cut; k++, whole++) {
            recs += t.chunk_recs[k];
            at_end |= t.chunk_ends[k] == cut;
        }
        bad_prefix += rc != 0 || st.chunks != whole || c.n != recs;
        bad_flag += st.truncated != !at_end;
        /* the whole analysis pipeline on the same prefix */
        struct ga_report r;
        tb_write(&t, path, cut);
        ga_report_init(&r, path);
        bad_report += ga_report_run(&r) != 0;
        FILE *devnull = fopen("/dev/null", "w");
        ga_render_text(&r.m, devnull);
        ga_render_json(&r.m, devnull);
        fclose(devnull);
        ga_report_free(&r);
    }
    unlink(path);
    CHECK("truncation: every cut inside the header is an error", bad_header == 0);
    CHECK("truncation: every cut reports exactly the whole chunks before it", bad_prefix == 0);
    CHECK("truncation: flagged iff the cut is not at a chunk boundary", bad_flag == 0);
    CHECK("truncation: report runs on every prefix", bad_report == 0);
    read_into(&t, t.len - 3, &c, &st);
    CHECK("truncation: message names byte and chunk",
          strstr(st.stop_reason, "truncated at byte") && strstr(st.stop_reason, "in chunk 3") &&
              strstr(st.stop_reason, "reporting the 2 whole chunks before it"));
    coll_free(&c);
    tb_free_all(&t);
}

/* A flipped bit anywhere in a chunk's payload is caught by the checksum. Chunk header fields are
 * checked where the format allows: magic, codec, size and crc (kind, tid, seq are not covered). */
static void test_bit_flips(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    int missed = 0, wrong_chunk = 0;
    build_every_type(&t);
    tb_begin(&t, GT_CHUNK_HOST, 8);
    tb_alloc(&t, 20, GT_API_cuMemAlloc_v2, 0x100, 64, 0, 0);
    tb_end(&t);
    size_t start = sizeof(struct gt_file_header);
    for (size_t k = 0; k < t.n_chunks; k++) {
        for (size_t off = start; off < t.chunk_ends[k]; off++) {
            size_t in_hdr = off - start;
            int covered = in_hdr >= 24 || in_hdr < 4 || (in_hdr >= 6 && in_hdr < 16);
            if (!covered) continue;
            t.buf[off] ^= (unsigned char)(1u << (off % 8));
            read_into(&t, (size_t)-1, &c, &st);
            t.buf[off] ^= (unsigned char)(1u << (off % 8));
            missed += !st.truncated;
            wrong_chunk += st.truncated && st.stop_chunk != k + 1;
        }
        start = t.chunk_ends[k];
    }
    CHECK("bit flips: every flip in payload/magic/codec/size/crc is caught", missed == 0);
    CHECK("bit flips: reading stops at the damaged chunk", wrong_chunk == 0);
    coll_free(&c);
    tb_free_all(&t);
}

static void test_framing(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_alloc(&t, 1, GT_API_cuMemAlloc_v2, 0x1, 8, 0, 0);
    struct {
        struct gt_rec_header h;
        uint64_t ts, x;
    } unk = {{200, 0, 24}, T0 + 2, 5};
    tb_raw(&t, &unk, sizeof(unk)); /* unknown type: skipped */
    struct {
        struct gt_rec_header h;
        uint64_t ts, addr;
    } shortal = {{GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 24}, T0 + 3, 0x77};
    tb_raw(&t, &shortal, sizeof(shortal)); /* older, shorter record: size reads as 0 */
    struct gt_rec_func fn = {{GT_REC_FUNC, 0, 32}, T0 + 4, 0xf, 0, 9};
    tb_raw(&t, &fn, sizeof(fn)); /* name runs past the record: malformed */
    struct gt_rec_header bad[2] = {{GT_REC_ALLOC, 1, 12}, {0}}; /* size % 8 != 0: rest skipped */
    tb_raw(&t, bad, sizeof(bad));
    tb_alloc(&t, 6, GT_API_cuMemAlloc_v2, 0x6, 8, 0, 0);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_alloc(&t, 5, GT_API_cuMemAlloc_v2, 0x5, 8, 0, 0);
    struct gt_rec_header zero = {GT_REC_ALLOC, 1, 0};
    tb_raw(&t, &zero, sizeof(zero));
    tb_end(&t);
    CHECK("framing: reads", read_into(&t, (size_t)-1, &c, &st) == 0);
    CHECK_U64("framing: good records delivered", c.n, 3);
    CHECK_U64("framing: unknown type skipped", st.unknown_records, 1);
    CHECK_U64("framing: malformed counted", st.malformed_records, 3);
    CHECK("framing: short record zero-filled",
          c.n == 3 && c.ev[1].r->alloc.addr == 0x77 && c.ev[1].r->alloc.size == 0);
    CHECK("framing: not truncated", !st.truncated);
    coll_free(&c);
    tb_free_all(&t);
}

static void test_headers(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_alloc(&t, 1, GT_API_cuMemAlloc_v2, 0x1, 8, 0, 0);
    tb_end(&t);
    struct gt_file_header *h = (struct gt_file_header *)t.buf;
    h->min_version = 6;
    h->version = 6;
    gt_header_seal(h);
    CHECK("header: newer format refused", read_into(&t, (size_t)-1, &c, &st) == -1);
    CHECK_STR("header: newer format message", st.error,
              "written by a newer gputrace (format 6, this reader reads up to 5)");
    h->min_version = 7; /* a flipped bit of min_version is not taken for a newer format */
    CHECK_STR("header: flipped min_version",
              read_into(&t, (size_t)-1, &c, &st) == -1 ? st.error : "",
              "corrupt file header (checksum mismatch)");
    h->min_version = 1;
    gt_header_seal(h);
    CHECK("header: newer writer, old min_version: readable",
          read_into(&t, (size_t)-1, &c, &st) == 0 && c.n == 1);
    h->version = 1;
    h->endian = 0x04030201u;
    read_into(&t, (size_t)-1, &c, &st);
    CHECK("header: byte order named", strstr(st.error, "byte order") != NULL);
    h->endian = GT_ENDIAN_TAG;
    CHECK("header: empty file",
          read_into(&t, 0, &c, &st) == -1 && strcmp(st.error, "empty file") == 0);
    memcpy(h->magic, "GPUTRACX", 8);
    CHECK("header: foreign file",
          read_into(&t, (size_t)-1, &c, &st) == -1 && strstr(st.error, "not a gputrace trace"));
    coll_free(&c);
    tb_free_all(&t);
    /* a larger header from a newer writer: chunks start after header_size bytes */
    struct gt_file_header big;
    gt_header_init(&big, 1, 1, 0, T0);
    big.header_size = 64;
    tb_init(&t, 1, T0);
    memcpy(t.buf, &big, sizeof(big));
    static const unsigned char pad[8] = {0xee};
    tb_put(&t.buf, &t.len, &t.cap, pad, 8);
    big.header_crc32 = gt_header_crc(t.buf, 64);
    memcpy(t.buf, &big, sizeof(big));
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_alloc(&t, 1, GT_API_cuMemAlloc_v2, 0x1, 8, 0, 0);
    tb_end(&t);
    CHECK("header: larger header skipped", read_into(&t, (size_t)-1, &c, &st) == 0 && c.n == 1);
    coll_free(&c);
    tb_free_all(&t);
}

/* A chunk written twice is read once; a thread id reused with its sequence restarting is not a
 * repeat (other bytes); a second file header (cat a a > c) stops reading and says so. */
static void test_repeats(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 5);
    tb_alloc(&t, 1, GT_API_cuMemAlloc_v2, 0x1000, 8, 0, 0);
    tb_end(&t);
    size_t c0 = sizeof(struct gt_file_header), c1 = t.chunk_ends[0];
    tb_begin(&t, GT_CHUNK_HOST, 5);
    tb_alloc(&t, 2, GT_API_cuMemAlloc_v2, 0x2000, 8, 0, 0);
    tb_end(&t);
    tb_put(&t.buf, &t.len, &t.cap, t.buf + c0, c1 - c0); /* chunk 0 again, after chunk 1 */
    CHECK("repeat: reads", read_into(&t, (size_t)-1, &c, &st) == 0 && !st.truncated);
    CHECK("repeat: 2 records, not 3", c.n == 2);
    CHECK("repeat: 2 chunks, 1 repeat skipped", st.chunks == 2 && st.duplicate_chunks == 1);
    /* thread id 5 again, sequence 0 again, another allocation: a new thread, kept */
    t.seq = 0;
    tb_begin(&t, GT_CHUNK_HOST, 5);
    tb_alloc(&t, 3, GT_API_cuMemAlloc_v2, 0x3000, 8, 0, 0);
    tb_end(&t);
    CHECK("reused tid: reads", read_into(&t, (size_t)-1, &c, &st) == 0);
    CHECK("reused tid, seq 0 again, other bytes: kept", c.n == 3 && st.duplicate_chunks == 1);
    /* the whole file again after itself */
    size_t len = t.len;
    tb_put(&t.buf, &t.len, &t.cap, t.buf, len);
    CHECK("cat a a: reads the first", read_into(&t, (size_t)-1, &c, &st) == 0 && c.n == 3);
    CHECK("cat a a: says so", st.truncated && st.concatenated &&
                                  strstr(st.stop_reason, "a second trace starts at byte") &&
                                  st.valid_bytes == len);
    coll_free(&c);
    tb_free_all(&t);
}

int main(void)
{
    test_repeats();
    test_round_trip();
    test_watermarks();
    test_truncation();
    test_bit_flips();
    test_framing();
    test_headers();
    return check_done();
}
