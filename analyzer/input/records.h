/* Record layer: which record types this reader knows, their validation, sort key and decoding
 * into one event struct the analyses and renderers share. */
#ifndef GA_RECORDS_H
#define GA_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gputrace/trace_api.h"
#include "gputrace/trace_format.h"
#include "base/rec.h"

/* A record as it leaves the reader with its origin: host records in time order; GPU records
 * (ga_rec_is_gpu) as they come in the file, in CUPTI's delivery order (their `ts` is their first
 * u64: a start time, or for extcorr records the launch corr, for names 0). */
struct ga_event {
    uint16_t type;  /* enum gt_rec_type */
    uint16_t sub;   /* api id, or how (resolve) */
    uint32_t size;  /* on-disk size, header included */
    uint32_t tid;   /* the chunk's writer thread */
    uint64_t ts;    /* sort key: the first u64 after the header (ts, or ts_enter for spans) */
    uint64_t order; /* index of the record in the file, the tie breaker */
    /* The record's fixed part, as of this reader's structs: in place in the reader's buffer when
     * the record is whole and aligned (valid only during the sink call, like the strings), else
     * `own`, the copy zero-extended to this reader's size. */
    const union ga_rec *r;
    /* Variable-length strings (not NUL-terminated), validated against the record size:
     * process: argv (NUL separated), host, exe; device/thread/func/resolve: name;
     * note: text; pool: name; cupti: library path, reason; gpu_name: name; stack: the ip array
     * (8-byte aligned); module: path, build-id; symbol: name; pycode: file, name; torch_frame: file, name;
     * torch_stack: the uint32_t frame id array. They point into
     * the reader's buffer: valid only during the sink call. */
    const char *str[3];
    uint32_t str_len[3];
    union ga_rec own; /* where r points when the record is not used in place */
};

enum ga_rec_check { GA_REC_OK = 0, GA_REC_UNKNOWN = 1, GA_REC_MALFORMED = -1 };

/* Record type name ("ALLOC"), or NULL for types this reader does not know. */
const char *ga_rec_type_name(unsigned type);
/* Record types that travel in GPU chunks (GT_REC_GPU_*): the reader delivers them only from
 * GPU chunks, host types only from host chunks. */
static inline int ga_rec_is_gpu(unsigned type)
{
    return type >= GT_REC_GPU_KERNEL && type <= GT_REC_GPU_DROPPED;
}
/* Checks a record's variable-length tail against its size (framing is the caller's job). */
enum ga_rec_check ga_rec_check(const void *rec, uint32_t size, const char **why);
/* Bit t (t < 64) set for the known types whose records have no strings: ga_rec_check accepts
 * any size for them, so a reader may skip the call. */
uint64_t ga_rec_plain_types(void);
/* The record's sort key: its first u64 after the header (0 if the record is too short). */
static inline uint64_t ga_rec_key(const void *rec, uint32_t size)
{
    uint64_t k = 0;
    if (size >= sizeof(struct gt_rec_header) + 8)
        memcpy(&k, (const unsigned char *)rec + sizeof(struct gt_rec_header), 8);
    return k;
}
/* The per-type table (records.c), indexed by type below ga_rec_ntypes; name NULL: unknown. */
struct ga_rec_info {
    const char *name;
    uint32_t fixed; /* sizeof the v1 struct */
    /* Offsets of up to three u32 string lengths inside the fixed part (0 = none). The strings
     * follow the fixed part back to back, in this order. */
    uint16_t len_off[3];
};
extern const struct ga_rec_info ga_rec_table[];
extern const unsigned ga_rec_ntypes;
/* The table's entry for a type, or NULL for types this reader does not know. */
static inline const struct ga_rec_info *ga_rec_info_of(unsigned type)
{
    return type < ga_rec_ntypes && ga_rec_table[type].name ? &ga_rec_table[type] : NULL;
}

/* memcpy of n bytes (a struct size), for the records that are copied (with strings, or shorter
 * than this reader's struct): a call into the C library, or a jump on the size, cost as much as
 * the rest of the decoding. From 32 to 96 bytes three 32-byte moves at 0, min(32, n - 32) and
 * n - 32 cover [0, n) without reading past it, whatever n is. */
static inline void ga_rec_copy_fixed(void *dst, const void *src, uint32_t n)
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

void ga_rec_decode_rest(const unsigned char *p, uint32_t size, struct ga_event *ev);

/* Decodes a checked record of a known type; `rec` must stay valid while ev is used. Inline: it
 * runs once per record. A whole record without strings is used in place (records are 8-byte
 * aligned in the reader's buffers; one that is not is copied). */
static inline void ga_rec_decode(const void *rec, uint32_t size, uint32_t tid, uint64_t order,
                                 struct ga_event *ev)
{
    const unsigned char *p = rec;
    struct gt_rec_header h;
    memcpy(&h, p, sizeof(h));
    ev->type = h.type;
    ev->sub = h.sub;
    ev->size = size;
    ev->tid = tid;
    ev->order = order;
    ev->ts = ga_rec_key(rec, size);
    /* Only the fields every consumer reads are cleared; the record's own fields are loaded. */
    memset(ev->str, 0, sizeof(ev->str));
    memset(ev->str_len, 0, sizeof(ev->str_len));
    const struct ga_rec_info *ri = ga_rec_info_of(h.type);
    if (ri && !ri->len_off[0] && size >= ri->fixed && ((uintptr_t)p & 7) == 0) {
        ev->r = (const union ga_rec *)rec;
        return;
    }
    ga_rec_decode_rest(p, size, ev);
}

/* Makes dst a copy of src that does not point into the reader's buffer for its fixed part (the
 * strings still do): for a sink that keeps events past the call. */
static inline void ga_event_keep(struct ga_event *dst, const struct ga_event *src)
{
    *dst = *src;
    memset(&dst->own, 0, sizeof(dst->own));
    memcpy(&dst->own, src->r, src->size < sizeof(dst->own) ? src->size : sizeof(dst->own));
    dst->r = &dst->own;
}

/* A launch record of an async copy or memset (GT_FAM_ENQUEUE): GPU work linked to its call like
 * a launch's, never counted as a kernel launch. */
static inline int ga_api_enqueues(unsigned api)
{
    return api < GT_API_MAX && gt_api_table[api].family == GT_FAM_ENQUEUE;
}

/* Bytes of an enqueue record (grid[0..1]). */
static inline uint64_t ga_enqueue_bytes(const struct gt_rec_launch *l)
{
    return (uint64_t)l->grid[0] | (uint64_t)l->grid[1] << 32;
}

/* The API's name, or "api#<id>" for ids this reader does not know (buf holds it). */
const char *ga_api_label(unsigned api, char buf[16]);

#endif
