/* Writes the synthetic seeds of the fuzz corpus (make fuzz-seeds): small valid traces that use
 * every record type and every analysis path, the odd-but-legal shapes the format allows, and
 * broken variants (truncated at chunk boundaries and mid-record, bit flips, other formats).
 * Deterministic: the same seeds on every run. Seeds from real traced runs are added by hand.
 * Usage: gen_seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/repack.h"
#include "../unit/tracebuild.h"

#define T0 1000000000ull

static const char *out_dir;

static void put_file(const char *name, const void *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/seed-%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static void put_trace(const char *name, const struct tb *t)
{
    put_file(name, t->buf, t->len);
}

/* The same trace with every chunk compressed (codec GT_CODEC_ZSTD or GT_CODEC_ZSTD_DELTA, even
 * chunks too small to gain), as seed-NAME-zstd or seed-NAME-delta. */
static void put_packed(const char *name, const struct tb *t, uint16_t codec)
{
    char full[96];
    struct repack_out o;
    repack_trace(t->buf, t->len, &o, 1, codec, 1);
    snprintf(full, sizeof(full), "%s-%s", name, codec == GT_CODEC_ZSTD ? "zstd" : "delta");
    put_file(full, o.buf, o.len);
    free(o.buf);
}

/* ---- valid traces ------------------------------------------------------------------------ */

static void host_facts(struct tb *t)
{
    static const char argv[] = "python\0train.py\0--lr=3\0";
    tb_process(t, 4242, argv, sizeof(argv) - 1, 3, "node-1", "/usr/bin/python3");
    struct gt_rec_driver drv = {.ts = T0 + 1, .driver_version = 13000, .device_count = 2};
    tb_rec(t, GT_REC_DRIVER, 0, &drv, sizeof(drv), NULL, 0);
    struct gt_rec_device dev = {
        .ts = T0 + 2, .ordinal = 0, .cc_major = 9, .name_len = 11, .total_bytes = 80ull << 30};
    tb_rec(t, GT_REC_DEVICE, 0, &dev, sizeof(dev), "NVIDIA H200", 11);
    dev.ordinal = 1;
    dev.uuid[0] = 7;
    tb_rec(t, GT_REC_DEVICE, 0, &dev, sizeof(dev), "NVIDIA H200", 11);
    struct gt_rec_thread th = {.ts = T0 + 3, .tid = 7, .name_len = 4};
    tb_rec(t, GT_REC_THREAD, 0, &th, sizeof(th), "main", 4);
}

/* One record of every type (host and GPU), as the shim writes them. */
static void every_type(struct tb *t)
{
    tb_init(t, 4242, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    host_facts(t);
    tb_cupti(t, 4, GT_CUPTI_ON, 0, 0, "/usr/local/cuda/lib64/libcupti.so.13", "");
    tb_alloc(t, 10, GT_API_cuMemAlloc_v2, 0x7f0000001000, 4096, 0, 0xc7);
    tb_free(t, 11, GT_API_cuMemFree_v2, 0x7f0000001000, 0);
    tb_fail(t, 12, GT_API_cuMemAlloc_v2, 1ull << 40, 0, 100, 200, 2);
    struct gt_rec_vmm_map vm = {.ts = T0 + 13, .addr = 0x1000, .size = 2 << 20, .handle = 0xabc};
    tb_rec(t, GT_REC_VMM_MAP, GT_API_cuMemMap, &vm, sizeof(vm), NULL, 0);
    tb_func(t, 14, 0xf00, "_Z6kernelPfi");
    tb_launch_corr(t, 15, GT_API_cuLaunchKernel, 0xf00, 5, (1ull << 40) | 1);
    tb_span(t, 16, 50, GT_API_cuMemcpyHtoD_v2, 4096);
    tb_object(t, 17, GT_API_cuStreamCreate, 5, 0, 0, 0);
    struct gt_rec_meminfo mi = {.ts = T0 + 18, .free_bytes = 1 << 30, .total_bytes = 2u << 30};
    tb_rec(t, GT_REC_MEMINFO, 0, &mi, sizeof(mi), NULL, 0);
    struct gt_rec_resolve rs = {.ts = T0 + 19, .version = 12000, .api = 1, .name_len = 13};
    tb_rec(t, GT_REC_RESOLVE, GT_RESOLVE_GETPROC2, &rs, sizeof(rs), "cuMemAlloc_v2", 13);
    struct gt_rec_lost lost = {.ts = T0 + 20, .count = 3};
    tb_rec(t, GT_REC_LOST, 0, &lost, sizeof(lost), NULL, 0);
    struct gt_rec_note note = {.ts = T0 + 21, .level = GT_NOTE_WARNING, .text_len = 5};
    tb_rec(t, GT_REC_NOTE, 0, &note, sizeof(note), "hello", 5);
    tb_watermark(t, 22);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_name(t, 1, "_Z6kernelPfi");
    tb_gpu_extcorr(t, (1ull << 40) | 1, 9);
    tb_gpu_kernel(t, T0 + 30, T0 + 40, 9, 0, 5, 0, 1);
    tb_gpu_memcpy(t, 1, T0 + 41, T0 + 45, 4096, 0, 5);
    tb_gpu_memset(t, T0 + 46, T0 + 47, 64, 0, 5);
    struct gt_rec_gpu_api ga = {.start = T0 + 15, .end = T0 + 16, .corr = 9, .tid = 7, .cbid = 307};
    tb_rec(t, GT_REC_GPU_API, 0, &ga, sizeof(ga), NULL, 0);
    tb_gpu_dropped(t, T0 + 48, 2);
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 7);
    tb_end_rec(t, 50, 24, 3);
    tb_watermark(t, UINT64_MAX - T0);
    tb_end(t);
}

