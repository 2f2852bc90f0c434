/* GPU timeline tests on synthetic traces: interval union against a brute-force model, exact
 * span/busy/idle, out-of-order GPU records, launch linking (graphs too), kernel names from GPU name
 * records vs function records, demangling, copies, clock offset, drops, the CUPTI status notices,
 * and the text/JSON renderings. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/demangle.h"
#include "model/state.h"
#include "check.h"
#include "collect.h"
#include "jpath.h"
#include "render.h"
#include "tracebuild.h"

#define T0 2000000000ull /* trace start (CLOCK_MONOTONIC) */
#define US 1000ull

#define RNG_SEED 88172645463325252ull
#include "rng.h"

static void run_report(struct tb *t, struct ga_report *r, char path[256])
{
    tmp_path(path, "gpu");
    tb_write(t, path, (size_t)-1);
    ga_report_init(r, path);
    if (ga_report_run(r) != 0) printf("     read error: %s\n", r->read.error);
}

/* The host chunk of thread `tid` that says CUPTI is on (at 1 ns), as the shim writes it. */
static void cupti_on(struct tb *t, uint32_t tid)
{
    tb_begin(t, GT_CHUNK_HOST, tid);
    tb_cupti(t, 1, GT_CUPTI_ON, 0, 0, "/x/libcupti.so.13", "");
    tb_end(t);
}

static void done_report(struct tb *t, struct ga_report *r, const char *path)
{
    ga_report_free(r);
    unlink(path);
    tb_free_all(t);
}

static const struct ga_gpu_device *gdev(const struct ga_report *r, uint32_t d)
{
    for (size_t i = 0; i < r->gpu.n_devices; i++)
        if (r->gpu.devices[i].device == d) return &r->gpu.devices[i];
    static const struct ga_gpu_device none;
    return &none;
}

static const struct ga_gpu_kstat *kstat(const struct ga_report *r, const char *name)
{
    for (size_t i = 0; i < r->gpu.n_kernels; i++)
        if (strcmp(r->gpu.kernels[i].name, name) == 0) return &r->gpu.kernels[i];
    static const struct ga_gpu_kstat none;
    return &none;
}

/* ---- interval union -----------------------------------------------------------------------------
 */

#define SPAN 600

/* Brute force: mark every covered nanosecond. */
static uint64_t union_model(const struct ga_gpu_act *a, size_t n)
{
    static unsigned char cover[SPAN + 256]; /* starts < SPAN, lengths < 200 */
    uint64_t busy = 0;
    memset(cover, 0, sizeof(cover));
    for (size_t i = 0; i < n; i++)
        for (uint64_t x = a[i].start; x < a[i].end; x++)
            cover[x] = 1;
    for (size_t x = 0; x < sizeof(cover); x++)
        busy += cover[x];
    return busy;
}

/* Starts and ends on a coarse grid half the time, so touching and equal ends are common. */
static void random_interval(struct ga_gpu_act *a)
{
    int coarse = (int)rng(2);
    uint64_t s = coarse ? rng(SPAN / 20) * 20 : rng(SPAN);
    uint64_t len = coarse ? rng(6) * 20 : rng(rng(4) ? 40 : 200);
    a->start = s;
    a->end = s + len;
}

static void test_union_random(void)
{
    int bad = 0;
    for (int round = 0; round < 2000; round++) {
        struct ga_gpu_act a[64], copy[64];
        size_t n = rng(64);
        for (size_t i = 0; i < n; i++) {
            memset(&a[i], 0, sizeof(a[i]));
            random_interval(&a[i]);
            if (i && rng(8) == 0) { /* nested in the previous one */
                a[i].start = a[i - 1].start + (a[i - 1].end - a[i - 1].start) / 3;
                a[i].end = a[i].start + (a[i - 1].end - a[i - 1].start) / 3;
            }
        }
        memcpy(copy, a, sizeof(a));
        uint64_t want = union_model(a, n), got = ga_gpu_union_ns(copy, n);
        if (got != want && bad++ < 3)
            printf("     round %d: %zu intervals, union %" PRIu64 ", model %" PRIu64 "\n", round, n,
                   got, want);
    }
    CHECK("union: 2000 random interval sets agree with the brute-force model", bad == 0);
}

/* Random kernels, copies and memsets on 2 devices x 3 streams, written in shuffled order over
 * several GPU chunks; every figure is checked against the brute-force model. */
#define NACT 300

static void shuffle(struct ga_gpu_act *a, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng(i + 1);
        struct ga_gpu_act t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static void write_acts(struct tb *t, const struct ga_gpu_act *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i % 37 == 0) {
            if (i) tb_end(t);
            tb_begin(t, GT_CHUNK_GPU, 0);
        }
        uint64_t s = T0 + a[i].start, e = T0 + a[i].end;
        if (a[i].kind == GA_GPU_KERNEL)
            tb_gpu_kernel(t, s, e, (uint32_t)i + 1, a[i].device, a[i].stream, 0, 0);
        else if (a[i].kind == GA_GPU_MEMCPY)
            tb_gpu_memcpy(t, 1, s, e, 64, a[i].device, a[i].stream);
        else
            tb_gpu_memset(t, s, e, 64, a[i].device, a[i].stream);
    }
    tb_end(t);
}

static void check_model(const struct ga_report *r, const struct ga_gpu_act *a, size_t n)
{
    static struct ga_gpu_act sel[NACT];
    int bad = 0;
    for (uint32_t d = 0; d < 2; d++) {
        size_t k = 0;
        uint64_t first = UINT64_MAX, last = 0, kernels = 0;
        for (size_t i = 0; i < n; i++) {
            if (a[i].device != d) continue;
            sel[k++] = a[i];
            if (a[i].start < first) first = a[i].start;
            if (a[i].end > last) last = a[i].end;
            kernels += a[i].kind == GA_GPU_KERNEL;
        }
        const struct ga_gpu_device *g = gdev(r, d);
        bad += g->busy_ns != union_model(sel, k) || g->first != T0 + first ||
               g->last != T0 + last || g->kernels != kernels || g->n_streams != 3;
        for (size_t s = 0; s < g->n_streams; s++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (a[i].device == d && a[i].stream == g->streams[s].stream) sel[m++] = a[i];
            bad += g->streams[s].busy_ns != union_model(sel, m);
        }
    }
    CHECK("random timeline: device span, busy, kernels and stream busy match the model", !bad);
}

