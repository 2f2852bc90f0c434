/* The chunk checksum (common/format.c) is zlib's CRC-32 whichever implementation computes it
 * (ISA-L's crc32_gzip_refl where the build found libisal-dev, else zlib): the check value of
 * the CRC-32 catalogue, then random buffers of every alignment and many lengths against zlib's
 * own crc32, then gt_chunk_crc against zlib over the header fields and the payload. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "check.h"
#include "format.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint32_t zlib_crc(uint32_t crc, const unsigned char *p, size_t n)
{
    return (uint32_t)crc32(crc, p, (uInt)n);
}

int main(void)
{
    enum { MAX = 1 << 20 };
    unsigned char *buf = malloc(MAX + 64);
#ifdef GT_HAVE_ISAL
    printf("# implementation: ISA-L crc32_gzip_refl\n");
#else
    printf("# implementation: zlib crc32\n");
#endif
    CHECK_U64("CRC-32 check value of \"123456789\"", gt_checksum("123456789", 9), 0xCBF43926u);
    CHECK_U64("empty buffer", gt_checksum(buf, 0), 0);
    for (size_t i = 0; i < MAX + 64; i++)
        buf[i] = (unsigned char)next();
    int same = 1;
    unsigned cases = 0;
    for (size_t len = 0; len < 600; len++) /* every short length, at every alignment 0..15 */
        for (size_t off = 0; off < 16; off++, cases++)
            same &= gt_checksum(buf + off, len) == zlib_crc(0, buf + off, len);
    for (int k = 0; k < 400; k++, cases++) { /* long ones up to 1 MiB */
        size_t off = next() % 64, len = next() % MAX;
        same &= gt_checksum(buf + off, len) == zlib_crc(0, buf + off, len);
    }
    CHECK_U64("random buffers: same CRC as zlib (cases)", same ? cases : 0, 600 * 16 + 400);

    int chunks_same = 1;
    for (int k = 0; k < 200; k++) {
        struct gt_chunk_header ch = {.magic = GT_CHUNK_MAGIC,
                                     .kind = (uint16_t)(next() % 4),
                                     .codec = 0,
                                     .payload_size = (uint32_t)(next() % (MAX / 8)) * 8,
                                     .crc32 = 0xdeadbeef,
                                     .tid = (uint32_t)next(),
                                     .seq = (uint32_t)next()};
        const unsigned char *h = (const unsigned char *)&ch;
        uint32_t want = zlib_crc(0, h, offsetof(struct gt_chunk_header, crc32));
        want = zlib_crc(want, h + offsetof(struct gt_chunk_header, tid),
                        sizeof(ch) - offsetof(struct gt_chunk_header, tid));
        want = zlib_crc(want, buf + 8, ch.payload_size);
        chunks_same &= gt_chunk_crc(&ch, buf + 8) == want;
    }
    CHECK("chunk CRC: header fields and payload, as zlib computes it", chunks_same);
    free(buf);
    return check_done();
}
