/* Streaming trace reader: file header, chunk framing and checksums, record framing. The file is
 * read with read() through a fixed block buffer; only one chunk payload is held at a time. */
#include "input/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "base/util.h"

/* Chunk headers and small chunks are read through this buffer; payloads of at least BLOCK bytes
 * go straight into place, so a small one keeps the bytes copied twice few. */
#define BLOCK (4u << 10)

struct rd {
    int fd;
    int io_errno;       /* errno of a failed read(), 0 if none */
    unsigned char *buf; /* BLOCK bytes */
    size_t pos, len;
    uint64_t offset;        /* file bytes consumed by rd_read */
    unsigned char *payload; /* as stored */
    size_t payload_cap;
    struct gt_unpacker unpack; /* decoded payloads of compressed chunks */
    uint64_t order;            /* file index of the next record */
    struct ga_order ord;
    struct ga_read_stats *st;
    uint64_t plain; /* ga_rec_plain_types() */
    uint64_t run;   /* the plain host types other than the watermark: parse_host's runs */
    ga_sink_fn sink;
    void *ctx;
    struct ga_map seen; /* (kind, tid) x (seq, crc32) of every chunk read: repeats are skipped */
};

/* Copies up to n bytes; returns how many (fewer only at end of file or on a read error). */
static size_t rd_read(struct rd *r, void *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (r->pos == r->len && n - got >= BLOCK) { /* a payload: straight into place */
            ssize_t k = read(r->fd, (unsigned char *)dst + got, n - got);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) r->io_errno = errno;
            if (k <= 0) break;
            got += (size_t)k;
            continue;
        }
        if (r->pos == r->len) {
            ssize_t k = read(r->fd, r->buf, BLOCK);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) r->io_errno = errno;
            if (k <= 0) break;
            r->pos = 0;
            r->len = (size_t)k;
        }
        size_t step = r->len - r->pos < n - got ? r->len - r->pos : n - got;
        memcpy((unsigned char *)dst + got, r->buf + r->pos, step);
        r->pos += step;
        got += step;
    }
    r->offset += got;
    return got;
}

__attribute__((format(printf, 2, 3))) static int fail(struct ga_read_stats *st, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->error, sizeof(st->error), fmt, ap);
    va_end(ap);
    return -1;
}

/* Why gt_header_check refused the header, in words the user can act on. */
static int header_error(struct ga_read_stats *st, const unsigned char *hb, size_t n, int code,
                        const char *why)
{
    struct gt_file_header h;
    gt_rec_load(&h, sizeof(h), hb, n);
    if (code == -4) {
        unsigned v = h.version > h.min_version ? h.version : h.min_version;
        return fail(st, "written by a newer gputrace (format %u, this reader reads up to %u)", v,
                    GT_FORMAT_VERSION);
    }
    if (code == -3 && h.endian != __builtin_bswap32(GT_ENDIAN_TAG))
        return fail(st, "corrupt file header (byte-order tag 0x%08x)", h.endian);
    return fail(st, "%s", why);
}

static int read_header(struct rd *r)
{
    unsigned char hb[4096];
    const char *why = "";
    size_t n = rd_read(r, hb, 24);
    if (n == 0 && r->io_errno) return fail(r->st, "read error: %s", strerror(r->io_errno));
    if (n == 0) return fail(r->st, "empty file");
    int code = gt_header_check(hb, n, &why);
    if (code == -2 && n == 24) { /* read the rest of the header, whatever size it declares */
        uint32_t hsize;
        memcpy(&hsize, hb + offsetof(struct gt_file_header, header_size), 4);
        if (hsize < sizeof(struct gt_file_header)) hsize = sizeof(struct gt_file_header);
        if (hsize > sizeof(hb)) hsize = sizeof(hb);
        n += rd_read(r, hb + n, hsize - n);
        code = gt_header_check(hb, n, &why);
    }
    if (code != 0) return header_error(r->st, hb, n, code, why);
    gt_rec_load(&r->st->header, sizeof(r->st->header), hb, n);
    if (n > r->st->header.header_size) return fail(r->st, "internal error: header overread");
    r->st->valid_bytes = r->offset;
    return 0;
}

