/* The per-type table: fixed struct size and where the variable-length strings are. */
#include "records.h"

#include <stdio.h>
#include <string.h>

#include "gputrace/trace_api.h"

#include "format.h"

struct rec_info {
    const char *name;
    uint32_t fixed; /* sizeof the v1 struct */
    /* Offsets of up to three u32 string lengths inside the fixed part (0 = none). The strings
     * follow the fixed part back to back, in this order. */
    uint16_t len_off[3];
};

static const struct rec_info rec_table[] = {
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
};

#define N_TYPES (sizeof(rec_table) / sizeof(rec_table[0]))

static const struct rec_info *info_of(unsigned type)
{
    return type < N_TYPES && rec_table[type].name ? &rec_table[type] : NULL;
}

const char *ga_rec_type_name(unsigned type)
{
    const struct rec_info *ri = info_of(type);
    return ri ? ri->name : NULL;
}

static uint32_t load_u32(const unsigned char *p, uint32_t size, uint32_t off)
{
    uint32_t v = 0;
    if (off + 4 <= size) memcpy(&v, p + off, 4);
    return v;
}

/* Sum of the string lengths; 64-bit so three u32 lengths cannot wrap. */
static uint64_t tail_len(const struct rec_info *ri, const unsigned char *p, uint32_t size)
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
    const struct rec_info *ri = info_of(h.type);
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
        if (rec_table[t].name && !rec_table[t].len_off[0]) mask |= 1ull << t;
    return mask;
}

/* memcpy of n bytes (a struct size). This runs once per record: a call into the C library, or
 * a jump on the size (records of different sizes take turns), cost as much as the rest of the
 * decoding. From 32 to 96 bytes three 32-byte moves at 0, min(32, n - 32) and n - 32 cover
 * [0, n) without reading past it, whatever n is. */
static inline void copy_fixed(void *dst, const void *src, uint32_t n)
{
    if (n >= 32 && n <= 96) {
        uint32_t mid = n - 32 < 32 ? n - 32 : 32;
        memcpy(dst, src, 32);
        memcpy((char *)dst + mid, (const char *)src + mid, 32);
        memcpy((char *)dst + n - 32, (const char *)src + n - 32, 32);
        return;
    }
    memcpy(dst, src, n);
}

/* ga_rec_decode's rare parts, out of its way: a record shorter than its struct (an older or a
 * damaged writer: gt_rec_load zero-fills) and the strings. */
__attribute__((noinline)) static void decode_tail(const struct rec_info *ri, const unsigned char *p,
                                                  uint32_t size, struct ga_event *ev)
{
    if (size < ri->fixed) gt_rec_load(&ev->r, ri->fixed, p, size);
    uint32_t off = ri->fixed;
    for (int i = 0; i < 3 && ri->len_off[i]; i++) {
        uint32_t n = load_u32(p, size, ri->len_off[i]);
        ev->str[i] = (const char *)p + off;
        ev->str_len[i] = n;
        off += n;
    }
}

void ga_rec_decode(const void *rec, uint32_t size, uint32_t tid, uint64_t order,
                   struct ga_event *ev)
{
    const unsigned char *p = rec;
    const struct rec_info *ri;
    /* Hot path: only the fields every consumer reads are cleared; the union is loaded below. */
    memset(ev->str, 0, sizeof(ev->str));
    memset(ev->str_len, 0, sizeof(ev->str_len));
    memcpy(&ev->r.h, p, sizeof(ev->r.h));
    ri = info_of(ev->r.h.type);
    ev->type = ev->r.h.type;
    ev->sub = ev->r.h.sub;
    ev->size = size;
    ev->tid = tid;
    ev->order = order;
    ev->ts = ga_rec_key(rec, size);
    if (!ri) return;
    if (size >= ri->fixed && !ri->len_off[0]) { /* the common case, without gt_rec_load's loop */
        copy_fixed(&ev->r, p, ri->fixed);
        return;
    }
    if (size >= ri->fixed) copy_fixed(&ev->r, p, ri->fixed);
    decode_tail(ri, p, size, ev);
}

const char *ga_api_label(unsigned api, char buf[16])
{
    if (api < GT_API_MAX && gt_api_table[api].name) return gt_api_table[api].name;
    snprintf(buf, 16, "api#%u", api);
    return buf;
}
