/* Encoding/decoding helpers shared by the shim (writer) and the analyzer (reader). */
#ifndef GT_COMMON_FORMAT_H
#define GT_COMMON_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gputrace/trace_format.h"

/* Fill a file header for the running process, sealed (gt_header_seal). */
void gt_header_init(struct gt_file_header *h, uint32_t pid, uint32_t ppid, uint64_t realtime_ns,
                    uint64_t monotonic_ns);

/* Sets header_crc32 (version >= GT_FORMAT_HEADER_CRC); call it after changing any field of a
 * header gt_header_init filled. */
void gt_header_seal(struct gt_file_header *h);

/* The value of header_crc32 for the header_size bytes at buf (a longer header of a newer
 * writer included). */
uint32_t gt_header_crc(const void *buf, uint32_t header_size);

/* Checks a file header read from the first `n` bytes of a file: magic, byte order, size, the
 * checksum (version >= GT_FORMAT_HEADER_CRC), the version a reader needs, and fields no writer
 * produces. Returns 0 if readable, else a negative code (-2: truncated, -3: byte order, -4:
 * newer format, -6: checksum, -7: a field out of range, others: not a trace or corrupt) and a
 * static message in *why. */
int gt_header_check(const void *buf, size_t n, const char **why);

/* Fill a chunk header for `payload` of `size` bytes. */
void gt_chunk_header_init(struct gt_chunk_header *c, uint16_t kind, uint32_t tid, uint32_t seq,
                          const void *payload, uint32_t size);

/* Checks a chunk header (not the payload). 0 if plausible, else -1 with *why set. */
int gt_chunk_header_check(const struct gt_chunk_header *c, const char **why);

/* Checksum stored in a chunk header: zlib crc32 over the header (without the crc32 field) and
 * the payload. */
uint32_t gt_chunk_crc(const struct gt_chunk_header *c, const void *payload);

/* ---- chunk codecs (codec.c) ---------------------------------------------------------------- */

/* Writer state for compressed chunks: a zstd context and two buffers, grown to the largest chunk
 * packed (bounded by GT_MAX_CHUNK_PAYLOAD). Not thread-safe: one user at a time. */
struct gt_packer {
    void *cctx;
    unsigned char *tmp, *out;
    size_t tmp_cap, out_cap;
    int level;      /* zstd level; 0: never compress */
    uint16_t codec; /* GT_CODEC_ZSTD_DELTA (default), GT_CODEC_ZSTD or GT_CODEC_PACK_DELTA */
    uint32_t min_size; /* smaller chunks stay as they are (default 256) */
    int force;         /* tests: keep the compressed form even when it is not smaller */
    uint64_t packed, stored_raw, failed; /* chunks compressed, chunks kept as they were, failures */
};

/* level 0: every chunk stays GT_CODEC_NONE. */
void gt_packer_init(struct gt_packer *pk, int level);
void gt_packer_free(struct gt_packer *pk);

/* Fills *ch (kind, tid, seq, codec, payload_size, crc32) for `size` bytes of whole records at
 * `raw`, compressed when that makes it smaller; any failure (memory, zstd) keeps the records as
 * they are (GT_CODEC_NONE), never loses them. Returns what to write after the header: `raw` or
 * the packer's buffer (valid until the next call), ch->payload_size bytes. */
const void *gt_chunk_pack(struct gt_packer *pk, struct gt_chunk_header *ch, uint16_t kind,
                          uint32_t tid, uint32_t seq, const void *raw, uint32_t size);

/* Reader state: a zstd context and the decoded payload, at most GT_MAX_CHUNK_PAYLOAD bytes. */
struct gt_unpacker {
    void *dctx;
    unsigned char *out;
    size_t out_cap;
};

/* Decodes the payload of a chunk whose header passed gt_chunk_header_check and whose crc32
 * matched. Sets *raw and *raw_size to the records (the payload itself for GT_CODEC_NONE).
 * Returns 0, or -1 with a static message in *why (a corrupt or lying compressed payload). */
int gt_chunk_unpack(struct gt_unpacker *u, const struct gt_chunk_header *ch, const void *payload,
                    const unsigned char **raw, uint32_t *raw_size, const char **why);
void gt_unpacker_free(struct gt_unpacker *u);

/* The delta transform of GT_CODEC_ZSTD_DELTA (trace_format.h): encode from `in` to `out` (n
 * bytes each, not overlapping); decode in place. */
void gt_delta_encode(const unsigned char *in, unsigned char *out, uint32_t n);
void gt_delta_decode(unsigned char *p, uint32_t n);

/* GT_CODEC_PACK_DELTA (trace_format.h): encode n bytes of records (n a multiple of 8) into
 * `out`, which holds gt_pack_bound(n) bytes; returns the stream's length. Decode a stream of
 * `len` bytes into exactly n bytes: 0, or -1 if the stream is malformed or does not code
 * exactly n / 8 words. */
uint32_t gt_pack_bound(uint32_t n);
uint32_t gt_pack_encode(const unsigned char *in, uint32_t n, unsigned char *out);
int gt_pack_decode(const unsigned char *s, uint32_t len, unsigned char *out, uint32_t n);

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