__attribute__((format(printf, 3, 4))) static void stop(struct rd *r, uint64_t chunk,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->st->stop_reason, sizeof(r->st->stop_reason), fmt, ap);
    va_end(ap);
    r->st->truncated = 1;
    r->st->stop_chunk = chunk;
}

static void host_record(struct rd *r, const unsigned char *p, uint32_t size, uint32_t tid)
{
    const char *why = "";
    struct gt_rec_header h;
    memcpy(&h, p, sizeof(h));
    enum ga_rec_check c =
        h.type < 64 && (r->plain >> h.type & 1) ? GA_REC_OK : ga_rec_check(p, size, &why);
    if (c == GA_REC_UNKNOWN || ga_rec_is_gpu(h.type)) { /* GPU types belong in GPU chunks */
        r->st->unknown_records++;
        return;
    }
    if (c == GA_REC_MALFORMED) {
        r->st->malformed_records++;
        return;
    }
    r->st->records++;
    r->st->host_records++;
    if (h.type != GT_REC_WATERMARK) {
        ga_order_push(&r->ord, p, size, tid, r->order - 1);
        return;
    }
    /* Everything before W goes out, then the watermark itself: later records have ts >= W. */
    struct ga_event ev;
    uint64_t w = ga_rec_key(p, size);
    ga_order_flush(&r->ord, w, 0, r->sink, r->ctx);
    ga_rec_decode(p, size, tid, r->order - 1, &ev);
    r->sink(r->ctx, &ev);
}

/* A record of a GPU chunk goes to the sink at once, in file (CUPTI delivery) order: ordering
 * GPU activity by time is the GPU analysis's job (it keeps what it must sort, see gpu.h). Every
 * record of a GPU chunk counts in gpu_records; host types found there are not delivered. */
static void gpu_record(struct rd *r, const unsigned char *p, uint32_t size, uint32_t tid)
{
    const char *why = "";
    struct gt_rec_header h;
    struct ga_event ev;
    r->st->gpu_records++;
    r->st->records++;
    memcpy(&h, p, sizeof(h));
    if (!ga_rec_is_gpu(h.type)) return;
    if (ga_rec_check(p, size, &why) != GA_REC_OK) {
        r->st->malformed_records++;
        return;
    }
    ga_rec_decode(p, size, tid, r->order - 1, &ev);
    r->sink(r->ctx, &ev);
}

/* The header of the record at pos in a payload of n bytes, if it is well framed (at least a
 * header, a size that is a multiple of 8 and fits); otherwise counts a malformed record: the
 * rest of the payload cannot be framed. */
static int frame(struct rd *r, const unsigned char *p, uint32_t n, uint32_t pos,
                 struct gt_rec_header *h)
{
    *h = (struct gt_rec_header){0};
    if (n - pos >= sizeof(*h)) memcpy(h, p + pos, sizeof(*h));
    if (n - pos < sizeof(*h) || h->size < 8 || (h->size & 7) || h->size > n - pos) {
        r->st->malformed_records++;
        return 0;
    }
    return 1;
}

/* Walks the records of one checksummed, decoded payload. A bad record size leaves no way to find
 * the next record, so the rest of the chunk is skipped. */
static void parse_payload(struct rd *r, const struct gt_chunk_header *ch, const unsigned char *p,
                          uint32_t n)
{
    uint32_t pos = 0;
    while (pos < n) {
        struct gt_rec_header h;
        if (!frame(r, p, n, pos, &h)) return;
        r->order++;
        if (ch->kind == GT_CHUNK_HOST)
            host_record(r, p + pos, h.size, ch->tid);
        else if (ch->kind == GT_CHUNK_GPU)
            gpu_record(r, p + pos, h.size, ch->tid);
        pos += h.size;
    }
}

/* parse_payload for a host chunk. A thread writes its records in time order, so a payload is
 * mostly runs of well-framed plain records (no strings to check, not a watermark) whose keys do
 * not decrease: each run goes to the order in one call. A record that ends a run (a watermark,
 * a record with strings, an unknown or badly framed one, a key that steps back) goes through
 * parse_payload's per-record path, which gives every record exactly what that path would. */
