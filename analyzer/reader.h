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
#include "records.h"

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
    int truncated;              /* 1: the file ends in or at a broken chunk */
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

/* ---- watermark ordering (order.c) ------------------------------------------------------------ */

struct ga_order_ent {
    uint64_t key, order;
    uint32_t tid, size;
    size_t off; /* into the arena */
};

/* A sorted run of held entries: ent[begin, end). `weight` is what the run held when it was
 * made (merges add weights; emitting from it does not lower it): the merge rule looks at it so
 * that the number of runs stays below 64 and every entry is merged O(log n) times. */
struct ga_order_run {
    size_t begin, end;
    uint64_t weight;
};

#define GA_ORDER_MAX_RUNS 66 /* weights halve down the stack: at most 64, plus one being added */

struct ga_order {
    struct ga_order_ent *ent, *tmp; /* ent[0, n): the runs, then the unsorted tail; tmp: scratch */
    size_t n, cap, tmp_cap;
    size_t sorted; /* ent[sorted, n): pushed since the last flush, not yet a run */
    struct ga_order_run runs[GA_ORDER_MAX_RUNS];
    size_t n_runs;
    size_t held;         /* entries held (in runs and tail) */
    char *arena, *spare; /* record bytes; emitted records stay as garbage until compaction */
    size_t used, arena_cap, spare_cap, live_bytes;
    uint64_t passed;   /* highest watermark flushed so far */
    uint64_t late;     /* records that arrived with a key below `passed` */
    uint64_t max_held; /* most records held at once */
};

void ga_order_init(struct ga_order *o);
void ga_order_free(struct ga_order *o);
/* Buffers one checked host record (copied). */
void ga_order_push(struct ga_order *o, const void *rec, uint32_t size, uint32_t tid,
                   uint64_t order);
/* Emits, sorted by (key, file order), every buffered record with key < w (all when `all`). */
uint64_t ga_order_flush(struct ga_order *o, uint64_t w, int all, ga_sink_fn sink, void *ctx);

#endif
