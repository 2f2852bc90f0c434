/* docs/TRACE_FORMAT.md must match include/gputrace/trace_format.h byte for byte: every struct's
 * table (offset, size, field) is compared with offsetof/sizeof from the header, and every record
 * type number with the enum. $SRC (set by tests/run.sh) or the working directory is the repo. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gputrace/trace_format.h"

struct field {
    const char *name;
    size_t off, size;
};

#define F(s, f)                                                                                    \
    {                                                                                              \
#f, offsetof(struct s, f), sizeof(((struct s *)0)->f)                                      \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

struct layout {
    const char *name;
    int type; /* record type, -1 for file/chunk/record headers */
    size_t size;
    struct field fields[20];
};

#define L(s, t, ...)                                                                               \
    {                                                                                              \
#s, t, sizeof(struct s),                                                                   \
        {                                                                                          \
            __VA_ARGS__, END                                                                       \
        }                                                                                          \
    }

static const struct layout layouts[] = {
    L(gt_file_header, -1, F(gt_file_header, magic), F(gt_file_header, endian),
      F(gt_file_header, version), F(gt_file_header, min_version), F(gt_file_header, header_size),
      F(gt_file_header, flags), F(gt_file_header, pid), F(gt_file_header, ppid),
      F(gt_file_header, start_realtime_ns), F(gt_file_header, start_monotonic_ns),
      F(gt_file_header, clock_id), F(gt_file_header, header_crc32)),
    L(gt_chunk_header, -1, F(gt_chunk_header, magic), F(gt_chunk_header, kind),
      F(gt_chunk_header, codec), F(gt_chunk_header, payload_size), F(gt_chunk_header, crc32),
      F(gt_chunk_header, tid), F(gt_chunk_header, seq)),
    L(gt_codec_head, -1, F(gt_codec_head, raw_size), F(gt_codec_head, packed_size)),
    L(gt_rec_header, -1, F(gt_rec_header, type), F(gt_rec_header, sub), F(gt_rec_header, size)),
    L(gt_rec_process, GT_REC_PROCESS, F(gt_rec_process, h), F(gt_rec_process, ts),
      F(gt_rec_process, pid), F(gt_rec_process, ppid), F(gt_rec_process, start_realtime_ns),
      F(gt_rec_process, argc), F(gt_rec_process, cmdline_len), F(gt_rec_process, host_len),
      F(gt_rec_process, exe_len)),
    L(gt_rec_driver, GT_REC_DRIVER, F(gt_rec_driver, h), F(gt_rec_driver, ts),
      F(gt_rec_driver, driver_version), F(gt_rec_driver, device_count)),
    L(gt_rec_device, GT_REC_DEVICE, F(gt_rec_device, h), F(gt_rec_device, ts),
      F(gt_rec_device, ordinal), F(gt_rec_device, cc_major), F(gt_rec_device, cc_minor),
      F(gt_rec_device, name_len), F(gt_rec_device, total_bytes), F(gt_rec_device, uuid)),
    L(gt_rec_thread, GT_REC_THREAD, F(gt_rec_thread, h), F(gt_rec_thread, ts),
      F(gt_rec_thread, tid), F(gt_rec_thread, name_len)),
    L(gt_rec_alloc, GT_REC_ALLOC, F(gt_rec_alloc, h), F(gt_rec_alloc, ts), F(gt_rec_alloc, addr),
      F(gt_rec_alloc, size), F(gt_rec_alloc, stream), F(gt_rec_alloc, ctx), F(gt_rec_alloc, aux),
      F(gt_rec_alloc, device), F(gt_rec_alloc, flags), F(gt_rec_alloc, stack),
      F(gt_rec_alloc, dur_ns)),
    L(gt_rec_free, GT_REC_FREE, F(gt_rec_free, h), F(gt_rec_free, ts), F(gt_rec_free, addr),
      F(gt_rec_free, stream), F(gt_rec_free, size), F(gt_rec_free, result), F(gt_rec_free, stack),
      F(gt_rec_free, dur_ns), F(gt_rec_free, pad)),
    L(gt_rec_alloc_fail, GT_REC_ALLOC_FAIL, F(gt_rec_alloc_fail, h), F(gt_rec_alloc_fail, ts),
      F(gt_rec_alloc_fail, size), F(gt_rec_alloc_fail, stream), F(gt_rec_alloc_fail, ctx),
      F(gt_rec_alloc_fail, free_bytes), F(gt_rec_alloc_fail, total_bytes),
      F(gt_rec_alloc_fail, device), F(gt_rec_alloc_fail, result), F(gt_rec_alloc_fail, stack),
      F(gt_rec_alloc_fail, dur_ns)),
    L(gt_rec_vmm_map, GT_REC_VMM_MAP, F(gt_rec_vmm_map, h), F(gt_rec_vmm_map, ts),
      F(gt_rec_vmm_map, addr), F(gt_rec_vmm_map, size), F(gt_rec_vmm_map, offset),
      F(gt_rec_vmm_map, handle), F(gt_rec_vmm_map, result), F(gt_rec_vmm_map, pad)),
    L(gt_rec_pool, GT_REC_POOL, F(gt_rec_pool, h), F(gt_rec_pool, ts), F(gt_rec_pool, pool),
      F(gt_rec_pool, addr), F(gt_rec_pool, size), F(gt_rec_pool, device), F(gt_rec_pool, stack),
      F(gt_rec_pool, flags), F(gt_rec_pool, name_len)),
    L(gt_rec_block, GT_REC_BLOCK, F(gt_rec_block, h), F(gt_rec_block, ts), F(gt_rec_block, pool),
      F(gt_rec_block, addr), F(gt_rec_block, size), F(gt_rec_block, stack), F(gt_rec_block, pad)),
    L(gt_rec_pool_usage, GT_REC_POOL_USAGE, F(gt_rec_pool_usage, h), F(gt_rec_pool_usage, ts),
      F(gt_rec_pool_usage, pool), F(gt_rec_pool_usage, reserved_current),
      F(gt_rec_pool_usage, reserved_high), F(gt_rec_pool_usage, used_current),
      F(gt_rec_pool_usage, used_high), F(gt_rec_pool_usage, device), F(gt_rec_pool_usage, pad)),
    L(gt_rec_func, GT_REC_FUNC, F(gt_rec_func, h), F(gt_rec_func, ts), F(gt_rec_func, handle),
      F(gt_rec_func, kind), F(gt_rec_func, name_len)),
    L(gt_rec_launch, GT_REC_LAUNCH, F(gt_rec_launch, h), F(gt_rec_launch, ts),
      F(gt_rec_launch, func), F(gt_rec_launch, stream), F(gt_rec_launch, corr),
      F(gt_rec_launch, grid), F(gt_rec_launch, block), F(gt_rec_launch, shmem),
      F(gt_rec_launch, result), F(gt_rec_launch, dur_ns), F(gt_rec_launch, stack)),
    L(gt_rec_span, GT_REC_SPAN, F(gt_rec_span, h), F(gt_rec_span, ts_enter),
      F(gt_rec_span, ts_exit), F(gt_rec_span, object), F(gt_rec_span, bytes),
      F(gt_rec_span, result), F(gt_rec_span, stack)),
    L(gt_rec_object, GT_REC_OBJECT, F(gt_rec_object, h), F(gt_rec_object, ts),
      F(gt_rec_object, handle), F(gt_rec_object, aux), F(gt_rec_object, device),
      F(gt_rec_object, result)),
    L(gt_rec_meminfo, GT_REC_MEMINFO, F(gt_rec_meminfo, h), F(gt_rec_meminfo, ts),
      F(gt_rec_meminfo, free_bytes), F(gt_rec_meminfo, total_bytes), F(gt_rec_meminfo, device),
      F(gt_rec_meminfo, pad)),
    L(gt_rec_resolve, GT_REC_RESOLVE, F(gt_rec_resolve, h), F(gt_rec_resolve, ts),
      F(gt_rec_resolve, version), F(gt_rec_resolve, flags), F(gt_rec_resolve, api),
      F(gt_rec_resolve, status), F(gt_rec_resolve, name_len)),
    L(gt_rec_lost, GT_REC_LOST, F(gt_rec_lost, h), F(gt_rec_lost, ts), F(gt_rec_lost, count)),
    L(gt_rec_watermark, GT_REC_WATERMARK, F(gt_rec_watermark, h), F(gt_rec_watermark, ts)),
    L(gt_rec_end, GT_REC_END, F(gt_rec_end, h), F(gt_rec_end, ts), F(gt_rec_end, records),
      F(gt_rec_end, lost), F(gt_rec_end, reason), F(gt_rec_end, pad)),
    L(gt_rec_note, GT_REC_NOTE, F(gt_rec_note, h), F(gt_rec_note, ts), F(gt_rec_note, level),
      F(gt_rec_note, text_len)),
    L(gt_rec_cupti, GT_REC_CUPTI, F(gt_rec_cupti, h), F(gt_rec_cupti, ts),
      F(gt_rec_cupti, clock_offset_ns), F(gt_rec_cupti, version), F(gt_rec_cupti, result),
      F(gt_rec_cupti, path_len), F(gt_rec_cupti, reason_len)),
    L(gt_rec_gpu_kernel, GT_REC_GPU_KERNEL, F(gt_rec_gpu_kernel, h), F(gt_rec_gpu_kernel, start),
      F(gt_rec_gpu_kernel, end), F(gt_rec_gpu_kernel, corr), F(gt_rec_gpu_kernel, device),
      F(gt_rec_gpu_kernel, context), F(gt_rec_gpu_kernel, stream), F(gt_rec_gpu_kernel, graph_id),
      F(gt_rec_gpu_kernel, name_id), F(gt_rec_gpu_kernel, graph_node_id)),
    L(gt_rec_gpu_memcpy, GT_REC_GPU_MEMCPY, F(gt_rec_gpu_memcpy, h), F(gt_rec_gpu_memcpy, start),
      F(gt_rec_gpu_memcpy, end), F(gt_rec_gpu_memcpy, bytes), F(gt_rec_gpu_memcpy, corr),
      F(gt_rec_gpu_memcpy, device), F(gt_rec_gpu_memcpy, context), F(gt_rec_gpu_memcpy, stream),
      F(gt_rec_gpu_memcpy, src_kind), F(gt_rec_gpu_memcpy, dst_kind), F(gt_rec_gpu_memcpy, flags),
      F(gt_rec_gpu_memcpy, dst_device)),
    L(gt_rec_gpu_memset, GT_REC_GPU_MEMSET, F(gt_rec_gpu_memset, h), F(gt_rec_gpu_memset, start),
      F(gt_rec_gpu_memset, end), F(gt_rec_gpu_memset, bytes), F(gt_rec_gpu_memset, corr),
      F(gt_rec_gpu_memset, device), F(gt_rec_gpu_memset, context), F(gt_rec_gpu_memset, stream),
      F(gt_rec_gpu_memset, value), F(gt_rec_gpu_memset, mem_kind)),
    L(gt_rec_gpu_extcorr, GT_REC_GPU_EXTCORR, F(gt_rec_gpu_extcorr, h), F(gt_rec_gpu_extcorr, ext),
      F(gt_rec_gpu_extcorr, corr), F(gt_rec_gpu_extcorr, kind)),
    L(gt_rec_gpu_api, GT_REC_GPU_API, F(gt_rec_gpu_api, h), F(gt_rec_gpu_api, start),
      F(gt_rec_gpu_api, end), F(gt_rec_gpu_api, corr), F(gt_rec_gpu_api, tid),
      F(gt_rec_gpu_api, cbid), F(gt_rec_gpu_api, result)),
    L(gt_rec_gpu_name, GT_REC_GPU_NAME, F(gt_rec_gpu_name, h), F(gt_rec_gpu_name, ts),
      F(gt_rec_gpu_name, id), F(gt_rec_gpu_name, name_len)),
    L(gt_rec_gpu_dropped, GT_REC_GPU_DROPPED, F(gt_rec_gpu_dropped, h), F(gt_rec_gpu_dropped, ts),
      F(gt_rec_gpu_dropped, count)),
    L(gt_rec_stack, GT_REC_STACK, F(gt_rec_stack, h), F(gt_rec_stack, ts),
      F(gt_rec_stack, first_id), F(gt_rec_stack, parent), F(gt_rec_stack, ips_len),
      F(gt_rec_stack, pad)),
    L(gt_rec_module, GT_REC_MODULE, F(gt_rec_module, h), F(gt_rec_module, ts),
      F(gt_rec_module, base), F(gt_rec_module, start), F(gt_rec_module, size),
      F(gt_rec_module, path_len), F(gt_rec_module, build_id_len)),
    L(gt_rec_symbol, GT_REC_SYMBOL, F(gt_rec_symbol, h), F(gt_rec_symbol, ts),
      F(gt_rec_symbol, addr), F(gt_rec_symbol, size), F(gt_rec_symbol, name_len),
      F(gt_rec_symbol, pad)),
    L(gt_rec_pycode, GT_REC_PYCODE, F(gt_rec_pycode, h), F(gt_rec_pycode, ts), F(gt_rec_pycode, id),
      F(gt_rec_pycode, first_line), F(gt_rec_pycode, file_len), F(gt_rec_pycode, name_len)),
    L(gt_rec_torch_stats, GT_REC_TORCH_STATS, F(gt_rec_torch_stats, h), F(gt_rec_torch_stats, ts),
      F(gt_rec_torch_stats, allocated), F(gt_rec_torch_stats, allocated_peak),
      F(gt_rec_torch_stats, reserved), F(gt_rec_torch_stats, reserved_peak),
      F(gt_rec_torch_stats, active), F(gt_rec_torch_stats, inactive_split),
      F(gt_rec_torch_stats, requested), F(gt_rec_torch_stats, alloc_retries),
      F(gt_rec_torch_stats, ooms), F(gt_rec_torch_stats, segments), F(gt_rec_torch_stats, device)),
    L(gt_rec_torch_snap, GT_REC_TORCH_SNAP, F(gt_rec_torch_snap, h), F(gt_rec_torch_snap, ts),
      F(gt_rec_torch_snap, id), F(gt_rec_torch_snap, why), F(gt_rec_torch_snap, segments),
      F(gt_rec_torch_snap, flags), F(gt_rec_torch_snap, blocks),
      F(gt_rec_torch_snap, max_split_size), F(gt_rec_torch_snap, roundup_divisions)),
    L(gt_rec_torch_segment, GT_REC_TORCH_SEGMENT, F(gt_rec_torch_segment, h),
      F(gt_rec_torch_segment, ts), F(gt_rec_torch_segment, addr), F(gt_rec_torch_segment, size),
      F(gt_rec_torch_segment, allocated), F(gt_rec_torch_segment, active),
      F(gt_rec_torch_segment, requested), F(gt_rec_torch_segment, stream),
      F(gt_rec_torch_segment, pool_id), F(gt_rec_torch_segment, snap),
      F(gt_rec_torch_segment, device), F(gt_rec_torch_segment, blocks),
      F(gt_rec_torch_segment, expandable)),
    L(gt_rec_torch_block, GT_REC_TORCH_BLOCK, F(gt_rec_torch_block, h), F(gt_rec_torch_block, ts),
      F(gt_rec_torch_block, addr), F(gt_rec_torch_block, size), F(gt_rec_torch_block, requested),
      F(gt_rec_torch_block, stack), F(gt_rec_torch_block, snap)),
    L(gt_rec_torch_frame, GT_REC_TORCH_FRAME, F(gt_rec_torch_frame, h), F(gt_rec_torch_frame, ts),
      F(gt_rec_torch_frame, id), F(gt_rec_torch_frame, line), F(gt_rec_torch_frame, file_len),
      F(gt_rec_torch_frame, name_len)),
    L(gt_rec_torch_stack, GT_REC_TORCH_STACK, F(gt_rec_torch_stack, h), F(gt_rec_torch_stack, ts),
      F(gt_rec_torch_stack, id), F(gt_rec_torch_stack, frames_len)),
    L(gt_rec_torch_oom, GT_REC_TORCH_OOM, F(gt_rec_torch_oom, h), F(gt_rec_torch_oom, ts),
      F(gt_rec_torch_oom, requested), F(gt_rec_torch_oom, limit), F(gt_rec_torch_oom, device_free),
      F(gt_rec_torch_oom, device_total), F(gt_rec_torch_oom, allocated),
      F(gt_rec_torch_oom, reserved), F(gt_rec_torch_oom, snap), F(gt_rec_torch_oom, device),
      F(gt_rec_torch_oom, stack), F(gt_rec_torch_oom, fraction_set)),
    L(gt_rec_nvml, GT_REC_NVML, F(gt_rec_nvml, h), F(gt_rec_nvml, ts), F(gt_rec_nvml, device),
      F(gt_rec_nvml, nvml_index), F(gt_rec_nvml, max_sm_mhz), F(gt_rec_nvml, max_mem_mhz),
      F(gt_rec_nvml, text_len), F(gt_rec_nvml, pad)),
    L(gt_rec_nvml_sample, GT_REC_NVML_SAMPLE, F(gt_rec_nvml_sample, h), F(gt_rec_nvml_sample, ts),
      F(gt_rec_nvml_sample, device), F(gt_rec_nvml_sample, valid), F(gt_rec_nvml_sample, sm_mhz),
      F(gt_rec_nvml_sample, mem_mhz), F(gt_rec_nvml_sample, temp_c),
      F(gt_rec_nvml_sample, power_mw), F(gt_rec_nvml_sample, power_limit_mw),
      F(gt_rec_nvml_sample, util_gpu), F(gt_rec_nvml_sample, util_mem), F(gt_rec_nvml_sample, pad),
      F(gt_rec_nvml_sample, reasons), F(gt_rec_nvml_sample, mem_used)),
    L(gt_rec_host_sample, GT_REC_HOST_SAMPLE, F(gt_rec_host_sample, h), F(gt_rec_host_sample, ts),
      F(gt_rec_host_sample, sample_ts), F(gt_rec_host_sample, interval_ns),
      F(gt_rec_host_sample, cpu_ns), F(gt_rec_host_sample, tid), F(gt_rec_host_sample, stack),
      F(gt_rec_host_sample, flags), F(gt_rec_host_sample, pad)),
    L(gt_torch_role_entry, -1, F(gt_torch_role_entry, addr), F(gt_torch_role_entry, bytes),
      F(gt_torch_role_entry, device), F(gt_torch_role_entry, elem_size),
      F(gt_torch_role_entry, role), F(gt_torch_role_entry, pad)),
    L(gt_rec_torch_roles, GT_REC_TORCH_ROLES, F(gt_rec_torch_roles, h), F(gt_rec_torch_roles, ts),
      F(gt_rec_torch_roles, step), F(gt_rec_torch_roles, optimizer),
      F(gt_rec_torch_roles, entries_len), F(gt_rec_torch_roles, set_entries),
      F(gt_rec_torch_roles, pad)),
    L(gt_rec_torch_step, GT_REC_TORCH_STEP, F(gt_rec_torch_step, h), F(gt_rec_torch_step, ts),
      F(gt_rec_torch_step, step), F(gt_rec_torch_step, weights), F(gt_rec_torch_step, gradients),
      F(gt_rec_torch_step, optimizer_state), F(gt_rec_torch_step, roles_hash),
      F(gt_rec_torch_step, allocated), F(gt_rec_torch_step, reserved),
      F(gt_rec_torch_step, optimizer), F(gt_rec_torch_step, device),
      F(gt_rec_torch_step, weight_tensors), F(gt_rec_torch_step, gradient_tensors),
      F(gt_rec_torch_step, state_tensors), F(gt_rec_torch_step, name_len)),
    L(gt_torch_trace_entry, -1, F(gt_torch_trace_entry, time_us), F(gt_torch_trace_entry, addr),
      F(gt_torch_trace_entry, size), F(gt_torch_trace_entry, stack),
      F(gt_torch_trace_entry, action), F(gt_torch_trace_entry, pad)),
    L(gt_rec_torch_trace, GT_REC_TORCH_TRACE, F(gt_rec_torch_trace, h), F(gt_rec_torch_trace, ts),
      F(gt_rec_torch_trace, device), F(gt_rec_torch_trace, entries_len),
      F(gt_rec_torch_trace, snap), F(gt_rec_torch_trace, flags)),
};

