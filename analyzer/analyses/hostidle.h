/* GPU idle time by what the host was doing (issue 20 part 3; docs/ANALYSES.md, "Idle time by host
 * activity"): host stack samples (gt_rec_host_sample) joined with each device's idle gaps. A gap's
 * time is shared equally among the samples taken inside it on the thread that ended it (any
 * thread's when that one has none); each such share is classed (data loading, I/O or waiting,
 * Python/CPU work, communication, synchronization, allocation, launch overhead) from the sample's
 * frames and flags. A gap with no sample inside keeps its own cause's class and stack (unsampled
 * host time is called host busy, unsampled). Memory: 32 bytes per sample and 24 per gap, each
 * bounded (GA_HI_SAMPLES_MAX, GA_HI_GAPS_MAX; past them counted in *_dropped). */
#ifndef GA_HOSTIDLE_H
#define GA_HOSTIDLE_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/gaps.h"
#include "analyses/sites.h"
#include "analyses/stacks.h"
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
#define GA_HI_GAPS_MAX    (1u << 22)

struct ga_hi_sample {
    uint64_t ts, interval_ns, cpu_ns;
    uint32_t tid, stack, flags;
};

struct ga_hi_gap {
    uint64_t start, dur;
    uint32_t tid, stack; /* the thread that ended it (0 unknown), its cause's stack */
    uint8_t cause;
};

/* Idle time of one (stack, class): the analysis' result, grouped by site in the model. */
struct ga_hi_piece {
    uint32_t stack;
    uint8_t cls;
    uint64_t idle_ns, on_cpu_ns, off_cpu_ns, samples;
};

struct ga_hi_device {
    uint32_t device;
    struct ga_hi_gap *gaps;
    size_t n_gaps, gaps_cap;
    struct ga_hi_piece *pieces; /* after finish */
    size_t n_pieces, pieces_cap;
    uint64_t class_ns[GA_HI_CLASSES];
    uint64_t idle_ns, sampled_ns; /* gap time, and that of it shared among samples */
};

struct ga_hostidle {
    struct ga_hi_sample *s;
    size_t n, cap;
    uint64_t samples_dropped, gaps_dropped;
    struct ga_hi_device *dev;
    size_t n_dev, dev_cap;
    int have_samples;
};

void ga_hostidle_init(struct ga_hostidle *h);
void ga_hostidle_event(struct ga_hostidle *h, const struct ga_event *ev);
/* The gaps analysis' gap hook (ga_gaps.gap_hook). */
void ga_hostidle_gap(void *ctx, uint32_t device, const struct ga_gap *gp);
/* The thread whose samples explain gp (0: any thread's): its launch's, none for an async copy or
 * memset (hostidle.c). */
uint32_t ga_hostidle_gap_tid(const struct ga_gap *gp);
void ga_hostidle_finish(struct ga_hostidle *h, struct ga_sites *sites, struct ga_stacks *st);
const struct ga_hi_device *ga_hostidle_device_of(const struct ga_hostidle *h, uint32_t device);
const char *ga_hi_class_name(unsigned cls);
/* The samples of [start, start + dur) on thread tid (0: any), as [*first, *end) of h->s. */
void ga_hostidle_range(const struct ga_hostidle *h, uint64_t start, uint64_t dur, size_t *first,
                       size_t *end);
/* A sample's class (from its frames and flags) and its site frame (the innermost user frame). */
unsigned ga_hostidle_classify(struct ga_sites *sites, struct ga_stacks *st, uint32_t stack,
                              uint32_t flags, const struct ga_frame **site);
void ga_hostidle_free(struct ga_hostidle *h);

#endif
