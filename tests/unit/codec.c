/* Chunk codecs (common/codec.c): the packer keeps every record and falls back to storing a chunk
 * as it is whenever compressing does not pay or fails; a compressed chunk decodes to exactly its
 * records. Also a tool for tests/cases/codec.sh:
 *   unit_codec repack IN OUT LEVEL   rewrite a trace, every chunk re-encoded (LEVEL 0: plain) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "repack.h"

/* n launch-sized records (80 bytes) as the shim writes them in a loop: times 150 ns apart, one
 * function, one stream, correlation ids counting up. */
static unsigned char *launches(uint32_t n)
{
    unsigned char *p = calloc(n, 80);
    for (uint32_t i = 0; i < n; i++) {
        struct gt_rec_header h = {GT_REC_LAUNCH, 1, 80};
        uint64_t w[9] = {1000000 + 150ull * i,
                         1000000 + 150ull * i + 90,
                         0x7f00dead0000,
                         0x5000,
                         (1ull << 40) | (i + 1),
                         0x100000001,
                         0x100000080,
                         1,
                         0};
        memcpy(p + 80 * i, &h, 8);
        memcpy(p + 80 * i + 8, w, sizeof(w));
    }
    return p;
}

/* The packed stream on its own (gt_pack_encode/gt_pack_decode): malformed streams are refused,
 * any run of records (and bytes past the last whole record) comes back exactly. */