static void parse_host(struct rd *r, const struct gt_chunk_header *ch, const unsigned char *p,
                       uint32_t n)
{
    const uint64_t run_types = r->run;
    uint32_t pos = 0;
    while (pos < n) {
        uint64_t passed = r->ord.passed; /* moves only when a watermark flushes */
        uint32_t start = pos, count = 0, late = 0;
        uint64_t first = 0, last = 0;
        while (n - pos >= sizeof(struct gt_rec_header)) {
            struct gt_rec_header h;
            memcpy(&h, p + pos, sizeof(h));
            if (h.size < 8 || (h.size & 7) || h.size > n - pos || h.type >= 64 ||
                !(run_types >> h.type & 1))
                break;
            uint64_t key = ga_rec_key(p + pos, h.size);
            if (count && key < last) break;
            if (!count) first = key;
            last = key;
            late += key < passed;
            count++;
            pos += h.size;
        }
        if (count) {
            ga_order_push_run(&r->ord, p + start, p + pos, count, first, last, late, ch->tid,
                              r->order);
            r->order += count;
            r->st->records += count;
            r->st->host_records += count;
        }
        if (pos == n) return;
        /* One record the per-record way (a watermark flushes). */
        struct gt_rec_header h;
        if (!frame(r, p, n, pos, &h)) return;
        r->order++;
        host_record(r, p + pos, h.size, ch->tid);
        pos += h.size;
    }
}

static void count_chunk(struct ga_read_stats *st, uint16_t kind)
{
    st->chunks++;
    if (kind == GT_CHUNK_HOST)
        st->host_chunks++;
    else if (kind == GT_CHUNK_GPU)
        st->gpu_chunks++;
    else
        st->other_chunks++;
}

/* Reads a chunk payload into r->payload, growing it only as the bytes arrive: a header that
 * claims 64 MiB in a file cut short costs what the file holds, not what it claims. Returns the
 * bytes read (fewer than size at end of file or on a read error). */
static uint32_t read_payload(struct rd *r, uint32_t size)
{
    uint32_t got = 0;
    while (got < size) {
        /* Grow by doubling, at least to 1 MiB at a time (no clearing: every byte is read). */
        uint32_t step = size - got, room = (uint32_t)(r->payload_cap - got);
        if (room == 0) {
            size_t cap = r->payload_cap * 2 > (1u << 20) ? r->payload_cap * 2 : (1u << 20);
            r->payload = ga_xrealloc(r->payload, cap);
            r->payload_cap = cap;
            room = (uint32_t)(cap - got);
        }
        if (step > room) step = room;
        size_t k = rd_read(r, r->payload + got, step);
        got += (uint32_t)k;
        if (k < step) break;
    }
    return got;
}

/* A chunk written twice (same kind, thread, sequence number and checksum: the same bytes) is
 * counted once. The checksum is part of the key because the kernel reuses thread ids: a new
 * thread with an old one's id numbers its chunks from 0 again, with other contents. */
static int repeated(struct rd *r, const struct gt_chunk_header *ch)
{
    int added = 0;
    ga_map_upsert(&r->seen, (uint64_t)ch->kind << 32 | ch->tid, (uint64_t)ch->seq << 32 | ch->crc32,
                  0, &added);
    if (added) return 0;
    r->st->duplicate_chunks++;
    r->st->valid_bytes = r->offset;
    return 1;
}

/* Reads one chunk. Returns 1 if one was read, 0 at a clean end of file, -1 where reading
 * stopped at a broken chunk (stats say why). */
