/* GPU idle time by what the host was doing (issue 20 part 3; docs/ANALYSES.md, "Idle time by host
 * activity"): host stack samples (gt_rec_host_sample) joined with each device's idle gaps. A gap's
 * time is shared equally among the samples taken inside it on the thread that ended it (any
 * thread's when that one has none); each such share is classed (data loading, I/O or waiting,
 * Python/CPU work, communication, synchronization, allocation, launch overhead) from the sample's
 * frames and flags. A gap with no sample inside keeps its own cause's class and stack (unsampled
 * host time is called host busy, unsampled).
 * Streaming: a gap is joined as soon as the host records have passed its end (usually when it is
 * found: GPU records arrive a reorder window late), its shares summed per (stack, on CPU, in a
 * hook) and classed at the end (the frames are named then); a gap not yet passed waits, 32 bytes.
 * Samples are kept while a gap still to come can hold them (from the gaps analysis' floor on) or
 * while one of the gaps the report keeps (ga_gaps' top ones, whose samples it lists) holds them,
 * 32 bytes each: memory follows the reorder window and the kept gaps, not the trace. Bounds:
 * GA_HI_SAMPLES_MAX samples kept (past it counted in samples_dropped), GA_HI_WAIT_MAX gaps waiting
 * (past it the oldest is joined with the samples come so far: gaps_early). */
#ifndef GA_HOSTIDLE_H
#define GA_HOSTIDLE_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/gaps.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
#include "base/hashmap.h"
#include "input/records.h"

enum ga_hi_class {
    GA_HI_DATA_LOADING,
    GA_HI_IO_WAIT, /* off CPU outside CUDA calls */
    GA_HI_CPU,     /* on CPU outside CUDA calls */
    GA_HI_COMM,
    GA_HI_SYNC,
    GA_HI_ALLOC,
    GA_HI_LAUNCH,
    GA_HI_UNSAMPLED, /* host busy with no sample inside the gap */
    GA_HI_CLASSES
};

#define GA_HI_SAMPLES_MAX (1u << 24)
#define GA_HI_WAIT_MAX    (1u << 16) /* gaps waiting for the host records to pass them */
#define GA_HI_THREADS     4096u      /* threads whose calls are followed (past it: not waited for) */
#define GA_HI_THR_CACHE   64u        /* a power of two */

struct ga_hi_sample {
    uint64_t ts, interval_ns, cpu_ns;
    uint32_t tid, stack, flags;
    uint32_t seq; /* arrival order (ties in ts keep it) */
};

struct ga_hi_gap { /* a gap waiting for the host records to pass its end */
    uint64_t start, dur;
    uint32_t tid, stack; /* the thread that ended it (0 unknown), its cause's stack */
    uint32_t device;
    uint8_t cause;
};

/* While reading, the joined idle time is kept per (stack, tag) in ga_hi_piece's form, its cls the
 * tag: GA_HI_TAG_ON_CPU | GA_HI_TAG_IN_HOOK for samples' shares (the flags their class depends
 * on), GA_HI_TAG_CAUSE + class for gaps without a sample. */
#define GA_HI_TAG_ON_CPU  1u
#define GA_HI_TAG_IN_HOOK 2u
#define GA_HI_TAG_CAUSE   4u

/* Idle time of one (stack, class): the analysis' result, grouped by site in the model. */
struct ga_hi_piece {
    uint32_t stack;
    uint8_t cls;
    uint64_t idle_ns, on_cpu_ns, off_cpu_ns, samples;
};

struct ga_hi_device {
    uint32_t device;
    struct ga_hi_piece *agg; /* while reading: by (stack, tag) */
    size_t n_agg, agg_cap;
    struct ga_map agg_idx; /* (stack, tag) -> index into agg */
    struct ga_hi_piece *pieces; /* after finish */
    size_t n_pieces, pieces_cap;
    uint64_t class_ns[GA_HI_CLASSES];
    uint64_t idle_ns, sampled_ns; /* gap time, and that of it shared among samples */
};