#define N_LAYOUTS (sizeof(layouts) / sizeof(layouts[0]))

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (!s || fread(s, 1, (size_t)n, f) != (size_t)n) abort();
    s[n] = 0;
    fclose(f);
    return s;
}

/* The section of `doc` for struct `name`: from its "### `name`" heading to the next heading. */
static const char *section(const char *doc, const char *name, size_t *len)
{
    char head[96];
    snprintf(head, sizeof(head), "\n### `%s`", name);
    const char *s = strstr(doc, head);
    if (!s) return NULL;
    s += strlen(head);
    const char *e = strstr(s, "\n#");
    *len = e ? (size_t)(e - s) : strlen(s);
    return s;
}

/* Table rows "| offset | size | `field` | ..." in order; checks each against the header. */
static int check_rows(const struct layout *l, const char *s, size_t len, char *why, size_t wn)
{
    size_t k = 0;
    const char *end = s + len;
    for (const char *p = s; p < end; p = strchr(p, '\n') + 1) {
        unsigned long off, size;
        char fname[64];
        if (sscanf(p, "| %lu | %lu | `%63[^`]`", &off, &size, fname) != 3) {
            if (!strchr(p, '\n')) break;
            continue;
        }
        const struct field *f = &l->fields[k];
        if (!f->name) return snprintf(why, wn, "extra row %s", fname), 0;
        if (strcmp(f->name, fname) || off != f->off || size != f->size)
            return snprintf(why, wn, "row %s %lu+%lu, header has %s %zu+%zu", fname, off, size,
                            f->name, f->off, f->size),
                   0;
        k++;
        if (!strchr(p, '\n')) break;
    }
    if (l->fields[k].name) return snprintf(why, wn, "missing row %s", l->fields[k].name), 0;
    return 1;
}