/* The PyTorch bridge's records: stats, frames and stacks, optimizer roles and steps (two sets,
 * one in two records), a snapshot with every block state, an OOM: the torch and tiers analyses. */
static void torch_paths(struct tb *t)
{
    tb_init(t, 3, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    struct gt_rec_torch_stats st = {.ts = T0 + 1, .allocated = 3 << 20, .reserved = 8 << 20};
    tb_rec(t, GT_REC_TORCH_STATS, GT_TORCH_PERIODIC, &st, sizeof(st), NULL, 0);
    struct gt_rec_torch_frame fr = {
        .ts = T0 + 2, .id = 1, .line = 3, .file_len = 27, .name_len = 10};
    tb_rec3(t, GT_REC_TORCH_FRAME, 0, &fr, sizeof(fr), "/x/torch/nn/modules/main.py", 27,
            "_call_impl", 10, NULL, 0);
    uint32_t ids[1] = {1};
    struct gt_rec_torch_stack sk = {.ts = T0 + 2, .id = 1, .frames_len = 4};
    tb_rec(t, GT_REC_TORCH_STACK, 0, &sk, sizeof(sk), (const char *)ids, 4);
    struct gt_torch_role_entry e[3] = {
        {.addr = 0x10000000, .bytes = 1 << 20, .elem_size = 4, .role = GT_ROLE_WEIGHT},
        {.addr = 0x10100000, .bytes = 1 << 20, .elem_size = 4, .role = GT_ROLE_GRADIENT},
        {.addr = 0x10200000, .bytes = 1 << 20, .elem_size = 4, .role = GT_ROLE_OPTIMIZER_STATE}};
    struct gt_rec_torch_roles ro = {
        .ts = T0 + 3, .step = 1, .optimizer = 1, .entries_len = 2 * sizeof(e[0]), .set_entries = 3};
    tb_rec(t, GT_REC_TORCH_ROLES, GT_ROLES_FIRST, &ro, sizeof(ro), (const char *)e,
           2 * sizeof(e[0]));
    ro.entries_len = sizeof(e[0]);
    tb_rec(t, GT_REC_TORCH_ROLES, GT_ROLES_MORE, &ro, sizeof(ro), (const char *)&e[2],
           sizeof(e[0]));
    struct gt_rec_torch_step sp = {.ts = T0 + 4,
                                   .step = 1,
                                   .weights = 1 << 20,
                                   .gradients = 1 << 20,
                                   .optimizer_state = 1 << 20,
                                   .allocated = 3 << 20,
                                   .reserved = 8 << 20,
                                   .optimizer = 1,
                                   .weight_tensors = 1,
                                   .gradient_tensors = 1,
                                   .state_tensors = 1,
                                   .name_len = 5};
    tb_rec(t, GT_REC_TORCH_STEP, 0, &sp, sizeof(sp), "AdamW", 5);
    struct gt_rec_torch_snap sn = {
        .ts = T0 + 5, .id = 1, .why = GT_TORCH_PEAK, .segments = 1, .blocks = 6};
    tb_rec(t, GT_REC_TORCH_SNAP, GT_SNAP_BEGIN, &sn, sizeof(sn), NULL, 0);
    struct gt_rec_torch_segment sg = {.ts = T0 + 5,
                                      .addr = 0x10000000,
                                      .size = 8 << 20,
                                      .allocated = 4 << 20,
                                      .snap = 1,
                                      .blocks = 6};
    tb_rec(t, GT_REC_TORCH_SEGMENT, GT_TORCH_POOL_LARGE, &sg, sizeof(sg), NULL, 0);
    for (unsigned i = 0; i < 6; i++) {
        struct gt_rec_torch_block b = {.ts = T0 + 5,
                                       .addr = 0x10000000 + (i << 20),
                                       .size = i < 5 ? 1 << 20 : 3 << 20,
                                       .requested = 1000,
                                       .stack = i == 3,
                                       .snap = 1};
        tb_rec(t, GT_REC_TORCH_BLOCK, i < 4 ? GT_TORCH_ACTIVE : i - 4, &b, sizeof(b), NULL, 0);
    }
    sn.ts = T0 + 6;
    tb_rec(t, GT_REC_TORCH_SNAP, GT_SNAP_END, &sn, sizeof(sn), NULL, 0);
    struct gt_rec_torch_oom oo = {.ts = T0 + 7,
                                  .requested = 20 << 20,
                                  .limit = 1u << 30,
                                  .device_free = 1 << 20,
                                  .device_total = 1u << 30,
                                  .allocated = 4 << 20,
                                  .reserved = 8 << 20};
    tb_rec(t, GT_REC_TORCH_OOM, 0, &oo, sizeof(oo), NULL, 0);
    tb_watermark(t, 8);
    tb_end(t);
}

/* The replay of PyTorch's block events (analyses/tiers_replay.c): history snapshots with
 * max_split_size, a batch that splits, takes whole free blocks, merges them, allocates and frees
 * a segment, and a second device's first batch from an empty device (GT_TRACE_FROM_EMPTY). */
static void torch_replay_paths(struct tb *t)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    struct gt_rec_torch_snap sn = {.ts = T0 + 1,
                                   .id = 1,
                                   .why = GT_TORCH_PEAK,
                                   .segments = 1,
                                   .flags = GT_TORCH_HISTORY_OURS,
                                   .blocks = 2,
                                   .max_split_size = 64 << 20};
    struct gt_rec_torch_segment sg = {
        .ts = T0 + 1, .addr = 0x10000000, .size = 16 << 20, .snap = 1, .blocks = 2};
    struct gt_rec_torch_block b = {
        .ts = T0 + 1, .addr = 0x10000000, .size = 1 << 20, .requested = 1 << 20, .snap = 1};
    for (uint32_t id = 1; id <= 2; id++) {
        sn.id = sg.snap = b.snap = id;
        tb_rec(t, GT_REC_TORCH_SNAP, GT_SNAP_BEGIN, &sn, sizeof(sn), NULL, 0);
        tb_rec(t, GT_REC_TORCH_SEGMENT, GT_TORCH_POOL_LARGE, &sg, sizeof(sg), NULL, 0);
        b.addr = 0x10000000, b.size = 1 << 20;
        tb_rec(t, GT_REC_TORCH_BLOCK, GT_TORCH_ACTIVE, &b, sizeof(b), NULL, 0);
        b.addr = 0x10100000, b.size = 15 << 20;
        tb_rec(t, GT_REC_TORCH_BLOCK, GT_TORCH_INACTIVE, &b, sizeof(b), NULL, 0);
        tb_rec(t, GT_REC_TORCH_SNAP, GT_SNAP_END, &sn, sizeof(sn), NULL, 0);
        if (id == 2) break;
        struct gt_torch_trace_entry ev[] = {
            {1000, 0x10100000, 13 << 20, 0, GT_TRACE_ALLOC, 0},
            {1001, 0x10e00000, (1 << 20) + 4096, 0, GT_TRACE_ALLOC, 0},
            {1002, 0x10100000, 13 << 20, 0, GT_TRACE_FREE_REQUESTED, 0},
            {1002, 0x10100000, 13 << 20, 0, GT_TRACE_FREE_COMPLETED, 0},
            {1003, 0x10e00000, 0, 0, GT_TRACE_FREE_COMPLETED, 0},
            {1004, 0x11000000, 20 << 20, 0, GT_TRACE_SEGMENT_ALLOC, 0},
            {1004, 0x11000000, 2 << 20, 0, GT_TRACE_ALLOC, 0},
            {1005, 0x11000000, 2 << 20, 0, GT_TRACE_FREE_COMPLETED, 0},
            {1006, 0x11000000, 20 << 20, 0, GT_TRACE_SEGMENT_FREE, 0},
        };
        struct gt_rec_torch_trace tr = {
            .ts = T0 + 2, .device = 0, .entries_len = sizeof(ev), .snap = 2};
        tb_rec(t, GT_REC_TORCH_TRACE, 0, &tr, sizeof(tr), (const char *)ev, sizeof(ev));
        tr.device = 1, tr.flags = GT_TRACE_FROM_EMPTY, tr.entries_len = 3 * sizeof(ev[0]);
        tb_rec(t, GT_REC_TORCH_TRACE, 0, &tr, sizeof(tr), (const char *)&ev[5], 3 * sizeof(ev[0]));
    }
    tb_watermark(t, 3);
    tb_end(t);
}

