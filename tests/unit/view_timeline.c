/* The page's timeline view (model/view_timeline.c) against brute force on random activity
 * streams: two devices with two streams each, every device in time order but the devices
 * interleaved (out of order between them), spans from microseconds to hours (the grid widens).
 * Checked: each stream's busy ns per column; each window holds exactly the activities starting
 * in it before its cut; the windows keep at most the budget, and everything when it fits (past
 * it, at least an eighth of the budget: windows that merge after one was cut lose the other's,
 * so dense runs keep 26 to 70 % of it here, printed); the longest activities are the longest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/view_timeline.h"
#include "check.h"

#define T0 5000000000ull

#define RNG_SEED 0x853C49E6748FEA9Bull
#include "rng.h"

struct act {
    uint64_t s, e;
    uint32_t lane; /* device * 2 + stream index */
};

static int by_s(const void *a, const void *b)
{
    const struct act *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->e != y->e) return x->e < y->e ? -1 : 1;
    return (x->lane > y->lane) - (x->lane < y->lane);
}

static int by_len(const void *a, const void *b)
{
    const struct act *x = a, *y = b;
    uint64_t lx = x->e - x->s, ly = y->e - y->s;
    return (lx > ly) - (lx < ly);
}

/* n activities: per device back-to-back or spaced, lengths from 1 ns to `scale` ns */
static size_t make(struct act *a, size_t n, uint64_t scale)
{
    uint64_t t[2] = {T0 + rng(1000), T0 + rng(1000)};
    size_t k = 0;
    while (k < n) {
        uint32_t d = (uint32_t)rng(2); /* the devices interleave: out of order between them */
        uint64_t len = 1 + rng(rng(8) ? scale : 20 * scale);
        t[d] += rng(4) ? rng(scale / 4 + 1) : 0;
        a[k++] = (struct act){t[d], t[d] + len, d * 2 + (uint32_t)rng(2)};
        t[d] += len;
    }
    return k;
}

static const uint32_t stream_of[2] = {7, 13};

