/* The fragmentation structure (analyzer/analyses/extents.c) against a brute-force model: a bitmap of
 * N addresses. Random add/remove/carve sequences (set use) and insert/take sequences (map use),
 * several seeds, thousands of steps; after every step every metric (total, extent count, largest
 * extent, the return value of the step, the extents in address order, overlap and cover queries)
 * must equal what the bitmap says. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyses/extents.h"
#include "check.h"

#define N     2048
#define STEPS 6000

static uint32_t rng;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* A random range inside [0, N): mostly short, sometimes long. */
static void rnd_range(uint64_t *a, uint64_t *len)
{
    *a = rnd() % N;
    uint64_t max = N - *a, l = rnd() % 8 == 0 ? 1 + rnd() % 512 : 1 + rnd() % 24;
    *len = l < max ? l : max;
}

struct model {
    unsigned char bit[N];
    uint32_t owner[N]; /* map use: start address + 1 of the interval holding it, 0 = none */
};

static uint64_t model_set(struct model *m, uint64_t a, uint64_t len, int v)
{
    uint64_t changed = 0;
    for (uint64_t i = a; i < a + len; i++) {
        changed += m->bit[i] != v;
        m->bit[i] = (unsigned char)v;
    }
    return changed;
}

/* Compares the set with the bitmap: counts, largest, the extents in order. 1 when equal. */
static int same(const struct ga_extents *x, const struct model *m, uint64_t base, int map_use,
                char *why, size_t n)
{
    uint64_t total = 0, count = 0, largest = 0, pos = base, s, l;
    for (uint64_t i = 0; i < N;) {
        if (!m->bit[i]) {
            i++;
            continue;
        }
        uint64_t j = i + 1;
        while (j < N && m->bit[j] && (!map_use || m->owner[j] == m->owner[i]))
            j++;
        if (!ga_ext_next(x, pos, &s, &l) || s != base + i || l != j - i) {
            snprintf(why, n, "extent %" PRIu64 " [%" PRIu64 ", %" PRIu64 ") not next", count, i, j);
            return 0;
        }
        pos = s + l;
        total += j - i;
        count++;
        largest = j - i > largest ? j - i : largest;
        i = j;
    }
    if (ga_ext_next(x, pos, &s, &l)) return snprintf(why, n, "extra extent at end"), 0;
    if (ga_ext_total(x) != total) return snprintf(why, n, "total"), 0;
    if (ga_ext_count(x) != count) return snprintf(why, n, "count"), 0;
    if (ga_ext_largest(x) != largest) return snprintf(why, n, "largest"), 0;
    return 1;
}

/* Random overlap/cover/next queries against the bitmap. */
static int queries(const struct ga_extents *x, const struct model *m, uint64_t base, int map_use,
                   char *why, size_t n)
{
    for (int q = 0; q < 4; q++) {
        uint64_t a, len, any = 0, all = 1, s, l;
        rnd_range(&a, &len);
        for (uint64_t i = a; i < a + len; i++) {
            any |= m->bit[i];
            all &= m->bit[i] && (!map_use || m->owner[i] == m->owner[a]);
        }
        if (ga_ext_overlaps(x, base + a, len) != (int)any)
            return snprintf(why, n, "overlaps(%" PRIu64 ", %" PRIu64 ")", a, len), 0;
        if (ga_ext_covers(x, base + a, len) != (int)all)
            return snprintf(why, n, "covers(%" PRIu64 ", %" PRIu64 ")", a, len), 0;
        uint64_t i = a;
        while (i < N && !m->bit[i])
            i++;
        int got = ga_ext_next(x, base + a, &s, &l);
        if (got != (i < N) || (got && !(s <= base + i && s + l > base + i)))
            return snprintf(why, n, "next(%" PRIu64 ")", a), 0;
    }
    return 1;
}