/* The memory analysis: every memory kind, frees matched and not, a double allocation, failed
 * allocations of each verdict, context teardown and primary-context reset/release. */
static void memory_paths(struct tb *t)
{
    tb_init(t, 1, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    tb_object(t, 1, GT_API_cuCtxCreate_v2, 0xc1, 0, 0, 0);
    tb_alloc(t, 2, GT_API_cuMemAlloc_v2, 0x1000, 1 << 20, 0, 0xc1);
    tb_alloc(t, 3, GT_API_cuMemAllocManaged, 0x200000, 1 << 21, 0, 0xc1);
    tb_alloc(t, 4, GT_API_cuMemAllocAsync, 0x400000, 4096, 0, 0);
    tb_alloc(t, 5, GT_API_cuMemAddressReserve, 0x10000000, 1 << 30, 0, 0);
    tb_alloc(t, 6, GT_API_cuMemCreate, 0xabc, 2 << 20, 1, 0);
    tb_alloc(t, 7, GT_API_cuArrayCreate_v2, 0xa1, 65536, 1, 0);
    tb_alloc(t, 8, GT_API_cuMemHostAlloc, 0x7f00000000, 8192, -1, 0);
    tb_alloc(t, 9, GT_API_cuMemAlloc_v2, 0x1000, 512, 0, 0xc1); /* double allocation */
    tb_free(t, 10, GT_API_cuMemFree_v2, 0x9999, 0);             /* unknown address */
    tb_free(t, 11, GT_API_cuMemFree_v2, 0, 0);                  /* NULL */
    tb_free(t, 12, GT_API_cuMemFree_v2, 0x200000, 1);           /* failed */
    tb_free(t, 13, GT_API_cuMemFreeHost, 0x7f00000000, 0);
    tb_fail(t, 14, GT_API_cuMemAlloc_v2, 1 << 20, 0, 2 << 20, 8 << 20, 2);  /* fragmentation */
    tb_fail(t, 15, GT_API_cuMemAlloc_v2, 4 << 20, 0, 1 << 20, 64 << 20, 2); /* others */
    tb_fail(t, 16, GT_API_cuMemAlloc_v2, 4 << 20, 0, 1 << 20, 6 << 20, 2);  /* exhausted */
    tb_fail(t, 17, GT_API_cuMemAlloc_v2, 4 << 20, 0, 0, 0, 2);              /* unknown */
    tb_fail(t, 18, GT_API_cuMemAlloc_v2, 4 << 20, 0, 0, 0, 1);              /* other error */
    struct gt_rec_vmm_map vm = {.ts = T0 + 19, .addr = 0x10000000, .size = 2 << 20, .result = 0};
    tb_rec(t, GT_REC_VMM_MAP, GT_API_cuMemMap, &vm, sizeof(vm), NULL, 0);
    tb_rec(t, GT_REC_VMM_MAP, GT_API_cuMemUnmap, &vm, sizeof(vm), NULL, 0);
    vm.result = 1;
    tb_rec(t, GT_REC_VMM_MAP, GT_API_cuMemMap, &vm, sizeof(vm), NULL, 0);
    tb_object(t, 20, GT_API_cuCtxDestroy_v2, 0xc1, 0, 0, 0);
    tb_object(t, 21, GT_API_cuDevicePrimaryCtxRelease_v2, 0, 1, 1, 0);
    tb_alloc(t, 22, GT_API_cuMemAlloc_v2, 0x5000, 100, 0, 0);
    tb_object(t, 23, GT_API_cuDevicePrimaryCtxReset_v2, 0, 0, 0, 0);
    tb_alloc(t, 24, GT_API_cuMemAlloc_v2, 0x6000, 300, 0, 0); /* leaked */
    tb_watermark(t, 25);
    tb_end(t);
}

/* The GPU timeline: two devices, streams, overlapping kernels, graph kernels, names from CUPTI
 * and from launches, unlinked kernels, every copy kind, reversed and zero times. */
static void gpu_paths(struct tb *t)
{
    tb_init(t, 2, T0);
    tb_begin(t, GT_CHUNK_HOST, 3);
    tb_cupti(t, 1, GT_CUPTI_ON, -5000, 0, "libcupti.so", "");
    tb_func(t, 2, 0xf1, "_ZN5torch6kernelIfEEvPT_i");
    tb_func(t, 2, 0xf2, "plain_c_kernel");
    tb_launch_corr(t, 3, GT_API_cuLaunchKernel, 0xf1, 1, 11);
    tb_launch_corr(t, 4, GT_API_cuLaunchKernelEx, 0xf2, 2, 12);
    tb_launch_corr(t, 5, GT_API_cuGraphLaunch, 0x6a, 1, 13);
    tb_launch_corr(t, 6, GT_API_cuLaunchHostFunc, 0x70, 1, 14);
    tb_watermark(t, 7);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_extcorr(t, 11, 101);
    tb_gpu_extcorr(t, 12, 102);
    tb_gpu_extcorr(t, 13, 103);
    tb_gpu_name(t, 5, "_Z3fooPf");
    tb_gpu_kernel(t, T0 + 100, T0 + 200, 101, 0, 1, 0, 0);
    tb_gpu_kernel(t, T0 + 150, T0 + 250, 102, 0, 2, 0, 5);
    tb_gpu_kernel(t, T0 + 300, T0 + 400, 103, 1, 1, 9, 0);
    tb_gpu_kernel(t, T0 + 300, T0 + 310, 103, 1, 1, 9, 0);
    tb_gpu_kernel(t, T0 + 500, T0 + 450, 999, 1, 1, 0, 0); /* reversed: skipped */
    tb_gpu_kernel(t, 0, T0 + 450, 999, 1, 1, 0, 0);        /* no start: skipped */
    for (unsigned k = 0; k <= 11; k++)
        tb_gpu_memcpy(t, k, T0 + 600 + 10 * k, T0 + 605 + 10 * k, 1000 * k, k % 2, 3);
    tb_gpu_memset(t, T0 + 800, T0 + 800, 0, 0, 3);
    tb_gpu_dropped(t, T0 + 900, 17);
    tb_end(t);
}

/* The CUPTI status record in each state, with the reasons the shim writes. */
static void cupti_states(struct tb *t, unsigned status, const char *reason)
{
    tb_init(t, 3, T0);
    tb_begin(t, GT_CHUNK_HOST, 3);
    tb_cupti(t, 1, status, 0, status == GT_CUPTI_FAILED ? 17 : 0, "", reason);
    tb_launch_corr(t, 2, GT_API_cuLaunchKernel, 0xf1, 1, 11);
    tb_end(t);
}

/* Three threads whose chunks interleave, watermarks, a late record, a span crossing W. */
static void threads_order(struct tb *t)
{
    tb_init(t, 4, T0);
    for (int round = 0; round < 3; round++) {
        for (uint32_t tid = 10; tid < 13; tid++) {
            tb_begin(t, GT_CHUNK_HOST, tid);
            tb_alloc(t, 100 * round + tid, GT_API_cuMemAlloc_v2, 0x1000 * (tid + 16 * round), 64, 0,
                     0);
            tb_span(t, 100 * round + tid + 1, 500, GT_API_cuStreamSynchronize, 0);
            tb_end(t);
        }
        tb_begin(t, GT_CHUNK_HOST, 0);
        tb_watermark(t, 100 * round + 50);
        tb_end(t);
    }
    tb_begin(t, GT_CHUNK_HOST, 10);
    tb_alloc(t, 5, GT_API_cuMemAlloc_v2, 0xdead000, 64, 0, 0); /* behind a passed watermark */
    tb_end(t);
}

/* Host call stacks: a node chain and branches (some defined after the events that use them,
 * one never), modules (paths that do not exist here, so the dladdr names and module+offset
 * fallbacks are used), dladdr symbols, events carrying stacks. */
static void stack_record(struct tb *t, uint32_t first, uint32_t parent, const uint64_t *ips,
                         uint32_t n)
{
    struct gt_rec_stack r = {.ts = T0 + first, .first_id = first, .parent = parent};
    r.ips_len = 8 * n;
    tb_rec(t, GT_REC_STACK, 0, &r, sizeof(r), (const char *)ips, r.ips_len);
}

static void module_record(struct tb *t, uint64_t start, uint64_t size, const char *path)
{
    static const char build_id[] = "\x01\x02\x03\x04\x05\x06\x07\x08";
    struct gt_rec_module r = {.ts = T0, .base = start, .start = start, .size = size};
    r.path_len = (uint32_t)strlen(path);
    r.build_id_len = 8;
    tb_rec3(t, GT_REC_MODULE, 0, &r, sizeof(r), path, r.path_len, build_id, 8, NULL, 0);
}

static void symbol_record(struct tb *t, uint64_t addr, uint64_t size, const char *name)
{
    struct gt_rec_symbol r = {.ts = T0, .addr = addr, .size = size};
    r.name_len = (uint32_t)strlen(name);
    tb_rec(t, GT_REC_SYMBOL, 0, &r, sizeof(r), name, r.name_len);
}

static void stacks_paths(struct tb *t)
{
    static const uint64_t main_chain[] = {0x400100, 0x400200, 0x7f0000001100};
    static const uint64_t branch[] = {0x7f0000002200, 0x7f1000000300};
    static const uint64_t leaf[] = {0x7f2000000010};
    tb_init(t, 7, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    module_record(t, 0x400000, 0x10000, "/nonexistent/app");
    module_record(t, 0x7f0000000000, 0x100000, "/nonexistent/libtorch_cuda.so");
    module_record(t, 0x7f1000000000, 0x100000, "/nonexistent/libcudart.so.13");
    module_record(t, 0x7f2000000000, 0x100000, "/nonexistent/libcuda.so.1");
    stack_record(t, 1, 0, main_chain, 3);
    struct gt_rec_alloc a = {.ts = T0 + 5, .addr = 0x1000, .size = 4096, .stack = 5};
    tb_rec(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, &a, sizeof(a), NULL, 0); /* node 5: later */
    stack_record(t, 4, 3, branch, 2);
    a.addr = 0x2000;
    a.stack = 3;
    tb_rec(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, &a, sizeof(a), NULL, 0);
    a.addr = 0x3000;
    a.stack = 99; /* never defined */
    tb_rec(t, GT_REC_ALLOC, GT_API_cuMemAlloc_v2, &a, sizeof(a), NULL, 0);
    struct gt_rec_alloc_fail f = {.ts = T0 + 6, .size = 1ull << 40, .result = 2, .stack = 5};
    tb_rec(t, GT_REC_ALLOC_FAIL, GT_API_cuMemAlloc_v2, &f, sizeof(f), NULL, 0);
    struct gt_rec_launch l = {.ts = T0 + 7, .func = 0xf00, .stack = 6};
    tb_rec(t, GT_REC_LAUNCH, GT_API_cuLaunchKernel, &l, sizeof(l), NULL, 0);
    struct gt_rec_span sp = {.ts_enter = T0 + 8, .ts_exit = T0 + 90, .stack = 6};
    tb_rec(t, GT_REC_SPAN, GT_API_cuStreamSynchronize, &sp, sizeof(sp), NULL, 0);
    tb_free(t, 9, GT_API_cuMemFree_v2, 0x2000, 0);
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 2);
    stack_record(t, 6, 5, leaf, 1);
    symbol_record(t, 0x7f0000001000, 0x200, "_ZN2at6native5emptyEv");
    symbol_record(t, 0x7f0000002000, 0, "_Z9fill_bombv");
    symbol_record(t, 0x400100, 0x10, "main");
    tb_watermark(t, UINT64_MAX - T0);
    tb_end(t);
}

/* Device state from NVML: one device sampled (every field, some missing, clock reasons, a
 * sample without an SM clock), one no NVML device matched; busy GPU time before the first NVML
 * record, between it and the first sample, during and after the samples; the processes listed at
 * an OOM (one with an unknown size). absent: the status record alone, with its reason. */
static void nvml_sample(struct tb *t, uint64_t ts, int32_t device, uint32_t valid, uint32_t sm,
                        uint64_t reasons)
{
    struct gt_rec_nvml_sample r = {.ts = T0 + ts,
                                   .device = device,
                                   .valid = valid,
                                   .sm_mhz = sm,
                                   .mem_mhz = 2619,
                                   .temp_c = 71,
                                   .power_mw = 512000,
                                   .power_limit_mw = 700000,
                                   .util_gpu = 93,
                                   .util_mem = 40,
                                   .reasons = reasons,
                                   .mem_used = 70ull << 30};
    tb_rec(t, GT_REC_NVML_SAMPLE, 0, &r, sizeof(r), NULL, 0);
}

static void nvml_paths(struct tb *t, int absent)
{
    tb_init(t, 11, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    host_facts(t);
    tb_cupti(t, 4, GT_CUPTI_ON, 0, 0, "libcupti.so", "");
    tb_func(t, 5, 0xf1, "_Z4gemmPf");
    tb_launch_corr(t, 6, GT_API_cuLaunchKernel, 0xf1, 1, 1);
    tb_launch_corr(t, 7, GT_API_cuLaunchKernel, 0xf1, 1, 2);
    struct gt_rec_alloc_fail f = {.ts = T0 + 8, .size = 1ull << 40, .result = 2};
    tb_rec(t, GT_REC_ALLOC_FAIL, GT_API_cuMemAlloc_v2, &f, sizeof(f), NULL, 0);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_extcorr(t, 1, 101);
    tb_gpu_extcorr(t, 2, 102);
    tb_gpu_kernel(t, T0 + 10, T0 + 30, 101, 0, 1, 0, 0); /* before NVML's first record */
    tb_gpu_kernel(t, T0 + 12, T0 + 40, 102, 1, 1, 0, 0); /* on the device NVML never samples */
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 0);
    if (absent) {
        static const char why[] = "libnvidia-ml.so.1: cannot open shared object file";
        struct gt_rec_nvml st = {.ts = T0 + 9, .device = -1, .text_len = sizeof(why) - 1};
        tb_rec(t, GT_REC_NVML, GT_NVML_ABSENT, &st, sizeof(st), why, st.text_len);
        st.text_len = 13;
        tb_rec(t, GT_REC_NVML, GT_NVML_FAILED, &st, sizeof(st), "nvmlInit: 999", 13);
    } else {
        struct gt_rec_nvml st = {
            .ts = T0 + 9, .device = 0, .nvml_index = 0, .max_sm_mhz = 1980, .max_mem_mhz = 2619};
        tb_rec(t, GT_REC_NVML, GT_NVML_DEVICE, &st, sizeof(st), NULL, 0);
        st.device = 1;
        tb_rec(t, GT_REC_NVML, GT_NVML_UNMATCHED, &st, sizeof(st), NULL, 0);
        st.device = 5; /* a device no DEVICE record named */
        st.max_sm_mhz = 0;
        tb_rec(t, GT_REC_NVML, GT_NVML_DEVICE, &st, sizeof(st), NULL, 0);
    }
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_kernel(t, T0 + 45, T0 + 60, 101, 0, 1, 0, 0); /* before the first sample */
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 0);
    nvml_sample(t, 50, 0, 0xff, 1980, 0);
    nvml_sample(t, 70, 0, 0xff, 1410, 0x20 | 0x40); /* SW thermal + HW thermal slowdown */
    nvml_sample(t, 90, 0, 0xff & ~GT_NVML_HAS_SM_CLOCK, 0, 0x4); /* no SM clock */
    nvml_sample(t, 110, 0, GT_NVML_HAS_SM_CLOCK | GT_NVML_HAS_REASONS, 990, 0x4);
    nvml_sample(t, 110, 0, GT_NVML_HAS_SM_CLOCK, 990, 0); /* the same time again */
    nvml_sample(t, 105, 0, 0xff, 1980, 0);                /* earlier than the one before */
    nvml_sample(t, 130, 5, 0xff, 1200, 1ull << 60);       /* unknown reason bits */
    nvml_sample(t, 140, 9, 0xff, 100, 0);                 /* a device never announced */
    static const char name[] = "/usr/bin/python3";
    struct gt_rec_nvml_proc pr = {
        .ts = T0 + 120, .device = 0, .pid = 4242, .bytes = 60ull << 30, .name_len = 16};
    tb_rec(t, GT_REC_NVML_PROC, 0, &pr, sizeof(pr), name, pr.name_len);
    pr.pid = 999, pr.bytes = UINT64_MAX, pr.name_len = 0;
    tb_rec(t, GT_REC_NVML_PROC, 0, &pr, sizeof(pr), NULL, 0);
    tb_watermark(t, 150);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_kernel(t, T0 + 60, T0 + 125, 101, 0, 1, 0, 0);  /* across the samples */
    tb_gpu_kernel(t, T0 + 200, T0 + 260, 101, 0, 1, 0, 0); /* after the last sample */
    tb_gpu_kernel(t, T0 + 130, T0 + 135, 101, 5, 1, 0, 0);
    tb_end(t);
}

