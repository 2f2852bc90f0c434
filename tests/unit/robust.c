/* Robustness of the whole analyzer against hostile input, the cases the hardening issue names:
 * empty file, random bytes, other formats, a newer format version, truncation at every chunk
 * boundary and mid-record, flipped bits in header and payload, absurd lengths and counts, huge
 * string ids and lengths, and the shapes that used to cost quadratic (or exponential) time.
 * Each input must give either one clear error line or a complete report: the reader, every
 * analysis, the text, JSON and --dump renderers run as gputrace-report runs them. With
 * make SAN=address,undefined test they run under the sanitizers too (the fuzz corpus runs
 * through the same pipeline in tests/cases/fuzz_regress.sh). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "check.h"
#include "model/state.h"
#include "render/dump.h"
#include "repack.h"
#include "tracebuild.h"

#define T0 1000000000ull
/* CPU seconds a shape may take. They take well under a second here (a few under sanitizers);
 * before the fixes, each took minutes to days at these sizes. */
#define SHAPE_CPU_LIMIT 20.0

static FILE *devnull;

struct outcome {
    int rc;          /* 0 report, -1 refused */
    char error[200]; /* why, when refused */
    struct ga_read_stats st;
    uint64_t notes, notes_dropped, ooms, ooms_dropped, kernels;
    int json_ok; /* the JSON report parses (when asked for) */
    double cpu_s;
};

static int memfd_of(const void *buf, size_t n)
{
    int fd = memfd_create("robust", MFD_CLOEXEC);
    size_t done = 0;
    if (fd < 0) abort();
    while (done < n) {
        ssize_t k = write(fd, (const char *)buf + done, n - done);
        if (k <= 0) abort();
        done += (size_t)k;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) abort();
    return fd;
}

static void dump_sink(void *p, const struct ga_event *ev)
{
    const struct ga_read_stats *st = p;
    struct ga_vrecord rec;
    ga_vrecord_of(&rec, ev);
    ga_dump_record(devnull, st->header.start_monotonic_ns, &rec);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Renders the JSON report into memory and parses it back. */
static int json_parses(const struct ga_report *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) abort();
    ga_render_json(&r->m, m);
    fclose(m);
    /* strict, UTF-8 checked: every string from the trace must come out valid */
    json_tokener *tok = json_tokener_new();
    if (!tok) abort();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    int ok = o != NULL && json_object_is_type(o, json_type_object) &&
             json_tokener_get_error(tok) == json_tokener_success;
    json_object_put(o);
    json_tokener_free(tok);
    free(text);
    return ok;
}

/* What gputrace-report, --json and --dump do with these bytes. */
static void analyze(const void *buf, size_t n, int check_json, struct outcome *o)
{
    struct ga_report r;
    struct ga_read_stats dst;
    double start = cpu_now();
    int fd = memfd_of(buf, n);
    memset(o, 0, sizeof(*o));
    ga_report_init(&r, "robust.trace");
    o->rc = ga_read_fd(fd, ga_report_event, &r, &r.read);
    if (o->rc == 0) {
        ga_report_finish(&r);
        ga_render_text(&r.m, devnull);
        if (check_json)
            o->json_ok = json_parses(&r);
        else
            ga_render_json(&r.m, devnull);
        o->notes = r.facts.n_notes;
        o->notes_dropped = r.facts.notes_dropped;
        o->ooms = r.mem.n_ooms;
        o->ooms_dropped = r.mem.ooms_dropped;
        o->kernels = r.tl.n_kernels;
    }
    snprintf(o->error, sizeof(o->error), "%s", r.read.error);
    o->st = r.read;
    ga_report_free(&r);
    if (lseek(fd, 0, SEEK_SET) != 0) abort();
    if (ga_read_fd(fd, dump_sink, &dst, &dst) != o->rc) o->rc = 99; /* --dump must agree */
    close(fd);
    o->cpu_s = cpu_now() - start;
}

/* A refusal is one line that says why. */
static int clean_refusal(const struct outcome *o, const char *want)
{
    return o->rc == -1 && o->error[0] && !strchr(o->error, '\n') && strstr(o->error, want);
}

static void expect_refused(const char *what, const void *buf, size_t n, const char *want)
{
    struct outcome o;
    analyze(buf, n, 0, &o);
    if (!CHECK(what, clean_refusal(&o, want)))
        printf("     rc %d, error '%s', want '%s'\n", o.rc, o.error, want);
}

static void expect_report(const char *what, const void *buf, size_t n, struct outcome *o)
{
    analyze(buf, n, 1, o);
    if (!CHECK(what, o->rc == 0 && o->json_ok))
        printf("     rc %d, error '%s', json %d\n", o->rc, o->error, o->json_ok);
}

/* ---- traces ------------------------------------------------------------------------------ */