static void run_set(uint32_t seed, uint64_t base)
{
    struct ga_extents x;
    struct model *m = calloc(1, sizeof(*m));
    char what[320], why[120] = "";
    int ok = 1;
    uint64_t step = 0;
    rng = seed;
    ga_ext_init(&x);
    for (; step < STEPS && ok; step++) {
        uint64_t a, len, got, want;
        rnd_range(&a, &len);
        int op = rnd() % 100, add = op < 55;
        if (op >= 85) { /* carve: all or nothing */
            int inside = ga_ext_covers(&x, base + a, len);
            int c = ga_ext_carve(&x, base + a, len);
            got = c == 0 ? len : 0;
            want = inside ? model_set(m, a, len, 0) : 0;
            if (c != (inside ? 0 : -1)) got = UINT64_MAX;
        } else {
            got = add ? ga_ext_add(&x, base + a, len) : ga_ext_remove(&x, base + a, len);
            want = model_set(m, a, len, add);
        }
        if (got != want) {
            snprintf(why, sizeof(why),
                     "%s(%" PRIu64 ", %" PRIu64 ") returned %" PRIu64 ", want %" PRIu64,
                     add ? "add" : "remove", a, len, got, want);
            ok = 0;
        }
        ok = ok && same(&x, m, base, 0, why, sizeof(why)) &&
             queries(&x, m, base, 0, why, sizeof(why));
    }
    snprintf(what, sizeof(what),
             "set use, seed %u, base %#" PRIx64 ": %" PRIu64 " steps match the bitmap%s%s", seed,
             base, step, ok ? "" : ": ", why);
    CHECK(what, ok);
    ga_ext_free(&x);
    free(m);
}

static void run_map(uint32_t seed, uint64_t base)
{
    struct ga_extents x;
    struct model *m = calloc(1, sizeof(*m));
    char what[320], why[120] = "";
    int ok = 1;
    uint64_t step = 0;
    rng = seed;
    ga_ext_init(&x);
    for (; step < STEPS && ok; step++) {
        uint64_t a, len, any = 0;
        rnd_range(&a, &len);
        if (len > 64) len = 1 + len % 64;
        if (rnd() % 100 < 50) {
            for (uint64_t i = a; i < a + len; i++)
                any |= m->bit[i];
            int got = ga_ext_insert(&x, base + a, len);
            if (got != (any ? -1 : 0)) {
                snprintf(why, sizeof(why), "insert(%" PRIu64 ", %" PRIu64 ")", a, len);
                ok = 0;
            } else if (!any) {
                model_set(m, a, len, 1);
                for (uint64_t i = a; i < a + len; i++)
                    m->owner[i] = (uint32_t)a + 1;
            }
        } else {
            if (rnd() % 2) { /* aim at an existing start most of the time */
                uint64_t i = a;
                while (i < N && !(m->bit[i] && m->owner[i] == i + 1))
                    i++;
                if (i < N) a = i;
            }
            uint64_t want = 0;
            if (m->bit[a] && m->owner[a] == a + 1)
                for (uint64_t i = a; i < N && m->bit[i] && m->owner[i] == a + 1; i++)
                    want++;
            uint64_t got = ga_ext_take(&x, base + a);
            if (got != want) {
                snprintf(why, sizeof(why), "take(%" PRIu64 ") = %" PRIu64 ", want %" PRIu64, a, got,
                         want);
                ok = 0;
            }
            for (uint64_t i = a; i < a + want; i++)
                m->bit[i] = 0, m->owner[i] = 0;
        }
        ok = ok && same(&x, m, base, 1, why, sizeof(why)) &&
             queries(&x, m, base, 1, why, sizeof(why));
    }
    snprintf(what, sizeof(what),
             "map use, seed %u, base %#" PRIx64 ": %" PRIu64 " steps match the model%s%s", seed,
             base, step, ok ? "" : ": ", why);
    CHECK(what, ok);
    ga_ext_free(&x);
    free(m);
}