/* Host stack samples (on and off CPU, in a hook, partial), with Python frames (code records
 * before and after their use, a line past the maximum, an unknown code id) beside launches and a
 * synchronization, so that the idle analysis joins them; CUDA pools with their blocks and usage. */
static void pycode_record(struct tb *t, uint32_t id, const char *file, const char *name)
{
    struct gt_rec_pycode r = {.ts = T0, .id = id, .first_line = 10};
    r.file_len = (uint32_t)strlen(file);
    r.name_len = (uint32_t)strlen(name);
    tb_rec3(t, GT_REC_PYCODE, 0, &r, sizeof(r), file, r.file_len, name, r.name_len, NULL, 0);
}

static void host_sample(struct tb *t, uint64_t ts, uint64_t cpu, uint32_t stack, uint32_t flags)
{
    struct gt_rec_host_sample r = {.ts = T0 + ts + 1,
                                   .sample_ts = T0 + ts,
                                   .interval_ns = 10,
                                   .cpu_ns = cpu,
                                   .tid = 7,
                                   .stack = stack,
                                   .flags = flags};
    tb_rec(t, GT_REC_HOST_SAMPLE, 0, &r, sizeof(r), NULL, 0);
}

static void samples_paths(struct tb *t)
{
    const uint64_t chain[] = {GT_PYFRAME_IP(1, 3), GT_PYFRAME_IP(2, GT_PY_LINE_MAX),
                              GT_PYFRAME_IP(9, 0), 0x7f0000001100};
    const uint64_t odd[] = {GT_IP_PYTHON | 1ull << 60, 0x400100};
    tb_init(t, 12, T0);
    tb_begin(t, GT_CHUNK_HOST, 7);
    host_facts(t);
    tb_cupti(t, 4, GT_CUPTI_ON, 0, 0, "libcupti.so", "");
    module_record(t, 0x7f0000000000, 0x100000, "/nonexistent/libtorch_cuda.so");
    pycode_record(t, 1, "train.py", "main");
    stack_record(t, 1, 0, chain, 4);
    stack_record(t, 5, 2, odd, 2);
    tb_launch_corr(t, 10, GT_API_cuLaunchKernel, 0xf1, 1, 1);
    host_sample(t, 12, 10, 4, GT_SAMPLE_ON_CPU);
    host_sample(t, 22, 0, 6, 0);
    host_sample(t, 32, 9, 0, GT_SAMPLE_IN_HOOK | GT_SAMPLE_ON_CPU);
    host_sample(t, 42, 10, 3, GT_SAMPLE_PARTIAL | GT_SAMPLE_ON_CPU);
    host_sample(t, 42, 10, 99, 0xf0); /* unknown stack, unknown flags */
    pycode_record(t, 2, "/x/torch/nn/modules/module.py", "Module._call_impl");
    struct gt_rec_span sp = {.ts_enter = T0 + 50, .ts_exit = T0 + 90, .stack = 4};
    tb_rec(t, GT_REC_SPAN, GT_API_cuStreamSynchronize, &sp, sizeof(sp), NULL, 0);
    host_sample(t, 60, 0, 4, GT_SAMPLE_IN_HOOK);
    tb_launch_corr(t, 95, GT_API_cuLaunchKernel, 0xf1, 1, 2);
    struct gt_rec_pool pc = {.ts = T0 + 100, .pool = 0x77, .device = 0, .name_len = 7};
    tb_rec(t, GT_REC_POOL, GT_POOL_CREATE, &pc, sizeof(pc), "default", 7);
    pc.addr = 0x10000000, pc.size = 1 << 20, pc.name_len = 0;
    tb_rec(t, GT_REC_POOL, GT_POOL_ADD_RANGE, &pc, sizeof(pc), NULL, 0);
    struct gt_rec_block b = {
        .ts = T0 + 101, .pool = 0x77, .addr = 0x10000000, .size = 4096, .stack = 4};
    tb_rec(t, GT_REC_BLOCK, GT_BLOCK_ALLOC, &b, sizeof(b), NULL, 0);
    b.addr = 0x20000000; /* outside the pool's ranges */
    tb_rec(t, GT_REC_BLOCK, GT_BLOCK_ALLOC, &b, sizeof(b), NULL, 0);
    b.addr = 0, b.size = 1ull << 40;
    tb_rec(t, GT_REC_BLOCK, GT_BLOCK_FAIL, &b, sizeof(b), NULL, 0);
    struct gt_rec_pool_usage u = {.ts = T0 + 102,
                                  .pool = 0x77,
                                  .reserved_current = 1 << 20,
                                  .reserved_high = 1 << 21,
                                  .used_current = 4096,
                                  .used_high = 1 << 22 /* above reserved */,
                                  .device = 0};
    tb_rec(t, GT_REC_POOL_USAGE, 0, &u, sizeof(u), NULL, 0);
    b.ts = T0 + 103, b.addr = 0x10000000, b.size = 0;
    tb_rec(t, GT_REC_BLOCK, GT_BLOCK_FREE, &b, sizeof(b), NULL, 0);
    pc.ts = T0 + 104, pc.size = 1 << 19;
    tb_rec(t, GT_REC_POOL, GT_POOL_REMOVE_RANGE, &pc, sizeof(pc), NULL, 0);
    tb_rec(t, GT_REC_POOL, GT_POOL_DESTROY, &pc, sizeof(pc), NULL, 0);
    tb_watermark(t, 200);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_gpu_extcorr(t, 1, 101);
    tb_gpu_extcorr(t, 2, 102);
    tb_gpu_kernel(t, T0 + 11, T0 + 20, 101, 0, 1, 0, 0);
    tb_gpu_kernel(t, T0 + 96, T0 + 150, 102, 0, 1, 0, 0);
    tb_end(t);
}

