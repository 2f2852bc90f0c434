/* Streaming trace reader: validates the file header and every chunk, restores global time order
 * of host records with watermarks, and hands each record to a sink. GPU chunk records go to the
 * same sink as they are read (not in time order; ga_rec_is_gpu tells them apart). Memory: one
 * chunk payload (as stored and, when compressed, decoded: each at most GT_MAX_CHUNK_PAYLOAD) plus
 * the host records of one watermark interval. */
#ifndef GA_READER_H
#define GA_READER_H

#include <stddef.h>
#include <stdint.h>

#include "gputrace/trace_format.h"
#include "base/hashmap.h"
#include "input/records.h"

typedef void (*ga_sink_fn)(void *ctx, const struct ga_event *ev);

struct ga_read_stats {
    struct gt_file_header header; /* as read (fields past the v1 header ignored) */
    uint64_t valid_bytes;         /* bytes of the file up to the end of the last whole chunk */
    uint64_t chunks;              /* whole, checksummed chunks */
    uint64_t host_chunks, gpu_chunks, other_chunks;
    uint64_t packed_chunks;     /* of those, compressed (codec != GT_CODEC_NONE) */
    uint64_t raw_bytes;         /* payload bytes once decoded, of all whole chunks */
    uint64_t records;           /* known host records delivered plus GPU records seen */
    uint64_t host_records;      /* known host records delivered to the sink */
    uint64_t gpu_records;       /* records in GPU chunks (those of GPU types are delivered) */
    uint64_t unknown_records;   /* records of types this reader does not know, skipped */
    uint64_t malformed_records; /* bad size or string lengths; skipped (bad size: rest of chunk) */
    uint64_t late_records;      /* host records older than a watermark already passed */
    uint64_t max_buffered;      /* most host records held at once waiting for a watermark */
    uint64_t duplicate_chunks;  /* chunks read again (same kind, thread, sequence, bytes): skipped */
    int truncated;              /* 1: the file ends in or at a broken chunk */
    int concatenated;           /* 1: reading stopped at a second file header (implies truncated) */
    uint64_t stop_offset;       /* where reading stopped, when truncated */
    uint64_t stop_chunk;        /* 1-based number of the broken chunk, when truncated */
    char stop_reason[160];      /* e.g. "truncated at byte 4096 in chunk 17" */
    char error[200];            /* fatal error, when ga_read_trace returns -1 */
};

/* Reads the trace at `path` ("-" = standard input). Returns 0 when a report can be made (possibly
 * of a truncated prefix: see stats->truncated), -1 with stats->error set when the file cannot be
 * read as a trace at all. */
int ga_read_trace(const char *path, ga_sink_fn sink, void *ctx, struct ga_read_stats *stats);

/* Same on an open file descriptor, which stays open. */
int ga_read_fd(int fd, ga_sink_fn sink, void *ctx, struct ga_read_stats *stats);

/* A hook told, after each chunk, the bytes read and the records delivered so far (a progress
 * display); NULL: none. One for the process: the program reads one trace at a time. */
typedef void (*ga_progress_hook)(void *ctx, uint64_t bytes, uint64_t records);
void ga_read_set_progress(ga_progress_hook fn, void *ctx);

/* ---- watermark ordering (order.c) ------------------------------------------------------------ */

/* Held host records are not copied: a run is a stretch of back-to-back records of one chunk
 * payload in (ts, file order) order, pointing into that payload, which the order keeps (a held
 * buffer) until its last run is emitted. Runs of one writer thread that follow each other in
 * time are chained into one stream; the streams are merged through a binary heap. */
struct ga_order_run {
    const unsigned char *pos, *end; /* records not yet emitted */
    uint64_t last_key;              /* key of the run's last record */
    uint64_t order;                 /* file index of the record at pos */
    uint32_t tid, buf;              /* writer thread; held buffer */
    uint32_t next;                  /* next run of the same stream, or UINT32_MAX */
};

struct ga_order_stream {
    uint32_t head, tail; /* runs, or UINT32_MAX when the slot is free (head: next free slot) */
};

struct ga_order_top { /* a heap entry: a stream and the key of its next record */
    uint64_t key, order;
    uint32_t stream;
};

struct ga_order_buf {
    unsigned char *p; /* NULL while the reader still owns it (the chunk being parsed) */
    size_t cap;
    uint32_t refs; /* runs pointing into it; the free-slot link when unused */
};

#define GA_ORDER_SPARES 16
#define GA_ORDER_RING   8 /* streams kept sorted in a ring before the heap (a power of two) */

struct ga_order {
    struct ga_order_run *runs;
    struct ga_order_stream *streams;
    struct ga_order_top *heap;
    struct ga_order_buf *bufs;
    size_t runs_cap, streams_cap, heap_cap, bufs_cap, n_runs, n_streams, n_bufs;
    size_t n_live; /* streams with records left: in ring[] or heap[] */
    uint32_t free_run, free_stream, free_buf;
    uint32_t chunk_buf;       /* the buffer of the chunk being parsed, UINT32_MAX outside one */
    uint32_t cur;             /* the run being extended, UINT32_MAX when none */
    struct ga_map tid_stream; /* tid -> the stream its next run may join */
    /* the n_live streams' next keys: sorted in ring[] from ring_head (mod GA_ORDER_RING), or in
     * heap when in_heap (see order.c) */
    struct ga_order_top ring[GA_ORDER_RING];
    size_t ring_head;
    int in_heap;
    unsigned char *spare[GA_ORDER_SPARES]; /* emptied buffers, handed back to the reader */
    size_t spare_cap[GA_ORDER_SPARES];
    uint64_t held;        /* records held */
    uint64_t held_bytes;  /* their bytes */
    uint64_t pinned;      /* capacity of the held buffers */
    uint64_t passed;      /* highest watermark flushed so far */
    uint64_t late;        /* records that arrived with a key below `passed` */
    uint64_t max_held;    /* most records held at once */
    uint64_t compactions; /* times the held records were copied out of their payloads */
};

void ga_order_init(struct ga_order *o);
void ga_order_free(struct ga_order *o);
/* Brackets the records of one chunk payload: pushes between them point into it. At the end,
 * if records stay held, the order keeps the buffer (*p, *cap) and gives the caller a spare
 * one (possibly NULL, capacity 0) in its place. */
void ga_order_chunk_begin(struct ga_order *o);
void ga_order_chunk_end(struct ga_order *o, unsigned char **p, size_t *cap);
/* Holds one checked host record of the current chunk (not copied). */
void ga_order_push(struct ga_order *o, const unsigned char *rec, uint32_t size, uint32_t tid,
                   uint64_t order);
/* The same for `count` checked records back to back in [rec, end) whose keys do not decrease
 * (the first's first_key, the last's last_key; `late` of them below o->passed), the first with
 * file index `order`: what pushing them one by one does, in one call. */
void ga_order_push_run(struct ga_order *o, const unsigned char *rec, const unsigned char *end,
                       uint32_t count, uint64_t first_key, uint64_t last_key, uint32_t late,
                       uint32_t tid, uint64_t order);
/* Emits, sorted by (key, file order), every held record with key < w (all when `all`). */
uint64_t ga_order_flush(struct ga_order *o, uint64_t w, int all, ga_sink_fn sink, void *ctx);

#endif