static void pack_cases(void)
{
    unsigned char *raw = launches(3), out[512], back[512];
    uint32_t len = gt_pack_encode(raw, 240, out);
    CHECK("pack: 3 launches decode back",
          gt_pack_decode(out, len, back, 240) == 0 && !memcmp(back, raw, 240));
    /* A change in a word's high half: 2 bytes (shift 4, one byte of zigzag), not 8. */
    uint64_t hi[4] = {0, 3ull << 32, (uint64_t)-3 << 32, 1ull << 63};
    unsigned char rec[5 * 40];
    for (int i = 0; i < 5; i++) {
        struct gt_rec_header h = {GT_REC_FREE, 0, 40};
        uint64_t w[4] = {0, 0, 0, i < 4 ? hi[i] : 0};
        memcpy(rec + 40 * i, &h, 8);
        memcpy(rec + 40 * i + 8, w, 32);
    }
    uint32_t hl = gt_pack_encode(rec, sizeof(rec), out);
    /* 25 words, 7 control bytes. The first header as is: 1 + 5 (zigzag 0x5000000016). Then
     * only the last word changes: +3 << 32: shift 4, zigzag(3) in 1 byte: 2; -6 << 32: shift 4,
     * zigzag(-6) = 11: 2; 2^63 + (3 << 32): shift 4, zigzag(-2^31 + 3) = 0xfffffff9: 1 + 4;
     * -2^63: shift 7, zigzag(-128) = 255: 2. 7 + 6 + 2 + 2 + 5 + 2 = 24 bytes. */
    CHECK("pack: high-half changes decode back",
          gt_pack_decode(out, hl, back, sizeof(rec)) == 0 && !memcmp(back, rec, sizeof(rec)));
    CHECK_U64("pack: high-half changes: 24 bytes", hl, 24);
    CHECK_U64("pack: the header's control byte, then its wide byte (shift 0, 5 bytes)",
              (uint64_t)out[0] << 8 | out[1], 0x0305);
    out[1] = 0x09; /* the first wide value claims 9 bytes */
    CHECK("pack: a wide value of more than 8 bytes: refused",
          gt_pack_decode(out, hl, back, sizeof(rec)) != 0);
    out[1] = 0x45; /* shift 4 + 5 bytes: past 8 */
    CHECK("pack: a wide value past 8 bytes with its shift: refused",
          gt_pack_decode(out, hl, back, sizeof(rec)) != 0);
    out[1] = 0x00;
    CHECK("pack: a wide value of 0 bytes: refused",
          gt_pack_decode(out, hl, back, sizeof(rec)) != 0);
    CHECK("pack: cut by one byte: refused", gt_pack_decode(out, len - 1, back, 240) != 0);
    CHECK("pack: one byte too many: refused", gt_pack_decode(out, len + 1, back, 240) != 0);
    for (uint32_t k = 1; k <= 3; k++) {
        char what[64];
        snprintf(what, sizeof(what), "pack: %u words fewer decoded than coded: refused", k);
        CHECK(what, gt_pack_decode(out, len, back, 240 - 8 * k) != 0);
        snprintf(what, sizeof(what), "pack: %u words more decoded than coded: refused", k);
        CHECK(what, gt_pack_decode(out, len, back, 240 + 8 * k) != 0);
    }
    CHECK("pack: size not a multiple of 8: refused", gt_pack_decode(out, len, back, 236) != 0);
    /* 30 words: the last control byte codes two words, both 0 (the last record's last words
     * repeat), so it is the stream's last byte; the codes of the two words past the end are 3. */
    CHECK_U64("pack: the last control byte: two zero words, then two codes 3", out[len - 1], 0xf0);
    out[len - 1] = 0x70;
    CHECK("pack: a code past the last word: refused", gt_pack_decode(out, len, back, 240) != 0);
    free(raw);

    /* Random runs of records of a few types and sizes (same-type runs, slowly changing words,
     * types >= 256 that the delta skips), some ending in bytes that are not a record. */
    static unsigned char in[4096], enc[4096 + 4096 / 32 + 16], dec[4096];
    int bad = 0;
    srand(7);
    for (int iter = 0; iter < 2000; iter++) {
        uint32_t n = 0;
        while (n < 3000) {
            /* half of them at the sizes gt_pack_encode unrolls (launch, allocation, free and
             * GPU kernel, GPU API, external correlation) */
            static const uint32_t hot[] = {80, 72, 56, 40, 24};
            uint16_t type = (uint16_t)(rand() % 4 == 0 ? 300 : 1 + rand() % 3);
            uint32_t size = rand() % 2 ? hot[rand() % 5] : 8u * (1 + (uint32_t)rand() % 10);
            struct gt_rec_header h = {type, 0, size};
            memcpy(in + n, &h, 8);
            for (uint32_t w = 8; w < size; w += 8) {
                uint64_t v = rand() % 3 ? (uint64_t)(rand() % 5) << (rand() % 60)
                                        : (uint64_t)rand() * 0x9E3779B97F4A7C15ull;
                memcpy(in + n + w, &v, 8);
            }
            n += size;
        }
        if (iter % 3 == 0) { /* a tail that is not a record: size 0 or past the end */
            struct gt_rec_header h = {1, 0, iter % 2 ? 0u : 4096u};
            memcpy(in + n, &h, 8);
            memset(in + n + 8, 0xa5, 16);
            n += 24;
        }
        uint32_t l = gt_pack_encode(in, n, enc);
        if (l > gt_pack_bound(n) - 8 || gt_pack_decode(enc, l, dec, n) != 0 || memcmp(dec, in, n))
            bad++;
    }
    CHECK_U64("pack: 2000 random runs of records decode back exactly", (uint64_t)bad, 0);
    /* Garbage streams: refused or decoded, never read or written out of bounds (sanitizers). */
    for (int iter = 0; iter < 2000; iter++) {
        uint32_t l = (uint32_t)rand() % 300, n = 8u * ((uint32_t)rand() % 100);
        for (uint32_t i = 0; i < l; i++)
            enc[i] = (unsigned char)rand();
        (void)gt_pack_decode(enc, l, dec, n);
    }
}

/* The decoder as it was before its rewrite for speed (byte-by-byte reads, one word at a time),
 * kept as the reference gt_pack_decode must agree with on every stream, valid or not. */
static uint32_t ref_rec_size(const unsigned char *p, uint32_t pos, uint32_t n, uint16_t *type)
{
    struct gt_rec_header h;
    if (n - pos < sizeof(h)) return 0;
    memcpy(&h, p + pos, sizeof(h));
    if (h.size < 8 || (h.size & 7) || h.size > n - pos) return 0;
    *type = h.type;
    return h.size;
}

