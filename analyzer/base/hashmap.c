/* Linear-probing hash map with backward-shift deletion (no tombstones, so long runs of inserts
 * and removes, as live allocations churn, never degrade the table). */
#include "base/hashmap.h"

#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "base/util.h"

/* Keys come from the trace (handles, addresses, correlation ids), so a hostile trace could pick
 * keys that share a probe chain under a fixed hash and make every insert walk all of them: a
 * 4 MB trace of 50,000 launches of chosen handles took 10 s, quadratic in the count. Hence a
 * per-process random seed, mixed into both key words before murmur3's fmix64 (a bijection), so
 * that where a key lands cannot be predicted from the file. Nothing the analyzer prints depends
 * on slot order (what is listed from a map is sorted first). */
uint64_t ga_map_seed_[2];
#define seed ga_map_seed_

#define fmix ga_map_fmix_

static void seed_once(void)
{
    struct timespec ts;
    if (seed[0] | seed[1]) return;
    if (getrandom(seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed)) {
        clock_gettime(CLOCK_MONOTONIC, &ts); /* no entropy yet: time and where we were loaded */
        seed[0] = fmix((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32);
        seed[1] = fmix((uint64_t)(uintptr_t)&seed ^ seed[0]);
    }
    seed[0] |= 1; /* never both zero: seeded */
}

/* ga_map_home_ (hashmap.h): one fmix over both words: a multiply spreads the first before the
 * second is added, so which pairs collide depends on the seed (the only seed-free pairs differ
 * by 2^63 in both words: pairs, never chains). */

void ga_map_free(struct ga_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}

/* Slots a table may have: a slot's home comes from the 32 bits of hash it keeps. 2^32 slots are
 * 128 GiB; a trace that names that many keys cannot be analyzed anyway. */
#define MAX_SLOTS (1ull << 32)

static void rehash(struct ga_map *m, size_t cap)
{
    struct ga_map old = *m;
    if ((uint64_t)cap > MAX_SLOTS) {
        fprintf(stderr, "%s: too many entries in a hash map\n", GA_PROG);
        exit(2);
    }
    seed_once();
    m->slots = ga_xcalloc(cap, sizeof(*m->slots));
    m->cap = cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.slots[i].used) continue;
        size_t j = old.slots[i].hash & (cap - 1); /* keys are distinct: the first free slot */
        while (m->slots[j].used)
            j = (j + 1) & (cap - 1);
        m->slots[j] = old.slots[i];
    }
    free(old.slots);
}

/* The slow path of ga_map_upsert (hashmap.h says how full a table gets). */
uint64_t *ga_map_insert_(struct ga_map *m, uint64_t a, uint64_t b, uint64_t init, int *added)
{
    if (m->count + 1 > ga_map_limit_(m)) rehash(m, m->cap ? m->cap * 2 : 64);
    uint64_t h = ga_map_hash_(a, b);
    size_t i = h & (m->cap - 1);
    while (m->slots[i].used && !(m->slots[i].a == a && m->slots[i].b == b))
        i = (i + 1) & (m->cap - 1);
    struct ga_map_slot *s = &m->slots[i];
    if (added) *added = !s->used;
    if (!s->used) {
        *s = (struct ga_map_slot){a, b, init, (uint32_t)h, 1};
        m->count++;
    }
    return &s->value;
}

/* Empties slot i. */
static void remove_slot(struct ga_map *m, size_t i)
{
    size_t mask = m->cap - 1;
    /* Backward shift: pull later members of the probe chain into the hole when their home
     * slot does not lie cyclically between the hole and their current slot. */
    for (size_t j = (i + 1) & mask; m->slots[j].used; j = (j + 1) & mask) {
        size_t home = m->slots[j].hash & mask;
        int stays = ((j - home) & mask) < ((j - i) & mask); /* home in (i, j], cyclically */
        if (stays) continue;
        m->slots[i] = m->slots[j];
        i = j;
    }
    m->slots[i].used = 0;
    m->count--;
}

void ga_map_remove_at(struct ga_map *m, uint64_t *v)
{
    struct ga_map_slot *s = (struct ga_map_slot *)((char *)v - offsetof(struct ga_map_slot, value));
    remove_slot(m, (size_t)(s - m->slots));
}

int ga_map_remove(struct ga_map *m, uint64_t a, uint64_t b, uint64_t *old)
{
    uint64_t *v = ga_map_find(m, a, b);
    if (!v) return 0;
    if (old) *old = *v;
    ga_map_remove_at(m, v);
    return 1;
}

int ga_map_next(const struct ga_map *m, size_t *i, const struct ga_map_slot **slot)
{
    for (; *i < m->cap; (*i)++) {
        if (m->slots[*i].used) {
            *slot = &m->slots[(*i)++];
            return 1;
        }
    }
    return 0;
}
