/* Encoding/decoding helpers shared by the shim (writer) and the analyzer (reader). */
#ifndef GT_COMMON_FORMAT_H
#define GT_COMMON_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gputrace/trace_format.h"

/* Fill a file header for the running process. */
void gt_header_init(struct gt_file_header *h, uint32_t pid, uint32_t ppid, uint64_t realtime_ns,
                    uint64_t monotonic_ns);

/* Checks a file header read from the first `n` bytes of a file. Returns 0 if readable, else a
 * negative code and a static message in *why. */
int gt_header_check(const void *buf, size_t n, const char **why);

/* Fill a chunk header for `payload` of `size` bytes. */
void gt_chunk_header_init(struct gt_chunk_header *c, uint16_t kind, uint32_t tid, uint32_t seq,
                          const void *payload, uint32_t size);

/* Checks a chunk header (not the payload). 0 if plausible, else -1 with *why set. */
int gt_chunk_header_check(const struct gt_chunk_header *c, const char **why);

/* Checksum stored in a chunk header: zlib crc32 over the header (without the crc32 field) and
 * the payload. */
uint32_t gt_chunk_crc(const struct gt_chunk_header *c, const void *payload);

/* Plain zlib crc32 of a buffer. */
uint32_t gt_checksum(const void *p, size_t n);

/* Copies a record of `avail` bytes into a struct of `want` bytes: fields missing from an older,
 * shorter record read as zero, bytes past `want` are ignored. */
static inline void gt_rec_load(void *dst, size_t want, const void *src, size_t avail)
{
    size_t n = avail < want ? avail : want;
    memcpy(dst, src, n);
    memset((unsigned char *)dst + n, 0, want - n);
}

#endif
