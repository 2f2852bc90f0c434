/* The per-type table: fixed struct size and where the variable-length strings are. */
#include "input/records.h"

#include <stdio.h>
#include <string.h>

#include "gputrace/trace_api.h"

#include "format.h"

const struct ga_rec_info ga_rec_table[] = {
    [GT_REC_PROCESS] = {"PROCESS",
                        sizeof(struct gt_rec_process),
                        {offsetof(struct gt_rec_process, cmdline_len),
                         offsetof(struct gt_rec_process, host_len),
                         offsetof(struct gt_rec_process, exe_len)}},
    [GT_REC_DRIVER] = {"DRIVER", sizeof(struct gt_rec_driver), {0}},
    [GT_REC_DEVICE] = {"DEVICE",
                       sizeof(struct gt_rec_device),
                       {offsetof(struct gt_rec_device, name_len)}},
    [GT_REC_THREAD] = {"THREAD",
                       sizeof(struct gt_rec_thread),
                       {offsetof(struct gt_rec_thread, name_len)}},
    [GT_REC_ALLOC] = {"ALLOC", sizeof(struct gt_rec_alloc), {0}},
    [GT_REC_FREE] = {"FREE", sizeof(struct gt_rec_free), {0}},
    [GT_REC_ALLOC_FAIL] = {"ALLOC_FAIL", sizeof(struct gt_rec_alloc_fail), {0}},
    [GT_REC_VMM_MAP] = {"VMM_MAP", sizeof(struct gt_rec_vmm_map), {0}},
    [GT_REC_POOL] = {"POOL", sizeof(struct gt_rec_pool), {offsetof(struct gt_rec_pool, name_len)}},
    [GT_REC_BLOCK] = {"BLOCK", sizeof(struct gt_rec_block), {0}},
    [GT_REC_POOL_USAGE] = {"POOL_USAGE", sizeof(struct gt_rec_pool_usage), {0}},
    [GT_REC_FUNC] = {"FUNC", sizeof(struct gt_rec_func), {offsetof(struct gt_rec_func, name_len)}},
    [GT_REC_LAUNCH] = {"LAUNCH", sizeof(struct gt_rec_launch), {0}},
    [GT_REC_SPAN] = {"SPAN", sizeof(struct gt_rec_span), {0}},
    [GT_REC_OBJECT] = {"OBJECT", sizeof(struct gt_rec_object), {0}},
    [GT_REC_MEMINFO] = {"MEMINFO", sizeof(struct gt_rec_meminfo), {0}},
    [GT_REC_RESOLVE] = {"RESOLVE",
                        sizeof(struct gt_rec_resolve),
                        {offsetof(struct gt_rec_resolve, name_len)}},
    [GT_REC_LOST] = {"LOST", sizeof(struct gt_rec_lost), {0}},
    [GT_REC_WATERMARK] = {"WATERMARK", sizeof(struct gt_rec_watermark), {0}},
    [GT_REC_END] = {"END", sizeof(struct gt_rec_end), {0}},
    [GT_REC_NOTE] = {"NOTE", sizeof(struct gt_rec_note), {offsetof(struct gt_rec_note, text_len)}},
    [GT_REC_CUPTI] = {"CUPTI",
                      sizeof(struct gt_rec_cupti),
                      {offsetof(struct gt_rec_cupti, path_len),
                       offsetof(struct gt_rec_cupti, reason_len)}},
    [GT_REC_GPU_KERNEL] = {"GPU_KERNEL", sizeof(struct gt_rec_gpu_kernel), {0}},
    [GT_REC_GPU_MEMCPY] = {"GPU_MEMCPY", sizeof(struct gt_rec_gpu_memcpy), {0}},
    [GT_REC_GPU_MEMSET] = {"GPU_MEMSET", sizeof(struct gt_rec_gpu_memset), {0}},
    [GT_REC_GPU_EXTCORR] = {"GPU_EXTCORR", sizeof(struct gt_rec_gpu_extcorr), {0}},
    [GT_REC_GPU_API] = {"GPU_API", sizeof(struct gt_rec_gpu_api), {0}},
    [GT_REC_GPU_NAME] = {"GPU_NAME",
                         sizeof(struct gt_rec_gpu_name),
                         {offsetof(struct gt_rec_gpu_name, name_len)}},
    [GT_REC_GPU_DROPPED] = {"GPU_DROPPED", sizeof(struct gt_rec_gpu_dropped), {0}},
    [GT_REC_STACK] = {"STACK",
                      sizeof(struct gt_rec_stack),
                      {offsetof(struct gt_rec_stack, ips_len)}},
    [GT_REC_MODULE] = {"MODULE",
                       sizeof(struct gt_rec_module),
                       {offsetof(struct gt_rec_module, path_len),
                        offsetof(struct gt_rec_module, build_id_len)}},
    [GT_REC_SYMBOL] = {"SYMBOL",
                       sizeof(struct gt_rec_symbol),
                       {offsetof(struct gt_rec_symbol, name_len)}},
    [GT_REC_PYCODE] = {"PYCODE",
                       sizeof(struct gt_rec_pycode),
                       {offsetof(struct gt_rec_pycode, file_len),
                        offsetof(struct gt_rec_pycode, name_len)}},
    [GT_REC_TORCH_STATS] = {"TORCH_STATS", sizeof(struct gt_rec_torch_stats), {0}},
    [GT_REC_TORCH_SNAP] = {"TORCH_SNAP", sizeof(struct gt_rec_torch_snap), {0}},
    [GT_REC_TORCH_SEGMENT] = {"TORCH_SEGMENT", sizeof(struct gt_rec_torch_segment), {0}},
    [GT_REC_TORCH_BLOCK] = {"TORCH_BLOCK", sizeof(struct gt_rec_torch_block), {0}},
    [GT_REC_TORCH_FRAME] = {"TORCH_FRAME",
                            sizeof(struct gt_rec_torch_frame),
                            {offsetof(struct gt_rec_torch_frame, file_len),
                             offsetof(struct gt_rec_torch_frame, name_len)}},
    [GT_REC_TORCH_STACK] = {"TORCH_STACK",
                            sizeof(struct gt_rec_torch_stack),
                            {offsetof(struct gt_rec_torch_stack, frames_len)}},
    [GT_REC_TORCH_OOM] = {"TORCH_OOM", sizeof(struct gt_rec_torch_oom), {0}},
    [GT_REC_NVML] = {"NVML", sizeof(struct gt_rec_nvml), {offsetof(struct gt_rec_nvml, text_len)}},
    [GT_REC_NVML_SAMPLE] = {"NVML_SAMPLE", sizeof(struct gt_rec_nvml_sample), {0}},
    [GT_REC_NVML_PROC] = {"NVML_PROC",
                          sizeof(struct gt_rec_nvml_proc),
                          {offsetof(struct gt_rec_nvml_proc, name_len)}},
    [GT_REC_HOST_SAMPLE] = {"HOST_SAMPLE", sizeof(struct gt_rec_host_sample), {0}},
    [GT_REC_TORCH_ROLES] = {"TORCH_ROLES",
                            sizeof(struct gt_rec_torch_roles),
                            {offsetof(struct gt_rec_torch_roles, entries_len)}},
    [GT_REC_TORCH_STEP] = {"TORCH_STEP",
                           sizeof(struct gt_rec_torch_step),
                           {offsetof(struct gt_rec_torch_step, name_len)}},
    [GT_REC_TORCH_TRACE] = {"TORCH_TRACE",
                            sizeof(struct gt_rec_torch_trace),
                            {offsetof(struct gt_rec_torch_trace, entries_len)}},
};