/* One record of every type over three chunks (host, GPU, host), as in the fuzz seeds. */
static void build_every_type(struct tb *t)
{
    static const char argv[] = "python\0train.py\0";
    tb_init(t, 42, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_process(t, 42, argv, sizeof(argv) - 1, 2, "node-1", "/usr/bin/python3");
    struct gt_rec_driver drv = {.ts = T0 + 1, .driver_version = 13000, .device_count = 1};
    tb_rec(t, GT_REC_DRIVER, 0, &drv, sizeof(drv), NULL, 0);
    struct gt_rec_device dev = {.ts = T0 + 2, .name_len = 4, .total_bytes = 1ull << 34};
    tb_rec(t, GT_REC_DEVICE, 0, &dev, sizeof(dev), "H200", 4);
    struct gt_rec_thread th = {.ts = T0 + 3, .tid = 7, .name_len = 4};
    tb_rec(t, GT_REC_THREAD, 0, &th, sizeof(th), "main", 4);
    tb_cupti(t, 4, GT_CUPTI_ON, 0, 0, "libcupti.so", "");
    tb_alloc(t, 10, GT_API_cuMemAlloc_v2, 0x1000, 4096, 0, 0xc7);
    tb_free(t, 11, GT_API_cuMemFree_v2, 0x1000, 0);
    tb_fail(t, 12, GT_API_cuMemAlloc_v2, 1ull << 40, 0, 100, 200, 2);
    struct gt_rec_vmm_map vm = {.ts = T0 + 13, .addr = 0x1000, .size = 2 << 20};
    tb_rec(t, GT_REC_VMM_MAP, GT_API_cuMemMap, &vm, sizeof(vm), NULL, 0);
    tb_func(t, 14, 0xf00, "_Z6kernelPfi");
    tb_launch_corr(t, 15, GT_API_cuLaunchKernel, 0xf00, 5, 1);
    tb_span(t, 16, 50, GT_API_cuMemcpyHtoD_v2, 4096);
    tb_object(t, 17, GT_API_cuCtxDestroy_v2, 0xc7, 0, 0, 0);
    struct gt_rec_meminfo mi = {.ts = T0 + 18, .free_bytes = 1, .total_bytes = 2};
    tb_rec(t, GT_REC_MEMINFO, 0, &mi, sizeof(mi), NULL, 0);
    struct gt_rec_resolve rs = {.ts = T0 + 19, .api = 1, .name_len = 13};
    tb_rec(t, GT_REC_RESOLVE, GT_RESOLVE_GETPROC2, &rs, sizeof(rs), "cuMemAlloc_v2", 13);
    struct gt_rec_lost lost = {.ts = T0 + 20, .count = 3};
    tb_rec(t, GT_REC_LOST, 0, &lost, sizeof(lost), NULL, 0);
    struct gt_rec_note note = {.ts = T0 + 21, .level = GT_NOTE_WARNING, .text_len = 5};
    tb_rec(t, GT_REC_NOTE, 0, &note, sizeof(note), "hello", 5);
    tb_watermark(t, 22);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_name(t, 1, "_Z6kernelPfi");
    tb_gpu_extcorr(t, 1, 9);
    tb_gpu_kernel(t, T0 + 30, T0 + 40, 9, 0, 5, 0, 1);
    tb_gpu_memcpy(t, 1, T0 + 41, T0 + 45, 4096, 0, 5);
    tb_gpu_memset(t, T0 + 46, T0 + 47, 64, 0, 5);
    struct gt_rec_gpu_api ga = {.start = T0 + 15, .end = T0 + 16, .corr = 9};
    tb_rec(t, GT_REC_GPU_API, 0, &ga, sizeof(ga), NULL, 0);
    tb_gpu_dropped(t, T0 + 48, 2);
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_end_rec(t, 50, 24, 3);
    tb_watermark(t, UINT64_MAX - T0);
    tb_end(t);
}

/* A trace of one host chunk holding the records the callback writes. */
static void one_chunk(struct tb *t, void (*fill)(struct tb *, size_t), size_t n)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    fill(t, n);
    tb_end(t);
}

/* Recomputes the CRC of every chunk (the record layer sees the change, not a bad checksum). */
static void fix_crcs(unsigned char *b, size_t n)
{
    size_t pos = sizeof(struct gt_file_header);
    struct gt_chunk_header ch;
    while (n - pos >= sizeof(ch)) {
        memcpy(&ch, b + pos, sizeof(ch));
        if (ch.magic != GT_CHUNK_MAGIC || ch.payload_size > n - pos - sizeof(ch)) return;
        ch.crc32 = gt_chunk_crc(&ch, b + pos + sizeof(ch));
        memcpy(b + pos, &ch, sizeof(ch));
        pos += sizeof(ch) + ch.payload_size;
    }
}

/* ---- not a trace ------------------------------------------------------------------------- */

static void test_not_traces(void)
{
    static const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0};
    static const char json[] = "{\"traceEvents\": [{\"name\": \"GPUTRACE\"}]}\n";
    static const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    unsigned char rnd[8192];
    int ok = 1;
    expect_refused("empty file: refused", "", 0, "empty file");
    expect_refused("gzip file: refused", gz, sizeof(gz), "not a gputrace trace (bad magic)");
    expect_refused("JSON file: refused", json, sizeof(json) - 1, "not a gputrace trace");
    expect_refused("ELF file: refused", elf, sizeof(elf), "not a gputrace trace");
    expect_refused("7 bytes of the magic: refused", "GPUTRAC", 7, "bad magic");
    srand(7);
    for (unsigned seed = 1; seed <= 40 && ok; seed++) {
        struct outcome o;
        size_t n = (size_t)seed * 200;
        for (size_t i = 0; i < n; i++)
            rnd[i] = (unsigned char)rand();
        analyze(rnd, n, 0, &o);
        ok = clean_refusal(&o, "bad magic");
    }
    CHECK("random bytes (40 files up to 8 KiB): each refused, one line", ok);
}

/* Random bytes after a good header: corrupt chunks, reported as a truncated empty trace. */
static void test_random_after_header(void)
{
    unsigned char buf[56 + 4096];
    struct gt_file_header h;
    int ok = 1;
    gt_header_init(&h, 1, 1, 0, T0);
    memcpy(buf, &h, sizeof(h));
    for (unsigned seed = 1; seed <= 40 && ok; seed++) {
        struct outcome o;
        srand(seed);
        for (size_t i = sizeof(h); i < sizeof(buf); i++)
            buf[i] = (unsigned char)rand();
        analyze(buf, sizeof(buf), 0, &o);
        ok = o.rc == 0 && o.st.truncated && o.st.chunks == 0;
    }
    CHECK("random bytes after a valid header: a report of 0 chunks, marked truncated", ok);
}

/* ---- headers: versions, byte order, sizes ----------------------------------------------- */

static void test_headers(void)
{
    struct gt_file_header h;
    unsigned char buf[4096 + 64];
    struct outcome o;
    gt_header_init(&h, 1, 1, 0, T0);
    h.version = 9;
    h.min_version = 9;
    gt_header_seal(&h);
    expect_refused("newer format (min_version 9): refused with the versions", &h, sizeof(h),
                   "written by a newer gputrace (format 9, this reader reads up to 5)");
    h.version = 9;
    h.min_version = 1; /* a newer writer that older readers can still read */
    gt_header_seal(&h);
    expect_report("newer writer, min_version 1: reported", &h, sizeof(h), &o);
    gt_header_init(&h, 1, 1, 0, T0);
    h.endian = __builtin_bswap32(GT_ENDIAN_TAG);
    expect_refused("other byte order: refused", &h, sizeof(h), "byte order");
    gt_header_init(&h, 1, 1, 0, T0);
    h.header_size = 0xfffffff8u;
    expect_refused("header_size 4 GiB: refused", &h, sizeof(h), "header size");
    h.header_size = 4096;
    expect_refused("header_size 4096 in a 56-byte file: refused", &h, sizeof(h),
                   "truncated in the file header");
    memset(buf, 0x5a, sizeof(buf));
    memcpy(buf, &h, sizeof(h));
    h.header_crc32 = gt_header_crc(buf, 4096); /* a newer writer's longer header, sealed whole */
    memcpy(buf, &h, sizeof(h));
    expect_report("header_size 4096, all there: reported", buf, 4096, &o);
    buf[4000] ^= 1;
    expect_refused("header_size 4096, a bit flipped past the known fields: refused", buf, 4096,
                   "checksum mismatch");
    expect_refused("cut in the header (20 bytes): refused", &h, 20, "truncated in the file header");
}

