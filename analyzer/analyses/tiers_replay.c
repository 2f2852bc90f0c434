/* Memory by category at the true peak of PyTorch's allocated memory (tiers.h; level history).
 * PyTorch keeps a record of its allocator's events (device_traces); the bridge writes the
 * events of each device since its last snapshot right before the next one (TORCH_TRACE). From
 * the state of the previous snapshot (its live blocks, allocated and reserved bytes) the batch
 * is replayed event by event: allocated memory at every event, so a peak between two snapshots
 * (inside backward: activations freed while gradients are made) is found exactly. A batch is
 * trusted only when its replay ends in the state of the snapshot it leads to (same allocated
 * and reserved bytes); its highest point, when above every earlier one, is replayed again to
 * put the blocks live there in categories:
 *   1. a temporary: made and freed right after (the allocator's next allocation or free is its
 *      own free: memory.temporaries' definition on the block level), or made and freed within
 *      one optimizer step with no backward begun meanwhile (no allocation made by
 *      Tensor.backward or autograd frames, the gradient's seed): never held for a backward
 *                                                                      -> temporary, exact
 *   2. a storage of an optimizer's role set read while the block lived (a set read at a step
 *      or before a snapshot, since the previous snapshot; the sets in effect at the snapshot
 *      for blocks still live then)          -> weights / gradients / optimizer_state, exact
 *   3. its frames (tiers.c, rule 4), else the remainder: activations
 *   and reserved - allocated at that moment -> cache.
 * Cost: O(events) per batch, twice for a batch with a new peak (then also one index of the
 * frees after the peak and one count of backward seeds per event), plus O(live blocks) to copy
 * the base and O(live blocks * log (seen + steps)) to classify. Memory: the live blocks and one
 * batch per device (at most GA_TIERS_EVENTS_MAX events), the role storages and steps seen since
 * the latest snapshot (at most GA_TIERS_SEEN_MAX each). */
#include <stdlib.h>
#include <string.h>

#include "analyses/tiers.h"
#include "base/util.h"

/* The device's replay, NULL past GA_TIERS_REPLAY_DEVS devices (a damaged trace's numbers). */
static struct ga_tiers_replay *rdev_of(struct ga_tiers *t, int32_t device)
{
    for (size_t i = 0; i < t->n_rdevs; i++)
        if (t->rdevs[i].device == device) return &t->rdevs[i];
    if (t->n_rdevs == GA_TIERS_REPLAY_DEVS) return NULL;
    t->rdevs = ga_xgrow(t->rdevs, &t->rdevs_cap, t->n_rdevs, sizeof(*t->rdevs));
    struct ga_tiers_replay *d = &t->rdevs[t->n_rdevs++];
    memset(d, 0, sizeof(*d));
    d->device = device;
    return d;
}

const struct ga_tiers_replay *ga_tiers_replay_of(const struct ga_tiers *t, int32_t device)
{
    for (size_t i = 0; i < t->n_rdevs; i++)
        if (t->rdevs[i].device == device) return &t->rdevs[i];
    return NULL;
}

void ga_tiers_trace(struct ga_tiers *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_trace *r = &ev->r->torch_trace;
    struct ga_tiers_replay *d = rdev_of(t, r->device);
    size_t n = ev->str_len[0] / sizeof(struct gt_torch_trace_entry);
    if (!d) return;
    if (d->n_ev && d->snap != r->snap) /* the snapshot of the batch before never came whole */
        d->n_ev = 0, d->based = 0;
    if (!d->n_ev) d->batches++, d->gap = 0;
    d->snap = r->snap;
    if (r->flags & GT_TRACE_GAP) d->gap = 1;
    if ((r->flags & GT_TRACE_FROM_EMPTY) && !d->based && !d->n_ev) /* no start sample: empty */
        d->based = 1, d->allocated = d->reserved = 0;
    if (n > GA_TIERS_EVENTS_MAX - d->n_ev) { /* more than PyTorch's ring holds: damaged */
        d->gap = 1;
        return;
    }
    if (!n) return;
    d->ev = ga_xgrow(d->ev, &d->ev_cap, d->n_ev + n - 1, sizeof(*d->ev));
    memcpy(d->ev + d->n_ev, ev->str[0], n * sizeof(*d->ev));
    d->n_ev += n;
}

/* The bridge's first sample, taken right after it started recording history: blocks made
 * before are not known one by one, but their bytes are. */
void ga_tiers_start(struct ga_tiers *t, const struct ga_event *ev)
{
    const struct gt_rec_torch_stats *r = &ev->r->torch_stats;
    struct ga_tiers_replay *d = rdev_of(t, r->device);
    if (!d || d->based || d->n_ev) return;
    d->based = 1;
    d->allocated = r->allocated, d->reserved = r->reserved;
}