#define N_TYPES (sizeof(ga_rec_table) / sizeof(ga_rec_table[0]))
const unsigned ga_rec_ntypes = N_TYPES;

const char *ga_rec_type_name(unsigned type)
{
    const struct ga_rec_info *ri = ga_rec_info_of(type);
    return ri ? ri->name : NULL;
}

static uint32_t load_u32(const unsigned char *p, uint32_t size, uint32_t off)
{
    uint32_t v = 0;
    if (off + 4 <= size) memcpy(&v, p + off, 4);
    return v;
}

/* Sum of the string lengths; 64-bit so three u32 lengths cannot wrap. */
static uint64_t tail_len(const struct ga_rec_info *ri, const unsigned char *p, uint32_t size)
{
    uint64_t n = 0;
    for (int i = 0; i < 3 && ri->len_off[i]; i++)
        n += load_u32(p, size, ri->len_off[i]);
    return n;
}

enum ga_rec_check ga_rec_check(const void *rec, uint32_t size, const char **why)
{
    struct gt_rec_header h;
    memcpy(&h, rec, sizeof(h));
    const struct ga_rec_info *ri = ga_rec_info_of(h.type);
    if (!ri) return GA_REC_UNKNOWN;
    uint64_t tail = tail_len(ri, rec, size);
    if (tail == 0) return GA_REC_OK;
    /* The strings follow the fixed part, so a record that has them must hold the whole fixed
     * part: in a shorter record nobody can say where they start. */
    if (size < ri->fixed || tail > size - ri->fixed) {
        *why = "string lengths run past the record";
        return GA_REC_MALFORMED;
    }
    return GA_REC_OK;
}

uint64_t ga_rec_plain_types(void)
{
    uint64_t mask = 0;
    for (unsigned t = 0; t < N_TYPES && t < 64; t++)
        if (ga_rec_table[t].name && !ga_rec_table[t].len_off[0]) mask |= 1ull << t;
    return mask;
}

/* ga_rec_decode's rare parts: an unknown type (only the header), a record shorter than its
 * struct (an older or a damaged writer: gt_rec_load zero-fills) and the strings. */
void ga_rec_decode_rest(const unsigned char *p, uint32_t size, struct ga_event *ev)
{
    const struct ga_rec_info *ri = ga_rec_info_of(ev->type);
    ev->r = &ev->own;
    if (!ri) { /* only the header is known */
        memset(&ev->own, 0, sizeof(ev->own));
        memcpy(&ev->own.h, p, sizeof(ev->own.h));
        return;
    }
    if (size >= ri->fixed)
        ga_rec_copy_fixed(&ev->own, p, ri->fixed);
    else
        gt_rec_load(&ev->own, ri->fixed, p, size);
    uint32_t off = ri->fixed;
    for (int i = 0; i < 3 && ri->len_off[i]; i++) {
        uint32_t n = load_u32(p, size, ri->len_off[i]);
        ev->str[i] = (const char *)p + off;
        ev->str_len[i] = n;
        off += n;
    }
}

const char *ga_api_label(unsigned api, char buf[16])
{
    if (api < GT_API_MAX && gt_api_table[api].name) return gt_api_table[api].name;
    snprintf(buf, 16, "api#%u", api);
    return buf;
}