/* ---- truncation --------------------------------------------------------------------------- */

static void test_truncation(void)
{
    struct tb t;
    struct outcome o;
    int bound_ok = 1, mid_ok = 1, byte_ok = 1;
    build_every_type(&t);
    for (size_t c = 0; c < t.n_chunks; c++) {
        analyze(t.buf, t.chunk_ends[c], 0, &o);
        bound_ok &= o.rc == 0 && !o.st.truncated && o.st.chunks == c + 1;
        size_t start = c ? t.chunk_ends[c - 1] : sizeof(struct gt_file_header);
        /* in the chunk header, in the first record, in the middle, just before the end */
        size_t cuts[] = {start + 10, start + 24 + 12, (start + t.chunk_ends[c]) / 2,
                         t.chunk_ends[c] - 1};
        for (size_t k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++) {
            analyze(t.buf, cuts[k], 0, &o);
            mid_ok &= o.rc == 0 && o.st.truncated && o.st.chunks == c && o.st.stop_chunk == c + 1 &&
                      strstr(o.st.stop_reason, "truncated at byte") != NULL;
        }
    }
    CHECK("cut at every chunk boundary: a report of the chunks before, not truncated", bound_ok);
    CHECK("cut mid-chunk and mid-record: a report of the whole chunks, truncated, chunk named",
          mid_ok);
    for (size_t n = 0; n <= t.len; n++) {
        analyze(t.buf, n, 0, &o);
        byte_ok &= n < sizeof(struct gt_file_header) ? clean_refusal(&o, "") : o.rc == 0;
    }
    CHECK("cut at every byte: refused inside the header, else reported", byte_ok);
    tb_free_all(&t);
}

/* ---- flipped bits ------------------------------------------------------------------------- */

static void test_bit_flips(void)
{
    struct tb t;
    struct outcome o;
    int head_ok = 1, raw_ok = 1, fixed_ok = 1;
    size_t first_bad = 0;
    build_every_type(&t);
    unsigned char *b = malloc(t.len);
    if (!b) abort();
    for (size_t bit = 0; bit < 8 * sizeof(struct gt_file_header); bit++) {
        size_t byte = bit / 8;
        memcpy(b, t.buf, t.len);
        b[byte] ^= (unsigned char)(1u << (bit % 8));
        analyze(b, t.len, 0, &o);
        /* the magic says "not a trace", the byte-order tag names itself; any other bit is
         * caught by the checksum or a range check, never reported as a trace */
        const char *want = byte < 8                  ? "bad magic"
                           : byte < 12               ? "byte-order tag"
                           : byte >= 16 && byte < 20 ? "header"
                                                     : "corrupt file header";
        if (!clean_refusal(&o, want)) {
            if (head_ok) printf("     bit %zu: rc %d, error '%s'\n", bit, o.rc, o.error);
            head_ok = 0;
        }
    }
    CHECK("every header bit flipped: refused with one clear error line", head_ok);
    for (size_t bit = 8 * sizeof(struct gt_file_header); bit < 8 * t.len; bit++) {
        memcpy(b, t.buf, t.len);
        b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        analyze(b, t.len, 0, &o);
        raw_ok &= o.rc == 0 && o.st.truncated; /* the checksum catches it */
        fix_crcs(b, t.len);
        analyze(b, t.len, 0, &o);
        if (o.rc != 0 && fixed_ok) first_bad = bit;
        fixed_ok &= o.rc == 0;
    }
    CHECK("every chunk bit flipped: the checksum stops the reader there, report before it", raw_ok);
    if (!CHECK("every chunk bit flipped, checksum fixed: records garbled, still a report",
               fixed_ok))
        printf("     first failure: bit %zu\n", first_bad);
    free(b);
    tb_free_all(&t);
}

/* ---- absurd lengths and counts ------------------------------------------------------------ */

static void chunk_claiming(unsigned char *buf, size_t *n, uint32_t payload)
{
    struct gt_file_header h;
    struct gt_chunk_header ch = {.magic = GT_CHUNK_MAGIC, .kind = GT_CHUNK_HOST};
    gt_header_init(&h, 1, 1, 0, T0);
    ch.payload_size = payload;
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), &ch, sizeof(ch));
    memset(buf + sizeof(h) + sizeof(ch), 0, 64);
    *n = sizeof(h) + sizeof(ch) + 64;
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void test_absurd_chunks(void)
{
    unsigned char buf[256];
    size_t n;
    struct outcome o;
    chunk_claiming(buf, &n, 0xfffffff8u);
    analyze(buf, n, 0, &o);
    CHECK("chunk claiming 4 GiB: stops there as corrupt",
          o.rc == 0 && o.st.truncated && strstr(o.st.stop_reason, "implausible chunk size"));
    chunk_claiming(buf, &n, 12);
    analyze(buf, n, 0, &o);
    CHECK("chunk size not a multiple of 8: stops there as corrupt", o.rc == 0 && o.st.truncated);
    long before = max_rss_kb();
    for (int i = 0; i < 20; i++) {
        chunk_claiming(buf, &n, GT_MAX_CHUNK_PAYLOAD);
        analyze(buf, n, 0, &o);
    }
    CHECK("chunk claiming 64 MiB in a 144-byte file: truncated there",
          o.rc == 0 && o.st.truncated && strstr(o.st.stop_reason, "truncated at byte 144"));
    if (!CHECK("... without allocating what it claims (peak RSS up < 16 MiB)",
               max_rss_kb() - before < 16 * 1024))
        printf("     peak RSS grew by %ld KiB\n", max_rss_kb() - before);
}