/* ---- odd but legal shapes, and broken ones ------------------------------------------------ */

/* Records of an older (shorter) and a newer (longer) writer, unknown types and chunk kinds. */
static void odd_shapes(struct tb *t)
{
    unsigned char rec[128];
    struct gt_rec_header h;
    tb_init(t, 5, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    memset(rec, 0, sizeof(rec));
    h = (struct gt_rec_header){GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 24}; /* short: ts, addr */
    memcpy(rec, &h, 8);
    tb_raw(t, rec, 24);
    h = (struct gt_rec_header){GT_REC_ALLOC, GT_API_cuMemAlloc_v2, 96}; /* long: 32 new bytes */
    memcpy(rec, &h, 8);
    memset(rec + 64, 0xee, 32);
    tb_raw(t, rec, 96);
    h = (struct gt_rec_header){999, 0, 16}; /* unknown type */
    memset(rec, 0, sizeof(rec));
    memcpy(rec, &h, 8);
    tb_raw(t, rec, 16);
    h = (struct gt_rec_header){GT_REC_GPU_KERNEL, 0, 56}; /* GPU type in a host chunk */
    memcpy(rec, &h, 8);
    tb_raw(t, rec, 56);
    h = (struct gt_rec_header){GT_REC_DRIVER, 0, 8}; /* header only */
    memcpy(rec, &h, 8);
    tb_raw(t, rec, 8);
    tb_end(t);
    tb_begin(t, 9, 1); /* unknown chunk kind */
    tb_alloc(t, 1, GT_API_cuMemAlloc_v2, 0x1000, 64, 0, 0);
    tb_end(t);
    tb_begin(t, GT_CHUNK_GPU, 0);
    tb_alloc(t, 1, GT_API_cuMemAlloc_v2, 0x1000, 64, 0, 0); /* host type in a GPU chunk */
    tb_end(t);
}

/* Malformed records: string lengths past the record, bad sizes. */
static void malformed(struct tb *t)
{
    unsigned char rec[64];
    struct gt_rec_func fn = {.h = {GT_REC_FUNC, 0, 40}, .handle = 1, .name_len = 100};
    tb_init(t, 6, T0);
    tb_begin(t, GT_CHUNK_HOST, 1);
    memset(rec, 'x', sizeof(rec));
    memcpy(rec, &fn, sizeof(fn));
    tb_raw(t, rec, 40);
    struct gt_rec_process pr = {.h = {GT_REC_PROCESS, 0, 56},
                                .cmdline_len = 0xffffffffu,
                                .host_len = 0xffffffffu,
                                .exe_len = 2};
    memcpy(rec, &pr, sizeof(pr));
    tb_raw(t, rec, 56);
    struct gt_rec_header h = {GT_REC_NOTE, 0, 12}; /* size not a multiple of 8 */
    memcpy(rec, &h, 8);
    tb_raw(t, rec, 16);
    tb_end(t);
    tb_begin(t, GT_CHUNK_HOST, 1);
    h = (struct gt_rec_header){GT_REC_NOTE, 0, 4096}; /* past the chunk */
    memcpy(rec, &h, 8);
    tb_raw(t, rec, 16);
    tb_end(t);
}

static void header_variants(void)
{
    struct gt_file_header h;
    unsigned char buf[128];
    gt_header_init(&h, 1, 1, 0, T0);
    put_file("header-only", &h, sizeof(h));
    h.version = 2;
    h.min_version = 2;
    put_file("header-newer-version", &h, sizeof(h));
    gt_header_init(&h, 1, 1, 0, T0);
    h.endian = __builtin_bswap32(GT_ENDIAN_TAG);
    put_file("header-foreign-endian", &h, sizeof(h));
    gt_header_init(&h, 1, 1, 0, T0);
    h.header_size = 72; /* a newer writer's longer header */
    memset(buf, 0x5a, sizeof(buf));
    memcpy(buf, &h, sizeof(h));
    put_file("header-longer", buf, 72);
    h.header_size = 4096 + 8;
    memcpy(buf, &h, sizeof(h));
    put_file("header-size-absurd", buf, sizeof(h));
    put_file("header-cut", &h, 20);
    put_file("empty", "", 0);
    put_file("not-a-trace-json", "{\"traceEvents\": []}\n", 20);
    static const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03,
                                       0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    put_file("not-a-trace-gzip", gz, sizeof(gz));
}

/* Truncations of a valid trace at every chunk boundary and in the middle of a record, and a few
 * deterministic bit flips in the header and the payload. */
static void broken_variants(const struct tb *t)
{
    char name[64];
    for (size_t c = 0; c < t->n_chunks; c++) {
        snprintf(name, sizeof(name), "cut-chunk%zu-end", c);
        put_file(name, t->buf, t->chunk_ends[c]);
        size_t start = c ? t->chunk_ends[c - 1] : sizeof(struct gt_file_header);
        snprintf(name, sizeof(name), "cut-chunk%zu-mid", c);
        put_file(name, t->buf, start + (t->chunk_ends[c] - start) / 2 + 3);
    }
    unsigned char *b = malloc(t->len);
    if (!b) abort();
    static const size_t flips[] = {3, 9, 13, 17, 20, 57, 63, 70, 90, 130, 300, 611};
    for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
        if (flips[i] >= t->len) continue;
        memcpy(b, t->buf, t->len);
        b[flips[i]] ^= (unsigned char)(1u << (i % 8));
        snprintf(name, sizeof(name), "flip-byte%zu", flips[i]);
        put_file(name, b, t->len);
    }
    free(b);
}

