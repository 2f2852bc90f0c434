/* The unit tests' pseudo-random numbers: xorshift64 from the seed the test defines as RNG_SEED
 * before including this (fixed, so that a test's inputs are the same at every run). */
#ifndef GT_TEST_RNG_H
#define GT_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state = RNG_SEED;

/* A number in [0, n). */
static inline uint64_t rng(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

#endif
