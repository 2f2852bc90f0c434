/* Chunk codecs (trace_format.h: GT_CODEC_*): zstd, with or without the delta transform that
 * turns consecutive same-type fixed-width records into small differences. Shared by the shim
 * (gt_chunk_pack, on the flusher thread) and the analyzer (gt_chunk_unpack). */
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format.h"

#define PACK_MIN 256u /* smaller chunks (watermarks, single records) are never worth a frame */

static uint32_t rec_size_at(const unsigned char *p, uint32_t pos, uint32_t n, uint16_t *type)
{
    struct gt_rec_header h;
    if (n - pos < sizeof(h)) return 0;
    memcpy(&h, p + pos, sizeof(h));
    if (h.size < 8 || (h.size & 7) || h.size > n - pos) return 0;
    *type = h.type;
    return h.size;
}

void gt_delta_encode(const unsigned char *in, unsigned char *out, uint32_t n)
{
    uint32_t last[GT_CODEC_DELTA_TYPES], last_size[GT_CODEC_DELTA_TYPES];
    uint32_t pos = 0, size;
    uint16_t type = 0;
    memset(last_size, 0, sizeof(last_size));
    while ((size = rec_size_at(in, pos, n, &type)) != 0) {
        memcpy(out + pos, in + pos, 8);
        if (type < GT_CODEC_DELTA_TYPES && last_size[type] == size) {
            const unsigned char *prev = in + last[type];
            for (uint32_t w = 8; w < size; w += 8) {
                uint64_t a, b;
                memcpy(&a, in + pos + w, 8);
                memcpy(&b, prev + w, 8);
                a -= b;
                memcpy(out + pos + w, &a, 8);
            }
        } else {
            memcpy(out + pos + 8, in + pos + 8, size - 8);
        }
        if (type < GT_CODEC_DELTA_TYPES) last[type] = pos, last_size[type] = size;
        pos += size;
    }
    memcpy(out + pos, in + pos, n - pos);
}

void gt_delta_decode(unsigned char *p, uint32_t n)
{
    uint32_t last[GT_CODEC_DELTA_TYPES], last_size[GT_CODEC_DELTA_TYPES];
    uint32_t pos = 0, size;
    uint16_t type = 0;
    memset(last_size, 0, sizeof(last_size));
    while ((size = rec_size_at(p, pos, n, &type)) != 0) {
        if (type < GT_CODEC_DELTA_TYPES && last_size[type] == size) {
            const unsigned char *prev = p + last[type];
            for (uint32_t w = 8; w < size; w += 8) {
                uint64_t a, b;
                memcpy(&a, p + pos + w, 8);
                memcpy(&b, prev + w, 8);
                a += b;
                memcpy(p + pos + w, &a, 8);
            }
        }
        if (type < GT_CODEC_DELTA_TYPES) last[type] = pos, last_size[type] = size;
        pos += size;
    }
}

/* ---- GT_CODEC_PACK_DELTA -----------------------------------------------------------------------
 * The delta transform, headers XOR'ed with the previous header, and each word zigzag-coded in 0,
 * 1, 2 or 8 bytes behind 2-bit length codes (trace_format.h). No entropy coder: a few ns per
 * record, where zstd costs tens. */