static void test_timeline_random(void)
{
    static struct ga_gpu_act a[NACT];
    struct tb t;
    struct ga_report r;
    char path[256];
    for (size_t i = 0; i < NACT; i++) {
        memset(&a[i], 0, sizeof(a[i]));
        random_interval(&a[i]);
        a[i].start += 1; /* a GPU time of 0 means "unknown" */
        a[i].end += 1;
        a[i].device = (uint32_t)rng(2);
        a[i].stream = 10 + (uint32_t)rng(3);
        a[i].kind = (uint8_t)(rng(4) == 0 ? GA_GPU_MEMCPY : rng(5) == 0 ? GA_GPU_MEMSET : 0);
    }
    tb_init(&t, 1, T0);
    cupti_on(&t, 1);
    shuffle(a, NACT);
    write_acts(&t, a, NACT);
    run_report(&t, &r, path);
    CHECK_U64("random timeline: all activities kept", r.gpu.n_acts, NACT);
    CHECK_U64("random timeline: two devices", r.gpu.n_devices, 2);
    check_model(&r, a, NACT);
    done_report(&t, &r, path);
}

/* Activities that arrive as many sorted runs at once: 12 streams (more than the GA_GPU_RUNS
 * queues, so some wait in the heap), each in time order but delivered in blocks that interleave,
 * with equal starts across streams. They must leave in time order (ga_gpu_act_cmp's on equal
 * starts), all of them, and a queue that held a long run gives its memory back. */
#define NQSTREAM 12
#define NQPER    2000  /* per stream */
#define NQLONG   20000 /* then one stream alone: more than GA_GPU_RUN_KEEP in one queue */
static void test_reorder_queues(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    uint32_t next[NQSTREAM] = {0};
    size_t total = 0;
    tb_init(&t, 1, T0);
    cupti_on(&t, 1);
    tb_begin(&t, GT_CHUNK_GPU, 0);
    while (total < NQSTREAM * NQPER) {
        uint32_t s = (uint32_t)rng(NQSTREAM), block = 1 + (uint32_t)rng(40);
        for (uint32_t k = 0; k < block && next[s] < NQPER; k++, next[s]++, total++) {
            /* stream s's i-th kernel starts at 1000 i + 100 (s % 4): streams 0, 4 and 8 tie */
            uint64_t start = T0 + 1000 * (uint64_t)next[s] + 100 * (s % 4) + 1;
            tb_gpu_kernel(&t, start, start + 50 + s, (uint32_t)total + 1, 0, 20 + s, 0, 0);
            if (total % 500 == 499) {
                tb_end(&t);
                tb_begin(&t, GT_CHUNK_GPU, 0);
            }
        }
    }
    /* then one long run, later than all of them: one queue holds more than GA_GPU_RUN_KEEP */
    for (uint32_t i = 0; i < NQLONG; i++, total++) {
        uint64_t start = T0 + 1000 * (uint64_t)(NQPER + i) + 1;
        tb_gpu_kernel(&t, start, start + 50, (uint32_t)total + 1, 0, 40, 0, 0);
        if (total % 500 == 499) {
            tb_end(&t);
            tb_begin(&t, GT_CHUNK_GPU, 0);
        }
    }
    tb_end(&t);
    tmp_path(path, "gpuq");
    tb_write(&t, path, (size_t)-1);
    ga_report_init(&r, path);
    r.gpu.keep_acts = 1;
    if (ga_report_run(&r) != 0) printf("     read error: %s\n", r.read.error);
    CHECK_U64("queues: every activity analyzed", r.gpu.n_acts, NQSTREAM * NQPER + NQLONG);
    CHECK_U64("queues: none late", r.gpu.late, 0);
    size_t bad = 0;
    for (size_t i = 1; i < r.gpu.n_acts; i++) {
        const struct ga_gpu_act *a = &r.gpu.acts[i - 1], *b = &r.gpu.acts[i];
        bad += a->start > b->start || (a->start == b->start && ga_gpu_act_cmp(a, b) > 0);
    }
    CHECK_U64("queues: activities left in time order", bad, 0);
    CHECK("queues: some waited in the heap (more sorted runs than queues)", r.gpu.heap_cap > 0);
    int kept_ok = r.gpu.max_wait > NQLONG;
    for (size_t k = 0; k < GA_GPU_RUNS; k++)
        kept_ok &= r.gpu.runs[k].n == 0 && r.gpu.runs[k].cap <= GA_GPU_RUN_KEEP;
    CHECK("queues: all left, and the queue that held the long run gave its memory back", kept_ok);
    CHECK_U64("queues: the device's kernels", gdev(&r, 0)->kernels, NQSTREAM * NQPER + NQLONG);
    done_report(&t, &r, path);
}

/* ---- exact figures
 * -------------------------------------------------------------------------------- */

/* Device 0: kernels [100,200) s1 and [150,300) s2 overlap, a copy [300,400) s1 touches them, a
 * memset [500,600) s3 has a kernel [510,520) s1 nested in it. Device 1: one kernel. GPU chunks
 * come first, out of time order, split over two chunks; the CUPTI record comes last in the file. */
static void build_exact(struct tb *t, int64_t offset)
{
    uint64_t o = T0; /* the shim already moved GPU times onto CLOCK_MONOTONIC; offset is a fact */
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_memset(t, o + 500 * US, o + 600 * US, 4096, 0, 3);
    tb_gpu_kernel(t, o + 150 * US, o + 300 * US, 2, 0, 2, 0, 0);
    tb_gpu_kernel(t, o + 1000 * US, o + 1100 * US, 4, 1, 1, 0, 0);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_kernel(t, o + 510 * US, o + 520 * US, 3, 0, 1, 0, 0);
    tb_gpu_memcpy(t, 1, o + 300 * US, o + 400 * US, 1000000, 0, 1);
    tb_gpu_kernel(t, o + 100 * US, o + 200 * US, 1, 0, 1, 0, 0);
    tb_gpu_dropped(t, o + 700 * US, 3);
    tb_gpu_dropped(t, o + 800 * US, 4);
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 1);
    tb_cupti(t, 1, GT_CUPTI_ON, offset, 0, "/x/libcupti.so.13", "");
    tb_end(t);
}

static void check_exact(const struct ga_report *r, const char *what)
{
    char w[120];
    const struct ga_gpu_device *d0 = gdev(r, 0), *d1 = gdev(r, 1);
#define X(label, got, want) (snprintf(w, sizeof(w), "%s: %s", what, label), CHECK_U64(w, got, want))
    X("dev 0 first", d0->first, T0 + 100 * US);
    X("dev 0 last", d0->last, T0 + 600 * US);
    X("dev 0 busy = [100,400) + [500,600)", d0->busy_ns, 400 * US);
    X("dev 0 kernels", d0->kernels, 3);
    X("dev 0 streams", d0->n_streams, 3);
    X("dev 0 stream 1 busy = [100,200) + [300,400) + [510,520)",
      d0->n_streams ? d0->streams[0].busy_ns : 0, 210 * US);
    X("dev 0 stream 1 kernels", d0->n_streams ? d0->streams[0].kernels : 0, 2);
    X("dev 0 stream 3 busy (memset only)", d0->n_streams > 2 ? d0->streams[2].busy_ns : 0,
      100 * US);
    X("dev 1 busy", d1->busy_ns, 100 * US);
    X("kernel count", r->gpu.kernel_count, 4);
#undef X
}