static void fill_bad_sizes(struct tb *t, size_t n)
{
    static const uint32_t sizes[] = {0, 4, 12, 0xfffffff8u};
    unsigned char rec[64] = {0};
    struct gt_rec_header h = {GT_REC_ALLOC, GT_API_cuMemAlloc_v2, sizes[n]};
    tb_alloc(t, 1, GT_API_cuMemAlloc_v2, 0x1000, 64, 0, 0); /* a good record first */
    memcpy(rec, &h, sizeof(h));
    tb_raw(t, rec, 64);
}

static void fill_string_lengths(struct tb *t, size_t n)
{
    unsigned char rec[128] = {0};
    struct gt_rec_process p = {.h = {GT_REC_PROCESS, 0, 128}};
    struct gt_rec_func f = {.h = {GT_REC_FUNC, 0, 64}, .handle = 1, .name_len = 0xffffffffu};
    struct gt_rec_cupti c = {.h = {GT_REC_CUPTI, 0, 64}, .path_len = 24, .reason_len = 0xffffffe8u};
    (void)n;
    p.cmdline_len = p.host_len = p.exe_len = 0xffffffffu; /* sum past 2^32 */
    memcpy(rec, &p, sizeof(p));
    tb_raw(t, rec, 128);
    memset(rec, 0, sizeof(rec));
    memcpy(rec, &f, sizeof(f));
    tb_raw(t, rec, 64);
    memset(rec, 0, sizeof(rec));
    memcpy(rec, &c, sizeof(c)); /* 32-bit sum of the lengths would wrap to 0 */
    tb_raw(t, rec, 64);
    struct gt_rec_thread th = {.h = {GT_REC_THREAD, 0, 16}, .name_len = 8}; /* shorter than fixed */
    memset(rec, 0, sizeof(rec));
    memcpy(rec, &th, 16);
    tb_raw(t, rec, 16);
}

static void fill_counts(struct tb *t, size_t n)
{
    struct gt_rec_lost lost = {.ts = T0 + 1, .count = UINT64_MAX};
    tb_rec(t, GT_REC_LOST, 0, &lost, sizeof(lost), NULL, 0);
    tb_rec(t, GT_REC_LOST, 0, &lost, sizeof(lost), NULL, 0);
    tb_end_rec(t, 2, UINT64_MAX, UINT64_MAX);
    for (size_t i = 0; i < n; i++) {
        struct gt_rec_note note = {.ts = T0 + 3 + i, .level = (uint32_t)i, .text_len = 1};
        tb_rec(t, GT_REC_NOTE, 0, &note, sizeof(note), "x", 1);
        tb_fail(t, 3 + i, GT_API_cuMemAlloc_v2, UINT64_MAX - i, (int)i, UINT64_MAX, i, 2);
    }
}

/* Allocation sizes near 2^64: live bytes are sums modulo 2^64 (the sparkline indexed past its
 * table when a bucket went above the recorded peak), times at 0 and at the end of time. */
static void fill_huge_sizes(struct tb *t, size_t n)
{
    (void)n;
    tb_alloc(t, 1, GT_API_cuMemAlloc_v2, 0x1000, 5, 0, 0);
    tb_alloc(t, 2, GT_API_cuMemAlloc_v2, 0x2000, UINT64_MAX - 2, 0, 0);
    tb_alloc(t, 3, GT_API_cuMemAlloc_v2, 0x3000, 10, 0, 0);
    tb_free(t, 4, GT_API_cuMemFree_v2, 0x2000, 0);
    tb_alloc(t, UINT64_MAX - T0, GT_API_cuMemAllocManaged, 0x4000, UINT64_MAX, -1, 0);
    tb_span(t, 0 - T0, UINT64_MAX, GT_API_cuCtxSynchronize, UINT64_MAX);
    tb_launch(t, 5, GT_API_cuLaunchKernel, UINT64_MAX, 0);
}

static void test_absurd_records(void)
{
    struct tb t;
    struct outcome o;
    for (size_t i = 0; i < 4; i++) {
        one_chunk(&t, fill_bad_sizes, i);
        analyze(t.buf, t.len, 1, &o);
        CHECK("bad record size (0, 4, 12, 4 GiB): skipped as malformed, report",
              o.rc == 0 && o.json_ok && o.st.malformed_records == 1 && o.st.host_records == 1);
        tb_free_all(&t);
    }
    one_chunk(&t, fill_string_lengths, 0);
    expect_report("string lengths of 4 GiB, summing past 2^32: report", t.buf, t.len, &o);
    CHECK("... each such record skipped as malformed", o.st.malformed_records == 3);
    tb_free_all(&t);
    one_chunk(&t, fill_counts, 20000);
    expect_report("20,000 notes and failed allocations, counts at 2^64-1: report", t.buf, t.len,
                  &o);
    CHECK("... notes and OOM details kept to their caps, the rest counted",
          o.notes == GA_MAX_NOTES && o.notes_dropped == 20000 - GA_MAX_NOTES &&
              o.ooms == GA_MAX_OOMS && o.ooms_dropped == 20000 - GA_MAX_OOMS);
    tb_free_all(&t);
    one_chunk(&t, fill_huge_sizes, 0);
    expect_report("sizes and times near 2^64: report", t.buf, t.len, &o);
    tb_free_all(&t);
}

/* ---- huge string ids and lengths ---------------------------------------------------------- */

static void test_strings(void)
{
    struct tb t;
    struct outcome o;
    size_t big = 1u << 20;
    char *name = malloc(big + 1);
    if (!name) abort();
    memset(name, 'k', big);
    memcpy(name, "_Z", 2);
    name[big] = '\0';
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_cupti(&t, 1, GT_CUPTI_ON, 0, 0, "", "");
    tb_func(&t, 2, 0xf1, name); /* 1 MiB name */
    struct gt_rec_func bin = {.ts = T0 + 3, .handle = 0xf2, .name_len = 8};
    tb_rec(&t, GT_REC_FUNC, 0, &bin, sizeof(bin), "a\0b\xff\xfe\"\\\n", 8);
    tb_launch_corr(&t, 4, GT_API_cuLaunchKernel, 0xf1, 1, 1);
    tb_launch_corr(&t, 5, GT_API_cuLaunchKernel, 0xf2, 1, 2);
    /* an annotated pool named with invalid UTF-8 (memory.fragmentation.pools[].name) */
    struct gt_rec_pool pc = {.ts = T0 + 6, .pool = 0x77, .device = 0, .name_len = 6};
    tb_rec(&t, GT_REC_POOL, GT_POOL_CREATE, &pc, sizeof(pc), "p\xff\xfe\"\\q", 6);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_GPU, 0);
    tb_gpu_name(&t, UINT32_MAX, name);
    tb_gpu_name(&t, 0, "");
    tb_gpu_extcorr(&t, 1, UINT32_MAX);
    tb_gpu_kernel(&t, T0 + 10, T0 + 20, UINT32_MAX, UINT32_MAX, UINT32_MAX, 0, UINT32_MAX);
    tb_gpu_kernel(&t, T0 + 10, T0 + 20, 5, 0, 0, 0, 12345); /* a name id never given */
    tb_end(&t);
    expect_report("1 MiB names, ids 2^32-1, NUL/invalid UTF-8/quotes in names and pool names: valid JSON", t.buf,
                  t.len, &o);
    CHECK("... both launched handles listed", o.kernels == 2);
    tb_free_all(&t);
    free(name);
}