static void check_layout(const char *doc, const struct layout *l)
{
    char what[160], why[160] = "", total[64];
    size_t len = 0;
    const char *s = section(doc, l->name, &len);
    snprintf(what, sizeof(what), "doc: %s", l->name);
    if (!s) {
        printf("     no section \"### `%s`\"\n", l->name);
        CHECK(what, 0);
        return;
    }
    int ok = check_rows(l, s, len, why, sizeof(why));
    snprintf(total, sizeof(total), "%zu bytes", l->size);
    if (ok && !memmem(s, len, total, strlen(total))) {
        snprintf(why, sizeof(why), "does not say \"%s\"", total);
        ok = 0;
    }
    if (ok && l->type >= 0) {
        char t[32];
        snprintf(t, sizeof(t), "type %d", l->type);
        if (!memmem(s, len, t, strlen(t)))
            snprintf(why, sizeof(why), "does not say \"%s\"", t), ok = 0;
    }
    if (!ok) printf("     %s\n", why);
    CHECK(what, ok);
}

int main(void)
{
    const char *src = getenv("SRC");
    char path[1024];
    snprintf(path, sizeof(path), "%s/docs/TRACE_FORMAT.md", src && *src ? src : ".");
    char *doc = slurp(path);
    if (!CHECK("doc: docs/TRACE_FORMAT.md readable", doc != NULL)) return check_done();
    for (size_t i = 0; i < N_LAYOUTS; i++)
        check_layout(doc, &layouts[i]);
    /* Codec numbers and the version constants as the header defines them. */
    const struct {
        const char *before, *between, *name;
        unsigned v;
    } consts[] = {{"", " (", "GT_CODEC_NONE", GT_CODEC_NONE},
                  {"", " (", "GT_CODEC_ZSTD", GT_CODEC_ZSTD},
                  {"", " (", "GT_CODEC_ZSTD_DELTA", GT_CODEC_ZSTD_DELTA},
                  {"", " (", "GT_CODEC_PACK_DELTA", GT_CODEC_PACK_DELTA},
                  {"`min_version` ", " (", "GT_FORMAT_MIN_READER_CODEC", GT_FORMAT_MIN_READER_CODEC},
                  {"`min_version` ", " (", "GT_FORMAT_MIN_READER_PACK", GT_FORMAT_MIN_READER_PACK},
                  {"`min_version` ", " (", "GT_FORMAT_MIN_READER_TORCH", GT_FORMAT_MIN_READER_TORCH},
                  {"types below ", ", ", "GT_CODEC_DELTA_TYPES", GT_CODEC_DELTA_TYPES}};
    for (size_t i = 0; i < sizeof(consts) / sizeof(consts[0]); i++) {
        char want[96], what[128];
        snprintf(want, sizeof(want), "%s%u%s`%s`", consts[i].before, consts[i].v, consts[i].between,
                 consts[i].name);
        snprintf(what, sizeof(what), "doc: says %s", want);
        CHECK(what, strstr(doc, want) != NULL);
    }
    char title[64];
    snprintf(title, sizeof(title), "# gputrace trace format, version %u\n", GT_FORMAT_VERSION);
    CHECK("doc: title names GT_FORMAT_VERSION", strncmp(doc, title, strlen(title)) == 0);
    free(doc);
    return check_done();
}