static int ref_unpack_wide(const unsigned char *s, uint32_t len, uint32_t *at, uint64_t *v)
{
    if (*at >= len) return -1;
    unsigned shift = s[*at] >> 4, l = s[*at] & 15;
    uint64_t z = 0;
    if (l == 0 || shift + l > 8 || len - *at - 1 < l) return -1;
    for (unsigned b = 0; b < l; b++)
        z |= (uint64_t)s[*at + 1 + b] << (8 * b);
    *at += 1 + l;
    *v = ((z >> 1) ^ (0 - (z & 1))) << (8 * shift);
    return 0;
}

static int ref_pack_decode(const unsigned char *s, uint32_t len, unsigned char *out, uint32_t n)
{
    uint32_t last[GT_CODEC_DELTA_TYPES], last_size[GT_CODEC_DELTA_TYPES];
    uint32_t words = n / 8, at = 0, next_hdr = 0, rec = 0, prev = 0;
    uint64_t recent[3] = {0, 0, 0};
    unsigned ctrl = 0, k = 0;
    int walking = 1, delta = 0;
    if (n & 7) return -1;
    memset(last_size, 0, sizeof(last_size));
    for (uint32_t i = 0; i < words; i++, k = (k + 1) & 3) {
        if (k == 0) {
            if (at >= len) return -1;
            ctrl = s[at++];
        }
        unsigned code = (ctrl >> (2 * k)) & 3;
        uint64_t v = 0;
        if (walking && i == next_hdr) {
            uint16_t type = 0;
            uint32_t size;
            if (code == 3) {
                if (ref_unpack_wide(s, len, &at, &v) != 0) return -1;
                v ^= recent[0];
            } else {
                v = recent[code];
            }
            if (code != 0) {
                if (code >= 2) recent[2] = recent[1];
                recent[1] = recent[0];
                recent[0] = v;
            }
            memcpy(out + 8 * (size_t)i, &v, 8);
            if ((size = ref_rec_size(out, 8 * i, n, &type)) == 0) {
                walking = 0;
                continue;
            }
            rec = i, next_hdr = i + size / 8;
            delta = type < GT_CODEC_DELTA_TYPES && last_size[type] == size;
            if (delta) prev = last[type] / 8;
            if (type < GT_CODEC_DELTA_TYPES) last[type] = 8 * i, last_size[type] = size;
            continue;
        }
        if (code == 3) {
            if (ref_unpack_wide(s, len, &at, &v) != 0) return -1;
        } else {
            uint64_t z = 0;
            if (len - at < code) return -1;
            for (unsigned b = 0; b < code; b++)
                z |= (uint64_t)s[at + b] << (8 * b);
            at += code;
            v = (z >> 1) ^ (0 - (z & 1));
        }
        if (walking && delta) {
            uint64_t b;
            memcpy(&b, out + 8 * (size_t)(prev + (i - rec)), 8);
            v += b;
        }
        memcpy(out + 8 * (size_t)i, &v, 8);
    }
    if (k != 0 && (ctrl >> (2 * k)) != (0xffu >> (2 * k))) return -1;
    if (at != len) return -1;
    return 0;
}

/* gt_pack_decode against the reference on one stream: both refuse it, or both decode it to the
 * same bytes. The stream is copied to a buffer of exactly its length (malloc), so a read past
 * its end is caught by AddressSanitizer; so is a write past the n bytes of output. */
static int agree(const unsigned char *s, uint32_t len, uint32_t n)
{
    unsigned char *in = malloc(len ? len : 1), *a = malloc(n ? n : 1), *b = malloc(n ? n : 1);
    memcpy(in, s, len);
    memset(a, 0x5a, n ? n : 1);
    memset(b, 0x5a, n ? n : 1);
    int ra = gt_pack_decode(in, len, a, n), rb = ref_pack_decode(in, len, b, n);
    int ok = ra == rb && (ra != 0 || !memcmp(a, b, n));
    free(in), free(a), free(b);
    return ok;
}

/* Random and adversarial streams: every stream the encoder writes decodes back to its input; cut,
 * extended, bit-flipped, byte-replaced and random streams, decoded to the right size and to
 * others, give the reference's answer (refused, or the same bytes). */