/* ---- shapes that used to cost quadratic or exponential time ------------------------------- */

static void shape(const char *what, void (*fill)(struct tb *, size_t), size_t n)
{
    struct tb t;
    struct outcome o;
    char label[200];
    one_chunk(&t, fill, n);
    analyze(t.buf, t.len, 0, &o);
    snprintf(label, sizeof(label), "%s: report in under %.0f CPU s", what, SHAPE_CPU_LIMIT);
    if (!CHECK(label, o.rc == 0 && o.cpu_s < SHAPE_CPU_LIMIT))
        printf("     rc %d after %.1f CPU s\n", o.rc, o.cpu_s);
    tb_free_all(&t);
}

static void key_rec(struct tb *t, uint64_t key)
{
    struct gt_rec_driver d = {.ts = key};
    tb_rec(t, GT_REC_DRIVER, 0, &d, sizeof(d), NULL, 0);
}

static void fill_watermarks_pass_nothing(struct tb *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        key_rec(t, UINT64_MAX - 1);
    for (size_t i = 0; i < n; i++)
        tb_watermark(t, 5);
}

static void fill_watermarks_pass_one(struct tb *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        key_rec(t, UINT64_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        key_rec(t, T0 + 100 + i);
        tb_watermark(t, 101 + i);
    }
}

/* Handles that all land in one probe chain under the analyzer's old, unseeded hash. */
static uint64_t inverse(uint64_t x)
{
    uint64_t y = x;
    for (int i = 0; i < 6; i++)
        y *= 2 - x * y;
    return y;
}

static void fill_colliding_handles(struct tb *t, size_t n)
{
    const uint64_t c = 0x9e3779b97f4a7c15ull, d = 0x632be59bd9b4e019ull, k = 0xd6e8feb86659fd93ull;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = (uint64_t)(i + 1) << 24;
        h ^= h >> 32;
        h *= inverse(k);
        h ^= h >> 32;
        tb_launch(t, i, GT_API_cuLaunchKernel, (h ^ d) * inverse(c), 0);
    }
}

static void fill_devices(struct tb *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tb_alloc(t, i, GT_API_cuMemAlloc_v2, 0x1000 * (i + 1), 64, (int)i, 0);
}

static void fill_contexts(struct tb *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tb_alloc(t, i, GT_API_cuMemAlloc_v2, 0x1000 * (i + 1), 64, 0, 0x100 + i);
    for (size_t i = 0; i < n; i++)
        tb_object(t, n + i, GT_API_cuCtxDestroy_v2, 0x100 + i, 0, 0, 0);
    for (size_t i = 0; i < n; i++)
        tb_object(t, 2 * n + i, GT_API_cuDevicePrimaryCtxReset_v2, 0, 0, 0, 0);
}

static void fill_device_records(struct tb *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct gt_rec_device dev = {.ts = T0 + i, .ordinal = (int32_t)i, .name_len = 1};
        tb_rec(t, GT_REC_DEVICE, 0, &dev, sizeof(dev), "d", 1);
    }
}

/* A kernel name whose demangling doubles with each level (levels < 35):
 * f(A, B<A,A>, B<B<A,A>,B<A,A>>, ...), each B<x,x> naming the previous one twice. */
static void fill_demangle_bomb(struct tb *t, size_t levels)
{
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char name[1024];
    size_t k = (size_t)snprintf(name, sizeof(name), "_Z1f1A1BIS_S_E");
    for (size_t i = 0; i < levels; i++) /* S<n>_ is substitution n + 1: B<...> of level i */
        k += (size_t)snprintf(name + k, sizeof(name) - k, "S0_IS%c_S%c_E", digits[i + 1],
                              digits[i + 1]);
    tb_func(t, 1, 0xf1, name);
    tb_launch(t, 2, GT_API_cuLaunchKernel, 0xf1, 0);
}

/* ---- host call stacks ---------------------------------------------------------------------- */

static void stack_rec(struct tb *t, uint32_t first, uint32_t parent, const uint64_t *ips,
                      uint32_t n)
{
    struct gt_rec_stack r = {.ts = T0, .first_id = first, .parent = parent, .ips_len = 8 * n};
    tb_rec(t, GT_REC_STACK, 0, &r, sizeof(r), (const char *)ips, r.ips_len);
}

static void module_rec(struct tb *t, uint64_t start, uint64_t size, const char *path)
{
    struct gt_rec_module r = {.ts = T0, .base = start, .start = start, .size = size};
    r.path_len = (uint32_t)strlen(path);
    tb_rec(t, GT_REC_MODULE, 0, &r, sizeof(r), path, r.path_len);
}

static void alloc_at(struct tb *t, uint64_t addr, uint32_t stack)
{
    struct gt_rec_alloc a = {.ts = T0 + 1, .addr = addr, .size = 64, .stack = stack};
    tb_rec(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, &a, sizeof(a), NULL, 0);
}

/* One node near the highest id the reader accepts: the node array used to grow to the id. */
static void fill_far_node(struct tb *t, size_t n)
{
    uint64_t ip = 0x1234;
    (void)n;
    stack_rec(t, (1u << 30) - 2, 0, &ip, 1);
    alloc_at(t, 0x1000, (1u << 30) - 2);
}

/* n modules, n one-frame stacks (an ip in each module), an allocation at each: every ip needs
 * its module looked up (that scanned every module). */
static void fill_modules(struct tb *t, size_t n)
{
    char path[64];
    for (size_t i = 0; i < n; i++) {
        uint64_t ip = 0x100000 * (i + 1) + 0x10;
        snprintf(path, sizeof(path), "/nonexistent/lib%zu.so", i);
        module_rec(t, 0x100000 * (i + 1), 0x100000, path);
        stack_rec(t, (uint32_t)i + 1, 0, &ip, 1);
        alloc_at(t, 0x1000 * (i + 1), (uint32_t)i + 1);
    }
}

