/* Open-addressing hash map from a two-word key to a 64-bit value, for the analyses' live state
 * (allocations by (namespace, address), kernel handles, contexts). O(1) insert/find/remove,
 * no tombstones: removal shifts the probe chain back. */
#ifndef GA_HASHMAP_H
#define GA_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct ga_map_slot {
    uint64_t a, b; /* key */
    uint64_t value;
    uint32_t hash; /* low half of the key's hash: its home slot, without hashing again when a
                    * removal shifts the chain or the table grows (so at most 2^32 slots) */
    uint8_t used;
};

struct ga_map {
    struct ga_map_slot *slots;
    size_t cap; /* a power of two, or 0 */
    size_t count;
};

void ga_map_free(struct ga_map *m);

/* The hash (hashmap.c says why it is seeded). Inline below: the analyses look maps up several
 * times per record, and most lookups hit. */
extern uint64_t ga_map_seed_[2];

/* murmur3's fmix64, a bijection. */
static inline uint64_t ga_map_fmix_(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static inline uint64_t ga_map_hash_(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ ga_map_seed_[0]) * 0x9e3779b97f4a7c15ull + (b ^ ga_map_seed_[1]);
    return ga_map_fmix_(h);
}

static inline size_t ga_map_home_(const struct ga_map *m, uint64_t a, uint64_t b)
{
    return ga_map_hash_(a, b) & (m->cap - 1);
}

/* Pointer to the value of key (a, b), or NULL. Valid until the next insert or remove. */
static inline uint64_t *ga_map_find(const struct ga_map *m, uint64_t a, uint64_t b)
{
    if (!m->count) return NULL;
    for (size_t i = ga_map_home_(m, a, b);; i = (i + 1) & (m->cap - 1)) {
        struct ga_map_slot *s = &m->slots[i];
        if (!s->used) return NULL;
        if (s->a == a && s->b == b) return &s->value;
    }
}

uint64_t *ga_map_insert_(struct ga_map *m, uint64_t a, uint64_t b, uint64_t init, int *added);

/* At most half full: linear probing's chains stay short (a miss probes ~2.5 slots, against
 * ~8.5 at three quarters), and misses are as common as hits here (every new allocation). Past
 * 2^20 slots (32 MiB) memory matters more: three quarters. */
#define GA_MAP_DENSE_SLOTS (1u << 20)

static inline size_t ga_map_limit_(const struct ga_map *m)
{
    return m->cap < GA_MAP_DENSE_SLOTS ? m->cap / 2 : m->cap / 4 * 3;
}

/* Pointer to the value of key (a, b), inserting it with value `init` if absent; *added says which.
 * One probe: a missing key goes into the empty slot that ended the search, unless the table
 * must grow first (or has no slots yet; a table that emptied keeps them, and maps that go
 * from empty to one entry and back are common). */
static inline uint64_t *ga_map_upsert(struct ga_map *m, uint64_t a, uint64_t b, uint64_t init,
                                      int *added)
{
    if (m->cap) {
        struct ga_map_slot *s;
        uint64_t h = ga_map_hash_(a, b);
        for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
            s = &m->slots[i];
            if (!s->used) break;
            if (s->a == a && s->b == b) {
                if (added) *added = 0;
                return &s->value;
            }
        }
        if (m->count + 1 <= ga_map_limit_(m)) {
            *s = (struct ga_map_slot){a, b, init, (uint32_t)h, 1};
            m->count++;
            if (added) *added = 1;
            return &s->value;
        }
    }
    return ga_map_insert_(m, a, b, init, added);
}

/* Removes the entry whose value `v` points to (from ga_map_find/upsert, no change since). */
void ga_map_remove_at(struct ga_map *m, uint64_t *v);
/* Removes key (a, b); returns 1 if it was there (and its value in *old when old != NULL). */
int ga_map_remove(struct ga_map *m, uint64_t a, uint64_t b, uint64_t *old);

/* Iteration: for (size_t i = 0; ga_map_next(m, &i, &slot); ) ... ; do not modify meanwhile. */
int ga_map_next(const struct ga_map *m, size_t *i, const struct ga_map_slot **slot);

#endif