static void pack_vs_reference(void)
{
    enum { MAXN = 8192 };
    static unsigned char in[MAXN + 64], enc[MAXN + MAXN / 4 + 64], dec[MAXN],
        mut[MAXN + MAXN / 4 + 64];
    int bad_round = 0, bad_agree = 0, checked = 0, valid_mut = 0;
    srand(11);
    for (int iter = 0; iter < 3000; iter++) {
        uint32_t n = 0, target = 8u * ((uint32_t)rand() % (MAXN / 8 - 16));
        int style = iter % 4;
        while (n < target) {
            uint32_t size = 8u * (1 + (uint32_t)rand() % (style == 3 ? 40 : 10));
            if (n + size > MAXN - 32) break;
            uint16_t type = (uint16_t)(rand() % 5 == 0 ? 256 + rand() % 3 : rand() % 4);
            struct gt_rec_header h = {type, (uint16_t)(rand() % 3), size};
            memcpy(in + n, &h, 8);
            for (uint32_t w = 8; w < size; w += 8) {
                uint64_t v;
                switch (style == 0 ? rand() % 6 : rand() % 3) {
                case 0:
                    v = (uint64_t)(rand() % 300);
                    break;
                case 1:
                    v = (uint64_t)(rand() % 70000) << (8 * (rand() % 8));
                    break;
                case 2:
                    v = 0 - (uint64_t)(rand() % 70000);
                    break;
                case 3:
                    v = (uint64_t)rand() * 0x9E3779B97F4A7C15ull;
                    break;
                case 4:
                    v = (uint64_t)1 << 63;
                    break;
                default:
                    v = ~0ull;
                    break;
                }
                memcpy(in + n + w, &v, 8);
            }
            n += size;
        }
        if (iter % 5 == 0) { /* a header the walk stops at, then words that are not records */
            struct gt_rec_header h = {(uint16_t)(rand() % 3), 0, (uint32_t)rand() % 3 * 4};
            memcpy(in + n, &h, 8);
            n += 8;
            for (int w = rand() % 6; w > 0; w--, n += 8) {
                uint64_t v = (uint64_t)rand() << (rand() % 40);
                memcpy(in + n, &v, 8);
            }
        }
        uint32_t l = gt_pack_encode(in, n, enc);
        if (gt_pack_decode(enc, l, dec, n) != 0 || memcmp(dec, in, n)) bad_round++;
        bad_agree += !agree(enc, l, n);
        checked++;
        /* Cut and extended streams, sizes off by a few words. */
        for (uint32_t cut = 1; cut <= 20 && cut <= l; cut++, checked++)
            bad_agree += !agree(enc, l - cut, n);
        memset(enc + l, 0, 16);
        for (uint32_t more = 1; more <= 16; more++, checked++)
            bad_agree += !agree(enc, l + more, n);
        for (int d = -4; d <= 4; d++, checked++)
            if (d != 0 && (int64_t)n + 8 * d >= 0) bad_agree += !agree(enc, l, n + 8 * d);
        /* Flipped bits and replaced bytes anywhere (control bytes, E bytes, values). */
        for (int m = 0; m < 12 && l > 0; m++, checked++) {
            memcpy(mut, enc, l);
            uint32_t at = (uint32_t)rand() % l;
            if (m % 3 == 0)
                mut[at] ^= (unsigned char)(1u << (rand() % 8));
            else if (m % 3 == 1)
                mut[at] = (unsigned char)(m % 2 ? 0xff : rand());
            else
                mut[at] = (unsigned char)(rand() % 2 ? 0x00 : 0x18 + rand() % 8);
            bad_agree += !agree(mut, l, n);
            valid_mut += ref_pack_decode(mut, l, dec, n) == 0;
        }
    }
    /* Pure noise, and streams of only one control byte value, at every short length. */
    for (int iter = 0; iter < 3000; iter++, checked++) {
        uint32_t l = (uint32_t)rand() % 200, n = 8u * ((uint32_t)rand() % 120);
        for (uint32_t i = 0; i < l; i++)
            mut[i] = (unsigned char)(iter % 2 ? rand() : rand() % 4 == 0 ? 0xff : rand() % 3);
        bad_agree += !agree(mut, l, n);
    }
    for (uint32_t l = 0; l < 40; l++)
        for (uint32_t n = 0; n <= 160; n += 8, checked++) {
            memset(mut, l % 2 ? 0xff : 0x00, l);
            bad_agree += !agree(mut, l, n);
        }
    printf("     %d streams compared with the reference (%d mutated ones still valid)\n", checked,
           valid_mut);
    CHECK_U64("pack: 3000 encoded random chunks decode back exactly", (uint64_t)bad_round, 0);
    CHECK_U64("pack: the decoder agrees with the reference on every stream", (uint64_t)bad_agree,
              0);
    CHECK("pack: some mutated streams are valid (so decoded bytes were compared too)",
          valid_mut > 0);
}

