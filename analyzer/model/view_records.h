/* The trace's records one by one, in time order, as the record printer (--dump) reads them: each
 * record's type, thread, time, fixed part (base/rec.h: the format's structs) and strings, and
 * the names of the format's codes. The reader and its event struct stay below the model: a
 * printer includes this and no input header. */
#ifndef GA_VIEW_RECORDS_H
#define GA_VIEW_RECORDS_H

#include <stdint.h>

#include "base/rec.h"
#include "model/read_notes.h"

struct ga_vrecord {
    uint16_t type; /* enum gt_rec_type */
    uint16_t sub;  /* api id, or how (resolve), ... */
    uint32_t tid;  /* the chunk's writer thread */
    uint64_t ts;   /* the first u64 after the header (ts, or ts_enter for spans); UINT64_MAX: the
                    * final watermark */
    const union ga_rec *r;
    /* the record's strings (not NUL-terminated; see input/records.h for which), valid during
     * the call that hands the record */
    const char *str[3];
    uint32_t str_len[3];
};

/* t0: the trace start (the file header's monotonic time). */
typedef void (*ga_vrecord_fn)(void *ctx, uint64_t t0, const struct ga_vrecord *rec);

/* Reads the trace at path and hands every record to fn: timed records in time order (GPU
 * records, which CUPTI delivers late, are held up to 1 s of trace time for their place; *late
 * counts those that came later and were handed at once), GPU_EXTCORR and GPU_NAME (no time) as
 * they come. 0, or -1 when the file cannot be read as a trace (notes->error says why). */
int ga_vrecords_each(const char *path, ga_vrecord_fn fn, void *ctx, struct ga_read_notes *notes,
                     uint64_t *late);

/* Names of the format's codes: record type ("ALLOC"; NULL unknown), API ("api#N" for ids this
 * reader does not know), copy kind, CUPTI status, resolver way, PyTorch stats' reason, a block's
 * state, a tensor's role. */
const char *ga_vrec_type_name(unsigned type);
const char *ga_vrec_api_name(unsigned api, char buf[16]);
const char *ga_vrec_copy_kind_name(unsigned kind);
const char *ga_vrec_cupti_status_name(unsigned status);
const char *ga_vrec_resolve_how_name(unsigned how);
const char *ga_vrec_torch_why_name(unsigned why);
const char *ga_vrec_torch_state_name(unsigned state);
const char *ga_vrec_tiers_role_name(unsigned role);

struct ga_event;
/* The record of a reader's event (tests and fuzz targets that drive the printer by hand). */
void ga_vrecord_of(struct ga_vrecord *v, const struct ga_event *ev);

#endif