static void test_exact(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    build_exact(&t, 0);
    run_report(&t, &r, path);
    check_exact(&r, "exact");
    CHECK_U64("exact: dropped summed", r.gpu.dropped, 7);
    char *js = render(&r, 1);
    json_object *root = json_tokener_parse(js);
    json_object *dev0 = JGET(root, "timeline", "devices", "#0");
    CHECK_U64("json: span_ns", json_object_get_uint64(JGET(dev0, "span_ns")), 500 * US);
    CHECK_U64("json: busy_ns", json_object_get_uint64(JGET(dev0, "busy_ns")), 400 * US);
    CHECK_U64("json: idle_ns", json_object_get_uint64(JGET(dev0, "idle_ns")), 100 * US);
    CHECK("json: utilization 0.8", json_object_get_double(JGET(dev0, "utilization")) == 0.8);
    CHECK_U64("json: first_ns from trace start", json_object_get_int64(JGET(dev0, "first_ns")),
              100 * US);
    CHECK_U64("json: last_ns", json_object_get_int64(JGET(dev0, "last_ns")), 600 * US);
    CHECK_U64("json: stream 2 kernels",
              json_object_get_uint64(JGET(dev0, "streams", "#1", "kernel_count")), 1);
    CHECK_U64("json: cupti_dropped", json_object_get_uint64(JGET(root, "trace", "cupti_dropped")),
              7);
    CHECK_STR("json: gpu_timeline available",
              json_object_get_string(JGET(root, "trace", "gpu_timeline")), "available");
    CHECK_U64("json: memsets bytes",
              json_object_get_uint64(JGET(root, "timeline", "memsets", "bytes")), 4096);
    CHECK_STR("json: top_kernels_by",
              json_object_get_string(JGET(root, "timeline", "top_kernels_by")), "gpu_time");
    json_object_put(root);
    free(js);
    char *txt = render(&r, 0);
    CHECK("text: device line",
          strstr(txt, "device 0   span 500.0 us, busy 400.0 us, idle 100.0 us, utilization "
                      "80.0%") != NULL);
    CHECK("text: drop warning",
          strstr(txt, "DROPPED   7 GPU activity records CUPTI could not deliver") != NULL);
    if (!strstr(txt, "device 0   span")) printf("%s", txt);
    free(txt);
    done_report(&t, &r, path);
    /* CUPTI's clock was 5 s ahead and the shim converted: the recorded offset must not be
     * applied a second time. */
    build_exact(&t, 5000000000ll);
    run_report(&t, &r, path);
    check_exact(&r, "clock offset");
    done_report(&t, &r, path);
}

/* ---- linking and names --------------------------------------------------------------------------
 */

#define CORR(thread, n) (((uint64_t)(thread) << 40) | (n))

/* Launches on threads 7 and 8; kernels linked through extcorr, three from one cuGraphLaunch,
 * one without extcorr, one whose extcorr names no launch, one of a failed launch. */
static void build_linking(struct tb *t)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_cupti(t, 1, GT_CUPTI_ON, 0, 0, "/x/libcupti.so.13", "");
    tb_func(t, 2, 0xf1, "_Z3addIfEvPT_S1_i");
    tb_func(t, 2, 0xf2, "fallback_kernel");
    tb_launch_corr(t, 10 * US, GT_API_cuLaunchKernel, 0xf1, 0x5, CORR(1, 1));
    tb_launch_corr(t, 20 * US, GT_API_cuLaunchKernel, 0xf2, 0x5, CORR(1, 2));
    tb_launch_corr(t, 30 * US, GT_API_cuGraphLaunch, 0x9a, 0x5, CORR(1, 3));
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 8);
    tb_launch_corr(t, 15 * US, GT_API_cuLaunchKernel_ptsz, 0xf1, 0x6, CORR(2, 1));
    struct gt_rec_launch bad = {.ts = T0 + 16 * US, .func = 0xf1, .corr = CORR(2, 2), .result = 1};
    tb_rec(t, GT_REC_LAUNCH, GT_API_cuLaunchKernel, &bad, sizeof(bad), NULL, 0);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_name(t, 1, "_Z6kernelPfi");
    tb_gpu_name(t, 2, "_Z3addIfEvPT_S1_i"); /* the same name as function 0xf1 */
    tb_gpu_kernel(t, T0 + 40 * US, T0 + 50 * US, 100, 0, 1, 0, 1); /* launch 1: GPU name 1 */
    tb_gpu_kernel(t, T0 + 60 * US, T0 + 70 * US, 101, 0, 1, 0, 0); /* launch 2: FUNC name */
    tb_gpu_kernel(t, T0 + 80 * US, T0 + 85 * US, 102, 0, 1, 9, 0); /* graph kernels */
    tb_gpu_kernel(t, T0 + 85 * US, T0 + 95 * US, 102, 0, 1, 9, 2);
    tb_gpu_kernel(t, T0 + 95 * US, T0 + 100 * US, 102, 0, 1, 9, 0);
    tb_gpu_kernel(t, T0 + 41 * US, T0 + 61 * US, 103, 0, 2, 0, 0);   /* thread 8: FUNC 0xf1 */
    tb_gpu_kernel(t, T0 + 200 * US, T0 + 210 * US, 104, 0, 2, 0, 0); /* no extcorr */
    tb_gpu_kernel(t, T0 + 300 * US, T0 + 301 * US, 105, 0, 2, 0, 0); /* extcorr to nothing */
    tb_gpu_kernel(t, T0 + 400 * US, T0 + 402 * US, 106, 0, 2, 0, 0); /* the failed launch */
    tb_gpu_extcorr(t, CORR(1, 1), 100);
    tb_gpu_extcorr(t, CORR(1, 2), 101);
    tb_gpu_extcorr(t, CORR(1, 3), 102);
    tb_gpu_extcorr(t, CORR(2, 1), 103);
    tb_gpu_extcorr(t, CORR(9, 9), 105);
    tb_gpu_extcorr(t, CORR(2, 2), 106);
    tb_end(t);
}

static void check_linking(const struct ga_report *r)
{
    const struct ga_gpu_link *l = &r->gpu.link;
    CHECK_U64("linking: kernels", l->kernels, 9);
    CHECK_U64("linking: linked (graph kernels included)", l->linked, 6);
    CHECK_U64("linking: graph kernels attributed to their cuGraphLaunch", l->graph_kernels, 3);
    CHECK_U64("linking: unlinked", l->unlinked, 3);
    CHECK_U64("linking: latency over direct launches", l->latency_n, 3);
    CHECK_U64("linking: latency min (thread 8: 41-15)", l->latency_min, 26 * US);
    CHECK_U64("linking: latency median (40-10)", l->latency_median, 30 * US);
    CHECK_U64("linking: latency max (60-20)", l->latency_max, 40 * US);
    CHECK("linking: thread 7 launched 5 of them, thread 8 one",
          l->n_threads == 2 && l->threads[0].tid == 7 && l->threads[0].kernels == 5 &&
              l->threads[1].tid == 8 && l->threads[1].kernels == 1);
}