static int repack_file(const char *in, const char *out, int level)
{
    FILE *f = fopen(in, "rb");
    if (!f) return perror(in), 2;
    size_t cap = 1 << 20, n = 0, k;
    unsigned char *b = malloc(cap);
    while (b && (k = fread(b + n, 1, cap - n, f)) > 0)
        if ((n += k) == cap) b = realloc(b, cap *= 2);
    fclose(f);
    if (!b) return 2;
    struct repack_out o;
    repack_trace(b, n, &o, level, GT_CODEC_ZSTD_DELTA, 0);
    f = fopen(out, "wb");
    if (!f || fwrite(o.buf, 1, o.len, f) != o.len || fclose(f) != 0) return perror(out), 2;
    printf("%u chunks compressed, %u stored as they are, %zu -> %zu bytes\n", o.packed, o.plain, n,
           o.len);
    free(b);
    free(o.buf);
    return 0;
}

/* A plain encoder written from the stream's description (trace_format.h), one item at a time, no
 * shortcuts: gt_pack_encode, with its unrolled path for launch-sized records, must write exactly
 * these bytes. */
struct ref_enc {
    unsigned char *p, *cp;
    unsigned ctrl, k;
};

static void ref_put(struct ref_enc *e, unsigned code, const unsigned char *bytes, unsigned len)
{
    if (e->k == 0) e->cp = e->p++;
    e->ctrl |= code << (2 * e->k);
    memcpy(e->p, bytes, len);
    e->p += len;
    if (++e->k == 4) *e->cp = (unsigned char)e->ctrl, e->ctrl = 0, e->k = 0;
}

