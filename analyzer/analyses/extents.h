/* A set of disjoint address extents [start, end) in a balanced tree (a treap by start address,
 * each node augmented with the largest extent length in its subtree): O(log n) expected per
 * operation, with the set's total bytes, extent count and largest extent always at hand.
 *
 * Two ways to use one (never both on the same set):
 *   - as a set of addresses (free memory of a pool, ranges a pool owns, unmapped VA): ga_ext_add
 *     and ga_ext_remove take any range, coalesce adjacent and overlapping extents, split extents
 *     a removal cuts, and say how many bytes actually changed (so a caller detects double frees
 *     and overlaps from the return value);
 *   - as an ordered map of disjoint intervals that are never merged (blocks of a pool):
 * ga_ext_insert refuses an overlapping interval, ga_ext_take removes the interval starting at an
 * address. Ranges whose end would pass 2^64 and empty ranges are refused (0 / -1), never wrapped.
 */
#ifndef GA_EXTENTS_H
#define GA_EXTENTS_H

#include <stdint.h>

struct ga_ext_node;

struct ga_extents {
    struct ga_ext_node *root;
    uint64_t total; /* bytes in the set */
    uint64_t count; /* extents in the set */
    uint32_t rng;   /* treap priorities (xorshift; not derived from the input) */
};

void ga_ext_init(struct ga_extents *x);
void ga_ext_free(struct ga_extents *x);

/* Set use. Adds [addr, addr + len); returns the bytes that were not in the set before. */
uint64_t ga_ext_add(struct ga_extents *x, uint64_t addr, uint64_t len);
/* Removes [addr, addr + len); returns the bytes that were in the set. */
uint64_t ga_ext_remove(struct ga_extents *x, uint64_t addr, uint64_t len);

/* Removes [addr, addr + len) when one extent holds all of it (a block taken from free memory);
 * -1 and nothing changed otherwise. */
int ga_ext_carve(struct ga_extents *x, uint64_t addr, uint64_t len);

/* Map use. Inserts [addr, addr + len) as its own extent; -1 (nothing changed) when it overlaps
 * an extent of the set, is empty or wraps. */
int ga_ext_insert(struct ga_extents *x, uint64_t addr, uint64_t len);
/* Removes the extent that starts at addr; returns its length (0: no extent starts there). */
uint64_t ga_ext_take(struct ga_extents *x, uint64_t addr);

/* Queries (both uses). */
static inline uint64_t ga_ext_total(const struct ga_extents *x)
{
    return x->total;
}
static inline uint64_t ga_ext_count(const struct ga_extents *x)
{
    return x->count;
}
/* Length of the largest extent, 0 when empty: the largest request a first-fit allocator over
 * this free set could still serve (no alignment assumed). */
uint64_t ga_ext_largest(const struct ga_extents *x);
/* Does some extent intersect [addr, addr + len)? */
int ga_ext_overlaps(const struct ga_extents *x, uint64_t addr, uint64_t len);
/* Does one extent contain all of [addr, addr + len)? */
int ga_ext_covers(const struct ga_extents *x, uint64_t addr, uint64_t len);
/* The first extent that ends after addr (contains it, or starts after it): 1 and its start and
 * length, or 0 when there is none. Iterate in address order with addr = start + len. */
int ga_ext_next(const struct ga_extents *x, uint64_t addr, uint64_t *start, uint64_t *len);

#endif