static void check_names(const struct ga_report *r)
{
    const struct ga_gpu_kstat *add = kstat(r, "_Z3addIfEvPT_S1_i");
    CHECK_U64("names: GPU name and FUNC name of one kernel merge", add->count, 2);
    CHECK_U64("names: merged total", add->total_ns, 30 * US);
    CHECK_U64("names: merged max", add->max_ns, 20 * US);
    CHECK_STR("names: demangled template", add->demangled, "void add<float>(float*, float*, int)");
    CHECK_STR("names: GPU name demangled", kstat(r, "_Z6kernelPfi")->demangled,
              "kernel(float*, int)");
    CHECK_U64("names: FUNC name when no GPU name", kstat(r, "fallback_kernel")->count, 1);
    CHECK_STR("names: plain names stay", kstat(r, "fallback_kernel")->demangled, "fallback_kernel");
    CHECK_U64("names: graph kernels without a GPU name are unknown (a graph is not a function)",
              kstat(r, "<unknown>")->count, 2 + 3);
    CHECK("names: by total GPU time",
          r->gpu.n_kernels == 4 && strcmp(r->gpu.kernels[0].name, "_Z3addIfEvPT_S1_i") == 0);
}

static void test_linking(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    build_linking(&t);
    run_report(&t, &r, path);
    check_linking(&r);
    check_names(&r);
    char *js = render(&r, 1);
    json_object *root = json_tokener_parse(js);
    json_object *k0 = JGET(root, "timeline", "top_kernels", "#0");
    CHECK_STR("json: top kernel name (as recorded)", json_object_get_string(JGET(k0, "name")),
              "_Z3addIfEvPT_S1_i");
    CHECK_STR("json: top kernel demangled", json_object_get_string(JGET(k0, "demangled")),
              "void add<float>(float*, float*, int)");
    CHECK_U64("json: mean_ns", json_object_get_uint64(JGET(k0, "mean_ns")), 15 * US);
    CHECK_U64("json: linking.graph_kernels",
              json_object_get_uint64(JGET(root, "timeline", "linking", "graph_kernels")), 3);
    CHECK_U64(
        "json: launch latency median",
        json_object_get_int64(JGET(root, "timeline", "linking", "launch_latency_ns", "median")),
        30 * US);
    CHECK_U64("json: kernel_count", json_object_get_uint64(JGET(root, "timeline", "kernel_count")),
              9);
    json_object_put(root);
    free(js);
    char *txt = render(&r, 0);
    CHECK("text: demangled kernel row",
          strstr(txt, "void add<float>(float*, float*, int)") != NULL);
    CHECK("text: linking line",
          strstr(txt, "6 of 9 kernels linked to their launch (3 through cuGraphLaunch), 3 "
                      "unlinked") != NULL);
    CHECK("text: launch to start", strstr(txt, "min 26.0 us, median 30.0 us, max 40.0 us"));
    free(txt);
    done_report(&t, &r, path);
}

static void test_demangle(void)
{
    char *d = ga_demangle("_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT_");
    CHECK_STR("demangle: namespaces and templates", d,
              "void at::native::vectorized_elementwise_kernel<4>(int, 4)");
    free(d);
    CHECK("demangle: plain C name is not demangled", ga_demangle("my_kernel") == NULL);
    CHECK("demangle: broken mangling is left alone", ga_demangle("_Zxyz") == NULL);
    CHECK("demangle: empty", ga_demangle("") == NULL);
}

/* ---- copies, skipped records
 * ---------------------------------------------------------------------- */

static void test_copies(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    tb_init(&t, 1, T0);
    cupti_on(&t, 1);
    tb_begin(&t, GT_CHUNK_GPU, 0);
    tb_gpu_memcpy(&t, 1, T0 + 1000, T0 + 2000, 25000000, 0, 1); /* HtoD 25 MB in 1 us */
    tb_gpu_memcpy(&t, 1, T0 + 3000, T0 + 6000, 5000000, 0, 1);  /* + 5 MB in 3 us */
    tb_gpu_memcpy(&t, 2, T0 + 7000, T0 + 8000, 12000, 0, 1);    /* DtoH */
    tb_gpu_memcpy(&t, 10, T0 + 7000, T0 + 7000, 64, 0, 2);      /* PtoP, 0 ns */
    tb_gpu_memcpy(&t, 99, T0 + 9000, T0 + 9100, 1, 0, 2);       /* unknown kind */
    tb_gpu_memcpy(&t, 8, T0 + 9000, T0 + 8000, 1, 0, 2);        /* ends before it starts */
    tb_gpu_kernel(&t, 0, T0 + 100, 1, 0, 1, 0, 0);              /* no start time */
    tb_end(&t);
    run_report(&t, &r, path);
    CHECK_U64("copies: HtoD count", r.gpu.copies[1].count, 2);
    CHECK_U64("copies: HtoD bytes", r.gpu.copies[1].bytes, 30000000);
    CHECK_U64("copies: HtoD time", r.gpu.copies[1].total_ns, 4000);
    CHECK_U64("copies: unknown kind counted as unknown", r.gpu.copies[0].count, 1);
    CHECK_U64("copies: skipped activities", r.gpu.skipped, 2);
    CHECK_U64("copies: no kernels", r.gpu.kernel_count, 0);
    char *js = render(&r, 1);
    json_object *root = json_tokener_parse(js);
    json_object *c = JGET(root, "timeline", "copies");
    CHECK_U64("json: copies by kind", json_object_array_length(c), 4);
    CHECK_STR("json: first kind", json_object_get_string(JGET(c, "#0", "kind")), "unknown");
    CHECK_STR("json: HtoD", json_object_get_string(JGET(c, "#1", "kind")), "HtoD");
    CHECK("json: HtoD bandwidth 7500 GB/s",
          json_object_get_double(JGET(c, "#1", "bandwidth_gbps")) == 7500.0);
    CHECK("json: DtoH bandwidth 12 GB/s",
          json_object_get_double(JGET(c, "#2", "bandwidth_gbps")) == 12.0);
    CHECK("json: PtoP in 0 ns has no bandwidth",
          strcmp(json_object_get_string(JGET(c, "#3", "kind")), "PtoP") == 0 &&
              JGET(c, "#3", "bandwidth_gbps") == NULL);
    CHECK_U64("json: skipped_activities",
              json_object_get_uint64(JGET(root, "timeline", "skipped_activities")), 2);
    json_object_put(root);
    free(js);
    char *txt = render(&r, 0);
    CHECK("text: copies line", strstr(txt, "copies    unknown 1 x") != NULL &&
                                   strstr(txt, "HtoD 2 x, 28.6 MiB in 4.0 us (7500.00 GB/s)"));
    free(txt);
    done_report(&t, &r, path);
}

