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

static inline size_t ga_map_home_(const struct ga_map *m, uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ ga_map_seed_[0]) * 0x9e3779b97f4a7c15ull + (b ^ ga_map_seed_[1]);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (size_t)h & (m->cap - 1);
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

/* Pointer to the value of key (a, b), inserting it with value `init` if absent; *added says which.
 */
static inline uint64_t *ga_map_upsert(struct ga_map *m, uint64_t a, uint64_t b, uint64_t init,
                                      int *added)
{
    uint64_t *v = ga_map_find(m, a, b);
    if (!v) return ga_map_insert_(m, a, b, init, added);
    if (added) *added = 0;
    return v;
}

/* Removes the entry whose value `v` points to (from ga_map_find/upsert, no change since). */
void ga_map_remove_at(struct ga_map *m, uint64_t *v);
/* Removes key (a, b); returns 1 if it was there (and its value in *old when old != NULL). */
int ga_map_remove(struct ga_map *m, uint64_t a, uint64_t b, uint64_t *old);

/* Iteration: for (size_t i = 0; ga_map_next(m, &i, &slot); ) ... ; do not modify meanwhile. */
int ga_map_next(const struct ga_map *m, size_t *i, const struct ga_map_slot **slot);

#endif