static uint64_t ref_zz(uint64_t v)
{
    return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

static void ref_wide(struct ref_enc *e, uint64_t v) /* code 3: E byte, then the bytes */
{
    unsigned shift = 0;
    while (shift < 7 && !(v >> (8 * shift) & 0xff))
        shift++;
    uint64_t z = ref_zz((uint64_t)((int64_t)v >> (8 * shift)));
    unsigned len = 0;
    while (len < 8 && z >> (8 * len))
        len++;
    unsigned char b[9];
    b[0] = (unsigned char)(shift << 4 | len);
    for (unsigned i = 0; i < len; i++)
        b[1 + i] = (unsigned char)(z >> (8 * i));
    ref_put(e, 3, b, 1 + len);
}

static void ref_word(struct ref_enc *e, uint64_t v)
{
    uint64_t z = ref_zz(v);
    unsigned char b[2] = {(unsigned char)z, (unsigned char)(z >> 8)};
    if (z == 0)
        ref_put(e, 0, b, 0);
    else if (z <= 0xff)
        ref_put(e, 1, b, 1);
    else if (z <= 0xffff)
        ref_put(e, 2, b, 2);
    else
        ref_wide(e, v);
}

static uint32_t ref_encode(const unsigned char *in, uint32_t n, unsigned char *out)
{
    static uint32_t last[GT_CODEC_DELTA_TYPES], last_size[GT_CODEC_DELTA_TYPES];
    uint64_t recent[3] = {0, 0, 0}, h, w, b;
    struct ref_enc e = {out, out, 0, 0};
    uint32_t pos = 0;
    memset(last_size, 0, sizeof(last_size));
    for (;;) {
        if (n - pos < 8) break;
        struct gt_rec_header rh;
        memcpy(&rh, in + pos, 8);
        int rec = rh.size >= 8 && !(rh.size & 7) && rh.size <= n - pos;
        memcpy(&h, in + pos, 8);
        unsigned c = h == recent[0] ? 0 : h == recent[1] ? 1 : h == recent[2] ? 2 : 3;
        if (c == 3)
            ref_wide(&e, h ^ recent[0]);
        else
            ref_put(&e, c, NULL, 0);
        if (c >= 2) recent[2] = recent[1];
        if (c >= 1) recent[1] = recent[0], recent[0] = h;
        if (!rec) { /* the header the walk stops at; the rest are plain words */
            for (pos += 8; pos + 8 <= n; pos += 8)
                memcpy(&w, in + pos, 8), ref_word(&e, w);
            break;
        }
        int delta = rh.type < GT_CODEC_DELTA_TYPES && last_size[rh.type] == rh.size;
        for (uint32_t i = 8; i < rh.size; i += 8) {
            memcpy(&w, in + pos + i, 8);
            b = 0;
            if (delta) memcpy(&b, in + last[rh.type] + i, 8);
            ref_word(&e, w - b);
        }
        if (rh.type < GT_CODEC_DELTA_TYPES) last[rh.type] = pos, last_size[rh.type] = rh.size;
        pos += rh.size;
    }
    if (e.k != 0) *e.cp = (unsigned char)(e.ctrl | (0xffu << (2 * e.k)));
    return (uint32_t)(e.p - out);
}

/* Launch-sized records (the unrolled path) at every place in a control group, between records of
 * other sizes and types, with small, negative and wide deltas: the bytes of the plain encoder. */
static void test_pack_vs_reference(void)
{
    enum { CAP = 8192 };
    unsigned char *in = calloc(1, CAP), *enc = calloc(1, gt_pack_bound(CAP) + 64);
    unsigned char *ref = calloc(1, gt_pack_bound(CAP) + 64);
    int bad = 0, launches80 = 0;
    srand(11);
    for (int iter = 0; iter < 3000; iter++) {
        uint32_t n = 0;
        while (n < CAP - 200) {
            uint32_t size = rand() % 3 ? 80 : 8u * (1 + (uint32_t)rand() % 11);
            uint16_t type = (uint16_t)(rand() % 5 == 0 ? 300 : 1 + rand() % 3);
            struct gt_rec_header h = {type, (uint16_t)(rand() % 2), size};
            memcpy(in + n, &h, 8);
            for (uint32_t w = 8; w < size; w += 8) {
                uint64_t v, r = (uint64_t)rand();
                switch (rand() % 6) {
                case 0:
                    v = 0;
                    break;
                case 1:
                    v = r % 300;
                    break;
                case 2:
                    v = 0 - r % 70000;
                    break;
                case 3:
                    v = r * 0x9E3779B97F4A7C15ull;
                    break;
                case 4:
                    v = (r % 5) << (rand() % 60);
                    break;
                default:
                    v = 1000000 + 150ull * (n / 80);
                    break;
                }
                memcpy(in + n + w, &v, 8);
            }
            launches80 += size == 80;
            n += size;
        }
        if (iter % 4 == 0) { /* a tail that is not a record */
            struct gt_rec_header h = {1, 0, 4096u};
            memcpy(in + n, &h, 8);
            memset(in + n + 8, 0x5a, 16);
            n += 24;
        }
        uint32_t l = gt_pack_encode(in, n, enc), lr = ref_encode(in, n, ref);
        if (l != lr || memcmp(enc, ref, l)) bad++;
    }
    CHECK("pack vs plain encoder: launch-sized records in the runs", launches80 > 100000);
    CHECK_U64("pack vs plain encoder: 3000 random runs, the same bytes", (uint64_t)bad, 0);
    free(in), free(enc), free(ref);
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "repack"))
        return repack_file(argv[2], argv[3], atoi(argv[4]));
    if (argc != 1) return fprintf(stderr, "usage: %s [repack IN OUT LEVEL]\n", argv[0]), 2;

    const uint32_t n = 3276; /* a 256 KiB buffer of launches */
    unsigned char *raw = launches(n);
    struct gt_packer pk;
    struct gt_unpacker up = {0};
    struct gt_chunk_header ch;
    const unsigned char *dec;
    uint32_t dec_n = 0;
    const char *why = "";
    static const uint16_t codecs[] = {GT_CODEC_ZSTD, GT_CODEC_ZSTD_DELTA, GT_CODEC_PACK_DELTA};
    uint32_t stored[3];
    for (int c = 0; c < 3; c++) {
        char what[96];
        gt_packer_init(&pk, 1);
        pk.codec = codecs[c];
        const void *out = gt_chunk_pack(&pk, &ch, GT_CHUNK_HOST, 77, 5, raw, n * 80);
        stored[c] = ch.payload_size;
        snprintf(what, sizeof(what), "codec %u: 3276 launches compressed", codecs[c]);
        CHECK(what, ch.codec == codecs[c] && out != raw && ch.payload_size % 8 == 0 &&
                        ch.kind == GT_CHUNK_HOST && ch.tid == 77 && ch.seq == 5);
        snprintf(what, sizeof(what), "codec %u: header check, CRC over the stored bytes",
                 codecs[c]);
        CHECK(what, gt_chunk_header_check(&ch, &why) == 0 && gt_chunk_crc(&ch, out) == ch.crc32);
        snprintf(what, sizeof(what), "codec %u: decodes to the same 262080 bytes", codecs[c]);
        CHECK(what, gt_chunk_unpack(&up, &ch, out, &dec, &dec_n, &why) == 0 && dec_n == n * 80 &&
                        !memcmp(dec, raw, dec_n));
        gt_packer_free(&pk);
    }
    /* Each launch differs from the previous one by 150 ns twice and 1 in the correlation id:
     * after the delta transform, 9 of the 10 words of every record repeat exactly. */
    printf("     stored: zstd %u B, zstd+delta %u B for %u B of records\n", stored[0], stored[1],
           n * 80);
    CHECK("delta: at least 10x smaller than zstd alone on regular launches",
          stored[1] * 10 <= stored[0]);
    CHECK("delta: under 1 byte per launch on regular launches", stored[1] < n);
    /* Packed: the first record's words as they are, each wide one as a byte (its zero low
     * bytes, its length) and the zigzag of what is left: header 1 + 5, the times 1 + 3 each,
     * the function 0x7f00dead0000 1 + 4 (two zero low bytes), the stream 0x5000 in 2 (code 2),
     * the correlation id 1 + 6, the grid words 1 + 5 each, the 1 in 1: 41 bytes. Each later
     * record codes its zero header, its two 150 ns steps (zigzag 300: 2 bytes each) and its
     * correlation id's +1 (zigzag 2: 1 byte) in 5 bytes; plus one control byte per four of the
     * 32760 words: 41 + 5 x 3275 + 8190 = 24606 bytes, padded to 24608, after an 8-byte head. */
    CHECK_U64("packed: 41 + 5 x 3275 + 8190 bytes of stream, padded to 8, after the head",
              stored[2], 8 + 24608);
    pack_cases();
    pack_vs_reference();

    gt_packer_init(&pk, 1);
    const void *out = gt_chunk_pack(&pk, &ch, GT_CHUNK_HOST, 1, 0, raw, 248);
    CHECK("a chunk under 256 bytes is stored as it is", out == raw && ch.codec == GT_CODEC_NONE &&
                                                            ch.payload_size == 248 &&
                                                            gt_chunk_crc(&ch, raw) == ch.crc32);
    unsigned char *noise = malloc(65536);
    srand(3);
    for (int i = 0; i < 65536; i++)
        noise[i] = (unsigned char)rand();
    out = gt_chunk_pack(&pk, &ch, GT_CHUNK_GPU, 0, 9, noise, 65536);
    CHECK("incompressible bytes are stored as they are",
          out == noise && ch.codec == GT_CODEC_NONE && ch.payload_size == 65536 &&
              ch.kind == GT_CHUNK_GPU && gt_chunk_crc(&ch, noise) == ch.crc32);
    CHECK_U64("packer counts: stored as they are", pk.stored_raw, 2);
    gt_packer_free(&pk);
    gt_packer_init(&pk, 0);
    out = gt_chunk_pack(&pk, &ch, GT_CHUNK_HOST, 1, 0, raw, n * 80);
    CHECK("level 0 (GPUTRACE_COMPRESS=0): stored as it is",
          out == raw && ch.codec == GT_CODEC_NONE && ch.payload_size == n * 80);
    gt_packer_free(&pk);
    gt_unpacker_free(&up);
    free(noise);
    free(raw);
    test_pack_vs_reference();
    return check_done();
}