/* ---- async copies and memsets: linked to their call like a kernel to its launch -----------------
 * A kernel (20-30 us), then cuMemcpyHtoDAsync_v2 at 500 us (its copy runs 510-520 us) and
 * cuMemsetD8Async at 800 us (810-812 us), each with our correlation id. */
static void build_async(struct tb *t)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_cupti(t, 1, GT_CUPTI_ON, 0, 0, "/x/libcupti.so.13", "");
    tb_func(t, 2, 0xf1, "k");
    tb_launch_corr(t, 10 * US, GT_API_cuLaunchKernel, 0xf1, 0x5, CORR(1, 1));
    struct gt_rec_launch c = {.ts = T0 + 500 * US, .func = 0xd000, .stream = 0x5,
                              .corr = CORR(1, 2), .dur_ns = 100, .grid = {4096, 0, 0}};
    tb_rec(t, GT_REC_LAUNCH, GT_API_cuMemcpyHtoDAsync_v2, &c, sizeof(c), NULL, 0);
    struct gt_rec_launch m = {.ts = T0 + 800 * US, .func = 0xd000, .stream = 0x5,
                              .corr = CORR(1, 3), .dur_ns = 100, .grid = {256, 0, 0}};
    tb_rec(t, GT_REC_LAUNCH, GT_API_cuMemsetD8Async, &m, sizeof(m), NULL, 0);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_kernel(t, T0 + 20 * US, T0 + 30 * US, 100, 0, 1, 0, 0);
    tb_gpu_extcorr(t, CORR(1, 1), 100);
    tb_gpu_extcorr(t, CORR(1, 2), 101);
    tb_gpu_extcorr(t, CORR(1, 3), 102);
    struct gt_rec_gpu_memcpy g = {.start = T0 + 510 * US, .end = T0 + 520 * US, .bytes = 4096,
                                  .corr = 101, .stream = 1};
    tb_rec(t, GT_REC_GPU_MEMCPY, 1, &g, sizeof(g), NULL, 0);
    struct gt_rec_gpu_memset s = {.start = T0 + 810 * US, .end = T0 + 812 * US, .bytes = 256,
                                  .corr = 102, .stream = 1};
    tb_rec(t, GT_REC_GPU_MEMSET, 0, &s, sizeof(s), NULL, 0);
    tb_end(t);
}

static void test_async_copies(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    build_async(&t);
    run_report(&t, &r, path);
    const struct ga_gpu_link *l = &r.gpu.link;
    const struct ga_gaps_device *x = ga_gaps_device_of(&r.gaps, 0);
    CHECK("async: the kernel alone among the kernels linked and in the launch latency",
          l->kernels == 1 && l->linked == 1 && l->unlinked == 0 && l->latency_n == 1);
    CHECK("async: the copy's and the memset's bytes kept",
          r.gpu.copies[1].bytes == 4096 && r.gpu.memsets.bytes == 256);
    CHECK("async: one launch; the copy and the memset among the calls, with their bytes",
          r.tl.launch_count == 1 && r.tl.launch[GT_API_cuMemcpyHtoDAsync_v2].count == 0 &&
              r.tl.span[GT_API_cuMemcpyHtoDAsync_v2].count == 1 &&
              r.tl.span[GT_API_cuMemcpyHtoDAsync_v2].bytes == 4096 &&
              r.tl.span[GT_API_cuMemsetD8Async].bytes == 256);
    int ok = x && x->n_gaps == 2 && x->n_kept == 2;
    for (size_t k = 0; ok && k < 2; k++) {
        const struct ga_gap *g = &x->gaps[k];
        int copy = g->start == T0 + 30 * US;
        ok = g->launch && g->cause == GA_CAUSE_HOST_BUSY &&
             g->launch->api == (copy ? GT_API_cuMemcpyHtoDAsync_v2 : GT_API_cuMemsetD8Async) &&
             g->phase_ns[GA_CAUSE_HOST_BUSY] == (copy ? 470 : 280) * US &&
             g->phase_ns[GA_CAUSE_LAUNCH_LATENCY] == 10 * US &&
             g->phase_ns[GA_CAUSE_UNKNOWN] == 0;
    }
    CHECK("async: both gaps end at the copy's (memset's) call: host busy 470 (280) us, then 10 us "
          "launch latency",
          ok);
    CHECK("async: HTA's categories link kernels only (its own rule, on our export)",
          x && x->n_hta == 1 && x->hta[0].host_wait_ns == 0 &&
              x->hta[0].other_ns == (480 + 290) * US);
    done_report(&t, &r, path);
}

/* ---- status notices ---------------------------------------------------------------------------
 */

/* `want` is the gpu_timeline text; the text report's notice line adds `more`. */
static void status_case(int status, int result, const char *reason, const char *want,
                        const char *more)
{
    struct tb t;
    struct ga_report r;
    char path[256], buf[300], line[400];
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    if (status >= 0) tb_cupti(&t, 1, (unsigned)status, 0, result, "/x/libcupti.so", reason);
    tb_func(&t, 2, 0xf1, "_Z1kv");
    tb_launch_corr(&t, 3, GT_API_cuLaunchKernel, 0xf1, 0, CORR(1, 1));
    tb_end(&t);
    run_report(&t, &r, path);
    CHECK_STR(want, ga_report_gpu_timeline(&r, buf, sizeof(buf)), want);
    char *txt = render(&r, 0);
    snprintf(line, sizeof(line), "\ngpu       timeline %s%s\n", want, more);
    CHECK("text: the notice line", strstr(txt, line) != NULL);
    CHECK("text: no timeline section", strstr(txt, "gpu timeline  ") == NULL);
    CHECK("text: kernels by launch count instead", strstr(txt, "           1  k()\n") != NULL);
    free(txt);
    CHECK_U64("no GPU records: no launch kept unless CUPTI is on", r.gpu.n_launches,
              status == GT_CUPTI_ON || status < 0);
    done_report(&t, &r, path);
}