/* n stacks that share a 500-frame chain in an application library, each with its own
 * innermost frame in the driver: each stack's site is found by walking past the driver frame
 * (every frame of every stack went through the regular expressions). */
static void fill_deep_stacks(struct tb *t, size_t n)
{
    uint64_t chain[500];
    module_rec(t, 0x400000, 0x100000, "/nonexistent/libapp.so");
    module_rec(t, 0x7f0000000000, 0x100000, "/nonexistent/libcuda.so.1");
    for (size_t i = 0; i < 500; i++)
        chain[i] = 0x400000 + 16 * i;
    stack_rec(t, 1, 0, chain, 500);
    for (size_t i = 0; i < n; i++) {
        uint64_t ip = 0x7f0000000000 + 16 * i;
        stack_rec(t, 501 + (uint32_t)i, 500, &ip, 1);
        alloc_at(t, 0x1000 * (i + 1), 501 + (uint32_t)i);
    }
}

/* The same real file (this test program) loaded at n addresses, a one-frame stack in each. */
static void fill_one_file_many_loads(struct tb *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t ip = 0x10000000 * (i + 1) + 0x1010;
        module_rec(t, 0x10000000 * (i + 1), 0x1000000, "/proc/self/exe");
        stack_rec(t, (uint32_t)i + 1, 0, &ip, 1);
        alloc_at(t, 0x1000 * (i + 1), (uint32_t)i + 1);
    }
}

static void test_stacks(void)
{
    struct tb t;
    struct outcome o;
    long before = max_rss_kb();
    one_chunk(&t, fill_far_node, 0);
    expect_report("stack node id 2^30-2: report", t.buf, t.len, &o);
    if (!CHECK("... without an array as big as the id (peak RSS up < 64 MiB)",
               max_rss_kb() - before < 64 * 1024))
        printf("     peak RSS grew by %ld KiB\n", max_rss_kb() - before);
    tb_free_all(&t);
    before = max_rss_kb();
    one_chunk(&t, fill_one_file_many_loads, 1000);
    analyze(t.buf, t.len, 0, &o);
    CHECK("one real file loaded at 1000 addresses: report", o.rc == 0);
    if (!CHECK("... the file read once, not per load (peak RSS up < 64 MiB)",
               max_rss_kb() - before < 64 * 1024))
        printf("     peak RSS grew by %ld KiB\n", max_rss_kb() - before);
    tb_free_all(&t);
}

static void test_shapes(void)
{
    shape("200,000 records held behind 200,000 watermarks that pass none",
          fill_watermarks_pass_nothing, 200000);
    shape("100,000 held, then 100,000 watermarks passing one record each", fill_watermarks_pass_one,
          100000);
    shape("100,000 launches of handles colliding under a fixed hash", fill_colliding_handles,
          100000);
    shape("100,000 devices in allocation records", fill_devices, 100000);
    shape("100,000 contexts, destroyed one by one, then 100,000 primary resets", fill_contexts,
          100000);
    shape("100,000 device records", fill_device_records, 100000);
    shape("a kernel name whose demangling would print 27 GB (30 nested references)",
          fill_demangle_bomb, 30);
    shape("30,000 modules, a stack in each", fill_modules, 30000);
    shape("30,000 stacks sharing 500 frames", fill_deep_stacks, 30000);
}

/* ---- compressed chunks (GT_CODEC_ZSTD, GT_CODEC_ZSTD_DELTA) ------------------------------ */

/* The JSON report of these bytes, as text (malloc'd), or NULL when refused. */
static char *json_of(const void *buf, size_t n)
{
    struct ga_report r;
    char *text = NULL;
    size_t len = 0;
    int fd = memfd_of(buf, n);
    ga_report_init(&r, "robust.trace");
    if (ga_read_fd(fd, ga_report_event, &r, &r.read) == 0) {
        ga_report_finish(&r);
        FILE *m = open_memstream(&text, &len);
        if (!m) abort();
        ga_render_json(&r.m, m);
        fclose(m);
    }
    ga_report_free(&r);
    close(fd);
    return text;
}

/* A trace of one compressed host chunk whose payload (head + frame + padding) is built by hand:
 * the frame compresses `raw` (raw_n bytes); `claim` is the head's raw_size, `packed_delta` is
 * added to the head's packed_size, `pad` is the padding byte. codec as given. */
static size_t hand_chunk(unsigned char *out, size_t cap, uint16_t codec, const void *raw,
                         size_t raw_n, uint32_t claim, int32_t packed_delta, unsigned char pad,
                         int content_size_flag)
{
    struct gt_file_header h;
    struct gt_chunk_header ch = {GT_CHUNK_MAGIC, GT_CHUNK_HOST, codec, 0, 0, 1, 0};
    gt_header_init(&h, 1, 1, 0, T0);
    h.min_version = GT_FORMAT_MIN_READER_CODEC;
    gt_header_seal(&h);
    memcpy(out, &h, sizeof(h));
    unsigned char *payload = out + sizeof(h) + sizeof(ch);
    unsigned char *frame = payload + sizeof(struct gt_codec_head);
    size_t room = cap - (size_t)(frame - out) - 8;
    ZSTD_CCtx *cx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cx, ZSTD_c_contentSizeFlag, content_size_flag);
    size_t c = ZSTD_compress2(cx, frame, room, raw, raw_n);
    ZSTD_freeCCtx(cx);
    if (ZSTD_isError(c)) abort();
    size_t stored = sizeof(struct gt_codec_head) + ((c + 7) & ~(size_t)7);
    memset(frame + c, pad, stored - sizeof(struct gt_codec_head) - c);
    struct gt_codec_head head = {claim, (uint32_t)((int64_t)c + packed_delta)};
    memcpy(payload, &head, sizeof(head));
    ch.payload_size = (uint32_t)stored;
    ch.crc32 = gt_chunk_crc(&ch, payload);
    memcpy(out + sizeof(h), &ch, sizeof(ch));
    return sizeof(h) + sizeof(ch) + stored;
}