/* PyTorch's caching allocator (CUDACachingAllocator.cpp): a request is rounded up to 512 bytes
 * (kMinBlockSize), or with roundup_power2_divisions N > 1 for its size interval and a request
 * above 512 N bytes, up to the next of N equal steps between the powers of 2 around it (round_size
 * below); its block starts where a free block
 * starts and takes all of it unless the allocator splits it: in the small pool (requests up to
 * kSmallSize, 1 MiB) when at least 512 bytes remain, in the large pool when more than 1 MiB
 * remains and the request is under max_split_size; with expandable segments always (a rest is
 * then at least 512 bytes). A freed block merges with the free blocks beside it in its segment.
 * The replay keeps the free blocks of every segment for this (keys below), from the snapshot's
 * inactive blocks and the segments' events; a block whose free block is not known (before the
 * first snapshot) is taken as its rounded request: a batch that then ends off its snapshot's
 * state is not trusted. */
#define MIN_BLOCK  512ull
#define SMALL_SIZE (1ull << 20)
enum { K_SIZE, K_STACK, K_ALLOC, K_FREE, K_FREE_END, K_SEG }; /* the live map's second key */

struct state {
    struct ga_map live; /* as ga_tiers_replay.live, plus (addr, K_ALLOC) -> its alloc's index + 1 */
    uint64_t allocated, reserved;
    uint64_t max_split;        /* PyTorch's max_split_size; 0: no limit */
    const uint32_t *divisions; /* roundup_power2_divisions per interval (GT_TORCH_ROUNDUP_*) */
    int expandable;
};