static void test_status(void)
{
    status_case(-1, 0, "",
                "unavailable: no CUPTI status record (trace from a run without a CUDA init)", "");
    status_case(GT_CUPTI_OFF_BY_USER, 0, "disabled by GPUTRACE_CUPTI=off",
                "unavailable: CUPTI turned off by the user (GPUTRACE_CUPTI=off)", "");
    status_case(GT_CUPTI_NOT_FOUND, 0, "no libcupti.so.13/.so.12 found (set GPUTRACE_CUPTI)",
                "unavailable: CUPTI not found: no libcupti.so.13/.so.12 found (set GPUTRACE_CUPTI)",
                "");
    status_case(GT_CUPTI_OWNED, 23, ": another profiler holds CUPTI (Nsight Systems)",
                "unavailable: CUPTI is owned by another profiler (Nsight Systems)", "");
    status_case(GT_CUPTI_OWNED, 23, ": another profiler holds CUPTI",
                "unavailable: CUPTI is owned by another profiler", "");
    status_case(GT_CUPTI_FAILED, 0, ": cuptiActivityEnableDriverApi missing from libcupti",
                "unavailable: CUPTI failed (cuptiActivityEnableDriverApi missing from libcupti)",
                "");
    status_case(GT_CUPTI_FAILED, 17, ": cuptiActivityEnable failed",
                "unavailable: CUPTI failed (cuptiActivityEnable failed, CUptiResult 17)", "");
    status_case(GT_CUPTI_FAILED, 0, "", "unavailable: CUPTI failed (reason not recorded)", "");
    status_case(9, 0, "", "unavailable: unknown CUPTI status 9", "");
    status_case(GT_CUPTI_ON, 0, "", "available", ", but the trace has no GPU activity records");
}

/* Without GPU records the JSON keeps the launch-count kernels and an empty timeline. */
static void test_no_gpu_json(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_func(&t, 2, 0xf1, "_Z1kv");
    tb_launch_corr(&t, 3, GT_API_cuLaunchKernel, 0xf1, 0, CORR(1, 1));
    tb_launch_corr(&t, 4, GT_API_cuLaunchKernel, 0xf1, 0, CORR(1, 2));
    tb_end(&t);
    run_report(&t, &r, path);
    char *js = render(&r, 1);
    json_object *root = json_tokener_parse(js), *tl = JGET(root, "timeline");
    CHECK_STR("no gpu json: top_kernels_by", json_object_get_string(JGET(tl, "top_kernels_by")),
              "launch_count");
    CHECK_U64("no gpu json: launch count",
              json_object_get_uint64(JGET(tl, "top_kernels", "#0", "count")), 2);
    CHECK_U64("no gpu json: total_ns 0",
              json_object_get_uint64(JGET(tl, "top_kernels", "#0", "total_ns")), 0);
    CHECK_STR("no gpu json: demangled",
              json_object_get_string(JGET(tl, "top_kernels", "#0", "demangled")), "k()");
    CHECK_U64("no gpu json: no devices", json_object_array_length(JGET(tl, "devices")), 0);
    CHECK_U64("no gpu json: kernel_count 0", json_object_get_uint64(JGET(tl, "kernel_count")), 0);
    CHECK("no gpu json: linking present", JGET(tl, "linking", "unlinked") != NULL);
    CHECK("no gpu json: no latency", JGET(tl, "linking", "launch_latency_ns") == NULL);
    CHECK("no gpu json: cupti null", JGET(root, "trace", "cupti") == NULL);
    json_object_put(root);
    free(js);
    done_report(&t, &r, path);
}

/* ---- reader ------------------------------------------------------------------------------------
 */

static void test_reader(void)
{
    struct tb t;
    struct coll c = {0};
    struct ga_read_stats st;
    char path[256];
    tb_init(&t, 1, T0);
    tb_begin(&t, GT_CHUNK_HOST, 1);
    tb_gpu_kernel(&t, T0 + 1, T0 + 2, 1, 0, 0, 0, 0); /* a GPU type in a host chunk */
    tb_watermark(&t, 10);
    tb_end(&t);
    tb_begin(&t, GT_CHUNK_GPU, 0);
    tb_gpu_name(&t, 3, "k");
    struct gt_rec_gpu_name bad = {.id = 4, .name_len = 1000}; /* runs past the record */
    tb_rec(&t, GT_REC_GPU_NAME, 0, &bad, sizeof(bad), "xy", 2);
    tb_alloc(&t, 5, GT_API_cuMemAlloc_v2, 0x10, 1, 0, 0); /* a host type in a GPU chunk */
    tb_gpu_kernel(&t, T0 + 5, T0 + 9, 2, 0, 0, 0, 3);
    tb_end(&t);
    tmp_path(path, "gpu-reader");
    tb_write(&t, path, (size_t)-1);
    ga_read_trace(path, coll_sink, &c, &st);
    CHECK_U64("reader: delivered: watermark, GPU name, GPU kernel", c.n, 3);
    CHECK("reader: GPU name string",
          c.n > 1 && c.ev[1].type == GT_REC_GPU_NAME && strcmp(c.ev[1].str[0], "k") == 0);
    CHECK("reader: GPU kernel fields",
          c.n > 2 && c.ev[2].r->gpu_kernel.end == T0 + 9 && c.ev[2].r->gpu_kernel.name_id == 3);
    CHECK_U64("reader: GPU type in a host chunk skipped as unknown", st.unknown_records, 1);
    CHECK_U64("reader: bad GPU name malformed", st.malformed_records, 1);
    CHECK_U64("reader: gpu_records counts every GPU chunk record", st.gpu_records, 4);
    unlink(path);
    coll_free(&c);
    tb_free_all(&t);
}

/* ---- streaming: a long trace, a hostile one ---------------------------------------------------
 */

#define NSTREAM 100000 /* kernels 0.5 ms apart: 50 s, more than the reorder heap ever holds */
#define NSYNC   60000  /* the kernel after which thread 7 synchronizes */
#define KPC     2500   /* launches per chunk (tracebuild holds 256 chunks) */

/* Thread 7 launches kernel i (i >= 1) at i * 500 us; it runs 100 us later for 50 us. A host
 * function launch (no kernel) and an external correlation to nothing come first; after kernel
 * NSYNC ends (30 s in) the thread sits 250 us in a cuStreamSynchronize; a kernel that
 * starts at 200 us arrives last, after 50 s of others. Watermarks follow each host chunk. */