static int read_chunk(struct rd *r)
{
    struct gt_chunk_header ch;
    const char *why = "";
    uint64_t at = r->offset, no = r->st->chunks + 1;
    size_t n = rd_read(r, &ch, sizeof(ch));
    if (n == 0 && !r->io_errno) return 0;
    if (n < sizeof(ch)) {
        stop(r, no, "truncated at byte %" PRIu64 " in chunk %" PRIu64, r->offset, no);
        return -1;
    }
    if (n >= 8 && memcmp(&ch, GT_MAGIC, 8) == 0) {
        r->st->concatenated = 1;
        stop(r, no,
             "a second trace starts at byte %" PRIu64 " (files joined, e.g. by cat); give them "
             "as separate files",
             at);
        return -1;
    }
    if (gt_chunk_header_check(&ch, &why) != 0) {
        stop(r, no, "chunk %" PRIu64 " at byte %" PRIu64 " is corrupt (%s)", no, at, why);
        return -1;
    }
    if (read_payload(r, ch.payload_size) < ch.payload_size) {
        stop(r, no, "truncated at byte %" PRIu64 " in chunk %" PRIu64, r->offset, no);
        return -1;
    }
    if (gt_chunk_crc(&ch, r->payload) != ch.crc32) {
        stop(r, no, "chunk %" PRIu64 " at byte %" PRIu64 " is corrupt (checksum mismatch)", no, at);
        return -1;
    }
    if (repeated(r, &ch)) return 1;
    const unsigned char *raw = NULL;
    uint32_t raw_size = 0;
    if (gt_chunk_unpack(&r->unpack, &ch, r->payload, &raw, &raw_size, &why) != 0) {
        stop(r, no, "chunk %" PRIu64 " at byte %" PRIu64 " is corrupt (%s)", no, at, why);
        return -1;
    }
    count_chunk(r->st, ch.kind);
    if (ch.codec != GT_CODEC_NONE) r->st->packed_chunks++;
    r->st->raw_bytes += raw_size;
    r->st->valid_bytes = r->offset;
    if (ch.kind != GT_CHUNK_HOST) {
        parse_payload(r, &ch, raw, raw_size);
        return 1;
    }
    /* Held host records point into the payload: the order keeps the buffer they are in. */
    ga_order_chunk_begin(&r->ord);
    parse_host(r, &ch, raw, raw_size);
    if (ch.codec == GT_CODEC_NONE)
        ga_order_chunk_end(&r->ord, &r->payload, &r->payload_cap);
    else
        ga_order_chunk_end(&r->ord, &r->unpack.out, &r->unpack.out_cap);
    return 1;
}

static void finish_stop_reason(struct rd *r)
{
    struct ga_read_stats *st = r->st;
    size_t len = strlen(st->stop_reason);
    if (r->io_errno)
        len += (size_t)snprintf(st->stop_reason + len, sizeof(st->stop_reason) - len,
                                " (read error: %s)", strerror(r->io_errno));
    if (len < sizeof(st->stop_reason))
        snprintf(st->stop_reason + len, sizeof(st->stop_reason) - len,
                 "; reporting the %" PRIu64 " whole chunk%s before it", st->chunks,
                 st->chunks == 1 ? "" : "s");
    st->stop_offset = r->offset;
}

static ga_progress_hook progress_fn;
static void *progress_ctx;

void ga_read_set_progress(ga_progress_hook fn, void *ctx)
{
    progress_fn = fn;
    progress_ctx = ctx;
}

int ga_read_fd(int fd, ga_sink_fn sink, void *ctx, struct ga_read_stats *stats)
{
    struct rd r = {.fd = fd, .st = stats, .sink = sink, .ctx = ctx, .plain = ga_rec_plain_types()};
    r.run = r.plain & ~(1ull << GT_REC_WATERMARK);
    for (unsigned t = 0; t < 64; t++)
        if (ga_rec_is_gpu(t)) r.run &= ~(1ull << t); /* GPU types in a host chunk: unknown */
    int rc = 0;
    memset(stats, 0, sizeof(*stats));
    r.buf = ga_xmalloc(BLOCK);
    ga_order_init(&r.ord);
    if (read_header(&r) == 0) {
        while ((rc = read_chunk(&r)) > 0)
            if (progress_fn) progress_fn(progress_ctx, r.offset, stats->records);
        if (rc < 0) finish_stop_reason(&r);
        ga_order_flush(&r.ord, 0, 1, sink, ctx);
        stats->late_records = r.ord.late;
        stats->max_buffered = r.ord.max_held;
        rc = 0;
    } else {
        rc = -1;
    }
    ga_order_free(&r.ord);
    ga_map_free(&r.seen);
    gt_unpacker_free(&r.unpack);
    free(r.payload);
    free(r.buf);
    return rc;
}

int ga_read_trace(const char *path, ga_sink_fn sink, void *ctx, struct ga_read_stats *stats)
{
    int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        memset(stats, 0, sizeof(*stats));
        return fail(stats, "%s", strerror(errno));
    }
    if (fd != 0) /* read once, front to back: a larger read-ahead when not in the page cache */
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    int rc = ga_read_fd(fd, sink, ctx, stats);
    if (fd != 0) close(fd);
    return rc;
}
