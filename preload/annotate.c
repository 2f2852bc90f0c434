/* The annotation API (include/gputrace/annotate.h): exported entry points a custom allocator
 * calls to describe its pools and blocks. Each call writes one gt_rec_pool or gt_rec_block into
 * the calling thread's buffer like a hook does: nothing when tracing is off or disabled, in a
 * forked child, or when the tracer itself is the caller (re-entrancy). errno is left as it was.
 * The program links none of this: annotate.h declares these names weak, so they resolve to the
 * preloaded shim or stay NULL. */
#include <string.h>

#include "shim.h"

/* annotate.h declares these weak for programs; including it here would make our definitions
 * weak too, so the prototypes are repeated (tests/cases/annotate.sh checks the exports). */
GT_EXPORT void gputrace_annotate_pool_create(uint64_t pool, int device, const char *name);
GT_EXPORT void gputrace_annotate_pool_add_range(uint64_t pool, uint64_t addr, uint64_t size);
GT_EXPORT void gputrace_annotate_pool_remove_range(uint64_t pool, uint64_t addr, uint64_t size);
GT_EXPORT void gputrace_annotate_pool_destroy(uint64_t pool);
GT_EXPORT void gputrace_annotate_block_alloc(uint64_t pool, uint64_t addr, uint64_t size);
GT_EXPORT void gputrace_annotate_block_free(uint64_t pool, uint64_t addr, uint64_t size);
GT_EXPORT void gputrace_annotate_block_fail(uint64_t pool, uint64_t size);

#define POOL_NAME_MAX 255u /* longer names are cut (at a UTF-8 character boundary) */

static uint32_t name_len(const char *name)
{
    if (!name) return 0;
    uint32_t n = (uint32_t)strnlen(name, POOL_NAME_MAX + 1);
    if (n > POOL_NAME_MAX) {
        n = POOL_NAME_MAX;
        while (n > 0 && ((unsigned char)name[n] & 0xC0u) == 0x80u)
            n--; /* not mid-character */
    }
    return n;
}

static void put_pool(unsigned op, uint64_t pool, uint64_t addr, uint64_t size, int device,
                     const char *name)
{
    int saved = errno;
    struct gt_thread *t = gt_enter();
    if (!t) {
        errno = saved;
        return;
    }
    struct gt_rec_pool r = {
        .ts = gt_now(), .pool = pool, .addr = addr, .size = size, .device = device};
    if (op == GT_POOL_CREATE) {
        r.stack = gt_stack(t, GT_STK_ALLOC);
        r.name_len = name_len(name);
        gt_emit_named(t, GT_REC_POOL, (uint16_t)op, &r, sizeof(r), r.name_len ? name : "",
                      r.name_len);
    } else {
        struct gt_rec_pool *p = gt_reserve(t, sizeof(*p));
        if (p) {
            *p = r;
            gt_commit(t, p, GT_REC_POOL, (uint16_t)op, sizeof(*p), r.ts);
        }
    }
    gt_leave(t);
    errno = saved;
}

static void put_block(unsigned op, uint64_t pool, uint64_t addr, uint64_t size)
{
    int saved = errno;
    struct gt_thread *t = gt_enter();
    if (!t) {
        errno = saved;
        return;
    }
    uint64_t ts = gt_now();
    uint32_t stack = gt_stack(t, op == GT_BLOCK_FREE ? GT_STK_FREE : GT_STK_ALLOC);
    struct gt_rec_block *b = gt_reserve(t, sizeof(*b));
    if (b) {
        *b = (struct gt_rec_block){
            .ts = ts, .pool = pool, .addr = addr, .size = size, .stack = stack};
        gt_commit(t, b, GT_REC_BLOCK, (uint16_t)op, sizeof(*b), ts);
    }
    gt_leave(t);
    errno = saved;
}

GT_EXPORT void gputrace_annotate_pool_create(uint64_t pool, int device, const char *name)
{
    put_pool(GT_POOL_CREATE, pool, 0, 0, device, name);
}

GT_EXPORT void gputrace_annotate_pool_add_range(uint64_t pool, uint64_t addr, uint64_t size)
{
    put_pool(GT_POOL_ADD_RANGE, pool, addr, size, -1, NULL);
}

GT_EXPORT void gputrace_annotate_pool_remove_range(uint64_t pool, uint64_t addr, uint64_t size)
{
    put_pool(GT_POOL_REMOVE_RANGE, pool, addr, size, -1, NULL);
}

GT_EXPORT void gputrace_annotate_pool_destroy(uint64_t pool)
{
    put_pool(GT_POOL_DESTROY, pool, 0, 0, -1, NULL);
}

GT_EXPORT void gputrace_annotate_block_alloc(uint64_t pool, uint64_t addr, uint64_t size)
{
    put_block(GT_BLOCK_ALLOC, pool, addr, size);
}

GT_EXPORT void gputrace_annotate_block_free(uint64_t pool, uint64_t addr, uint64_t size)
{
    put_block(GT_BLOCK_FREE, pool, addr, size);
}

GT_EXPORT void gputrace_annotate_block_fail(uint64_t pool, uint64_t size)
{
    put_block(GT_BLOCK_FAIL, pool, 0, size);
}
