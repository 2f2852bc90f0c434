/* GPU idle time by host site and class (docs/ANALYSES.md, "Idle time by host activity"): the
 * host-activity join's (stack, class) pieces grouped by site, the innermost user frame of the
 * stack (a Python line, or a native function outside the CUDA runtime, the tracer, framework
 * internals and the C runtime libraries), what every renderer shows. */
#ifndef GA_MODEL_IDLE_HOST_H
#define GA_MODEL_IDLE_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "analyses/hostidle.h"

struct ga_ih_site {
    const struct ga_frame *site; /* NULL: no stack, or none of its frames is the program's */
    uint8_t cls;                 /* enum ga_hi_class */
    uint32_t stack;              /* the stack that weighs most here */
    uint64_t idle_ns, on_cpu_ns, off_cpu_ns, samples, top_w;
};

struct ga_ih_device {
    uint32_t device;
    struct ga_ih_site *sites; /* by idle_ns, descending */
    size_t n_sites;
    const struct ga_hi_device *d;
};

struct ga_idle_host {
    struct ga_ih_device *dev;
    size_t n_dev;
    int have_samples;
};

void ga_idle_host_build(struct ga_idle_host *m, const struct ga_hostidle *h, struct ga_sites *sites,
                        struct ga_stacks *st);
const struct ga_ih_device *ga_idle_host_device(const struct ga_idle_host *m, uint32_t device);
/* The host samples inside one gap (the thread that ended it, else any), grouped by (site, class),
 * most samples first: at most max entries in out (idle_ns unused, samples counted, on_cpu_ns
 * counts those on CPU); returns how many. */
size_t ga_idle_host_in_gap(const struct ga_hostidle *h, struct ga_sites *sites,
                           struct ga_stacks *st, const struct ga_gap *gp, struct ga_ih_site *out,
                           size_t max);
void ga_idle_host_free(struct ga_idle_host *m);

#endif
