/* GPU idle time by host site and class: see idle_host.h. */
#include "model/idle_host.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

static int by_idle(const void *a, const void *b)
{
    const struct ga_ih_site *x = a, *y = b;
    if (x->idle_ns != y->idle_ns) return x->idle_ns < y->idle_ns ? 1 : -1;
    if (x->stack != y->stack) return x->stack < y->stack ? -1 : 1;
    return x->cls < y->cls ? -1 : x->cls > y->cls;
}

void ga_idle_host_build(struct ga_idle_host *m, const struct ga_hostidle *h, struct ga_sites *sites,
                        struct ga_stacks *st)
{
    memset(m, 0, sizeof(*m));
    m->have_samples = h->have_samples;
    if (!h->n_dev) return;
    m->dev = ga_xcalloc(h->n_dev, sizeof(*m->dev));
    for (size_t k = 0; k < h->n_dev; k++) {
        const struct ga_hi_device *d = &h->dev[k];
        struct ga_ih_device *o = &m->dev[m->n_dev++];
        size_t cap = 0;
        struct ga_map idx = {0};
        o->device = d->device;
        o->d = d;
        for (size_t i = 0; i < d->n_pieces; i++) {
            const struct ga_hi_piece *p = &d->pieces[i];
            const struct ga_frame *site = NULL;
            if (p->samples)
                ga_hostidle_classify(sites, st, p->stack, 0, &site);
            else if (p->stack) {
                /* an unsampled gap: its cause's call site */
                const struct ga_site *s = ga_sites_of_stack(sites, p->stack);
                site = s ? s->frame : NULL;
            }
            int added = 0;
            uint64_t *v =
                ga_map_upsert(&idx, (uint64_t)(uintptr_t)site, p->cls, o->n_sites, &added);
            if (added) {
                o->sites = ga_xgrow(o->sites, &cap, o->n_sites, sizeof(*o->sites));
                o->sites[o->n_sites++] = (struct ga_ih_site){site, p->cls, p->stack, 0, 0, 0, 0, 0};
            }
            struct ga_ih_site *s = &o->sites[*v];
            s->idle_ns += p->idle_ns;
            s->on_cpu_ns += p->on_cpu_ns;
            s->off_cpu_ns += p->off_cpu_ns;
            s->samples += p->samples;
            if (p->idle_ns > s->top_w) {
                s->top_w = p->idle_ns;
                s->stack = p->stack;
            }
        }
        ga_map_free(&idx);
        if (o->n_sites) qsort(o->sites, o->n_sites, sizeof(*o->sites), by_idle);
    }
}

const struct ga_ih_device *ga_idle_host_device(const struct ga_idle_host *m, uint32_t device)
{
    for (size_t i = 0; i < m->n_dev; i++)
        if (m->dev[i].device == device) return &m->dev[i];
    return NULL;
}

void ga_idle_host_free(struct ga_idle_host *m)
{
    for (size_t i = 0; i < m->n_dev; i++)
        free(m->dev[i].sites);
    free(m->dev);
    memset(m, 0, sizeof(*m));
}

size_t ga_idle_host_in_gap(const struct ga_hostidle *h, struct ga_sites *sites,
                           struct ga_stacks *st, const struct ga_gap *gp, struct ga_ih_site *out,
                           size_t max)
{
    enum { ROWS = 16 };
    struct ga_ih_site rows[ROWS];
    size_t n = 0, first = 0, end = 0, mine = 0;
    if (!h->have_samples || !max) return 0;
    ga_hostidle_range(h, gp->start, gp->dur, &first, &end);
    uint32_t tid = ga_hostidle_gap_tid(gp);
    for (size_t i = first; i < end; i++)
        mine += tid && h->s[i].tid == tid;
    for (size_t i = first; i < end; i++) {
        const struct ga_hi_sample *s = &h->s[i];
        if (mine && s->tid != tid) continue;
        const struct ga_frame *site;
        unsigned cls = ga_hostidle_classify(sites, st, s->stack, s->flags, &site);
        size_t k = 0;
        while (k < n && !(rows[k].site == site && rows[k].cls == cls))
            k++;
        if (k == n) {
            if (n == ROWS) continue;
            rows[n++] = (struct ga_ih_site){site, (uint8_t)cls, s->stack, 0, 0, 0, 0, 0};
        }
        rows[k].samples++;
        rows[k].on_cpu_ns += (s->flags & GT_SAMPLE_ON_CPU) != 0;
    }
    for (size_t a = 0; a < n; a++) /* most samples first (few rows: insertion) */
        for (size_t b = a; b > 0 && rows[b].samples > rows[b - 1].samples; b--) {
            struct ga_ih_site t = rows[b];
            rows[b] = rows[b - 1];
            rows[b - 1] = t;
        }
    if (n > max) n = max;
    memcpy(out, rows, n * sizeof(*out));
    return n;
}