static void build_stream(struct tb *t, int dropped)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_cupti(t, 1, GT_CUPTI_ON, 0, 0, "/x/libcupti.so.13", "");
    tb_launch_corr(t, 100, GT_API_cuLaunchHostFunc, 0xf0, 0x5, CORR(7, 0));
    if (dropped) /* a kernel launch whose kernel CUPTI dropped: it holds the heap 10 s at most */
        tb_launch_corr(t, 150 * US, GT_API_cuLaunchKernel, 0xf1, 0x5, CORR(7, 1u << 30));
    tb_end(t);
    for (uint64_t c = 0; c < NSTREAM / KPC; c++) {
        tb_begin(t, GT_CHUNK_HOST, 7);
        for (uint64_t i = c * KPC + 1; i <= (c + 1) * KPC; i++) {
            tb_launch_corr(t, i * 500 * US, GT_API_cuLaunchKernel, 0xf1, 0x5, CORR(7, i));
            if (i == NSYNC) /* in a synchronize from kernel i's end for 250 us */
                tb_span(t, i * 500 * US + 150 * US, 250 * US, GT_API_cuStreamSynchronize, 0);
        }
        tb_end(t);
        tb_begin(t, GT_CHUNK_HOST, 0);
        tb_watermark(t, (c + 1) * KPC * 500 * US + 1);
        tb_end(t);
        tb_begin(t, GT_CHUNK_GPU, 0);
        if (c == 0) tb_gpu_extcorr(t, CORR(9, 9), 999999999);
        for (uint64_t i = c * KPC + 1; i <= (c + 1) * KPC; i++) {
            uint64_t s = T0 + i * 500 * US + 100 * US;
            tb_gpu_extcorr(t, CORR(7, i), (uint32_t)i);
            tb_gpu_kernel(t, s, s + 50 * US, (uint32_t)i, 0, 1, 0, 0);
        }
        tb_end(t);
    }
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_kernel(t, T0 + 200 * US, T0 + 210 * US, 0, 0, 1, 0, 0);
    tb_end(t);
}

static void test_stream(int dropped)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    if (dropped) printf("     with a launch whose kernel was dropped\n");
    build_stream(&t, dropped);
    run_report(&t, &r, path);
    const struct ga_gpu_link *l = &r.gpu.link;
    const struct ga_gaps_device *x = ga_gaps_device_of(&r.gaps, 0);
    CHECK_U64("stream: kernels linked", l->linked, NSTREAM);
    CHECK_U64("stream: kernels unlinked (the late one is left out)", l->unlinked, 0);
    CHECK("stream: latency 100 us each",
          l->latency_n == NSTREAM && l->latency_min == (int64_t)(100 * US) &&
              l->latency_median == (int64_t)(100 * US) && l->latency_max == (int64_t)(100 * US) &&
              l->latency_exact);
    CHECK_U64("stream: the kernel that came 50 s late is counted", r.gpu.late, 1);
    CHECK_U64("stream: the host function's launch evicted (and the dropped kernel's)",
              r.gpu.launches_evicted, 1 + (uint64_t)dropped);
    CHECK_U64("stream: the correlation to nothing evicted", r.gpu.extcorr_evicted, 1);
    CHECK("stream: one device, busy 50 us per kernel",
          r.gpu.n_devices == 1 && r.gpu.devices[0].busy_ns == NSTREAM * 50 * US &&
              r.gpu.devices[0].first == T0 + 600 * US &&
              r.gpu.devices[0].last == T0 + NSTREAM * 500 * US + 150 * US);
    /* phases: 350 us before each launch (250 of them in the synchronize in one gap), 100 us
     * from the launch to the start */
    CHECK("stream: 99,999 gaps of 450 us, each a launch after the gap began (host busy) but "
          "the one a synchronize began",
          x && x->n_gaps == NSTREAM - 1 && x->cause_n[GA_CAUSE_HOST_BUSY] == NSTREAM - 2 &&
              x->cause_ns[GA_CAUSE_HOST_BUSY] == (NSTREAM - 2) * 350 * US + 100 * US &&
              x->cause_n[GA_CAUSE_SYNC] == 1 && x->cause_ns[GA_CAUSE_SYNC] == 250 * US &&
              x->cause_ns[GA_CAUSE_LAUNCH_LATENCY] == (NSTREAM - 1) * 100 * US);
    CHECK("stream: the reorder never held all the kernels", r.gpu.max_wait < NSTREAM);
    /* 50 s span: windows of 500 ms from the first start, 1,000 kernels of 50 us in each */
    int bad = !x || x->window_ns != 500000 * US || x->n_windows != 100;
    for (size_t w = 0; x && !bad && w < x->n_windows; w++)
        bad += x->windows[w].busy != 1000 * 50 * US;
    CHECK("stream: 100 windows of 500 ms, each 50 ms busy (kept in fine windows meanwhile)", !bad);
    done_report(&t, &r, path);
}

/* ---- a long kernel that CUPTI delivers after tens of thousands of short ones ------------------
 */

#define NSHORT 60000 /* kernels on stream 2, 100 us apart: 6 s */
#define LONGNS (5000000 * US)

/* Thread 7 launches k_long (name 1) at 1,000 us on stream 1: it runs 10 us later for 5 s (an
 * all-reduce waiting for a straggler). Thread 8 launches k_short (name 2) i = 1..NSHORT at
 * i * 100 us on stream 2: it runs 20 us later for 30 us. CUPTI delivers each record when its work
 * ends, the long kernel last of all (after NSHORT others and 6 s of GPU time). k_long covers
 * [1,010 us, 5,001,010 us): shorts 10..50,009 lie inside it, the rest outside (none straddles an
 * end). With `graph` the long kernel comes from a cuGraphLaunch instead (a graph of one kernel). */
static void build_straggler(struct tb *t, int graph)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_cupti(t, 1, GT_CUPTI_ON, 0, 0, "/x/libcupti.so.13", "");
    tb_launch_corr(t, 1000 * US, graph ? GT_API_cuGraphLaunch : GT_API_cuLaunchKernel, 0xe0, 0x1,
                   CORR(7, 1));
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_name(t, 1, "k_long");
    tb_gpu_name(t, 2, "k_short");
    tb_gpu_extcorr(t, CORR(7, 1), 1);
    tb_end(t);
    for (uint64_t c = 0; c < NSHORT / KPC; c++) {
        tb_begin(t, GT_CHUNK_HOST, 8);
        for (uint64_t i = c * KPC + 1; i <= (c + 1) * KPC; i++)
            tb_launch_corr(t, i * 100 * US, GT_API_cuLaunchKernel, 0xe1, 0x2, CORR(8, i));
        tb_end(t);
        tb_begin(t, GT_CHUNK_HOST, 0);
        tb_watermark(t, (c + 1) * KPC * 100 * US + 1);
        tb_end(t);
        tb_begin(t, GT_CHUNK_GPU, 0);
        for (uint64_t i = c * KPC + 1; i <= (c + 1) * KPC; i++) {
            uint64_t s = T0 + i * 100 * US + 20 * US;
            tb_gpu_extcorr(t, CORR(8, i), (uint32_t)(10 + i));
            tb_gpu_kernel(t, s, s + 30 * US, (uint32_t)(10 + i), 0, 2, 0, 2);
        }
        tb_end(t);
    }
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_kernel(t, T0 + 1010 * US, T0 + 1010 * US + LONGNS, 1, 0, 1, graph ? 5 : 0, 1);
    tb_end(t);
}