struct ga_hostidle {
    struct ga_hi_sample *s; /* the samples kept, sorted by (ts, seq) */
    size_t n, cap;
    struct ga_hi_sample *r; /* with those come out of order (a thread writes its samples at its
                             * next hooked call), unsorted, merged in when a join, the pruning
                             * or the end needs them or they number a quarter of s */
    size_t nr, r_cap;
    uint64_t r_min; /* their least ts */
    size_t prune_at; /* n at which the next pruning runs */
    size_t kept_max; /* the most samples kept at once */
    uint64_t samples_dropped;
    uint64_t samples_seen, samples_pruned;
    struct ga_hi_gap *wait; /* [wait_head, n_wait): gaps the host records have not passed yet,
                             * in arrival order */
    size_t wait_head, n_wait, wait_cap;
    size_t wait_limit, wait_peak; /* at most wait_limit wait (GA_HI_WAIT_MAX); the most that did */
    uint64_t gaps_early; /* joined before all their samples could have come (wait_limit waited) */
    struct ga_hi_device *dev;
    size_t n_dev, dev_cap;
    int have_samples;
    /* Set by the report (NULL: the gaps wait for ga_hostidle_finish, no sample is let go): the
     * newest host record's time (ga_gpu.host_max) and the gaps analysis (its floor, its kept
     * gaps). */
    const uint64_t *host_max;
    const struct ga_gaps *gaps;
    /* Per thread, the start of its latest hooked call: a thread writes its samples at its hooked
     * calls (before the call's start), so every sample of it taken before that time has come.
     * thr_min is the least of them (recomputed lazily: thr_dirty updates since). */
    uint32_t *thr_tid;
    uint64_t *thr_start;
    size_t n_thr, thr_cap;
    struct ga_map thr_idx; /* tid -> index */
    uint32_t thr_cache_tid[GA_HI_THR_CACHE], thr_cache_idx[GA_HI_THR_CACHE]; /* 1 + index */
    uint64_t thr_min;
    size_t thr_dirty;
};

void ga_hostidle_init(struct ga_hostidle *h);
void ga_hostidle_event(struct ga_hostidle *h, const struct ga_event *ev);
/* A hooked call of thread tid started at start (the report: launches, spans, frees, allocations). */
void ga_hostidle_call_slow(struct ga_hostidle *h, uint32_t tid, uint64_t start);
static inline void ga_hostidle_call(struct ga_hostidle *h, uint32_t tid, uint64_t start)
{
    uint32_t c = (tid ^ tid >> 6 ^ tid >> 12) & (GA_HI_THR_CACHE - 1);
    if (h->thr_cache_tid[c] == tid && h->thr_cache_idx[c]) {
        uint64_t *v = &h->thr_start[h->thr_cache_idx[c] - 1];
        if (start > *v) {
            *v = start;
            h->thr_dirty++;
        }
        return;
    }
    ga_hostidle_call_slow(h, tid, start);
}
/* The gaps analysis' gap hook (ga_gaps.gap_hook). */
void ga_hostidle_gap(void *ctx, uint32_t device, const struct ga_gap *gp);
/* The thread whose samples explain gp (0: any thread's): its launch's, none for an async copy or
 * memset (hostidle.c). */
uint32_t ga_hostidle_gap_tid(const struct ga_gap *gp);
void ga_hostidle_finish(struct ga_hostidle *h, struct ga_sites *sites, struct ga_stacks *st);
const struct ga_hi_device *ga_hostidle_device_of(const struct ga_hostidle *h, uint32_t device);
const char *ga_hi_class_name(unsigned cls);
/* The samples of [start, start + dur), as [*first, *end) of h->s (after ga_hostidle_finish: all
 * of those of the gaps ga_gaps kept). */
void ga_hostidle_range(const struct ga_hostidle *h, uint64_t start, uint64_t dur, size_t *first,
                       size_t *end);
/* A sample's class (from its frames and flags) and its site frame (the innermost user frame). */
unsigned ga_hostidle_classify(struct ga_sites *sites, struct ga_stacks *st, uint32_t stack,
                              uint32_t flags, const struct ga_frame **site);
void ga_hostidle_free(struct ga_hostidle *h);

#endif