int main(int argc, char **argv)
{
    struct tb t;
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    every_type(&t);
    put_trace("every-type", &t);
    put_packed("every-type", &t, GT_CODEC_ZSTD_DELTA);
    broken_variants(&t);
    tb_free_all(&t);
    memory_paths(&t);
    put_trace("memory", &t);
    put_packed("memory", &t, GT_CODEC_ZSTD_DELTA);
    tb_free_all(&t);
    gpu_paths(&t);
    put_trace("gpu", &t);
    put_packed("gpu", &t, GT_CODEC_ZSTD);
    put_packed("gpu", &t, GT_CODEC_ZSTD_DELTA);
    tb_free_all(&t);
    static const char *const reasons[] = {"", "", ": libcupti.so.13: cannot open shared object",
                                          ": another profiler holds CUPTI (nsys)",
                                          ": cuptiSubscribe"};
    for (unsigned s = GT_CUPTI_OFF_BY_USER; s <= GT_CUPTI_FAILED + 1; s++) {
        char name[32];
        cupti_states(&t, s, s <= GT_CUPTI_FAILED ? reasons[s] : "?");
        snprintf(name, sizeof(name), "cupti-status%u", s);
        put_trace(name, &t);
        tb_free_all(&t);
    }
    stacks_paths(&t);
    put_trace("stacks", &t);
    tb_free_all(&t);
    threads_order(&t);
    put_trace("threads", &t);
    put_packed("threads", &t, GT_CODEC_ZSTD_DELTA);
    tb_free_all(&t);
    odd_shapes(&t);
    put_trace("odd-shapes", &t);
    tb_free_all(&t);
    malformed(&t);
    put_trace("malformed", &t);
    tb_free_all(&t);
    torch_paths(&t);
    put_trace("torch", &t);
    tb_free_all(&t);
    torch_replay_paths(&t);
    put_trace("torch-replay", &t);
    tb_free_all(&t);
    nvml_paths(&t, 0);
    put_trace("nvml", &t);
    put_packed("nvml", &t, GT_CODEC_ZSTD_DELTA);
    tb_free_all(&t);
    nvml_paths(&t, 1);
    put_trace("nvml-absent", &t);
    tb_free_all(&t);
    samples_paths(&t);
    put_trace("samples-pools", &t);
    put_packed("samples-pools", &t, GT_CODEC_ZSTD_DELTA);
    tb_free_all(&t);
    header_variants();
    return 0;
}
