/* File and chunk header encoding and validation, shared by writer and reader. */
#include "format.h"

/* Linux's PID_MAX_LIMIT (2^22): no process id, in any namespace, is larger. */
#define GT_PID_MAX (1u << 22)

#include <stddef.h>
#include <string.h>
#include <zlib.h>
#ifdef GT_HAVE_ISAL
#include <isa-l/crc.h>
#endif

static uint32_t crc_update(uint32_t crc, const void *p, size_t n);

void gt_header_init(struct gt_file_header *h, uint32_t pid, uint32_t ppid, uint64_t realtime_ns,
                    uint64_t monotonic_ns)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, GT_MAGIC, 8);
    h->endian = GT_ENDIAN_TAG;
    h->version = GT_FORMAT_VERSION;
    h->min_version = GT_FORMAT_MIN_READER;
    h->header_size = sizeof(*h);
    h->flags = GT_FEAT_WATERMARKS;
    h->pid = pid;
    h->ppid = ppid;
    h->start_realtime_ns = realtime_ns;
    h->start_monotonic_ns = monotonic_ns;
    h->clock_id = 1;
    gt_header_seal(h);
}

/* The checksum skips its own field and covers everything else up to header_size, so a newer
 * writer's longer header is covered too (n >= header_size bytes are at p). */
uint32_t gt_header_crc(const void *buf, uint32_t header_size)
{
    const unsigned char *p = buf;
    size_t at = offsetof(struct gt_file_header, header_crc32), after = at + 4;
    uint32_t crc = gt_checksum(p, at);
    return crc_update(crc, p + after, header_size - after);
}

void gt_header_seal(struct gt_file_header *h)
{
    h->header_crc32 = gt_header_crc(h, sizeof(*h));
}

/* Fields no writer can produce. Older headers have no checksum, so these are all that catches a
 * flipped bit in them; a damaged start time cannot be told from a real one there. */
static int header_sane(const struct gt_file_header *h, const char **why)
{
    *why = NULL;
    /* before GT_FORMAT_HEADER_CRC the checksum's field was reserved, always 0: a set one is a
     * sealed header whose version lost a bit (5 -> 1) */
    if (h->version == 0 || h->min_version == 0 || h->min_version > h->version ||
        (h->version < GT_FORMAT_HEADER_CRC && h->header_crc32 != 0))
        *why = "corrupt file header (version fields)";
    else if (h->version <= GT_FORMAT_VERSION && (h->flags & ~GT_FEAT_KNOWN))
        *why = "corrupt file header (unknown feature flags)";
    else if (h->clock_id != 1)
        *why = "corrupt file header (clock id is not 1, CLOCK_MONOTONIC)";
    else if (h->pid == 0 || h->pid > GT_PID_MAX || h->ppid > GT_PID_MAX)
        *why = "corrupt file header (process id out of range)";
    return *why ? -7 : 0;
}

int gt_header_check(const void *buf, size_t n, const char **why)
{
    struct gt_file_header h;
    if (n < 8 || memcmp(buf, GT_MAGIC, 8) != 0) {
        *why = "not a gputrace trace (bad magic)";
        return -1;
    }
    if (n < 24) {
        *why = "truncated in the file header";
        return -2;
    }
    gt_rec_load(&h, sizeof(h), buf, n);
    if (h.endian != GT_ENDIAN_TAG) {
        *why = "written on a machine of the other byte order, which this reader does not convert";
        return -3;
    }
    if (h.header_size < 56 || h.header_size > 4096 || (h.header_size & 7)) {
        *why = "corrupt file header (header size)";
        return -5;
    }
    if (n < h.header_size) {
        *why = "truncated in the file header";
        return -2;
    }
    /* Checked before the version test: every writer from GT_FORMAT_HEADER_CRC on, newer ones
     * included, seals its header, and a flipped min_version must not read as "newer". */
    if (h.version >= GT_FORMAT_HEADER_CRC && gt_header_crc(buf, h.header_size) != h.header_crc32) {
        *why = "corrupt file header (checksum mismatch)";
        return -6;
    }
    if (h.min_version > GT_FORMAT_VERSION) {
        *why = "written by a newer gputrace whose format this reader cannot read";
        return -4;
    }
    return header_sane(&h, why);
}

/* CRC-32 (zlib's: reflected 0xEDB88320, pre- and post-inverted) of n more bytes. The reader
 * checks every byte of a trace, so this is most of the decode pass: ISA-L's folding (PCLMUL)
 * version is >10 GB/s where Debian's zlib is ~3 GB/s; both give the same value (unit_format). */
static uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
#ifdef GT_HAVE_ISAL
    return n ? crc32_gzip_refl(crc, p, n) : crc;
#else
    const unsigned char *b = p;
    while (n > 0) { /* crc32 takes a uInt length */
        uInt step = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, b, step);
        b += step;
        n -= step;
    }
    return crc;
#endif
}

uint32_t gt_checksum(const void *p, size_t n)
{
    return crc_update(0, p, n);
}

/* The checksum covers the header's other fields too (magic..payload_size, then tid and seq),
 * so a flipped kind, tid or seq is caught like a flipped payload byte. */
uint32_t gt_chunk_crc(const struct gt_chunk_header *c, const void *payload)
{
    const unsigned char *h = (const unsigned char *)c;
    uint32_t crc = crc_update(0, h, offsetof(struct gt_chunk_header, crc32));
    crc = crc_update(crc, h + offsetof(struct gt_chunk_header, tid),
                     sizeof(*c) - offsetof(struct gt_chunk_header, tid));
    return crc_update(crc, payload, c->payload_size);
}

void gt_chunk_header_init(struct gt_chunk_header *c, uint16_t kind, uint32_t tid, uint32_t seq,
                          const void *payload, uint32_t size)
{
    c->magic = GT_CHUNK_MAGIC;
    c->kind = kind;
    c->codec = GT_CODEC_NONE;
    c->payload_size = size;
    c->tid = tid;
    c->seq = seq;
    c->crc32 = gt_chunk_crc(c, payload);
}

int gt_chunk_header_check(const struct gt_chunk_header *c, const char **why)
{
    if (c->magic != GT_CHUNK_MAGIC) {
        *why = "bad chunk magic";
        return -1;
    }
    if (c->codec != GT_CODEC_NONE && c->codec != GT_CODEC_ZSTD && c->codec != GT_CODEC_ZSTD_DELTA &&
        c->codec != GT_CODEC_PACK_DELTA) {
        *why = "unknown chunk codec";
        return -1;
    }
    if (c->payload_size > GT_MAX_CHUNK_PAYLOAD || (c->payload_size & 7)) {
        *why = "implausible chunk size";
        return -1;
    }
    return 0;
}
