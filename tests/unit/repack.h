/* Test helper: rewrites a trace in memory with every chunk re-encoded by the shim's packer
 * (common/codec.c), chunk for chunk (same kind, tid, seq, records), so a report of the copy must
 * equal the report of the original byte for byte. Stops copying at the first chunk that does not
 * read (the rest is copied as is). For tests only: aborts when out of memory. */
#ifndef GT_TEST_REPACK_H
#define GT_TEST_REPACK_H

#include <stdlib.h>
#include <string.h>

#include "format.h"

struct repack_out {
    unsigned char *buf;
    size_t len, cap;
    unsigned packed, plain; /* chunks written compressed / as they are */
};

static inline void repack_put(struct repack_out *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2 + 4096;
        o->buf = realloc(o->buf, o->cap);
        if (!o->buf) abort();
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

/* level 0: decode everything (GT_CODEC_NONE). force: compress every chunk, even tiny ones. */
static inline void repack_trace(const unsigned char *in, size_t n, struct repack_out *o, int level,
                                uint16_t codec, int force)
{
    struct gt_file_header h;
    struct gt_packer pk;
    struct gt_unpacker up = {0};
    size_t pos;
    memset(o, 0, sizeof(*o));
    if (n < sizeof(h)) {
        repack_put(o, in, n);
        return;
    }
    memcpy(&h, in, sizeof(h));
    pos = h.header_size < n ? h.header_size : n;
    h.min_version = !level                         ? GT_FORMAT_MIN_READER
                    : codec == GT_CODEC_PACK_DELTA ? GT_FORMAT_MIN_READER_PACK
                                                   : GT_FORMAT_MIN_READER_CODEC;
    if (h.version >= GT_FORMAT_HEADER_CRC) h.header_crc32 = gt_header_crc(&h, sizeof(h));
    repack_put(o, &h, sizeof(h));
    repack_put(o, in + sizeof(h), pos - sizeof(h));
    gt_packer_init(&pk, level);
    pk.codec = codec;
    if (force) pk.min_size = 0, pk.force = 1;
    while (n - pos >= sizeof(struct gt_chunk_header)) {
        struct gt_chunk_header ch, out;
        const unsigned char *raw;
        const char *why;
        uint32_t raw_size;
        memcpy(&ch, in + pos, sizeof(ch));
        if (gt_chunk_header_check(&ch, &why) != 0 || ch.payload_size > n - pos - sizeof(ch) ||
            gt_chunk_crc(&ch, in + pos + sizeof(ch)) != ch.crc32 ||
            gt_chunk_unpack(&up, &ch, in + pos + sizeof(ch), &raw, &raw_size, &why) != 0)
            break;
        const void *payload = gt_chunk_pack(&pk, &out, ch.kind, ch.tid, ch.seq, raw, raw_size);
        if (out.codec != GT_CODEC_NONE)
            o->packed++;
        else
            o->plain++;
        repack_put(o, &out, sizeof(out));
        repack_put(o, payload, out.payload_size);
        pos += sizeof(ch) + ch.payload_size;
    }
    repack_put(o, in + pos, n - pos);
    gt_packer_free(&pk);
    gt_unpacker_free(&up);
}

#endif