static int check_run(struct act *a, size_t n, uint64_t scale)
{
    struct ga_tlv v;
    uint64_t t0 = T0;
    ga_tlv_init(&v, &t0);
    for (size_t i = 0; i < n; i++) {
        struct ga_gpu_act g = {.start = a[i].s,
                               .end = a[i].e,
                               .device = a[i].lane / 2,
                               .stream = stream_of[a[i].lane % 2],
                               .kind = GA_GPU_MEMSET};
        ga_tlv_act(&v, &g, NULL);
    }
    struct ga_gpu gpu;
    struct ga_timeline tl;
    memset(&gpu, 0, sizeof(gpu));
    memset(&tl, 0, sizeof(tl));
    ga_tlv_finish(&v, &gpu, &tl);
    int ok = v.acts_total == n && v.outside == 0 && v.lanes_dropped == 0;
    uint64_t w = ga_tlv_col_ns(&v), sn = w * GA_TLV_SLOT_COLS;
    size_t cols = ga_tlv_cols(&v);
    /* busy per column, per lane */
    uint64_t *busy = calloc(cols, sizeof(*busy));
    for (size_t l = 0; ok && l < v.n_lanes; l++) {
        memset(busy, 0, cols * sizeof(*busy));
        uint32_t lane = v.lanes[l].device * 2 + (v.lanes[l].stream == stream_of[1]);
        for (size_t i = 0; i < n; i++) {
            if (a[i].lane != lane) continue;
            for (uint64_t t = a[i].s - T0, e = a[i].e - T0; t < e;) {
                uint64_t c = t / w, m = (c + 1) * w < e ? (c + 1) * w : e;
                busy[c] += m - t;
                t = m;
            }
        }
        for (size_t c = 0; ok && c < cols; c++)
            if (busy[c] != v.lanes[l].busy[c]) {
                printf("     lane %zu column %zu: %llu ns, want %llu\n", l, c,
                       (unsigned long long)v.lanes[l].busy[c], (unsigned long long)busy[c]);
                ok = 0;
            }
    }
    free(busy);
    /* windows: exactly the activities starting before the cut */
    qsort(a, n, sizeof(*a), by_s);
    size_t i = 0, kept = 0, cut = 0;
    for (size_t j = 0; ok && j < GA_TLV_SLOTS; j++) {
        const struct ga_tlv_slot *s = &v.slots[j];
        uint64_t end = s->cut == UINT64_MAX ? (j + 1) * sn : s->cut;
        size_t k = 0;
        for (; i < n && a[i].s - T0 < (j + 1) * sn; i++) {
            if (a[i].s - T0 >= end) continue;
            const struct ga_tlv_act *x = k < s->n ? &s->a[k] : NULL;
            uint32_t lane =
                x ? v.lanes[x->lane].device * 2 + (v.lanes[x->lane].stream == stream_of[1]) : 0;
            if (!x || x->start != a[i].s - T0 || x->end != a[i].e - T0 || lane != a[i].lane) {
                /* equal starts may be kept in another order: look among them */
                int found = 0;
                for (uint32_t q = 0; q < s->n && !found; q++)
                    found = s->a[q].start == a[i].s - T0 && s->a[q].end == a[i].e - T0 &&
                            v.lanes[s->a[q].lane].device * 2 +
                                    (v.lanes[s->a[q].lane].stream == stream_of[1]) ==
                                a[i].lane;
                if (!found) {
                    printf("     window %zu: activity at %llu missing\n", j,
                           (unsigned long long)(a[i].s - T0));
                    ok = 0;
                    break;
                }
            }
            k++;
        }
        if (ok && k != s->n) {
            printf("     window %zu: %u kept, %zu start before its cut\n", j, s->n, k);
            ok = 0;
        }
        kept += s->n;
        cut += s->cut != UINT64_MAX;
    }
    if (kept > GA_TLV_DETAIL || (n <= GA_TLV_DETAIL && (kept != n || cut))) {
        printf("     %zu activities: %zu kept, %zu windows cut\n", n, kept, cut);
        ok = 0;
    }
    printf("# %zu activities: %zu kept, %zu windows cut, cap %u\n", n, kept, cut, v.cap);
    if (n > GA_TLV_DETAIL && kept < GA_TLV_DETAIL / 8) {
        printf("     %zu activities: only %zu of the budget kept\n", n, kept);
        ok = 0;
    }
    /* the longest: the same lengths as the n longest activities */
    qsort(a, n, sizeof(*a), by_len);
    size_t nl = n < GA_TLV_LONGEST ? n : GA_TLV_LONGEST;
    struct act *l = malloc((v.n_longest + 1) * sizeof(*l));
    for (size_t q = 0; q < v.n_longest; q++)
        l[q] = (struct act){v.longest[q].start, v.longest[q].end, 0};
    qsort(l, v.n_longest, sizeof(*l), by_len);
    int same = v.n_longest == nl;
    for (size_t q = 0; same && q < nl; q++)
        same = l[nl - 1 - q].e - l[nl - 1 - q].s == a[n - 1 - q].e - a[n - 1 - q].s;
    free(l);
    if (ok && !same) {
        printf("     longest: %zu kept, not the %zu longest lengths\n", v.n_longest, nl);
        ok = 0;
    }
    (void)scale;
    ga_tlv_free(&v);
    return ok;
}

int main(void)
{
    static const size_t sizes[] = {1, 50, 5000, 131072, 131073, 300000, 600000};
    static const uint64_t scales[] = {100, 20000, 5000000, 2000000000};
    struct act *a = malloc(600000 * sizeof(*a));
    int ok = 1, runs = 0;
    for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++)
        for (size_t ci = 0; ci < sizeof(scales) / sizeof(*scales) && ok; ci++, runs++) {
            size_t n = make(a, sizes[si], scales[ci]);
            ok = check_run(a, n, scales[ci]);
            if (!ok)
                printf("     (%zu activities, lengths up to %llu ns)\n", n,
                       (unsigned long long)scales[ci]);
        }
    CHECK_U64("random streams: columns, windows, budget, longest as brute force (runs)",
              ok ? runs : 0, 28);
    free(a);
    return check_done();
}