static inline uint64_t zigzag(uint64_t v)
{
    return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

static inline uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

/* Code 3: a byte E = shift << 4 | len, then len bytes of zigzag(v >> 8 * shift) (arithmetic
 * shift; v's low `shift` bytes are zero), so a small change in a word's high half (a 32-bit
 * field behind another) costs 2 bytes, not 8. Returns the bytes written (9 at most, 8 bytes of
 * room past them needed). */
static inline unsigned pack_wide(unsigned char *p, uint64_t v)
{
    unsigned shift = (unsigned)__builtin_ctzll(v) >> 3;
    uint64_t zs = zigzag((uint64_t)((int64_t)v >> (8 * shift)));
    unsigned len = (64 - (unsigned)__builtin_clzll(zs) + 7) >> 3;
    *p = (unsigned char)(shift << 4 | len);
    memcpy(p + 1, &zs, 8);
    return 1 + len;
}

/* The encoder's cursor: bytes go to p, the current group's codes collect in ctrl (k of them) and
 * land at *cp once four are in (or at the end). Locals, so the compiler keeps them in registers.
 * A value is stored whole (8 bytes) and p moves by its length: gt_pack_bound leaves the room. */
#define PACK_WORD(v)                                                                               \
    do {                                                                                           \
        uint64_t v_ = (v), z_ = zigzag(v_);                                                        \
        if (k == 0) cp = p++;                                                                      \
        if (z_ != 0) {                                                                             \
            if (z_ <= 0xffff) {                                                                    \
                unsigned c_ = 1 + (z_ > 0xff);                                                     \
                ctrl |= c_ << (2 * k);                                                             \
                memcpy(p, &z_, 8);                                                                 \
                p += c_;                                                                           \
            } else {                                                                               \
                ctrl |= 3u << (2 * k);                                                             \
                p += pack_wide(p, v_);                                                             \
            }                                                                                      \
        }                                                                                          \
        if (++k == 4) *cp = (unsigned char)ctrl, ctrl = 0, k = 0;                                  \
    } while (0)

uint32_t gt_pack_bound(uint32_t n)
{
    return n + n / 4 + 32; /* 9 bytes and a quarter of a control byte per word at most */
}

/* Record headers: code 0, 1, 2 = the most recent, second, third most recent distinct header
 * (move to front; all 0 at the start), code 3 = a wide value of the header XOR the most recent
 * one. Alternating records (allocation, free) cost no header bytes. */
static inline unsigned hdr_code(const uint64_t *recent, uint64_t h)
{
    return h == recent[0] ? 0 : h == recent[1] ? 1 : h == recent[2] ? 2 : 3;
}

static inline void hdr_front(uint64_t *recent, unsigned c, uint64_t h)
{
    if (c == 0) return;
    if (c >= 2) recent[2] = recent[1];
    recent[1] = recent[0];
    recent[0] = h;
}

#define PACK_HDR(h)                                                                                \
    do {                                                                                           \
        unsigned hc_ = hdr_code(recent, (h));                                                      \
        if (k == 0) cp = p++;                                                                      \
        ctrl |= hc_ << (2 * k);                                                                    \
        if (hc_ == 3) p += pack_wide(p, (h) ^ recent[0]);                                          \
        hdr_front(recent, hc_, (h));                                                               \
        if (++k == 4) *cp = (unsigned char)ctrl, ctrl = 0, k = 0;                                  \
    } while (0)

/* The words of one record after its header, delta'd against prev (NULL: as they are), with the
 * cursor passed in and out. Inlined with constant nw and k (the launch record: 9 words, its
 * header at any of the 4 places of a group) the group's bookkeeping folds away: the same output
 * as the loop in gt_pack_encode, a third fewer instructions per launch record. */
static inline __attribute__((always_inline)) void
pack_words(const unsigned char *cur, const unsigned char *prev, unsigned nw, unsigned char **pp,
           unsigned char **cpp, unsigned *ctrlp, unsigned *kp)
{
    unsigned char *p = *pp, *cp = *cpp;
    unsigned ctrl = *ctrlp, k = *kp;
#pragma GCC unroll 16
    for (unsigned i = 0; i < nw; i++) {
        uint64_t w, b = 0;
        memcpy(&w, cur + 8 + 8 * i, 8);
        if (prev) memcpy(&b, prev + 8 + 8 * i, 8);
        PACK_WORD(w - b);
    }
    *pp = p, *cpp = cp, *ctrlp = ctrl, *kp = k;
}

_Static_assert(sizeof(struct gt_rec_launch) == 80 && sizeof(struct gt_rec_alloc) == 72 &&
                   sizeof(struct gt_rec_free) == 56 && sizeof(struct gt_rec_gpu_kernel) == 56 &&
                   sizeof(struct gt_rec_gpu_api) == 40 && sizeof(struct gt_rec_gpu_extcorr) == 24,
               "the sizes gt_pack_encode unrolls");

/* pack_words with a constant word count, at each of the 4 places of a group (k constant too). */
#define PACK_FIXED(nw)                                                                             \
    do {                                                                                           \
        switch (k) {                                                                               \
        case 0:                                                                                    \
            pack_words(in + pos, prev, (nw), &p, &cp, &ctrl, &k);                                  \
            break;                                                                                 \
        case 1:                                                                                    \
            k = 1, pack_words(in + pos, prev, (nw), &p, &cp, &ctrl, &k);                           \
            break;                                                                                 \
        case 2:                                                                                    \
            k = 2, pack_words(in + pos, prev, (nw), &p, &cp, &ctrl, &k);                           \
            break;                                                                                 \
        default:                                                                                   \
            k = 3, pack_words(in + pos, prev, (nw), &p, &cp, &ctrl, &k);                           \
            break;                                                                                 \
        }                                                                                          \
    } while (0)

uint32_t gt_pack_encode(const unsigned char *in, uint32_t n, unsigned char *out)
{
    uint32_t last[GT_CODEC_DELTA_TYPES], last_size[GT_CODEC_DELTA_TYPES];
    uint32_t pos = 0, size;
    uint16_t type = 0;
    uint64_t recent[3] = {0, 0, 0}, w, h;
    unsigned char *p = out, *cp = out;
    unsigned ctrl = 0, k = 0;
    memset(last_size, 0, sizeof(last_size));
    while ((size = rec_size_at(in, pos, n, &type)) != 0) {
        memcpy(&h, in + pos, 8);
        PACK_HDR(h);
        if (type < GT_CODEC_DELTA_TYPES && last_size[type] == size &&
            (size == 80 || size == 72 || size == 56 || size == 40 || size == 24)) {
            /* the records of the hot paths, unrolled: launch (80 B), allocation (72), free and
             * GPU kernel (56), GPU API (40), external correlation (24) */
            const unsigned char *prev = in + last[type];
            switch (size) {
            case 80:
                PACK_FIXED(9);
                break;
            case 72:
                PACK_FIXED(8);
                break;
            case 56:
                PACK_FIXED(6);
                break;
            case 40:
                PACK_FIXED(4);
                break;
            default:
                PACK_FIXED(2);
                break;
            }
        } else if (type < GT_CODEC_DELTA_TYPES && last_size[type] == size) {
            const unsigned char *prev = in + last[type];
            for (uint32_t i = 8; i < size; i += 8) {
                uint64_t b;
                memcpy(&w, in + pos + i, 8);
                memcpy(&b, prev + i, 8);
                PACK_WORD(w - b);
            }
        } else {
            for (uint32_t i = 8; i < size; i += 8) {
                memcpy(&w, in + pos + i, 8);
                PACK_WORD(w);
            }
        }
        if (type < GT_CODEC_DELTA_TYPES) last[type] = pos, last_size[type] = size;
        pos += size;
    }
    if (pos + 8 <= n) { /* the header the walk stops at is coded as a header too */
        memcpy(&h, in + pos, 8);
        PACK_HDR(h);
        pos += 8;
    }
    for (; pos + 8 <= n; pos += 8) {
        memcpy(&w, in + pos, 8);
        PACK_WORD(w);
    }
    if (k != 0) /* codes past the last word are 3: a stream codes one number of words */
        *cp = (unsigned char)(ctrl | (0xffu << (2 * k)));
    return (uint32_t)(p - out);
}

/* The decoder reads the stream with unaligned 8-byte loads, masked to the word's length, so a
 * word costs no loop over its bytes and no branch on its code (but 3). Such a load reads up to 9
 * bytes past a word's first byte (a wide value: E, then 8): it runs on the input while at least
 * PACK_SLOP bytes (more than a group of four wide values and its control byte, plus the last
 * load's 8 bytes) are left at a control byte, and on a zero-padded copy of the last ones after
 * that (PACK_TAIL: under PACK_SLOP bytes, then room for a group read from up to PACK_SLOP).
 * Reading zeros past the end can only move the cursor further, so a stream that claims more bytes
 * than it has ends past its end and is refused there, as byte-by-byte checks would refuse it. */
#define PACK_SLOP 48
#define PACK_TAIL 128

static const uint64_t pack_mask[3] = {0, 0xff, 0xffff};

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* Reads a code 3 value (its E byte, then its bytes) at *pp; 0, or -1 if malformed. */
static inline int unpack_wide(const unsigned char **pp, uint64_t *v)
{
    const unsigned char *p = *pp;
    unsigned shift = p[0] >> 4, l = p[0] & 15;
    if (l - 1 > 7 || shift + l > 8) return -1;
    uint64_t z = load64(p + 1) & (~0ull >> (64 - 8 * l));
    *pp = p + 1 + l;
    *v = unzigzag(z) << (8 * shift);
    return 0;
}

/* Before a control byte: the input from `p` on moves to the zero-padded tail copy when fewer
 * than PACK_SLOP bytes are left; returns -1 if the cursor is already past the copy's slack (a
 * stream that claims many more bytes than it has). */
#define PACK_NEED()                                                                                \
    do {                                                                                           \
        if (__builtin_expect(p > fast_end, 0)) {                                                   \
            if (in_tail || p > end) return -1;                                                     \
            size_t r_ = (size_t)(end - p);                                                         \
            memcpy(tail, p, r_);                                                                   \
            p = tail, end = tail + r_, fast_end = tail + PACK_SLOP, in_tail = 1;                   \
        }                                                                                          \
    } while (0)

/* The next word's 2-bit code. ctrl holds the group's codes not yet used above a 1 bit, so it is
 * 1 when a new control byte is due. */
#define PACK_CODE(c)                                                                               \
    do {                                                                                           \
        if (__builtin_expect(ctrl == 1, 0)) {                                                      \
            PACK_NEED();                                                                           \
            ctrl = *p++ | 0x100u;                                                                  \
        }                                                                                          \
        (c) = ctrl & 3, ctrl >>= 2;                                                                \
    } while (0)

/* The next plain word: codes 0, 1, 2 as a masked load (0, 1 or 2 bytes of zigzag), 3 wide. */
#define PACK_VALUE(v)                                                                              \
    do {                                                                                           \
        unsigned c_;                                                                               \
        PACK_CODE(c_);                                                                             \
        if (__builtin_expect(c_ != 3, 1)) {                                                        \
            (v) = unzigzag(load64(p) & pack_mask[c_]);                                             \
            p += c_;                                                                               \
        } else if (unpack_wide(&p, &(v)) != 0) {                                                   \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

#define PACK_ADD4(q)                                                                               \
    g0_ += load64((q)), g1_ += load64((q) + 8), g2_ += load64((q) + 16), g3_ += load64((q) + 24)

/* The words 1 to rw - 1 of the record at `rec`, ADD1 and ADD4 adding the delta (if any). */
#define PACK_RUN(rec, rw, ADD1, ADD4)                                                              \
    for (uint32_t w_ = 1; w_ < (rw);) {                                                            \
        if (ctrl == 1 && (rw)-w_ >= 4) {                                                           \
            PACK_NEED();                                                                           \
            unsigned b_ = *p;                                                                      \
            if (__builtin_expect((b_ & (b_ >> 1) & 0x55u) == 0, 1)) {                              \
                unsigned c0_ = b_ & 3, c1_ = (b_ >> 2) & 3, c2_ = (b_ >> 4) & 3, c3_ = b_ >> 6;    \
                const unsigned char *q1_ = p + 1 + c0_, *q2_ = q1_ + c1_, *q3_ = q2_ + c2_;        \
                uint64_t g0_ = unzigzag(load64(p + 1) & pack_mask[c0_]);                           \
                uint64_t g1_ = unzigzag(load64(q1_) & pack_mask[c1_]);                             \
                uint64_t g2_ = unzigzag(load64(q2_) & pack_mask[c2_]);                             \
                uint64_t g3_ = unzigzag(load64(q3_) & pack_mask[c3_]);                             \
                ADD4;                                                                              \
                memcpy((rec) + 8 * w_, &g0_, 8);                                                   \
                memcpy((rec) + 8 * w_ + 8, &g1_, 8);                                               \
                memcpy((rec) + 8 * w_ + 16, &g2_, 8);                                              \
                memcpy((rec) + 8 * w_ + 24, &g3_, 8);                                              \
                p = q3_ + c3_, w_ += 4;                                                            \
                continue;                                                                          \
            }                                                                                      \
        }                                                                                          \
        PACK_VALUE(v);                                                                             \
        ADD1;                                                                                      \
        memcpy((rec) + 8 * w_, &v, 8);                                                             \
        w_++;                                                                                      \
    }

/* One pass, record by record: each header restored (and checked) as it comes, so the walk knows
 * where the next header is and which earlier record the following words' deltas refer to; the
 * words then decoded and their deltas added in one loop, each written once. */
int gt_pack_decode(const unsigned char *s, uint32_t len, unsigned char *out, uint32_t n)
{
    uint32_t last[GT_CODEC_DELTA_TYPES], last_size[GT_CODEC_DELTA_TYPES];
    unsigned char tail[PACK_TAIL];
    const unsigned char *p = tail, *end = tail, *fast_end = tail + PACK_SLOP;
    uint64_t recent[3] = {0, 0, 0}, v;
    uint32_t words = n / 8, i = 0;
    unsigned ctrl = 1, c;
    int in_tail = 1;
    if (n & 7) return -1;
    memset(tail, 0, sizeof(tail));
    if (len >= PACK_SLOP)
        p = s, end = s + len, fast_end = end - PACK_SLOP, in_tail = 0;
    else if (len != 0) /* a short stream is all tail */
        memcpy(tail, s, len), end = tail + len;
    memset(last_size, 0, sizeof(last_size));
    while (i < words) {
        PACK_CODE(c);
        if (c == 3) {
            if (unpack_wide(&p, &v) != 0) return -1;
            v ^= recent[0];
        } else {
            v = recent[c];
        }
        hdr_front(recent, c, v);
        unsigned char *rec = out + 8 * (size_t)i;
        memcpy(rec, &v, 8);
        struct gt_rec_header h;
        memcpy(&h, &v, sizeof(h));
        i++;
        if (h.size < 8 || (h.size & 7) || h.size > n - 8 * (i - 1)) break; /* stored as is */
        uint32_t rw = h.size / 8;
        const unsigned char *prev = NULL;
        if (h.type < GT_CODEC_DELTA_TYPES) {
            if (last_size[h.type] == h.size) prev = out + last[h.type];
            last[h.type] = 8 * (i - 1), last_size[h.type] = h.size;
        }
        if (prev) {
            PACK_RUN(rec, rw, v += load64(prev + 8 * w_), PACK_ADD4(prev + 8 * w_));
        } else {
            PACK_RUN(rec, rw, (void)0, (void)0);
        }
        i += rw - 1;
    }
    for (; i < words; i++) { /* past the header the walk stopped at: words as they are */
        PACK_VALUE(v);
        memcpy(out + 8 * (size_t)i, &v, 8);
    }
    if (ctrl & (ctrl + 1)) return -1; /* codes past the last word: 3 (ctrl is 2^m - 1) */
    return p == end ? 0 : -1;
}

void gt_packer_init(struct gt_packer *pk, int level)
{
    memset(pk, 0, sizeof(*pk));
    pk->level = level;
    pk->codec = GT_CODEC_ZSTD_DELTA;
    pk->min_size = PACK_MIN;
}

void gt_packer_free(struct gt_packer *pk)
{
    ZSTD_freeCCtx(pk->cctx);
    free(pk->tmp);
    free(pk->out);
    struct gt_packer keep = *pk;
    memset(pk, 0, sizeof(*pk));
    pk->level = keep.level;
    pk->codec = keep.codec;
    pk->min_size = keep.min_size;
    pk->force = keep.force;
}

static int grow(unsigned char **p, size_t *cap, size_t want)
{
    if (*cap >= want) return 0;
    unsigned char *q = realloc(*p, want);
    if (!q) return -1;
    *p = q;
    *cap = want;
    return 0;
}

/* The head and the zero padding around the c bytes coded at pk->out + 8; returns the payload
 * size, 0 if it is not smaller than the records. */
static uint32_t frame_done(struct gt_packer *pk, uint32_t size, size_t c)
{
    unsigned char *frame = pk->out + sizeof(struct gt_codec_head);
    size_t stored = sizeof(struct gt_codec_head) + ((c + 7) & ~(size_t)7);
    if ((stored >= size && !pk->force) || stored > GT_MAX_CHUNK_PAYLOAD) return 0;
    struct gt_codec_head head = {size, (uint32_t)c};
    memcpy(pk->out, &head, sizeof(head));
    memset(frame + c, 0, stored - sizeof(head) - c);
    return (uint32_t)stored;
}

/* Compresses into pk->out: head, frame, padding. Returns the payload size, 0 if not worth it or
 * impossible. */
static uint32_t pack(struct gt_packer *pk, const unsigned char *raw, uint32_t size)
{
    if (pk->codec == GT_CODEC_PACK_DELTA) {
        size_t bound = gt_pack_bound(size);
        if (grow(&pk->out, &pk->out_cap, sizeof(struct gt_codec_head) + bound + 8) != 0) return 0;
        unsigned char *dst = pk->out + sizeof(struct gt_codec_head);
        return frame_done(pk, size, gt_pack_encode(raw, size, dst));
    }
    size_t bound = ZSTD_compressBound(size);
    if (grow(&pk->out, &pk->out_cap, sizeof(struct gt_codec_head) + bound + 8) != 0) return 0;
    if (!pk->cctx) {
        pk->cctx = ZSTD_createCCtx();
        if (!pk->cctx) return 0;
        if (ZSTD_isError(ZSTD_CCtx_setParameter(pk->cctx, ZSTD_c_compressionLevel, pk->level)))
            return 0;
    }
    const unsigned char *src = raw;
    if (pk->codec == GT_CODEC_ZSTD_DELTA) {
        if (grow(&pk->tmp, &pk->tmp_cap, size) != 0) return 0;
        gt_delta_encode(raw, pk->tmp, size);
        src = pk->tmp;
    }
    unsigned char *frame = pk->out + sizeof(struct gt_codec_head);
    size_t c = ZSTD_compress2(pk->cctx, frame, bound, src, size);
    if (ZSTD_isError(c)) {
        ZSTD_CCtx_reset(pk->cctx, ZSTD_reset_session_only);
        pk->failed++;
        return 0;
    }
    return frame_done(pk, size, c);
}

const void *gt_chunk_pack(struct gt_packer *pk, struct gt_chunk_header *ch, uint16_t kind,
                          uint32_t tid, uint32_t seq, const void *raw, uint32_t size)
{
    uint32_t stored = 0;
    if (pk->level != 0 && size >= pk->min_size && size <= GT_MAX_CHUNK_PAYLOAD)
        stored = pack(pk, raw, size);
    if (stored == 0) {
        pk->stored_raw++;
        gt_chunk_header_init(ch, kind, tid, seq, raw, size);
        return raw;
    }
    pk->packed++;
    ch->magic = GT_CHUNK_MAGIC;
    ch->kind = kind;
    ch->codec = pk->codec;
    ch->payload_size = stored;
    ch->tid = tid;
    ch->seq = seq;
    ch->crc32 = gt_chunk_crc(ch, pk->out);
    return pk->out;
}

int gt_chunk_unpack(struct gt_unpacker *u, const struct gt_chunk_header *ch, const void *payload,
                    const unsigned char **raw, uint32_t *raw_size, const char **why)
{
    struct gt_codec_head head;
    const unsigned char *p = payload;
    if (ch->codec == GT_CODEC_NONE) {
        *raw = payload;
        *raw_size = ch->payload_size;
        return 0;
    }
    if (ch->codec != GT_CODEC_ZSTD && ch->codec != GT_CODEC_ZSTD_DELTA &&
        ch->codec != GT_CODEC_PACK_DELTA) {
        *why = "unknown chunk codec";
        return -1;
    }
    if (ch->payload_size < sizeof(head)) {
        *why = "compressed payload shorter than its head";
        return -1;
    }
    memcpy(&head, p, sizeof(head));
    if ((head.raw_size & 7) || head.raw_size > GT_MAX_CHUNK_PAYLOAD) {
        *why = "implausible decoded size";
        return -1;
    }
    uint32_t room = ch->payload_size - (uint32_t)sizeof(head);
    if (head.packed_size > room || room - head.packed_size > 7 ||
        ((head.packed_size + 7u) & ~7u) != room) {
        *why = "compressed frame size does not match the chunk";
        return -1;
    }
    const unsigned char *frame = p + sizeof(head);
    for (uint32_t i = head.packed_size; i < room; i++)
        if (frame[i] != 0) {
            *why = "nonzero padding after the compressed frame";
            return -1;
        }
    if (ch->codec == GT_CODEC_PACK_DELTA) {
        if (grow(&u->out, &u->out_cap, head.raw_size ? head.raw_size : 8) != 0) {
            *why = "out of memory for the decoded chunk";
            return -1;
        }
        if (gt_pack_decode(frame, head.packed_size, u->out, head.raw_size) != 0) {
            *why = "corrupt packed chunk";
            return -1;
        }
        *raw = u->out;
        *raw_size = head.raw_size;
        return 0;
    }
    unsigned long long content = ZSTD_getFrameContentSize(frame, head.packed_size);
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
        content != head.raw_size) {
        *why = "compressed frame does not state the decoded size";
        return -1;
    }
    size_t framed = ZSTD_findFrameCompressedSize(frame, head.packed_size);
    if (ZSTD_isError(framed) || framed != head.packed_size) {
        *why = "not exactly one compressed frame";
        return -1;
    }
    if (grow(&u->out, &u->out_cap, head.raw_size ? head.raw_size : 8) != 0) {
        *why = "out of memory for the decoded chunk";
        return -1;
    }
    if (!u->dctx) {
        u->dctx = ZSTD_createDCtx();
        if (!u->dctx) {
            *why = "out of memory for the decompressor";
            return -1;
        }
    }
    size_t got = ZSTD_decompressDCtx(u->dctx, u->out, head.raw_size, frame, head.packed_size);
    if (ZSTD_isError(got) || got != head.raw_size) {
        *why = "corrupt compressed frame";
        return -1;
    }
    if (ch->codec == GT_CODEC_ZSTD_DELTA) gt_delta_decode(u->out, head.raw_size);
    *raw = u->out;
    *raw_size = head.raw_size;
    return 0;
}

void gt_unpacker_free(struct gt_unpacker *u)
{
    ZSTD_freeDCtx(u->dctx);
    free(u->out);
    memset(u, 0, sizeof(*u));
}