static void test_straggler(int graph)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    const char *tag = graph ? "straggler (graph)" : "straggler";
    build_straggler(&t, graph);
    run_report(&t, &r, path);
    const struct ga_gaps_device *x = ga_gaps_device_of(&r.gaps, 0);
    const struct ga_gpu_device *d = gdev(&r, 0);
    /* outside k_long: shorts 1..9 and 50,010..60,000, 10,000 of 30 us */
    uint64_t busy = LONGNS + 10000 * 30 * US;
    uint64_t first = T0 + 120 * US, last = T0 + NSHORT * 100 * US + 50 * US;
    printf("     %s\n", tag);
    CHECK_U64("straggler: nothing late", r.gpu.late, 0);
    CHECK_U64("straggler: kernels", r.gpu.kernel_count, NSHORT + 1);
    CHECK_U64("straggler: all linked", r.gpu.link.linked, NSHORT + 1);
    CHECK("straggler: span from short 1's start to short 60,000's end",
          d->first == first && d->last == last);
    CHECK_U64("straggler: busy = 5 s + 10,000 x 30 us", d->busy_ns, busy);
    CHECK("straggler: streams 1 and 2 busy 5 s and 60,000 x 30 us",
          d->n_streams == 2 && d->streams[0].busy_ns == LONGNS &&
              d->streams[1].busy_ns == NSHORT * 30 * US && d->streams[0].kernels == 1 &&
              d->streams[1].kernels == NSHORT);
    CHECK("straggler: k_long 1 x 5 s, k_short 60,000 x 30 us",
          kstat(&r, "k_long")->count == 1 && kstat(&r, "k_long")->total_ns == LONGNS &&
              kstat(&r, "k_short")->count == NSHORT &&
              kstat(&r, "k_short")->total_ns == NSHORT * 30 * US);
    /* gaps: 9,998 of 70 us between shorts, 60 us before k_long, 10 us after it */
    CHECK("straggler: 10,000 gaps, idle = span - busy = 9,998 x 70 + 60 + 10 us",
          x && x->n_gaps == 10000 && x->idle_ns == 9998 * 70 * US + 70 * US &&
              x->idle_ns == last - first - busy && x->busy_ns == busy);
    uint64_t sum = 0;
    for (int c = 0; x && c < GA_CAUSES; c++)
        sum += x->cause_ns[c];
    CHECK_U64("straggler: the causes sum to the idle time", sum, 9998 * 70 * US + 70 * US);
    if (!graph)
        CHECK("straggler: launch latencies 10 us (k_long) and 20 us",
              r.gpu.link.latency_n == NSHORT + 1 && r.gpu.link.latency_min == (int64_t)(10 * US) &&
                  r.gpu.link.latency_max == (int64_t)(20 * US));
    else
        CHECK_U64("straggler: the graph kernel linked", r.gpu.link.graph_kernels, 1);
    CHECK("straggler: the launch queue was squeezed behind the waiting launch (not 60,001)",
          r.gpu.pend_cap <= 8192);
    done_report(&t, &r, path);
}

#define NEARLY 150000 /* kernels 100 us apart: 15 s */

/* Each batch's GPU chunk (kernels, their correlations) comes before the host chunk of their
 * launches: thread 7 launches kernel i at i * 100 us, it runs 20 us later for 30 us. A launch
 * whose kernel already arrived must not hold the heap (else each would hold it 10 s: 100,000
 * kernels). */
static void test_kernel_first(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    tb_init(&t, 1, T0);
    cupti_on(&t, 7);
    for (uint64_t c = 0; c < NEARLY / KPC; c++) {
        tb_begin(&t, GT_CHUNK_GPU, 0);
        for (uint64_t i = c * KPC + 1; i <= (c + 1) * KPC; i++) {
            uint64_t s = T0 + i * 100 * US + 20 * US;
            tb_gpu_extcorr(&t, CORR(7, i), (uint32_t)i);
            tb_gpu_kernel(&t, s, s + 30 * US, (uint32_t)i, 0, 1, 0, 0);
        }
        tb_end(&t);
        tb_begin(&t, GT_CHUNK_HOST, 7);
        for (uint64_t i = c * KPC + 1; i <= (c + 1) * KPC; i++)
            tb_launch_corr(&t, i * 100 * US, GT_API_cuLaunchKernel, 0xf1, 0x5, CORR(7, i));
        tb_end(&t);
        tb_begin(&t, GT_CHUNK_HOST, 0);
        tb_watermark(&t, (c + 1) * KPC * 100 * US + 1);
        tb_end(&t);
    }
    run_report(&t, &r, path);
    CHECK_U64("kernel first: nothing late", r.gpu.late, 0);
    CHECK_U64("kernel first: all linked", r.gpu.link.linked, NEARLY);
    CHECK_U64("kernel first: busy 30 us each", gdev(&r, 0)->busy_ns, NEARLY * 30 * US);
    CHECK("kernel first: latency 20 us each", r.gpu.link.latency_min == (int64_t)(20 * US) &&
                                                  r.gpu.link.latency_max == (int64_t)(20 * US));
    CHECK("kernel first: the launches of kernels already there held nothing (< 10 s of kernels)",
          r.gpu.max_wait < 100000);
    CHECK_U64("kernel first: none remembered", r.gpu.early.count, 0);
    done_report(&t, &r, path);
}

#define NFLOOD 1000 /* external correlations past GA_LINK_MAX */

/* Correlations that no kernel ever names: the tables stop at GA_LINK_MAX, the rest are counted. */
static void test_flood(void)
{
    struct tb t;
    struct ga_report r;
    char path[256];
    tb_init(&t, 1, T0);
    cupti_on(&t, 7);
    for (uint64_t i = 0; i < GA_LINK_MAX + NFLOOD; i++) {
        if (i % 20000 == 0) {
            if (i) tb_end(&t);
            tb_begin(&t, GT_CHUNK_GPU, 0);
        }
        tb_gpu_extcorr(&t, CORR(3, i), (uint32_t)i);
    }
    tb_end(&t);
    run_report(&t, &r, path);
    CHECK_U64("flood: correlations past the bound counted", r.gpu.extcorr_evicted, NFLOOD);
    CHECK_U64("flood: tables hold GA_LINK_MAX", r.gpu.extcorr.young.count + r.gpu.extcorr.old.count,
              GA_LINK_MAX);
    done_report(&t, &r, path);
}

int main(void)
{
    test_union_random();
    test_timeline_random();
    test_reorder_queues();
    test_exact();
    test_linking();
    test_demangle();
    test_copies();
    test_async_copies();
    test_status();
    test_no_gpu_json();
    test_reader();
    test_stream(0);
    test_stream(1);
    test_straggler(0);
    test_straggler(1);
    test_kernel_first();
    test_flood();
    return check_done();
}