static unsigned log2_floor(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* c10's round_size (tiers.h): the divisions of the request's interval (1 MiB up: [0] below 2 MiB,
 * one per power of 2, the last from 32 GiB up) apply above 512 N bytes; a power of 2 stays as it
 * is, anything else goes up to the next multiple of its power-of-2 floor / N (PyTorch's divisions
 * are powers of 2; a step under one byte rounds to the next power of 2). */
uint64_t ga_tiers_round_size(const uint32_t *divisions, uint64_t size)
{
    if (size < MIN_BLOCK) return MIN_BLOCK;
    unsigned k = log2_floor(size), i = k > 20 ? k - 20 : 0;
    uint64_t n = divisions[i < GT_TORCH_ROUNDUP_INTERVALS ? i : GT_TORCH_ROUNDUP_INTERVALS - 1];
    if (n <= 1 || size <= MIN_BLOCK * n) return (size + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK;
    uint64_t floor = 1ull << k, step = floor >> log2_floor(n);
    if (size == floor) return size;
    if (!step) return floor << 1;
    uint64_t down = size & ~(step - 1);
    return down == size ? size : down + step;
}

static uint64_t round_size(const struct state *s, uint64_t size)
{
    return ga_tiers_round_size(s->divisions, size);
}

static void copy_base(struct state *s, const struct ga_tiers_replay *d)
{
    const struct ga_map_slot *x;
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; ga_map_next(&d->live, &i, &x);)
        *ga_map_upsert(&s->live, x->a, x->b, 0, NULL) = x->value;
    s->allocated = d->allocated, s->reserved = d->reserved;
    s->max_split = d->max_split, s->expandable = d->expandable;
    s->divisions = d->divisions;
}

static void free_add(struct ga_map *m, uint64_t addr, uint64_t size)
{
    *ga_map_upsert(m, addr, K_FREE, 0, NULL) = size;
    *ga_map_upsert(m, addr + size, K_FREE_END, 0, NULL) = addr;
}

static void free_del(struct ga_map *m, uint64_t addr, uint64_t size)
{
    uint64_t old;
    ga_map_remove(m, addr, K_FREE, &old);
    ga_map_remove(m, addr + size, K_FREE_END, &old);
}

/* The block PyTorch made for a request of `size` bytes at addr, its free block updated. */
static uint64_t take_block(struct state *s, uint64_t addr, uint64_t size)
{
    uint64_t want = round_size(s, size), *f = ga_map_find(&s->live, addr, K_FREE);
    if (!f || *f < want) return want; /* not known */
    uint64_t have = *f, rest = have - want;
    int split = want <= SMALL_SIZE || s->expandable
                    ? rest >= MIN_BLOCK
                    : (!s->max_split || want < s->max_split) && rest > SMALL_SIZE;
    free_del(&s->live, addr, have);
    if (!split) return have;
    free_add(&s->live, addr + want, rest);
    return want;
}

/* The block at addr of `bytes` is free again: merged with its free neighbours in its segment. */
static void give_block(struct state *s, uint64_t addr, uint64_t bytes)
{
    uint64_t start = addr, end = addr + bytes, *x;
    if (!ga_map_find(&s->live, addr, K_SEG) && (x = ga_map_find(&s->live, addr, K_FREE_END))) {
        start = *x;
        free_del(&s->live, start, addr - start);
    }
    if (!ga_map_find(&s->live, end, K_SEG) && (x = ga_map_find(&s->live, end, K_FREE))) {
        uint64_t n = *x;
        free_del(&s->live, end, n);
        end += n;
    }
    free_add(&s->live, start, end - start);
}

static void apply(struct state *s, const struct gt_torch_trace_entry *e, size_t idx)
{
    uint64_t old, bytes;
    switch (e->action) {
    case GT_TRACE_ALLOC:
        bytes = take_block(s, e->addr, e->size);
        *ga_map_upsert(&s->live, e->addr, K_SIZE, 0, NULL) = bytes;
        *ga_map_upsert(&s->live, e->addr, K_STACK, 0, NULL) = e->stack;
        *ga_map_upsert(&s->live, e->addr, K_ALLOC, 0, NULL) = idx + 1;
        s->allocated += bytes;
        break;
    case GT_TRACE_FREE_COMPLETED:
        bytes = ga_map_remove(&s->live, e->addr, K_SIZE, &old) ? old : round_size(s, e->size);
        ga_map_remove(&s->live, e->addr, K_STACK, &old);
        ga_map_remove(&s->live, e->addr, K_ALLOC, &old);
        give_block(s, e->addr, bytes);
        s->allocated -= bytes < s->allocated ? bytes : s->allocated;
        break;
    case GT_TRACE_SEGMENT_ALLOC:
        *ga_map_upsert(&s->live, e->addr, K_SEG, 0, NULL) = e->size;
        free_add(&s->live, e->addr, e->size);
        s->reserved += e->size;
        break;
    case GT_TRACE_SEGMENT_MAP: /* expandable: every block is split, no free block is needed */
        s->reserved += e->size;
        break;
    case GT_TRACE_SEGMENT_FREE:
        ga_map_remove(&s->live, e->addr, K_SEG, &old);
        free_del(&s->live, e->addr, e->size);
        /* fall through */
    case GT_TRACE_SEGMENT_UNMAP:
        s->reserved -= e->size < s->reserved ? e->size : s->reserved;
        break;
    default:
        break;
    }
}

/* The snapshot's figures for the device: allocated (active and awaiting blocks) and reserved. */
static void snap_state(const struct ga_torch *torch, int32_t device, uint64_t *alloc,
                       uint64_t *reserved)
{
    *alloc = *reserved = 0;
    for (size_t i = 0; i < torch->n_segs; i++) {
        const struct ga_torch_seg *g = &torch->segs[i];
        if (g->device != device) continue;
        *reserved += g->size;
        for (uint32_t k = 0; k < g->n; k++)
            if (torch->blks[g->first + k].state != GT_TORCH_INACTIVE)
                *alloc += torch->blks[g->first + k].size;
    }
}

static int by_seen(const void *a, const void *b)
{
    const struct ga_tiers_seen *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    return (x->us > y->us) - (x->us < y->us);
}

/* The role of the storage at addr in a set read within [from, to] (PyTorch's clock), -1 none. */
static int seen_role(const struct ga_tiers *t, int32_t device, uint64_t addr, uint64_t from,
                     uint64_t to)
{
    size_t lo = 0, hi = t->n_seen;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->seen[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < t->n_seen && t->seen[lo].addr == addr; lo++)
        if (t->seen[lo].device == device && t->seen[lo].us >= from && t->seen[lo].us <= to)
            return t->seen[lo].role;
    return -1;
}

/* Whether the next allocation or free after event a is the free of a's block. */
static int freed_next(const struct ga_tiers_replay *d, size_t a)
{
    for (size_t j = a + 1; j < d->n_ev; j++) {
        const struct gt_torch_trace_entry *e = &d->ev[j];
        if (e->action == GT_TRACE_ALLOC) return 0;
        if (e->action == GT_TRACE_FREE_REQUESTED) return e->addr == d->ev[a].addr;
    }
    return 0;
}

/* What the classification of the blocks live at event p needs, computed once: each one's
 * first free after p (map: (addr, 0) -> index + 1) and, per event, how many allocations made
 * under backward frames (the gradient's seed) came before it. O(events) time and memory. */
struct after {
    struct ga_map freed;
    uint32_t *seeds; /* seeds[j]: seeds among events [0, j) */
};

static void after_build(struct after *x, const struct ga_torch *torch,
                        const struct ga_tiers_replay *d, const struct state *s, size_t p)
{
    memset(x, 0, sizeof(*x));
    for (size_t j = p + 1; j < d->n_ev; j++) {
        const struct gt_torch_trace_entry *e = &d->ev[j];
        if (e->action == GT_TRACE_FREE_REQUESTED && ga_map_find(&s->live, e->addr, K_SIZE))
            ga_map_upsert(&x->freed, e->addr, 0, j + 1, NULL); /* the first one stays */
    }
    x->seeds = ga_xmalloc((d->n_ev + 1) * sizeof(*x->seeds));
    x->seeds[0] = 0;
    for (size_t j = 0; j < d->n_ev; j++) {
        const struct gt_torch_trace_entry *e = &d->ev[j];
        int seed = e->action == GT_TRACE_ALLOC && e->stack &&
                   ga_tiers_by_frames(torch, e->stack) == GA_CAT_GRADIENTS;
        x->seeds[j + 1] = x->seeds[j] + (uint32_t)seed;
    }
}

static void after_free(struct after *x)
{
    ga_map_free(&x->freed);
    free(x->seeds);
}

/* Whether an optimizer step was recorded strictly between from and to (PyTorch's clock). */
static int step_between(const struct ga_tiers *t, uint64_t from, uint64_t to)
{
    size_t lo = 0, hi = t->n_steps; /* the first step after from (steps_us is in time order) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->steps_us[mid] <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n_steps && t->steps_us[lo] < to;
}

static enum ga_cat classify(const struct ga_tiers *t, const struct ga_torch *torch,
                            const struct ga_tiers_replay *d, const struct state *s,
                            const struct after *x, uint64_t addr, uint32_t stack,
                            enum ga_cat_basis *basis)
{
    uint64_t *ai = ga_map_find(&s->live, addr, K_ALLOC), *fi = ga_map_find(&x->freed, addr, 0),
             bytes;
    size_t a = ai ? (size_t)*ai - 1 : SIZE_MAX; /* SIZE_MAX: made before the batch */
    size_t f = fi ? (size_t)*fi - 1 : SIZE_MAX; /* SIZE_MAX: live at the batch's end */
    uint64_t from = a == SIZE_MAX ? 0 : d->ev[a].time_us;
    uint64_t to = f == SIZE_MAX ? UINT64_MAX : d->ev[f].time_us;
    *basis = GA_BASIS_EXACT;
    /* a temporary: freed right after it was made, or within one step with no backward begun
     * while it lived */
    if (a != SIZE_MAX && (freed_next(d, a) || (f != SIZE_MAX && !step_between(t, from, to) &&
                                               x->seeds[f] == x->seeds[a + 1])))
        return GA_CAT_TEMPORARY;
    int role = seen_role(t, d->device, addr, from, to);
    if (role < 0 && to == UINT64_MAX) role = ga_tiers_role_at(t, d->device, addr, &bytes);
    if (role >= 0 && role <= GT_ROLE_OPTIMIZER_STATE) return (enum ga_cat)role;
    enum ga_cat cat = stack ? ga_tiers_by_frames(torch, stack) : GA_CATS;
    *basis = cat != GA_CATS ? GA_BASIS_FRAMES : GA_BASIS_REMAINDER;
    return cat != GA_CATS ? cat : GA_CAT_ACTIVATIONS;
}

/* The breakdown at event p: the batch replayed again up to it. */
static void breakdown_at(const struct ga_tiers *t, const struct ga_torch *torch,
                         struct ga_tiers_replay *d, size_t p)
{
    struct state s;
    struct after x;
    struct ga_map sites = {0};
    copy_base(&s, d);
    for (size_t i = 0; i <= p; i++)
        apply(&s, &d->ev[i], i);
    after_build(&x, torch, d, &s, p);
    struct ga_tiers_breakdown *b = &d->peak;
    memset(b, 0, sizeof(*b));
    b->have = 1, b->snap = d->snap;
    b->ts = d->ev[p].time_us * 1000 - (uint64_t)t->real_minus_mono; /* wraps on garbage only */
    b->allocated = s.allocated, b->reserved = s.reserved;
    for (size_t i = 0; i < t->n_opts; i++)
        if (t->opts[i].whole) b->roles_known = 1;
    const struct ga_map_slot *sl;
    for (size_t i = 0; ga_map_next(&s.live, &i, &sl);) {
        if (sl->b != K_SIZE) continue;
        uint64_t *st = ga_map_find(&s.live, sl->a, K_STACK);
        struct ga_torch_blk k = {.addr = sl->a,
                                 .size = sl->value,
                                 .stack = st ? (uint32_t)*st : 0,
                                 .state = GT_TORCH_ACTIVE};
        enum ga_cat_basis basis;
        enum ga_cat cat = classify(t, torch, d, &s, &x, k.addr, k.stack, &basis);
        ga_tiers_count(b, &sites, cat, basis, &k, k.size);
    }
    if (s.reserved > s.allocated) { /* free blocks in the segments: one line, no count */
        b->cat[GA_CAT_CACHE].bytes = s.reserved - s.allocated;
        b->cat[GA_CAT_CACHE].basis = GA_BASIS_EXACT;
    }
    ga_tiers_top_sites(b, &sites);
    ga_map_free(&sites);
    ga_map_free(&s.live);
    after_free(&x);
}

/* The batch that led to snapshot `snap` on d: replayed from d's base; its highest point, if
 * above the device's peak so far and the replay ends in the snapshot's state, broken down. */
static void replay(const struct ga_tiers *t, const struct ga_torch *torch,
                   struct ga_tiers_replay *d)
{
    struct state s;
    copy_base(&s, d);
    uint64_t best = d->peak.have ? d->peak.allocated : 0;
    size_t at = SIZE_MAX;
    for (size_t i = 0; i < d->n_ev; i++) {
        apply(&s, &d->ev[i], i);
        if (s.allocated > best) best = s.allocated, at = i;
    }
    uint64_t alloc, reserved;
    snap_state(torch, d->device, &alloc, &reserved);
    int ok = s.allocated == alloc && s.reserved == reserved;
    ga_map_free(&s.live);
    if (!ok) {
        d->inconsistent++;
        return;
    }
    d->replayed++;
    if (at != SIZE_MAX) breakdown_at(t, torch, d, at);
}

/* The snapshot's live blocks, segments and free blocks on d's device as the next batch's base. */
static void rebase(struct ga_tiers_replay *d, const struct ga_torch *torch)
{
    ga_map_free(&d->live);
    memset(&d->live, 0, sizeof(d->live));
    snap_state(torch, d->device, &d->allocated, &d->reserved);
    d->expandable = 0;
    for (size_t i = 0; i < torch->n_segs; i++) {
        const struct ga_torch_seg *g = &torch->segs[i];
        if (g->device != d->device) continue;
        d->expandable |= g->expandable;
        *ga_map_upsert(&d->live, g->addr, K_SEG, 0, NULL) = g->size;
        for (uint32_t k = 0; k < g->n; k++) {
            const struct ga_torch_blk *b = &torch->blks[g->first + k];
            if (b->state == GT_TORCH_INACTIVE) {
                free_add(&d->live, b->addr, b->size);
                continue;
            }
            *ga_map_upsert(&d->live, b->addr, K_SIZE, 0, NULL) = b->size;
            *ga_map_upsert(&d->live, b->addr, K_STACK, 0, NULL) = b->stack;
        }
    }
    d->based = 1;
}

void ga_tiers_replay_snap(struct ga_tiers *t, const struct ga_torch *torch, uint32_t snap,
                          int whole, int history, const struct gt_rec_torch_snap *settings)
{
    if (whole && history) /* every device of the snapshot gets a base */
        for (size_t i = 0; i < torch->n_segs; i++)
            rdev_of(t, torch->segs[i].device);
    if (t->n_seen) qsort(t->seen, t->n_seen, sizeof(*t->seen), by_seen);
    for (size_t i = 0; i < t->n_rdevs; i++) {
        struct ga_tiers_replay *d = &t->rdevs[i];
        /* the settings are the process's: the snapshot's hold for the batch before it too */
        if (whole) {
            d->max_split = settings->max_split_size;
            memcpy(d->divisions, settings->roundup_divisions, sizeof(d->divisions));
        }
        if (whole && d->based && !d->gap && d->n_ev && d->snap == snap) replay(t, torch, d);
        d->n_ev = 0;
        if (whole && history)
            rebase(d, torch);
        else
            d->based = 0;
    }
    t->n_seen = 0, t->n_steps = 0;
}

void ga_tiers_replay_free(struct ga_tiers *t)
{
    for (size_t i = 0; i < t->n_rdevs; i++) {
        free(t->rdevs[i].ev);
        ga_map_free(&t->rdevs[i].live);
    }
    free(t->rdevs);
    free(t->seen);
    free(t->steps_us);
}