/* Hand-made cases: coalescing on both sides, a removal inside one extent, bounds. */
static void test_basics(void)
{
    struct ga_extents x;
    ga_ext_init(&x);
    CHECK_U64("empty: largest 0", ga_ext_largest(&x), 0);
    CHECK_U64("add [100,200)", ga_ext_add(&x, 100, 100), 100);
    CHECK_U64("add [300,400)", ga_ext_add(&x, 300, 100), 100);
    CHECK_U64("add [200,300) joins both: 100 new bytes", ga_ext_add(&x, 200, 100), 100);
    CHECK_U64("one extent of 300", ga_ext_count(&x), 1);
    CHECK_U64("largest 300", ga_ext_largest(&x), 300);
    CHECK_U64("add again [150,250): nothing new", ga_ext_add(&x, 150, 100), 0);
    CHECK_U64("remove [180,220) from inside: 40 bytes", ga_ext_remove(&x, 180, 40), 40);
    CHECK_U64("two extents", ga_ext_count(&x), 2);
    CHECK_U64("largest 180 ([220,400))", ga_ext_largest(&x), 180);
    CHECK_U64("total 260", ga_ext_total(&x), 260);
    CHECK_U64("remove what is not there: 0", ga_ext_remove(&x, 1000, 10), 0);
    CHECK_U64("wrapping add refused", ga_ext_add(&x, UINT64_MAX - 5, 10), 0);
    CHECK_U64("empty add refused", ga_ext_add(&x, 5, 0), 0);
    CHECK_U64("add up to the last address", ga_ext_add(&x, UINT64_MAX - 10, 10), 10);
    CHECK("covers the top extent", ga_ext_covers(&x, UINT64_MAX - 10, 10));
    CHECK("covers nothing at UINT64_MAX", !ga_ext_covers(&x, UINT64_MAX, 1));
    CHECK("wrapping overlap query sees the top extent", ga_ext_overlaps(&x, UINT64_MAX - 2, 100));
    uint64_t s, l;
    CHECK("next after UINT64_MAX: none", !ga_ext_next(&x, UINT64_MAX, &s, &l));
    ga_ext_free(&x);
    CHECK_U64("freed: empty", ga_ext_count(&x), 0);
    CHECK("insert refuses a wrap", ga_ext_insert(&x, UINT64_MAX, 2) == -1);
    CHECK("insert [0,10)", ga_ext_insert(&x, 0, 10) == 0);
    CHECK("insert [10,20) stays apart", ga_ext_insert(&x, 10, 10) == 0 && ga_ext_count(&x) == 2);
    CHECK("insert overlapping refused", ga_ext_insert(&x, 5, 10) == -1 && ga_ext_total(&x) == 20);
    CHECK_U64("take 10", ga_ext_take(&x, 10), 10);
    CHECK_U64("take inside an extent: 0", ga_ext_take(&x, 5), 0);
    ga_ext_free(&x);
}

/* Many extents: the tree stays usable (depth O(log n) keeps recursion shallow). */
static void test_many(void)
{
    struct ga_extents x;
    ga_ext_init(&x);
    for (uint64_t i = 0; i < 1000000; i++)
        ga_ext_add(&x, i * 2, 1);
    CHECK_U64("1e6 separate extents", ga_ext_count(&x), 1000000);
    for (uint64_t i = 0; i < 1000000; i++)
        ga_ext_add(&x, i * 2 + 1, 1);
    CHECK_U64("filled the gaps: one extent", ga_ext_count(&x), 1);
    CHECK_U64("of 2e6 bytes", ga_ext_largest(&x), 2000000);
    ga_ext_free(&x);
}

int main(void)
{
    test_basics();
    static const uint32_t seeds[] = {1, 7, 42, 2024, 0xdeadbeef};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        run_set(seeds[i], i == 4 ? UINT64_MAX - N - 1 : 0x7f0000000000ull * i);
        run_map(seeds[i], i == 4 ? UINT64_MAX - N - 1 : 0x7f0000000000ull * i);
    }
    test_many();
    return check_done();
}
