/* Live-bytes series (analyses/series.c): the buckets' minimum and maximum against a brute-force
 * model on random update sequences (a value holds from its update to the next; each bucket sees
 * the value it was entered with and every value taken inside it), across widenings; a one-update
 * spike and a one-update dip inside one bucket both show; the maximum over buckets is the peak. */
#include <stdio.h>
#include <stdlib.h>

#include "analyses/series.h"
#include "check.h"

#define RNG_SEED 0x2545F4914F6CDD1Dull
#include "rng.h"

#define UPDATES 3000

struct upd {
    int64_t t;
    uint64_t v;
};

/* The model: bucket b of width w holds the value before b*w and every update inside it. */
static int model_matches(const struct ga_series_set *set, const struct ga_series *s,
                         const struct upd *u, size_t n)
{
    uint64_t w = set->width, cur = 0;
    size_t k = 0;
    for (size_t b = 0; b < set->buckets; b++) {
        while (k < n && (uint64_t)u[k].t < b * w)
            cur = u[k++].v;
        uint64_t lo = cur, hi = cur;
        for (; k < n && (uint64_t)u[k].t < (b + 1) * w; k++) {
            cur = u[k].v;
            lo = cur < lo ? cur : lo;
            hi = cur > hi ? cur : hi;
        }
        if (s->min[b] != lo || s->max[b] != hi) {
            printf("     bucket %zu of %zu (width %llu): min %llu max %llu, model %llu %llu\n", b,
                   set->buckets, (unsigned long long)w, (unsigned long long)s->min[b],
                   (unsigned long long)s->max[b], (unsigned long long)lo, (unsigned long long)hi);
            return 0;
        }
    }
    return 1;
}

static void random_runs(void)
{
    static struct upd u[UPDATES];
    int ok = 1, widened = 0;
    for (int run = 0; run < 200 && ok; run++) {
        struct ga_series_set set = {0};
        /* spans from a few buckets (no widening) to thousands of times the buckets */
        uint64_t step = 1 + rng(run % 4 == 0 ? 50 : run % 4 == 1 ? 5000 : 500000);
        int64_t t = 0;
        size_t n = 1 + rng(UPDATES);
        for (size_t i = 0; i < n; i++) {
            t += (int64_t)rng(step);
            u[i] = (struct upd){t, rng(4) ? rng(1u << 20) : 0};
            ga_series_update(&set, 0, GA_SERIES_TOTAL, u[i].t, u[i].v);
        }
        ga_series_finish(&set, t + (int64_t)rng(step * 10));
        const struct ga_series *s = ga_series_get(&set, 0, GA_SERIES_TOTAL);
        widened |= set.width > GA_SERIES_BASE_NS;
        ok = s && set.buckets <= GA_SERIES_BUCKETS && model_matches(&set, s, u, n);
        ga_series_free(&set);
    }
    CHECK("random sequences: every bucket's min and max as the model's", ok);
    CHECK("random sequences: some widened", widened);
}

/* A 1-us spike and a 1-us dip inside one bucket of a 10-second run (bucket width ~10 ms). */
static void spike_and_dip(void)
{
    struct ga_series_set set = {0};
    const uint64_t MiB = 1 << 20;
    ga_series_update(&set, 0, GA_SERIES_TOTAL, 1000, 100 * MiB);
    ga_series_update(&set, 0, GA_SERIES_TOTAL, 5000000000, 500 * MiB); /* spike */
    ga_series_update(&set, 0, GA_SERIES_TOTAL, 5000001000, 100 * MiB);
    ga_series_update(&set, 0, GA_SERIES_TOTAL, 5000002000, 10 * MiB); /* dip */
    ga_series_update(&set, 0, GA_SERIES_TOTAL, 5000003000, 100 * MiB);
    ga_series_finish(&set, 10000000000);
    const struct ga_series *s = ga_series_get(&set, 0, GA_SERIES_TOTAL);
    size_t b = (size_t)(5000000000 / set.width);
    CHECK("one bucket holds both", 5000003000 / set.width == b && set.width > 3000);
    CHECK_U64("the spike's bucket: max", s->max[b], 500 * MiB);
    CHECK_U64("the spike's bucket: min (the dip)", s->min[b], 10 * MiB);
    CHECK_U64("the bucket before: flat", s->min[b - 1], s->max[b - 1]);
    CHECK_U64("the bucket after: flat at 100 MiB", s->max[b + 1] + s->min[b + 1], 200 * MiB);
    uint64_t peak = 0;
    for (size_t i = 0; i < set.buckets; i++)
        peak = s->max[i] > peak ? s->max[i] : peak;
    CHECK_U64("maximum over buckets: the peak", peak, 500 * MiB);
    CHECK("buckets used: at least half", set.buckets > GA_SERIES_BUCKETS / 2);
    ga_series_free(&set);
}

int main(void)
{
    random_runs();
    spike_and_dip();
    return check_done();
}
