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
/* Pointer to the value of key (a, b), or NULL. Valid until the next insert or remove. */
uint64_t *ga_map_find(const struct ga_map *m, uint64_t a, uint64_t b);
/* Pointer to the value of key (a, b), inserting it with value `init` if absent; *added says which.
 */
uint64_t *ga_map_upsert(struct ga_map *m, uint64_t a, uint64_t b, uint64_t init, int *added);
/* Removes key (a, b); returns 1 if it was there (and its value in *old when old != NULL). */
int ga_map_remove(struct ga_map *m, uint64_t a, uint64_t b, uint64_t *old);

/* Iteration: for (size_t i = 0; ga_map_next(m, &i, &slot); ) ... ; do not modify meanwhile. */
int ga_map_next(const struct ga_map *m, size_t *i, const struct ga_map_slot **slot);

#endif
