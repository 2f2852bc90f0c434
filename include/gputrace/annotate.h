/* gputrace annotation API: tell the tracer about a memory pool your code manages itself.
 *
 * A custom allocator (an arena, a caching allocator, a framework's block allocator) takes big
 * ranges from the driver and hands out blocks inside them. The driver-level trace sees only the
 * big ranges; with these calls the report also knows the blocks, so it can show what was really
 * in use at the peak, how fragmented each pool was, and whether a failed allocation failed for
 * fragmentation ("free total >= request, but no hole is large enough") or because the pool
 * cached memory it was not using.
 *
 * Safe without the tracer: every function here is a static inline wrapper that does nothing
 * unless libgputrace.so is loaded (LD_PRELOAD or the gputrace launcher). The program needs no
 * link flag; the tracer's entry points are weak references resolved when the process starts.
 * Cost when traced: one record per call (tens of nanoseconds). Thread-safe.
 *
 *     #include <gputrace/annotate.h>
 *     gputrace_pool_create(pool_id, device, "my arena");
 *     gputrace_pool_add_range(pool_id, base, bytes);     // memory the pool now owns, all free
 *     gputrace_block_alloc(pool_id, addr, size);          // a block is in use
 *     gputrace_block_free(pool_id, addr, size);           // ... and free again
 *     gputrace_block_fail(pool_id, size);                  // the pool could not serve a request
 *     gputrace_pool_remove_range(pool_id, base, bytes);   // returned to the driver
 *     gputrace_pool_destroy(pool_id);
 *
 * pool_id is any nonzero value unique while the pool lives (the allocator object's address is
 * a good choice). Blocks must lie inside ranges added to their pool; a block freed twice, or
 * outside the pool, is counted in the report as an annotation error, never trusted blindly.
 * From Python: python/gputrace_annotate.py (ctypes, same no-op behaviour).
 *
 * The records these calls write are gt_rec_pool and gt_rec_block (trace_format.h). */
#ifndef GPUTRACE_ANNOTATE_H
#define GPUTRACE_ANNOTATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUTRACE_ANNOTATE_VERSION 1

/* The entry points libgputrace.so exports (weak: NULL when the tracer is not loaded). */
void gputrace_annotate_pool_create(uint64_t pool, int device, const char *name)
    __attribute__((weak));
void gputrace_annotate_pool_add_range(uint64_t pool, uint64_t addr, uint64_t size)
    __attribute__((weak));
void gputrace_annotate_pool_remove_range(uint64_t pool, uint64_t addr, uint64_t size)
    __attribute__((weak));
void gputrace_annotate_pool_destroy(uint64_t pool) __attribute__((weak));
void gputrace_annotate_block_alloc(uint64_t pool, uint64_t addr, uint64_t size)
    __attribute__((weak));
void gputrace_annotate_block_free(uint64_t pool, uint64_t addr, uint64_t size)
    __attribute__((weak));
void gputrace_annotate_block_fail(uint64_t pool, uint64_t size) __attribute__((weak));

/* 1 when the tracer is loaded and listening. */
static inline int gputrace_active(void)
{
    return gputrace_annotate_block_alloc != 0;
}

/* A new pool of memory on `device` (-1 unknown); name may be NULL. */
static inline void gputrace_pool_create(uint64_t pool, int device, const char *name)
{
    if (gputrace_annotate_pool_create) gputrace_annotate_pool_create(pool, device, name);
}

/* [addr, addr + size) now belongs to the pool, free until blocks are taken from it. */
static inline void gputrace_pool_add_range(uint64_t pool, uint64_t addr, uint64_t size)
{
    if (gputrace_annotate_pool_add_range) gputrace_annotate_pool_add_range(pool, addr, size);
}

/* [addr, addr + size) leaves the pool (with any block still in it). */
static inline void gputrace_pool_remove_range(uint64_t pool, uint64_t addr, uint64_t size)
{
    if (gputrace_annotate_pool_remove_range) gputrace_annotate_pool_remove_range(pool, addr, size);
}

/* The pool, its ranges and blocks are gone. */
static inline void gputrace_pool_destroy(uint64_t pool)
{
    if (gputrace_annotate_pool_destroy) gputrace_annotate_pool_destroy(pool);
}

/* The block [addr, addr + size) of the pool is in use. */
static inline void gputrace_block_alloc(uint64_t pool, uint64_t addr, uint64_t size)
{
    if (gputrace_annotate_block_alloc) gputrace_annotate_block_alloc(pool, addr, size);
}

/* The block at addr is free again; size as allocated, or 0 if the caller does not know. */
static inline void gputrace_block_free(uint64_t pool, uint64_t addr, uint64_t size)
{
    if (gputrace_annotate_block_free) gputrace_annotate_block_free(pool, addr, size);
}

/* The pool could not serve a request of `size` bytes (before it asks the driver for more, or
 * gives up). */
static inline void gputrace_block_fail(uint64_t pool, uint64_t size)
{
    if (gputrace_annotate_block_fail) gputrace_annotate_block_fail(pool, size);
}

#ifdef __cplusplus
}
#endif

#endif