/* Refused as a corrupt first chunk with `why`: a report of 0 chunks, truncated there. */
static void expect_bad_chunk(const char *what, const void *buf, size_t n, const char *why)
{
    struct outcome o;
    analyze(buf, n, 1, &o);
    if (!CHECK(what, o.rc == 0 && o.json_ok && o.st.truncated && o.st.chunks == 0 &&
                         o.st.stop_chunk == 1 && strstr(o.st.stop_reason, why)))
        printf("     rc %d, chunks %llu, stop '%s', want '%s'\n", o.rc,
               (unsigned long long)o.st.chunks, o.st.stop_reason, why);
}

static void test_codec(void)
{
    struct tb t;
    struct repack_out z, d, back;
    build_every_type(&t);
    char *plain = json_of(t.buf, t.len);
    repack_trace(t.buf, t.len, &z, 1, GT_CODEC_ZSTD, 1);
    repack_trace(t.buf, t.len, &d, 1, GT_CODEC_ZSTD_DELTA, 1);
    repack_trace(d.buf, d.len, &back, 0, GT_CODEC_NONE, 0);
    char *jz = json_of(z.buf, z.len), *jd = json_of(d.buf, d.len);
    CHECK_U64("codec: every chunk of the every-type trace compressed (zstd)", z.packed, 3);
    CHECK_U64("codec: every chunk of the every-type trace compressed (delta)", d.packed, 3);
    CHECK("codec: JSON of the zstd copy = JSON of the original", plain && jz && !strcmp(plain, jz));
    CHECK("codec: JSON of the delta copy = JSON of the original",
          plain && jd && !strcmp(plain, jd));
    CHECK("codec: decoded back = the original file, byte for byte",
          back.len == t.len && !memcmp(back.buf, t.buf, t.len));
    free(jz);
    free(jd);
    struct repack_out pk;
    repack_trace(t.buf, t.len, &pk, 1, GT_CODEC_PACK_DELTA, 1);
    char *jp = json_of(pk.buf, pk.len);
    CHECK_U64("codec: every chunk of the every-type trace compressed (packed)", pk.packed, 3);
    CHECK("codec: JSON of the packed copy = JSON of the original",
          plain && jp && !strcmp(plain, jp));
    int pok = 1;
    unsigned char *pm = malloc(pk.len);
    for (size_t i = sizeof(struct gt_file_header) + sizeof(struct gt_chunk_header);
         i < pk.len && pok; i++) { /* every packed byte flipped, CRC fixed: a report each */
        struct outcome o;
        memcpy(pm, pk.buf, pk.len);
        pm[i] ^= (unsigned char)(1u << (i % 8));
        fix_crcs(pm, pk.len);
        analyze(pm, pk.len, 0, &o);
        pok = o.rc == 0;
    }
    CHECK("codec: every byte of the packed file flipped (CRC fixed): a report each", pok);
    free(pm);
    free(jp);
    free(pk.buf);
    free(plain);

    /* Every byte of the compressed payloads changed (CRC fixed so the codec layer sees it):
     * each input ends in a report, the damaged chunk either decoding to something (zstd frames
     * carry no checksum of their own: ours covers them) or refused there. */
    int ok = 1;
    size_t first = sizeof(struct gt_file_header) + sizeof(struct gt_chunk_header);
    unsigned char *m = malloc(d.len);
    for (size_t i = first; i < d.len && ok; i++) {
        struct outcome o;
        memcpy(m, d.buf, d.len);
        m[i] ^= (unsigned char)(1u << (i % 8));
        fix_crcs(m, d.len);
        analyze(m, d.len, 0, &o);
        ok = o.rc == 0 && (!o.st.truncated || o.st.chunks < 3);
    }
    CHECK("codec: every byte of the compressed file flipped (CRC fixed): a report each", ok);
    ok = 1;
    for (size_t cut = first; cut < d.len && ok; cut += 3) { /* payload bytes replaced by zeros */
        struct outcome o;
        memcpy(m, d.buf, d.len);
        memset(m + cut, 0, d.len - cut < 24 ? d.len - cut : 24);
        fix_crcs(m, d.len);
        analyze(m, d.len, 0, &o);
        ok = o.rc == 0;
    }
    CHECK("codec: 24 zero bytes at every third offset (CRC fixed): a report each", ok);
    free(m);

    /* Lying heads, hand-made frames. */
    unsigned char raw[512], buf[4096];
    size_t n;
    memset(raw, 0, sizeof(raw));
    for (size_t i = 0; i < sizeof(raw); i += 64) { /* 8 alloc-sized records of 64 bytes */
        struct gt_rec_header rh = {GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 64};
        uint64_t ts = T0 + i;
        memcpy(raw + i, &rh, sizeof(rh));
        memcpy(raw + i + 8, &ts, 8);
    }
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 512, 0, 0, 1);
    struct outcome o;
    analyze(buf, n, 1, &o);
    CHECK("codec: hand-made zstd chunk reads: 8 records",
          o.rc == 0 && !o.st.truncated && o.st.chunks == 1 && o.st.host_records == 8 &&
              o.st.packed_chunks == 1 && o.st.raw_bytes == 512);
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 520, 0, 0, 1);
    expect_bad_chunk("codec: raw_size 8 above the frame's content: corrupt", buf, n,
                     "does not state the decoded size");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 504, 0, 0, 1);
    expect_bad_chunk("codec: raw_size 8 below the frame's content: corrupt", buf, n,
                     "does not state the decoded size");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 512, 0, 0, 0);
    expect_bad_chunk("codec: frame without its content size: corrupt", buf, n,
                     "does not state the decoded size");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, 500, 500, 0, 0, 1);
    expect_bad_chunk("codec: raw_size not a multiple of 8: corrupt", buf, n,
                     "implausible decoded size");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), GT_MAX_CHUNK_PAYLOAD + 8, 0,
                   0, 1);
    expect_bad_chunk("codec: raw_size 64 MiB + 8: corrupt", buf, n, "implausible decoded size");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 0xfffffff8u, 0, 0, 1);
    expect_bad_chunk("codec: raw_size 4 GiB: corrupt", buf, n, "implausible decoded size");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 512, 64, 0, 1);
    expect_bad_chunk("codec: packed_size past the payload: corrupt", buf, n,
                     "frame size does not match");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 512, -8, 0, 1);
    expect_bad_chunk("codec: packed_size 8 short: corrupt", buf, n, "frame size does not match");
    for (size_t len = sizeof(raw); len >= 8; len -= 8) { /* a frame that needs padding */
        struct gt_codec_head head;
        n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, len, (uint32_t)len, 0, 0x55, 1);
        memcpy(&head, buf + 80, sizeof(head));
        if (head.packed_size & 7) break;
    }
    expect_bad_chunk("codec: nonzero padding: corrupt", buf, n, "nonzero padding");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_PACK_DELTA, raw, sizeof(raw), 512, 0, 0, 1);
    expect_bad_chunk("codec: a zstd frame as codec 3 (packed): corrupt", buf, n,
                     "corrupt packed chunk");
    n = hand_chunk(buf, sizeof(buf), 4, raw, sizeof(raw), 512, 0, 0, 1);
    expect_bad_chunk("codec: codec 4: corrupt (unknown)", buf, n, "unknown chunk codec");
    n = hand_chunk(buf, sizeof(buf), GT_CODEC_ZSTD, raw, sizeof(raw), 512, 0, 0, 1);
    memset(buf + 56 + 24 + 8 + 12, 0xa5, n - (56 + 24 + 8 + 12) - 8); /* frame body garbage */
    fix_crcs(buf, n);
    expect_bad_chunk("codec: garbage frame body: corrupt", buf, n, "corrupt compressed frame");
    memset(buf + 56 + 24 + 8, 0, 16); /* not even a frame magic */
    fix_crcs(buf, n);
    expect_bad_chunk("codec: no frame magic: corrupt", buf, n, "does not state the decoded size");
    {
        struct gt_chunk_header ch = {GT_CHUNK_MAGIC, GT_CHUNK_HOST, GT_CODEC_ZSTD, 0, 0, 1, 0};
        struct gt_file_header h;
        gt_header_init(&h, 1, 1, 0, T0);
        memcpy(buf, &h, sizeof(h));
        ch.crc32 = gt_chunk_crc(&ch, NULL);
        memcpy(buf + sizeof(h), &ch, sizeof(ch));
        expect_bad_chunk("codec: empty compressed payload: corrupt", buf, sizeof(h) + sizeof(ch),
                         "shorter than its head");
    }
    { /* two frames where one is promised */
        unsigned char two[8192];
        hand_chunk(two, sizeof(two), GT_CODEC_ZSTD, raw, 256, 256, 0, 0, 1);
        struct gt_codec_head head;
        memcpy(&head, two + 80, 8);
        size_t c1 = head.packed_size;
        size_t c2 = ZSTD_compress(two + 88 + c1, sizeof(two) - 88 - c1 - 8, raw + 256, 256, 1);
        size_t stored = 8 + ((c1 + c2 + 7) & ~(size_t)7);
        memset(two + 88 + c1 + c2, 0, stored - 8 - c1 - c2);
        head.packed_size = (uint32_t)(c1 + c2);
        memcpy(two + 80, &head, 8);
        struct gt_chunk_header ch;
        memcpy(&ch, two + 56, sizeof(ch));
        ch.payload_size = (uint32_t)stored;
        ch.crc32 = gt_chunk_crc(&ch, two + 80);
        memcpy(two + 56, &ch, sizeof(ch));
        expect_bad_chunk("codec: two frames: corrupt", two, 80 + stored,
                         "not exactly one compressed frame");
    }

    /* Decompression bombs: a frame that really decodes to 64 MiB + 8 bytes of zeros (a few KiB
     * on disk) is refused before anything is decoded; one of exactly 64 MiB is decoded into a
     * bounded buffer (its zero records are malformed) and the next file reuses that memory. */
    {
        size_t big = (size_t)GT_MAX_CHUNK_PAYLOAD + 8;
        unsigned char *zeros = calloc(1, big);
        size_t cap = ZSTD_compressBound(big) + 256;
        unsigned char *bomb = malloc(cap);
        n = hand_chunk(bomb, cap, GT_CODEC_ZSTD, zeros, big, (uint32_t)big, 0, 0, 1);
        CHECK("codec: bomb of 64 MiB + 8 is small on disk (< 64 KiB)", n < 65536);
        long before = max_rss_kb();
        expect_bad_chunk("codec: bomb of 64 MiB + 8: refused", bomb, n, "implausible decoded size");
        CHECK("... without decoding it (peak RSS up < 16 MiB)", max_rss_kb() - before < 16 * 1024);
        n = hand_chunk(bomb, cap, GT_CODEC_ZSTD_DELTA, zeros, GT_MAX_CHUNK_PAYLOAD,
                       GT_MAX_CHUNK_PAYLOAD, 0, 0, 1);
        analyze(bomb, n, 0, &o);
        CHECK("codec: 64 MiB of zeros: decoded, one chunk, records malformed",
              o.rc == 0 && o.st.chunks == 1 && o.st.malformed_records == 1 &&
                  o.st.raw_bytes == GT_MAX_CHUNK_PAYLOAD);
        free(zeros);
        free(bomb);
    }

    /* The delta transform undoes itself on any bytes, records or not. */
    ok = 1;
    srand(11);
    for (int round = 0; round < 300 && ok; round++) {
        unsigned char in[2048], enc[2048];
        uint32_t len = (uint32_t)(rand() % 256) * 8;
        for (uint32_t i = 0; i < len; i++)
            in[i] = (unsigned char)rand();
        for (uint32_t pos = 0; pos + 8 <= len && round % 3; pos += 8 * (1 + (uint32_t)rand() % 4)) {
            struct gt_rec_header rh = {(uint16_t)(rand() % 4 ? rand() % 3 : rand()), 0,
                                       8 * (1 + (uint32_t)rand() % 4)};
            if (round % 5 == 0 && rand() % 20 == 0) rh.size = (uint32_t)rand();
            memcpy(in + pos, &rh, sizeof(rh));
        }
        gt_delta_encode(in, enc, len);
        gt_delta_decode(enc, len);
        ok = memcmp(in, enc, len) == 0;
    }
    CHECK("codec: delta transform round trip on 300 random buffers", ok);
    free(z.buf);
    free(d.buf);
    free(back.buf);
    tb_free_all(&t);
}

int main(void)
{
    devnull = fopen("/dev/null", "w");
    if (!devnull) abort();
    test_absurd_chunks(); /* first: it watches the peak RSS */
    test_not_traces();
    test_random_after_header();
    test_headers();
    test_truncation();
    test_bit_flips();
    test_absurd_records();
    test_strings();
    test_stacks();
    test_shapes();
    test_codec();
    fclose(devnull);
    return check_done();
}
